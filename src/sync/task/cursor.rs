//! Where a task is in the sync log: the counter it stamps on what it publishes, the counters it
//! read of every sender, the last record read, and the messages it is reading chunk by chunk.

use std::collections::BTreeMap;

use super::chunk;
use crate::sync::types::CheckpointRef;

/// The task's place in the sync log.
#[derive(Debug, Clone, Default)]
pub(super) struct Cursor {
    /// Messages this task has published (the last `messageSeq` it stamped).
    pub(super) seq: u64,
    /// The highest `messageSeq` read from each sender (members of the epoch in force and
    /// senders read since).
    pub(super) heard: BTreeMap<String, u64>,
    /// Own messages read back (the highest own `messageSeq` read, or a count where the
    /// transport dropped it).
    pub(super) own_read: u64,
    /// The `messageSeq` of the newest own record other than a `Regular` one (an epoch, an
    /// answer, a checkpoint: see `checkpoint_waits`).
    pub(super) last_not_regular: u64,
    /// The last record read (its sender and `messageSeq`): what a checkpoint published now is
    /// computed after.
    pub(super) last_read: Option<CheckpointRef>,
    /// Messages read chunk by chunk, per sender, not complete yet.
    pub(super) partials: BTreeMap<String, chunk::Partial>,
}
