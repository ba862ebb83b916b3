//! The lifecycle domain's error type.

use std::fmt;

use crate::quote::cut;

/// Why the build state refused an event, a snapshot or an invariant check.
///
/// [`code`](LifecycleError::code) is stable and machine-readable (`SCREAMING_SNAKE`);
/// [`Display`](fmt::Display) is the exact user-facing message. When the error comes from
/// [`BuildState::replay`](super::BuildState::replay), [`event_index`](LifecycleError::event_index)
/// tells which event of the log was refused and the message starts with `event N: `.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LifecycleError {
    kind: ErrorKind,
    event_index: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ErrorKind {
    InvalidEvent(String),
    UnknownWant(String),
    DuplicateWant(String),
    WantWrongState {
        want_id: String,
        state: &'static str,
    },
    UnknownJobRun(String),
    DuplicateJobRun(String),
    JobRunWrongState {
        job_run_id: String,
        state: &'static str,
        event: &'static str,
    },
    DuplicateRefInJob {
        job_run_id: String,
        partition_ref: String,
    },
    PartitionLeased {
        partition_ref: String,
        uuid: String,
        state: &'static str,
    },
    DuplicateTaint(String),
    DependencyCycle(String),
    TimestampNotMonotonic {
        timestamp: u64,
        last: u64,
    },
    InvalidSnapshot(String),
    InvariantViolation(String),
}

impl LifecycleError {
    pub(crate) fn new(kind: ErrorKind) -> Self {
        LifecycleError {
            kind,
            event_index: None,
        }
    }

    pub(crate) fn invalid_event(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidEvent(message.into()))
    }

    pub(crate) fn invalid_snapshot(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidSnapshot(message.into()))
    }

    pub(crate) fn invariant(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvariantViolation(message.into()))
    }

    pub(crate) fn at_event(mut self, index: usize) -> Self {
        self.event_index = Some(index);
        self
    }

    /// Moves the event index by `offset` (a log applied in chunks; used by the wasm binding).
    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
    pub(crate) fn offset_event(mut self, offset: usize) -> Self {
        self.event_index = self.event_index.map(|i| i.saturating_add(offset));
        self
    }

    /// The stable error code:
    ///
    /// | code | when |
    /// | --- | --- |
    /// | `INVALID_EVENT` | malformed event: unknown `type`, missing or mistyped field, empty id or ref, empty or repeating list, number outside `0..=2^53-1`, unknown field |
    /// | `UNKNOWN_WANT` / `DUPLICATE_WANT` | `WantCancel` of an unknown want / `WantCreate` with a used `wantId` |
    /// | `WANT_WRONG_STATE` | `WantCancel` of a want that is already Successful, Failed, UpstreamFailed or Canceled |
    /// | `UNKNOWN_JOB_RUN` / `DUPLICATE_JOB_RUN` | a job event (or `sourceJobRunId`) naming an unknown job run / `JobRunBuffer` with a used `jobRunId` |
    /// | `JOB_RUN_WRONG_STATE` | a job event for a job run that has already ended, or a derivative want whose source job run is not DepMissed |
    /// | `DUPLICATE_REF_IN_JOB` | `JobRunBuffer` listing the same ref twice |
    /// | `PARTITION_LEASED` | `JobRunBuffer` for a ref whose canonical partition is Building or UpstreamBuilding |
    /// | `DUPLICATE_TAINT` | `TaintCreate` with a used `taintId` |
    /// | `DEPENDENCY_CYCLE` | `JobRunDepMiss` whose missing deps would make partitions wait for each other forever |
    /// | `TIMESTAMP_NOT_MONOTONIC` | an event whose `timestamp` is earlier than the last applied event's (equal is fine) |
    /// | `INVALID_SNAPSHOT` | `from_snapshot` input that is malformed or inconsistent |
    /// | `INVARIANT_VIOLATION` | `check_invariants` found a broken invariant |
    pub fn code(&self) -> &'static str {
        match &self.kind {
            ErrorKind::InvalidEvent(_) => "INVALID_EVENT",
            ErrorKind::UnknownWant(_) => "UNKNOWN_WANT",
            ErrorKind::DuplicateWant(_) => "DUPLICATE_WANT",
            ErrorKind::WantWrongState { .. } => "WANT_WRONG_STATE",
            ErrorKind::UnknownJobRun(_) => "UNKNOWN_JOB_RUN",
            ErrorKind::DuplicateJobRun(_) => "DUPLICATE_JOB_RUN",
            ErrorKind::JobRunWrongState { .. } => "JOB_RUN_WRONG_STATE",
            ErrorKind::DuplicateRefInJob { .. } => "DUPLICATE_REF_IN_JOB",
            ErrorKind::PartitionLeased { .. } => "PARTITION_LEASED",
            ErrorKind::DuplicateTaint(_) => "DUPLICATE_TAINT",
            ErrorKind::DependencyCycle(_) => "DEPENDENCY_CYCLE",
            ErrorKind::TimestampNotMonotonic { .. } => "TIMESTAMP_NOT_MONOTONIC",
            ErrorKind::InvalidSnapshot(_) => "INVALID_SNAPSHOT",
            ErrorKind::InvariantViolation(_) => "INVARIANT_VIOLATION",
        }
    }

    /// The index (from 0) of the refused event in the log given to `replay`, if any.
    pub fn event_index(&self) -> Option<usize> {
        self.event_index
    }
}

impl fmt::Display for LifecycleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(index) = self.event_index {
            write!(f, "event {index}: ")?;
        }
        match &self.kind {
            ErrorKind::InvalidEvent(m) => write!(f, "invalid event: {m}"),
            ErrorKind::UnknownWant(id) => write!(f, "unknown want '{}'", cut(id)),
            ErrorKind::DuplicateWant(id) => write!(f, "want '{}' already exists", cut(id)),
            ErrorKind::WantWrongState { want_id, state } => {
                write!(
                    f,
                    "want '{}' is {state} and can no longer be canceled",
                    cut(want_id)
                )
            }
            ErrorKind::UnknownJobRun(id) => write!(f, "unknown job run '{}'", cut(id)),
            ErrorKind::DuplicateJobRun(id) => write!(f, "job run '{}' already exists", cut(id)),
            ErrorKind::JobRunWrongState {
                job_run_id,
                state,
                event,
            } => {
                write!(
                    f,
                    "job run '{}' is {state}: {event} is not allowed",
                    cut(job_run_id)
                )
            }
            ErrorKind::DuplicateRefInJob {
                job_run_id,
                partition_ref,
            } => write!(
                f,
                "job run '{}' lists partition '{}' more than once",
                cut(job_run_id),
                cut(partition_ref)
            ),
            ErrorKind::PartitionLeased {
                partition_ref,
                uuid,
                state,
            } => write!(
                f,
                "partition '{}' is leased: its canonical instance {uuid} is {state}",
                cut(partition_ref)
            ),
            ErrorKind::DuplicateTaint(id) => write!(f, "taint '{}' already exists", cut(id)),
            ErrorKind::DependencyCycle(m) => write!(f, "dependency cycle: {m}"),
            ErrorKind::TimestampNotMonotonic { timestamp, last } => write!(
                f,
                "timestamp {timestamp} is earlier than {last}, the timestamp of the last applied event"
            ),
            ErrorKind::InvalidSnapshot(m) => write!(f, "invalid snapshot: {m}"),
            ErrorKind::InvariantViolation(m) => write!(f, "invariant violated: {m}"),
        }
    }
}

impl std::error::Error for LifecycleError {}

/// `{:?}` of an `Option` whose value's `Debug` is its `Display` (`u64`, a partition UUID):
/// `Some(x)` or `None`, the same text, written without `Option`'s derived `Debug` and the
/// formatter's tuple builder that it brings into the wasm.
pub(crate) struct OptionText<T>(pub(crate) Option<T>);

impl<T: fmt::Display> fmt::Display for OptionText<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Some(x) => write!(f, "Some({x})"),
            None => f.write_str("None"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::OptionText;
    use crate::lifecycle::derive_partition_uuid;

    #[test]
    fn option_text_is_options_debug() {
        for v in [None, Some(0u64), Some(9_007_199_254_740_991)] {
            assert_eq!(OptionText(v).to_string(), format!("{v:?}"));
        }
        let uuid = Some(derive_partition_uuid("job", "data/p"));
        assert_eq!(OptionText(uuid).to_string(), format!("{uuid:?}"));
        assert_eq!(
            OptionText(uuid).to_string(),
            format!("Some({})", uuid.unwrap())
        );
    }
}
