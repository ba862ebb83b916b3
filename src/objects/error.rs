//! The object-partitioning error type.

use std::fmt;

/// An object-partitioning error. `Display` is the exact message Go's partitioner returns
/// (Bacalhau's `pkg/s3/partitioning.go`); [`PartitionError::code`] is a stable identifier.
///
/// # Examples
/// ```
/// use partkit::objects::{PartitionConfig, PartitionError};
/// let err = PartitionConfig::substring(3, 3).validate().unwrap_err();
/// assert_eq!(err.code(), "PARTITION_CONFIG_INVALID");
/// assert_eq!(err.to_string(), "end index must be greater than start index");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartitionError(pub(crate) ErrorKind);

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ErrorKind {
    TypeUnsupported(String),
    PatternEmpty,
    PatternInvalid(String),
    StartNegative,
    EndNotAfterStart,
    DateFormatEmpty,
    DateFormatInvalid(String),
    CountInvalid,
    IndexOutOfRange {
        total: i64,
    },
    CountUnsupported {
        total: i64,
    },
    /// A config string over its bound (a difference from Go, which has none): `field`, its
    /// length and the bound, in UTF-8 bytes.
    TooLarge {
        field: &'static str,
        len: usize,
        bound: usize,
    },
    /// A line of a listing given as bytes over [`MAX_LINE_BYTES`](super::lines::MAX_LINE_BYTES).
    LineTooLong {
        len: usize,
        bound: usize,
    },
}

impl PartitionError {
    /// The stable error code:
    /// `PARTITION_CONFIG_INVALID` (any `PartitionConfig.Validate` failure),
    /// `PARTITION_COUNT_INVALID` (total ≤ 0), `PARTITION_INDEX_OUT_OF_RANGE`,
    /// `PARTITION_COUNT_UNSUPPORTED` (a total Go cannot hash with, see [`PartitionError::reason`]),
    /// `INPUT_TOO_LARGE` (a pattern or date format over its bound, see
    /// [`MAX_PATTERN_BYTES`](super::MAX_PATTERN_BYTES)).
    pub fn code(&self) -> &'static str {
        match self.0 {
            ErrorKind::CountInvalid => "PARTITION_COUNT_INVALID",
            ErrorKind::IndexOutOfRange { .. } => "PARTITION_INDEX_OUT_OF_RANGE",
            ErrorKind::CountUnsupported { .. } => "PARTITION_COUNT_UNSUPPORTED",
            ErrorKind::TooLarge { .. } | ErrorKind::LineTooLong { .. } => "INPUT_TOO_LARGE",
            _ => "PARTITION_CONFIG_INVALID",
        }
    }

    /// A finer, stable reason within the code, e.g. `type`, `pattern`, `startIndex`,
    /// `endIndex`, `dateFormat`, `totalPartitions`, `partitionIndex`.
    pub fn reason(&self) -> &'static str {
        match self.0 {
            ErrorKind::TypeUnsupported(_) => "type",
            ErrorKind::PatternEmpty | ErrorKind::PatternInvalid(_) => "pattern",
            ErrorKind::TooLarge { field, .. } => field,
            ErrorKind::LineTooLong { .. } => "line",
            ErrorKind::StartNegative => "startIndex",
            ErrorKind::EndNotAfterStart => "endIndex",
            ErrorKind::DateFormatEmpty | ErrorKind::DateFormatInvalid(_) => "dateFormat",
            ErrorKind::CountInvalid | ErrorKind::CountUnsupported { .. } => "totalPartitions",
            ErrorKind::IndexOutOfRange { .. } => "partitionIndex",
        }
    }
}

impl fmt::Display for PartitionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            ErrorKind::TypeUnsupported(t) => write!(f, "unsupported partition key type {t}"),
            ErrorKind::PatternEmpty => f.write_str("regex pattern cannot be empty"),
            ErrorKind::PatternInvalid(e) => write!(f, "invalid regex pattern: {e}"),
            ErrorKind::StartNegative => f.write_str("start index cannot be negative"),
            ErrorKind::EndNotAfterStart => f.write_str("end index must be greater than start index"),
            ErrorKind::DateFormatEmpty => f.write_str("date format cannot be empty"),
            ErrorKind::DateFormatInvalid(layout) => write!(f, "invalid date format: {layout}"),
            ErrorKind::CountInvalid => f.write_str("job partitions/count must be greater than 0"),
            ErrorKind::IndexOutOfRange { total } => {
                write!(f, "partition index must be between 0 and {}", total - 1)
            }
            ErrorKind::TooLarge { field, len, bound } => write!(
                f,
                "partition.{field} is {len} bytes of UTF-8, more than the bound of {bound} bytes"
            ),
            ErrorKind::LineTooLong { len, bound } => write!(
                f,
                "a line of the listing has {len} bytes (at least), more than the bound of {bound} bytes"
            ),
            ErrorKind::CountUnsupported { total } => write!(
                f,
                "job partitions/count {total} is not supported: Go hashes with uint32({total}) = 0 and panics"
            ),
        }
    }
}

impl std::error::Error for PartitionError {}
