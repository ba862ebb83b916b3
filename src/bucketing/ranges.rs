//! `bucket_ranges`: the buckets eligible for round-robin selection.

use super::{js_trim, BucketingError};

/// How `bucket_ranges` arrived: one comma-separated string, or a list of range strings.
#[derive(Debug, Clone, PartialEq)]
pub enum RangesInput<'a> {
    /// `"1-3,5,7-9"`: split on commas.
    Text(&'a str),
    /// `["1-3", "5", "7-9"]`: each item is one range (items are not split on commas).
    List(Vec<&'a str>),
}

/// An ascending, de-duplicated set of eligible buckets, stored as disjoint intervals so that
/// `"1-4000000000"` costs no more than `"1-3"`.
///
/// # Examples
/// ```
/// use partkit::bucketing::{BucketSet, RangesInput};
/// let set = BucketSet::parse(9, &RangesInput::List(vec!["1-3", "5", "7-8"])).unwrap();
/// assert_eq!(set.next(3), 5);
/// assert_eq!(set.next(8), 1);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BucketSet {
    /// Sorted, disjoint, non-adjacent inclusive intervals.
    intervals: Vec<(u32, u32)>,
}

impl BucketSet {
    /// Parses ranges against `total` buckets with faros' rules and messages, except that every
    /// number must be an integer (faros' `parseInt` reads `'2.7'` as 2).
    ///
    /// # Errors
    /// `RangesEmpty`, `RangeFormat`, `RangeNumber`, `RangeOrder`, `RangeBounds`, checked in
    /// that order per range, ranges in input order.
    pub fn parse(total: u32, input: &RangesInput<'_>) -> Result<Self, BucketingError> {
        if total == 0 {
            return Err(BucketingError::TotalInvalid);
        }
        let parts: Vec<&str> = match input {
            // a closure, not a `char` pattern: the wasm then carries no `CharSearcher` (memchr)
            RangesInput::Text(s) => s.split(|c| c == ',').collect(),
            RangesInput::List(items) => items.clone(),
        };
        let parts: Vec<&str> = parts
            .into_iter()
            .filter(|p| !js_trim(p).is_empty())
            .collect();
        if parts.is_empty() {
            return Err(BucketingError::RangesEmpty);
        }
        let mut intervals = Vec::with_capacity(parts.len());
        for range in parts {
            let (start, end) = parse_range(range)?;
            if start < 1 || end > u64::from(total) {
                return Err(BucketingError::RangeBounds {
                    range: range.to_string(),
                    total: u64::from(total),
                });
            }
            // Bounds were checked against a u32 total.
            intervals.push((start as u32, end as u32));
        }
        sort_pairs(&mut intervals);
        let mut merged: Vec<(u32, u32)> = Vec::with_capacity(intervals.len());
        for (s, e) in intervals {
            match merged.last_mut() {
                Some(last) if u64::from(s) <= u64::from(last.1) + 1 => last.1 = last.1.max(e),
                _ => merged.push((s, e)),
            }
        }
        Ok(Self { intervals: merged })
    }

    /// The smallest eligible bucket strictly greater than `last`, else the smallest eligible
    /// bucket (wrap-around). `last` may lie outside the set, or outside `[1, total]`.
    pub fn next(&self, last: i64) -> u32 {
        let idx = self
            .intervals
            .partition_point(|&(_, e)| i64::from(e) <= last);
        match self.intervals.get(idx) {
            Some(&(s, _)) if i64::from(s) > last => s,
            // `last` lies inside this interval and below its end.
            Some(_) => (last + 1) as u32,
            None => self.first(),
        }
    }

    /// The smallest eligible bucket.
    pub fn first(&self) -> u32 {
        self.intervals.first().map_or(1, |&(s, _)| s)
    }

    /// How many buckets are eligible.
    pub fn len(&self) -> u64 {
        self.intervals
            .iter()
            .map(|&(s, e)| u64::from(e - s) + 1)
            .sum()
    }

    /// Never true: parsing rejects empty sets.
    pub fn is_empty(&self) -> bool {
        self.intervals.is_empty()
    }

    /// Whether `id` is eligible.
    pub fn contains(&self, id: u32) -> bool {
        let idx = self.intervals.partition_point(|&(_, e)| e < id);
        self.intervals.get(idx).is_some_and(|&(s, _)| s <= id)
    }

    /// The eligible buckets in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.intervals.iter().flat_map(|&(s, e)| s..=e)
    }
}

/// One range: `"7"` or `"3-5"`, sides trimmed.
fn parse_range(range: &str) -> Result<(u64, u64), BucketingError> {
    let sides: Vec<&str> = range.split(|c| c == '-').map(js_trim).collect();
    if sides.len() > 2 {
        return Err(BucketingError::RangeFormat {
            range: range.to_string(),
        });
    }
    let start = parse_int(sides[0])?;
    let end = match sides.get(1) {
        Some(side) => parse_int(side)?,
        None => start,
    };
    if end < start {
        return Err(BucketingError::RangeOrder {
            range: range.to_string(),
        });
    }
    Ok((start, end))
}

/// An unsigned decimal integer with an optional `+`; huge values saturate (they fail bounds).
fn parse_int(side: &str) -> Result<u64, BucketingError> {
    let digits = side.strip_prefix('+').unwrap_or(side);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(BucketingError::RangeNumber {
            value: side.to_string(),
        });
    }
    Ok(digits.bytes().fold(0u64, |acc, b| {
        acc.saturating_mul(10).saturating_add(u64::from(b - b'0'))
    }))
}

/// Sorts `v` ascending, in the order of `sort_unstable` (pairs are totally ordered, equal pairs
/// are equal): `crate::heapsort`, because the standard library's sort adds about 7.5 kB to the
/// bucketing wasm, and a config's ranges are few.
fn sort_pairs(v: &mut [(u32, u32)]) {
    crate::heapsort::heapsort(v);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(total: u32, text: &str) -> Result<BucketSet, String> {
        BucketSet::parse(total, &RangesInput::Text(text)).map_err(|e| e.to_string())
    }

    #[test]
    fn sort_pairs_sorts_as_sort_unstable() {
        // a fixed pseudo-random sequence (xorshift), lengths 0..200, with many equal pairs
        let mut x = 0x9e37_79b9_u32;
        for n in 0..200 {
            let mut v: Vec<(u32, u32)> = (0..n)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 17;
                    x ^= x << 5;
                    (x % 17, (x >> 8) % 5)
                })
                .collect();
            let mut want = v.clone();
            want.sort_unstable();
            sort_pairs(&mut v);
            assert_eq!(v, want, "length {n}");
        }
    }

    #[test]
    fn parses_and_merges() {
        let s = set(10, " 2 - 4 , 7 ").unwrap();
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![2, 3, 4, 7]);
        let s = set(10, "1-3,2-5,6,9,9").unwrap();
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![1, 2, 3, 4, 5, 6, 9]);
        assert_eq!(s.len(), 7);
    }

    #[test]
    fn next_follows_faros() {
        let s = BucketSet::parse(9, &RangesInput::List(vec!["1-3", "5", "7-8"])).unwrap();
        for (last, want) in [
            (1, 2),
            (2, 3),
            (3, 5),
            (5, 7),
            (7, 8),
            (8, 1),
            (0, 1),
            (100, 1),
            (-5, 1),
            (4, 5),
        ] {
            assert_eq!(s.next(last), want, "after {last}");
        }
        assert_eq!(set(8, "2,4,6,8").unwrap().next(8), 2);
        let one = set(5, "3").unwrap();
        assert_eq!((one.next(1), one.next(3)), (3, 3));
    }

    #[test]
    fn messages() {
        assert_eq!(set(5, " , ").unwrap_err(), "bucket_ranges cannot be empty");
        assert_eq!(
            BucketSet::parse(5, &RangesInput::List(vec![]))
                .unwrap_err()
                .to_string(),
            "bucket_ranges cannot be empty"
        );
        assert_eq!(
            set(5, "1-2-3").unwrap_err(),
            "Invalid range format: 1-2-3. Valid formats are: single number (e.g., '7') or number range (e.g., '3-5')"
        );
        assert_eq!(set(5, "-1").unwrap_err(), "Invalid number in range: ");
        assert_eq!(set(5, "1-").unwrap_err(), "Invalid number in range: ");
        assert_eq!(set(5, "abc").unwrap_err(), "Invalid number in range: abc");
        assert_eq!(set(5, "2.7").unwrap_err(), "Invalid number in range: 2.7");
        assert_eq!(set(5, "3abc").unwrap_err(), "Invalid number in range: 3abc");
        assert_eq!(set(5, "1 2").unwrap_err(), "Invalid number in range: 1 2");
        assert_eq!(
            set(5, "4-2").unwrap_err(),
            "Invalid range 4-2: end cannot be less than start"
        );
        assert_eq!(
            set(5, " 0-2").unwrap_err(),
            "Invalid bucket range  0-2: values must be between 1 and 5"
        );
        assert_eq!(
            set(5, "3-6").unwrap_err(),
            "Invalid bucket range 3-6: values must be between 1 and 5"
        );
        assert_eq!(
            set(5, "99999999999999999999999").unwrap_err(),
            "Invalid bucket range 99999999999999999999999: values must be between 1 and 5"
        );
    }

    #[test]
    fn huge_ranges_are_cheap() {
        let s = set(u32::MAX, "1-4294967295").unwrap();
        assert_eq!(s.len(), u64::from(u32::MAX));
        assert_eq!(s.next(i64::from(u32::MAX)), 1);
        assert_eq!(s.next(41), 42);
        assert!(s.contains(7) && !set(9, "1-3").unwrap().contains(4));
    }
}
