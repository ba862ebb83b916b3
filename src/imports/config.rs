//! The bucket count N: bounds, default and the `GTC_IMPORT_BUCKETS_DEFAULT` setting.

use super::error::{ErrorKind, ImportBucketError};

/// The number of buckets per dataset per import when nothing else is configured.
pub const DEFAULT_BUCKETS: u32 = 5;
/// The smallest accepted bucket count.
pub const MIN_BUCKETS: u32 = 1;
/// The largest accepted bucket count.
pub const MAX_BUCKETS: u32 = 50;
/// The environment variable holding the default bucket count.
pub const BUCKETS_DEFAULT_ENV: &str = "GTC_IMPORT_BUCKETS_DEFAULT";

/// A validated bucket count N, an integer in [1, 50].
///
/// # Examples
/// ```
/// use partkit::imports::BucketCount;
/// assert_eq!(BucketCount::new(3).unwrap().get(), 3);
/// assert_eq!(BucketCount::default().get(), 5);
/// assert!(BucketCount::new(51).is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BucketCount(u32);

impl Default for BucketCount {
    fn default() -> Self {
        BucketCount(DEFAULT_BUCKETS)
    }
}

impl BucketCount {
    /// A bucket count from an integer.
    ///
    /// # Errors
    /// `BUCKETS_INVALID` when `n` is not in [1, 50].
    ///
    /// # Examples
    /// ```
    /// use partkit::imports::BucketCount;
    /// assert_eq!(BucketCount::new(0).unwrap_err().code(), "BUCKETS_INVALID");
    /// ```
    pub fn new(n: u32) -> Result<Self, ImportBucketError> {
        if (MIN_BUCKETS..=MAX_BUCKETS).contains(&n) {
            Ok(BucketCount(n))
        } else {
            Err(ImportBucketError(ErrorKind::BucketsInvalid {
                value: n.to_string(),
            }))
        }
    }

    /// A bucket count from a JavaScript number: it must be an integer (no fraction, finite, not
    /// NaN) in [1, 50]. `3.0` is accepted (it is the integer 3 in JavaScript).
    ///
    /// # Errors
    /// `BUCKETS_INVALID` otherwise.
    ///
    /// # Examples
    /// ```
    /// use partkit::imports::BucketCount;
    /// assert_eq!(BucketCount::from_f64(3.0).unwrap().get(), 3);
    /// let err = BucketCount::from_f64(2.5).unwrap_err();
    /// assert_eq!(err.to_string(), "bucket count must be an integer in [1, 50], got 2.5");
    /// assert!(BucketCount::from_f64(f64::NAN).is_err());
    /// ```
    pub fn from_f64(n: f64) -> Result<Self, ImportBucketError> {
        if n.is_finite()
            && n.fract() == 0.0
            && n >= f64::from(MIN_BUCKETS)
            && n <= f64::from(MAX_BUCKETS)
        {
            // In range and integral, so the conversion is exact.
            Ok(BucketCount(n as u32))
        } else {
            Err(ImportBucketError(ErrorKind::BucketsInvalid {
                value: render_f64(n),
            }))
        }
    }

    /// The bucket-count error for a value of the wrong type, rendered by the caller (e.g. a
    /// JavaScript string `"3"`).
    ///
    /// # Examples
    /// ```
    /// use partkit::imports::BucketCount;
    /// let err = BucketCount::invalid("a string");
    /// assert_eq!(err.to_string(), "bucket count must be an integer in [1, 50], got a string");
    /// ```
    pub fn invalid(rendered: &str) -> ImportBucketError {
        ImportBucketError(ErrorKind::BucketsInvalid {
            value: rendered.to_owned(),
        })
    }

    /// The default bucket count from the value of `GTC_IMPORT_BUCKETS_DEFAULT`: unset, empty or
    /// whitespace-only gives 5; otherwise, after trimming ASCII whitespace, it must be decimal
    /// digits only (no sign, fraction or exponent) with a value in [1, 50].
    ///
    /// # Errors
    /// `BUCKETS_INVALID`, naming the variable, for any other value.
    ///
    /// # Examples
    /// ```
    /// use partkit::imports::BucketCount;
    /// assert_eq!(BucketCount::from_env_value(None).unwrap().get(), 5);
    /// assert_eq!(BucketCount::from_env_value(Some(" 12\n")).unwrap().get(), 12);
    /// let err = BucketCount::from_env_value(Some("0")).unwrap_err();
    /// assert_eq!(err.code(), "BUCKETS_INVALID");
    /// assert_eq!(err.to_string(), "GTC_IMPORT_BUCKETS_DEFAULT must be an integer in [1, 50], got \"0\"");
    /// ```
    pub fn from_env_value(value: Option<&str>) -> Result<Self, ImportBucketError> {
        let Some(raw) = value else {
            return Ok(BucketCount::default());
        };
        let text = raw.trim_matches(|c: char| c.is_ascii_whitespace());
        if text.is_empty() {
            return Ok(BucketCount::default());
        }
        let bad = || {
            ImportBucketError(ErrorKind::BucketsDefaultInvalid {
                value: raw.to_owned(),
            })
        };
        if !text.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let digits = text.trim_start_matches('0');
        if digits.len() > 2 {
            return Err(bad());
        }
        let n: u32 = digits
            .bytes()
            .fold(0, |acc, b| acc * 10 + u32::from(b - b'0'));
        BucketCount::new(n).map_err(|_| bad())
    }

    /// The count as an integer in [1, 50].
    ///
    /// # Examples
    /// ```
    /// assert_eq!(partkit::imports::BucketCount::new(7).unwrap().get(), 7);
    /// ```
    pub fn get(self) -> u32 {
        self.0
    }
}

/// Renders a number the way JavaScript's `String(n)` does for the values that matter in messages.
fn render_f64(n: f64) -> String {
    if n.is_nan() {
        "NaN".to_owned()
    } else if n.is_infinite() {
        if n > 0.0 { "Infinity" } else { "-Infinity" }.to_owned()
    } else if n == 0.0 {
        "0".to_owned()
    } else if n.fract() == 0.0 && n.abs() < 1e21 {
        format!("{n:.0}")
    } else {
        format!("{n}")
    }
}
