//! Where a task is in the sync log: the counter it stamps on what it publishes, the counters it
//! read of every sender, the last record read, and the messages it is reading chunk by chunk.

use std::collections::BTreeMap;
use std::fmt;

use super::chunk;
use crate::sync::types::{CheckpointRef, MessageType, SyncMessage};

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
    pub(super) partials: Partials,
}

impl Cursor {
    /// The first message a task reads (it has read no record with a `messageSeq` and applied no
    /// epoch), if it is a checkpoint, is where the task starts: its view is the checkpoint's
    /// author's *as of the record it names*, so the task stands there, not at the checkpoint's
    /// own place in the log (docs/sync.md, "Where a new task starts reading"). The rule feeds it
    /// joined without its `messageSeq`; a transport that feeds it as its records gets the same
    /// task: it has read no record yet (a checkpoint it publishes before reading one names
    /// none), and the author's counter is not taken from it, so that the author's records
    /// between the named one and the checkpoint, replayed next, are read, not passed over as
    /// read already.
    pub(super) fn start_at(&mut self, first: &SyncMessage) {
        if first.kind != MessageType::NewEpoch || first.checkpoint.is_none() {
            return;
        }
        self.last_read = None;
        if first.message_seq.is_some() {
            self.heard.remove(&first.task_id);
        }
    }
}

/// The messages being read in chunks, by sender, in sender order: a handful at most (a sender
/// publishes its chunks in one go), so a sorted vector, not a B-tree of its own in the wasm.
#[derive(Clone, Default)]
pub(super) struct Partials(Vec<(String, chunk::Partial)>);

impl Partials {
    fn at(&self, sender: &str) -> Result<usize, usize> {
        self.0.binary_search_by(|(s, _)| s.as_str().cmp(sender))
    }

    pub(super) fn get_mut(&mut self, sender: &str) -> Option<&mut chunk::Partial> {
        let i = self.at(sender).ok()?;
        Some(&mut self.0[i].1)
    }

    pub(super) fn remove(&mut self, sender: &str) -> Option<chunk::Partial> {
        let i = self.at(sender).ok()?;
        Some(self.0.remove(i).1)
    }

    pub(super) fn insert(&mut self, sender: String, p: chunk::Partial) {
        match self.at(&sender) {
            Ok(i) => self.0[i].1 = p,
            Err(i) => self.0.insert(i, (sender, p)),
        }
    }

    pub(super) fn values(&self) -> impl Iterator<Item = &chunk::Partial> {
        self.0.iter().map(|(_, p)| p)
    }
}

impl fmt::Debug for Partials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.0.iter().map(|(s, p)| (s, p)))
            .finish()
    }
}
