//! The sync domain's error type.

use std::fmt;

/// What went wrong (private: new kinds never break callers).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ErrorKind {
    InvalidTaskId,
    InvalidOptions,
    InvalidRebalance,
    InvalidPartition,
    UnknownPartition,
    InvalidTransition,
    MalformedMessage,
    InvalidArgument,
    InputTooLarge,
}

/// A rejected input. The task that returned it is unchanged and keeps working.
///
/// # Examples
/// ```
/// use partkit::sync::SyncTask;
/// let mut task = SyncTask::new("t1").unwrap();
/// let err = task.partition_started("nope", 0).unwrap_err();
/// assert_eq!(err.code(), "SYNC_UNKNOWN_PARTITION");
/// assert_eq!(err.to_string(), "unknown partition: nope is not owned by t1");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncError {
    kind: ErrorKind,
    message: String,
}

impl SyncError {
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        SyncError {
            kind,
            message: message.into(),
        }
    }

    /// Stable machine-readable code.
    ///
    /// One of `SYNC_INVALID_TASK_ID`, `SYNC_INVALID_OPTIONS`, `SYNC_INVALID_REBALANCE`,
    /// `SYNC_INVALID_PARTITION`, `SYNC_UNKNOWN_PARTITION`, `SYNC_INVALID_TRANSITION`,
    /// `SYNC_MALFORMED_MESSAGE`, and, from the start rule (`find_epoch_start`, `join_chunks`),
    /// `INVALID_ARGUMENT` and `INPUT_TOO_LARGE`.
    pub fn code(&self) -> &'static str {
        match self.kind {
            ErrorKind::InvalidTaskId => "SYNC_INVALID_TASK_ID",
            ErrorKind::InvalidOptions => "SYNC_INVALID_OPTIONS",
            ErrorKind::InvalidRebalance => "SYNC_INVALID_REBALANCE",
            ErrorKind::InvalidPartition => "SYNC_INVALID_PARTITION",
            ErrorKind::UnknownPartition => "SYNC_UNKNOWN_PARTITION",
            ErrorKind::InvalidTransition => "SYNC_INVALID_TRANSITION",
            ErrorKind::MalformedMessage => "SYNC_MALFORMED_MESSAGE",
            ErrorKind::InvalidArgument => "INVALID_ARGUMENT",
            ErrorKind::InputTooLarge => "INPUT_TOO_LARGE",
        }
    }

    /// The user-facing message (same as `Display`).
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for SyncError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for SyncError {}

pub(crate) fn malformed(why: impl fmt::Display) -> SyncError {
    SyncError::new(
        ErrorKind::MalformedMessage,
        format!("malformed sync message: {why}"),
    )
}
