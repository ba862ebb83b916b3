//! The `RoundRobinConfig` contract: validation and next-bucket selection.

use super::{BucketSet, BucketingError, RangesInput};

/// A loosely-typed config or state value as it arrives from JSON or JavaScript.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `undefined` or `null`: the field takes its default (`??` semantics).
    Missing,
    /// A boolean.
    Bool(bool),
    /// A number (may be NaN or infinite).
    Number(f64),
    /// A string.
    Text(String),
    /// An array.
    List(Vec<Value>),
    /// Anything else; the payload names its type for error messages.
    Other(&'static str),
}

impl Value {
    /// JavaScript truthiness, as faros' `if (config.bucket_ranges)` uses it.
    pub fn is_truthy(&self) -> bool {
        match self {
            Value::Missing => false,
            Value::Bool(b) => *b,
            Value::Number(n) => *n != 0.0 && !n.is_nan(),
            Value::Text(s) => !s.is_empty(),
            Value::List(_) | Value::Other(_) => true,
        }
    }

    /// An integer: a number with no fraction within ±(2^53 − 1), or a decimal integer string
    /// (`"3"`, `" 12 "`). `None` for everything else (`2.5`, `"2.7"`, `"3abc"`, NaN, booleans).
    pub fn as_integer(&self) -> Option<i64> {
        const MAX_SAFE: f64 = 9_007_199_254_740_991.0;
        match self {
            Value::Number(n) if n.fract() == 0.0 && n.abs() <= MAX_SAFE => Some(*n as i64),
            Value::Text(s) => {
                let t = super::js_trim(s);
                // strip_prefix, not `&t[1..]`: no slicing that could panic (the wasm then
                // carries no panic message of a string slice, with its char formatting)
                let (neg, digits) = match t.strip_prefix('-') {
                    Some(rest) => (true, rest),
                    None => (false, t.strip_prefix('+').unwrap_or(t)),
                };
                if digits.is_empty()
                    || digits.len() > 16
                    || !digits.bytes().all(|b| b.is_ascii_digit())
                {
                    return None;
                }
                let n: i64 = digits.parse().ok()?;
                Some(if neg { -n } else { n })
            }
            _ => None,
        }
    }
}

/// The four bucketing fields of a connector config, unvalidated.
#[derive(Debug, Clone, PartialEq)]
pub struct RawConfig {
    /// `round_robin_bucket_execution`.
    pub round_robin: Value,
    /// `bucket_id`.
    pub bucket_id: Value,
    /// `bucket_total`.
    pub bucket_total: Value,
    /// `bucket_ranges`.
    pub bucket_ranges: Value,
}

impl Default for RawConfig {
    fn default() -> Self {
        Self {
            round_robin: Value::Missing,
            bucket_id: Value::Missing,
            bucket_total: Value::Missing,
            bucket_ranges: Value::Missing,
        }
    }
}

/// What `validate` found that is worth telling the user without failing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Notice {
    /// Nothing to report.
    None,
    /// `bucket_ranges` is set but round robin is off, so the ranges are ignored.
    RangesIgnored,
}

/// `bucket_total ?? 1`, checked to be an integer in `[1, u32::MAX]`.
///
/// # Errors
/// `TotalInvalid` or `TotalTooLarge`.
pub fn bucket_total(raw: &RawConfig) -> Result<u32, BucketingError> {
    if raw.bucket_total == Value::Missing {
        return Ok(1);
    }
    parse_total(&raw.bucket_total)
}

/// A bucket total given explicitly (no default): an integer in `[1, u32::MAX]`.
///
/// # Errors
/// `TotalInvalid` or `TotalTooLarge`.
pub fn parse_total(value: &Value) -> Result<u32, BucketingError> {
    match value.as_integer() {
        Some(n) if n >= 1 => u32::try_from(n).map_err(|_| BucketingError::TotalTooLarge),
        _ => Err(BucketingError::TotalInvalid),
    }
}

/// `bucket_id ?? 1`, checked to be an integer in `[1, total]`.
///
/// # Errors
/// `IdOutOfRange`.
pub fn bucket_id(raw: &RawConfig, total: u32) -> Result<u32, BucketingError> {
    if raw.bucket_id == Value::Missing {
        return Ok(1);
    }
    match raw.bucket_id.as_integer() {
        Some(n) if n >= 1 && n <= i64::from(total) => Ok(n as u32),
        _ => Err(BucketingError::IdOutOfRange {
            total: u64::from(total),
        }),
    }
}

/// Whether round robin is on. Only booleans (or a missing field) are accepted.
///
/// # Errors
/// `ConfigInvalid` for any other type, e.g. the string `"false"` that faros would treat as on.
pub fn round_robin(raw: &RawConfig) -> Result<bool, BucketingError> {
    match raw.round_robin {
        Value::Missing => Ok(false),
        Value::Bool(b) => Ok(b),
        _ => Err(BucketingError::ConfigInvalid(
            "round_robin_bucket_execution must be a boolean".into(),
        )),
    }
}

/// The eligible-bucket set, when `bucket_ranges` is truthy.
///
/// # Errors
/// `RangesType` or any range parse error.
pub fn bucket_set(raw: &RawConfig, total: u32) -> Result<Option<BucketSet>, BucketingError> {
    if !raw.bucket_ranges.is_truthy() {
        return Ok(None);
    }
    let input = match &raw.bucket_ranges {
        Value::Text(s) => RangesInput::Text(s),
        Value::List(items) => RangesInput::List(
            items
                .iter()
                .map(|v| match v {
                    Value::Text(s) => Ok(s.as_str()),
                    _ => Err(BucketingError::RangesType),
                })
                .collect::<Result<_, _>>()?,
        ),
        _ => return Err(BucketingError::RangesType),
    };
    BucketSet::parse(total, &input).map(Some)
}

/// `validateBucketingConfig`: faros' checks in faros' order (total, id, then ranges when round
/// robin is on), plus type checks faros lacks.
///
/// # Errors
/// The first problem found.
pub fn validate(raw: &RawConfig) -> Result<Notice, BucketingError> {
    let total = bucket_total(raw)?;
    bucket_id(raw, total)?;
    let rr = round_robin(raw)?;
    if !raw.bucket_ranges.is_truthy() {
        return Ok(Notice::None);
    }
    if !rr {
        return Ok(Notice::RangesIgnored);
    }
    bucket_set(raw, total)?;
    Ok(Notice::None)
}

/// The last executed bucket from round-robin state, if any.
///
/// # Errors
/// `StateInvalid` when it is present but not an integer.
pub fn last_executed(value: &Value) -> Result<Option<i64>, BucketingError> {
    match value {
        Value::Missing => Ok(None),
        v => v.as_integer().map(Some).ok_or_else(|| {
            BucketingError::StateInvalid(
                "__bucket_execution_state.last_executed_bucket_id must be an integer".into(),
            )
        }),
    }
}

/// A validated round-robin selector: the part of a config `nextBucketId` depends on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selector {
    total: u32,
    round_robin: bool,
    set: Option<BucketSet>,
}

impl Selector {
    /// Reads total, round-robin flag and (when round robin is on) ranges. Like faros'
    /// `nextBucketId`, `bucket_id` is not consulted.
    ///
    /// # Errors
    /// As [`bucket_total`], [`round_robin`] and [`bucket_set`].
    pub fn new(raw: &RawConfig) -> Result<Self, BucketingError> {
        let total = bucket_total(raw)?;
        let round_robin = round_robin(raw)?;
        let set = if round_robin {
            bucket_set(raw, total)?
        } else {
            None
        };
        Ok(Self {
            total,
            round_robin,
            set,
        })
    }

    /// Whether round robin is on.
    pub fn round_robin(&self) -> bool {
        self.round_robin
    }

    /// The bucket after `last` (`None`: no state, which behaves as `last = total`).
    ///
    /// # Examples
    /// ```
    /// use partkit::bucketing::{RawConfig, Selector, Value};
    /// let raw = RawConfig { bucket_total: Value::Number(3.0), ..RawConfig::default() };
    /// let s = Selector::new(&raw).unwrap();
    /// assert_eq!((s.next(None), s.next(Some(1)), s.next(Some(3))), (1, 2, 1));
    /// ```
    pub fn next(&self, last: Option<i64>) -> u32 {
        let last = last.unwrap_or(i64::from(self.total));
        match &self.set {
            Some(set) => set.next(last),
            // rem_euclid keeps the result in [1, total] even for negative state, where faros'
            // `%` would yield 0 or a negative id.
            None => last.rem_euclid(i64::from(self.total)) as u32 + 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(rr: Value, id: Value, total: Value, ranges: Value) -> RawConfig {
        RawConfig {
            round_robin: rr,
            bucket_id: id,
            bucket_total: total,
            bucket_ranges: ranges,
        }
    }
    fn n(x: f64) -> Value {
        Value::Number(x)
    }
    fn t(s: &str) -> Value {
        Value::Text(s.into())
    }
    use Value::Missing as M;

    #[test]
    fn validation_messages() {
        let err = |c: RawConfig| validate(&c).unwrap_err().to_string();
        assert_eq!(
            err(cfg(M, M, n(0.0), M)),
            "bucket_total must be a positive integer"
        );
        assert_eq!(
            err(cfg(M, M, t("2.7"), M)),
            "bucket_total must be a positive integer"
        );
        assert_eq!(
            err(cfg(M, M, n(2.5), M)),
            "bucket_total must be a positive integer"
        );
        assert_eq!(
            err(cfg(M, M, n(f64::NAN), M)),
            "bucket_total must be a positive integer"
        );
        assert_eq!(
            err(cfg(M, M, n(2f64.powi(53)), M)),
            "bucket_total must be a positive integer"
        );
        assert_eq!(
            err(cfg(M, M, n(5e9), M)),
            "bucket_total must be at most 4294967295"
        );
        assert_eq!(
            err(cfg(M, n(2.0), M, M)),
            "bucket_id must be between 1 and 1"
        );
        assert_eq!(
            err(cfg(M, t("3abc"), n(5.0), M)),
            "bucket_id must be between 1 and 5"
        );
        assert_eq!(
            err(cfg(M, n(0.0), n(5.0), M)),
            "bucket_id must be between 1 and 5"
        );
        assert_eq!(
            err(cfg(Value::Bool(true), M, n(5.0), Value::List(vec![]))),
            "bucket_ranges cannot be empty"
        );
        assert_eq!(
            err(cfg(t("false"), M, n(5.0), M)),
            "round_robin_bucket_execution must be a boolean"
        );
        assert_eq!(
            err(cfg(Value::Bool(true), M, n(5.0), n(3.0))),
            "bucket_ranges must be a string or an array of strings"
        );
    }

    #[test]
    fn notices_and_defaults() {
        assert_eq!(validate(&RawConfig::default()), Ok(Notice::None));
        assert_eq!(
            validate(&cfg(M, M, n(5.0), t("1-9"))),
            Ok(Notice::RangesIgnored)
        );
        assert_eq!(
            validate(&cfg(Value::Bool(true), M, n(5.0), t(""))),
            Ok(Notice::None)
        );
        assert_eq!(validate(&cfg(M, t("3"), t(" 5 "), M)), Ok(Notice::None));
    }

    #[test]
    fn round_robin_cycles() {
        let s = Selector::new(&cfg(Value::Bool(true), M, n(4.0), M)).unwrap();
        let mut last = None;
        let seq: Vec<u32> = (0..8)
            .map(|_| {
                let b = s.next(last);
                last = Some(i64::from(b));
                b
            })
            .collect();
        assert_eq!(seq, vec![1, 2, 3, 4, 1, 2, 3, 4]);
        assert_eq!(s.next(Some(7)), 4);
        assert_eq!(
            Selector::new(&cfg(M, M, n(3.0), M)).unwrap().next(Some(7)),
            2
        );
        assert_eq!(s.next(Some(-5)), 4);
        let r = Selector::new(&cfg(Value::Bool(true), M, n(6.0), t("2-3,5"))).unwrap();
        for start in [None, Some(0), Some(1), Some(2), Some(4), Some(6), Some(100)] {
            let mut last = start;
            let mut seq = vec![];
            for _ in 0..4 {
                let b = r.next(last);
                seq.push(b);
                last = Some(i64::from(b));
            }
            assert!(
                seq.windows(2).all(|w| (w[0], w[1]) == (2, 3)
                    || (w[0], w[1]) == (3, 5)
                    || (w[0], w[1]) == (5, 2)),
                "{seq:?}"
            );
        }
        assert_eq!(r.next(None), 2);
    }
}
