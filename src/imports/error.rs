//! The error type of the `imports` domain.

use std::fmt;

/// Longest user-supplied value (in characters) quoted verbatim in a message.
const QUOTE_LIMIT: usize = 60;

/// Why an import-bucket operation failed.
///
/// The [`code`](ImportBucketError::code) is stable and meant for programs; the `Display` text is
/// the exact user-facing message (lowercase, no trailing period). Nothing is ever assigned when an
/// error is returned.
///
/// # Examples
/// ```
/// use partkit::imports::{BucketCount, ImportBucketError};
/// let err: ImportBucketError = BucketCount::new(0).unwrap_err();
/// assert_eq!(err.code(), "BUCKETS_INVALID");
/// assert_eq!(err.to_string(), "bucket count must be an integer in [1, 50], got 0");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportBucketError(pub(crate) ErrorKind);

/// Where in the input an item-level error was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum At {
    /// The `i`-th item (0-based) of a batch.
    Index(usize),
    /// A single item (e.g. `partition_key`).
    Single,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DatasetProblem {
    Missing,
    NotString,
    Empty,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ErrorKind {
    /// A bucket count that is not an integer in [1, 50]; `value` is how it was rendered.
    BucketsInvalid { value: String },
    /// `GTC_IMPORT_BUCKETS_DEFAULT` is set to something that is not an integer in [1, 50].
    BucketsDefaultInvalid { value: String },
    /// A pre-assigned bucket that is a string but not a UUID.
    BucketNotUuid {
        at: At,
        field: String,
        value: String,
    },
    /// A pre-assigned bucket that is present but not a string.
    BucketNotString { at: At, field: String },
    /// An item without a bucket where one is required (grouping, partition keys).
    BucketMissing { at: At, field: String },
    /// An item without a usable dataset.
    DatasetMissing {
        at: At,
        field: String,
        problem: DatasetProblem,
    },
    /// An item that is not an object.
    ItemNotObject { at: At },
    /// An empty import id.
    ImportIdInvalid,
    /// `normalize_uuid` / `Uuid::parse` on a string that is not a UUID.
    UuidInvalid { value: String },
    /// The random source failed.
    RandomUnavailable { detail: String },
    /// A malformed argument from the calling layer (e.g. an out-of-range index in a packed batch).
    InvalidArgument { message: String },
}

impl ImportBucketError {
    /// The stable, machine-readable code of this error.
    ///
    /// One of `BUCKETS_INVALID`, `BUCKET_NOT_UUID`, `BUCKET_MISSING`, `DATASET_MISSING`,
    /// `ITEM_NOT_OBJECT`, `IMPORT_ID_INVALID`, `UUID_INVALID`, `RANDOM_UNAVAILABLE`,
    /// `INVALID_ARGUMENT`.
    ///
    /// # Examples
    /// ```
    /// use partkit::imports::normalize_uuid;
    /// assert_eq!(normalize_uuid("nope").unwrap_err().code(), "UUID_INVALID");
    /// ```
    pub fn code(&self) -> &'static str {
        match &self.0 {
            ErrorKind::BucketsInvalid { .. } | ErrorKind::BucketsDefaultInvalid { .. } => {
                "BUCKETS_INVALID"
            }
            ErrorKind::BucketNotUuid { .. } | ErrorKind::BucketNotString { .. } => {
                "BUCKET_NOT_UUID"
            }
            ErrorKind::BucketMissing { .. } => "BUCKET_MISSING",
            ErrorKind::DatasetMissing { .. } => "DATASET_MISSING",
            ErrorKind::ItemNotObject { .. } => "ITEM_NOT_OBJECT",
            ErrorKind::ImportIdInvalid => "IMPORT_ID_INVALID",
            ErrorKind::UuidInvalid { .. } => "UUID_INVALID",
            ErrorKind::RandomUnavailable { .. } => "RANDOM_UNAVAILABLE",
            ErrorKind::InvalidArgument { .. } => "INVALID_ARGUMENT",
        }
    }

    /// The index of the offending item in the input, for item-level errors found in a batch.
    ///
    /// # Examples
    /// ```
    /// use partkit::imports::{assign_import_buckets, ImportItem, ImportOptions, OsRandom};
    /// let items = [ImportItem::new("a", None), ImportItem::new("", None)];
    /// let err = assign_import_buckets(&items, &ImportOptions::default(), &mut OsRandom).unwrap_err();
    /// assert_eq!(err.item_index(), Some(1));
    /// ```
    pub fn item_index(&self) -> Option<usize> {
        let at = match &self.0 {
            ErrorKind::BucketNotUuid { at, .. }
            | ErrorKind::BucketNotString { at, .. }
            | ErrorKind::BucketMissing { at, .. }
            | ErrorKind::DatasetMissing { at, .. }
            | ErrorKind::ItemNotObject { at } => at,
            _ => return None,
        };
        match at {
            At::Index(i) => Some(*i),
            At::Single => None,
        }
    }

    /// An error for a [`RandomSource`](crate::imports::RandomSource) that could not produce bytes
    /// (code `RANDOM_UNAVAILABLE`).
    ///
    /// # Examples
    /// ```
    /// use partkit::imports::ImportBucketError;
    /// let err = ImportBucketError::random_unavailable("no entropy");
    /// assert_eq!(err.code(), "RANDOM_UNAVAILABLE");
    /// assert_eq!(err.to_string(), "secure random generator unavailable: no entropy");
    /// ```
    pub fn random_unavailable(detail: impl Into<String>) -> Self {
        ImportBucketError(ErrorKind::RandomUnavailable {
            detail: detail.into(),
        })
    }

    /// An error for a malformed argument from a calling layer (code `INVALID_ARGUMENT`); the
    /// message is used as is.
    ///
    /// # Examples
    /// ```
    /// use partkit::imports::ImportBucketError;
    /// let err = ImportBucketError::invalid_argument("items must be an array");
    /// assert_eq!((err.code(), err.to_string().as_str()), ("INVALID_ARGUMENT", "items must be an array"));
    /// ```
    pub fn invalid_argument(message: impl Into<String>) -> Self {
        ImportBucketError(ErrorKind::InvalidArgument {
            message: message.into(),
        })
    }
}

/// Quotes a user-supplied string for a message, escaping control characters and cutting it to
/// [`QUOTE_LIMIT`] characters.
pub(crate) fn quote(value: &str) -> String {
    let mut chars = value.chars();
    let head: String = chars.by_ref().take(QUOTE_LIMIT).collect();
    if chars.next().is_some() {
        format!("{head:?}…")
    } else {
        format!("{head:?}")
    }
}

struct Subject(At);

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            At::Index(i) => write!(f, "item {i}"),
            At::Single => f.write_str("the item"),
        }
    }
}

impl fmt::Display for ImportBucketError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            ErrorKind::BucketsInvalid { value } => {
                write!(f, "bucket count must be an integer in [1, 50], got {value}")
            }
            ErrorKind::BucketsDefaultInvalid { value } => write!(
                f,
                "GTC_IMPORT_BUCKETS_DEFAULT must be an integer in [1, 50], got {}",
                quote(value)
            ),
            ErrorKind::BucketNotUuid { at, field, value } => write!(
                f,
                "{}: bucket field {} is {}, which is not a uuid (expected 8-4-4-4-12 hex digits)",
                Subject(*at),
                quote(field),
                quote(value)
            ),
            ErrorKind::BucketNotString { at, field } => write!(
                f,
                "{}: bucket field {} is not a string (expected a uuid string, null or no field)",
                Subject(*at),
                quote(field)
            ),
            ErrorKind::BucketMissing { at, field } => write!(
                f,
                "{} has no bucket: field {} is missing (assign buckets first)",
                Subject(*at),
                quote(field)
            ),
            ErrorKind::DatasetMissing { at, field, problem } => {
                let what = match problem {
                    DatasetProblem::Missing => "is missing",
                    DatasetProblem::NotString => "is not a string",
                    DatasetProblem::Empty => "is an empty string",
                };
                write!(
                    f,
                    "{} has no dataset: field {} {what}",
                    Subject(*at),
                    quote(field)
                )
            }
            ErrorKind::ItemNotObject { at } => write!(f, "{} is not an object", Subject(*at)),
            ErrorKind::ImportIdInvalid => f.write_str("import id must be a non-empty string"),
            ErrorKind::UuidInvalid { value } => write!(
                f,
                "{} is not a uuid (expected 8-4-4-4-12 hex digits)",
                quote(value)
            ),
            ErrorKind::RandomUnavailable { detail } => {
                write!(f, "secure random generator unavailable: {detail}")
            }
            ErrorKind::InvalidArgument { message } => f.write_str(message),
        }
    }
}

impl std::error::Error for ImportBucketError {}
