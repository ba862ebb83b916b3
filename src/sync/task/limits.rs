//! The bounds of a task: what one record, message or memory holds at most, in one place.

/// Largest number the protocol carries: JSON numbers are exact integers only up to 2^53 - 1
/// (`Number.MAX_SAFE_INTEGER`), so a larger one is refused rather than silently rounded.
pub const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// Most chunks one message may be split into (a reader refuses more).
pub const MAX_CHUNKS: u32 = 1 << 16;

/// Smallest `maxRecordBytes` accepted.
pub const MIN_RECORD_BYTES: u64 = 1024;

/// How much of `maxRecordBytes` one partition (its JSON) may take: a partition larger than this
/// is refused by `add_partitions`, so that every chunk holds at least one whole partition with
/// room for the message's header.
pub const PARTITION_SHARE: u64 = 4;

/// How many departed task ids a re-publication of an epoch carries (the latest ones).
pub(super) const RESENT_DEPARTED: usize = 64;

/// How many rejected epoch ids a checkpoint carries (the latest ones).
pub(super) const MAX_REJECTED: usize = 64;

/// How many departed task ids a task remembers (their late records are adopted, see
/// `SyncTask::adopt_departed`).
pub(super) const MAX_DEPARTED: usize = 4096;

/// A task behind for this many `rebalanceTimeout + epochAckTimeout` fences itself.
pub(super) const STUCK_TIMEOUTS: u64 = 8;

/// How many epoch ids a task remembers having applied (the latest ones).
pub(super) const MAX_HISTORY: usize = 64;
