use std::fmt;

/// Everything that can go wrong in bucketing and round-robin selection.
///
/// `Display` gives the exact user-facing message: the faros-airbyte-common message wherever
/// faros has one. [`BucketingError::code`] gives a stable machine-readable code.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BucketingError {
    /// `bucket_total` is not a positive integer.
    TotalInvalid,
    /// `bucket_total` is an integer above `u32::MAX`: the hash is 32 bits, so it cannot spread further.
    TotalTooLarge,
    /// `bucket_id` is not an integer in `[1, total]`.
    IdOutOfRange {
        /// The bucket total the id was checked against.
        total: u64,
    },
    /// `bucket_ranges` holds no range once blank parts are dropped.
    RangesEmpty,
    /// `bucket_ranges` is neither a string nor an array of strings.
    RangesType,
    /// A range has more than one `-`.
    RangeFormat {
        /// The range as written.
        range: String,
    },
    /// One side of a range is not an integer.
    RangeNumber {
        /// The offending side, trimmed.
        value: String,
    },
    /// A range ends before it starts.
    RangeOrder {
        /// The range as written.
        range: String,
    },
    /// A range reaches outside `[1, total]`.
    RangeBounds {
        /// The range as written.
        range: String,
        /// The bucket total.
        total: u64,
    },
    /// A config field other than the numbers has the wrong type.
    ConfigInvalid(String),
    /// The round-robin state is malformed.
    StateInvalid(String),
    /// An argument of a library function is out of its domain.
    InvalidArgument(String),
}

impl BucketingError {
    /// The stable error code, e.g. `BUCKET_TOTAL_INVALID`.
    pub fn code(&self) -> &'static str {
        match self {
            Self::TotalInvalid | Self::TotalTooLarge => "BUCKET_TOTAL_INVALID",
            Self::IdOutOfRange { .. } => "BUCKET_ID_OUT_OF_RANGE",
            Self::RangesEmpty => "BUCKET_RANGES_EMPTY",
            Self::RangesType => "BUCKET_RANGES_TYPE",
            Self::RangeFormat { .. } => "BUCKET_RANGE_FORMAT",
            Self::RangeNumber { .. } => "BUCKET_RANGE_NUMBER",
            Self::RangeOrder { .. } => "BUCKET_RANGE_ORDER",
            Self::RangeBounds { .. } => "BUCKET_RANGE_BOUNDS",
            Self::ConfigInvalid(_) => "BUCKET_CONFIG_INVALID",
            Self::StateInvalid(_) => "BUCKET_STATE_INVALID",
            Self::InvalidArgument(_) => "INVALID_ARGUMENT",
        }
    }
}

impl fmt::Display for BucketingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TotalInvalid => f.write_str("bucket_total must be a positive integer"),
            Self::TotalTooLarge => write!(f, "bucket_total must be at most {}", u32::MAX),
            Self::IdOutOfRange { total } => write!(f, "bucket_id must be between 1 and {total}"),
            Self::RangesEmpty => f.write_str("bucket_ranges cannot be empty"),
            Self::RangesType => f.write_str("bucket_ranges must be a string or an array of strings"),
            Self::RangeFormat { range } => write!(
                f,
                "Invalid range format: {range}. Valid formats are: single number (e.g., '7') or number range (e.g., '3-5')"
            ),
            Self::RangeNumber { value } => write!(f, "Invalid number in range: {value}"),
            Self::RangeOrder { range } => {
                write!(f, "Invalid range {range}: end cannot be less than start")
            }
            Self::RangeBounds { range, total } => write!(
                f,
                "Invalid bucket range {range}: values must be between 1 and {total}"
            ),
            Self::ConfigInvalid(m) | Self::StateInvalid(m) | Self::InvalidArgument(m) => {
                f.write_str(m)
            }
        }
    }
}

impl std::error::Error for BucketingError {}

impl From<crate::packed::PackedError> for BucketingError {
    fn from(e: crate::packed::PackedError) -> Self {
        Self::InvalidArgument(e.to_string())
    }
}
