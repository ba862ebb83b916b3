//! Deterministic bucketing and round-robin bucket selection, compatible with
//! faros-airbyte-common's `RoundRobinConfig` contract (spec: "Bucketing and Round-Robin
//! Execution Spec v1.0").
//!
//! - [`bucket`] / [`Bucketer`]: HMAC-MD5(key, data), first 4 bytes big-endian, `% total + 1`.
//! - [`validate`], [`Selector`]: config validation and next-bucket selection.
//! - [`BucketSet`]: the eligible buckets of `bucket_ranges`.
//! - [`Distribution`]: how evenly a sample of entity ids spreads.

mod config;
mod error;
mod hash;
mod md5;
mod ranges;

pub use config::{
    bucket_id, bucket_set, bucket_total, last_executed, parse_total, round_robin, validate, Notice,
    RawConfig, Selector, Value,
};
pub use error::BucketingError;
pub use hash::{bucket, Bucketer};
pub use ranges::{BucketSet, RangesInput};

/// Trims like JavaScript's `String.prototype.trim` (which, unlike `str::trim`, strips U+FEFF
/// and keeps U+0085).
pub(crate) fn js_trim(s: &str) -> &str {
    fn is_js_space(c: char) -> bool {
        matches!(
            c,
            '\u{9}'
                | '\u{A}'
                | '\u{B}'
                | '\u{C}'
                | '\u{D}'
                | ' '
                | '\u{A0}'
                | '\u{1680}'
                | '\u{2000}'
                ..='\u{200A}'
                    | '\u{2028}'
                    | '\u{2029}'
                    | '\u{202F}'
                    | '\u{205F}'
                    | '\u{3000}'
                    | '\u{FEFF}'
        )
    }
    s.trim_matches(is_js_space)
}

/// The largest `bucket_total` [`Distribution`] accepts (it keeps one counter per bucket).
pub const MAX_DISTRIBUTION_BUCKETS: u32 = 1 << 20;

/// How a sample of entities spreads over buckets.
#[derive(Debug, Clone, PartialEq)]
pub struct Distribution {
    /// Entities per bucket; index 0 is bucket 1.
    pub counts: Vec<u64>,
    /// Fewest entities in any bucket.
    pub min: u64,
    /// Most entities in any bucket.
    pub max: u64,
    /// Entities per bucket on average.
    pub mean: f64,
    /// `(max − min) / mean`: 0 is perfectly even (0 for an empty sample).
    pub spread: f64,
}

impl Distribution {
    /// Counts 1-based `buckets` over `total` buckets.
    ///
    /// # Errors
    /// `InvalidArgument` when `total` exceeds [`MAX_DISTRIBUTION_BUCKETS`] or a bucket is out of range.
    pub fn from_buckets(
        total: u32,
        buckets: impl IntoIterator<Item = u32>,
    ) -> Result<Self, BucketingError> {
        if total == 0 {
            return Err(BucketingError::TotalInvalid);
        }
        if total > MAX_DISTRIBUTION_BUCKETS {
            return Err(BucketingError::InvalidArgument(format!(
                "bucketDistribution supports bucket_total up to {MAX_DISTRIBUTION_BUCKETS}"
            )));
        }
        let mut counts = vec![0u64; total as usize];
        let mut n = 0u64;
        for b in buckets {
            let slot = b
                .checked_sub(1)
                .and_then(|i| counts.get_mut(i as usize))
                .ok_or_else(|| {
                    BucketingError::InvalidArgument(format!("bucket {b} is out of range"))
                })?;
            *slot += 1;
            n += 1;
        }
        let min = counts.iter().copied().min().unwrap_or(0);
        let max = counts.iter().copied().max().unwrap_or(0);
        let mean = n as f64 / f64::from(total);
        let spread = if n == 0 {
            0.0
        } else {
            (max - min) as f64 / mean
        };
        Ok(Self {
            counts,
            min,
            max,
            mean,
            spread,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trim_matches_javascript() {
        assert_eq!(js_trim("\u{FEFF} 7\t\n"), "7");
        assert_eq!(js_trim("\u{85}7"), "\u{85}7");
    }

    #[test]
    fn distribution() {
        let d = Distribution::from_buckets(4, [1, 1, 2, 4]).unwrap();
        assert_eq!(d.counts, vec![2, 1, 0, 1]);
        assert_eq!((d.min, d.max, d.mean, d.spread), (0, 2, 1.0, 2.0));
        assert!(Distribution::from_buckets(4, [5]).is_err());
        assert!(Distribution::from_buckets(4, [0]).is_err());
        assert_eq!(Distribution::from_buckets(3, []).unwrap().spread, 0.0);
        assert!(Distribution::from_buckets(MAX_DISTRIBUTION_BUCKETS + 1, []).is_err());
    }
}
