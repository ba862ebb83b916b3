//! A task's messages in chunks: what it publishes split to `maxRecordBytes`, what it reads
//! joined once every chunk is read in order (the chunks themselves are `chunk`'s).

use std::borrow::Cow;

use super::chunk::{split, split_states, Partial};
use super::SyncTask;
use crate::sync::error::SyncError;
use crate::sync::types::{CheckpointRef, SyncMessage};

impl SyncTask {
    /// Every record this task publishes fits `maxRecordBytes` (see [`split`]).
    pub(super) fn split_records(&self, publish: Vec<SyncMessage>) -> Vec<SyncMessage> {
        let max = self.opts.max_record_bytes;
        publish.into_iter().flat_map(|m| split(m, max)).collect()
    }

    /// What reading chunk `msg` completes: the whole message (validated) when `msg` is the last
    /// chunk of a message read in order so far. Its states are moved out of the partial message
    /// (not copied: at scale they are the whole view), which [`take_chunk`](Self::take_chunk)
    /// then drops; if the whole message is refused, they are put back as they were.
    pub(super) fn peek_chunk(
        &mut self,
        msg: &SyncMessage,
    ) -> Result<Option<SyncMessage>, SyncError> {
        let c = msg.chunk.as_ref().expect("a chunk");
        if c.index + 1 != c.count {
            return Ok(None);
        }
        if c.count == 1 {
            let mut whole = msg.clone();
            whole.chunk = None;
            self.validate_message(&whole)?;
            return Ok(Some(whole));
        }
        let Some(p) = self.cursor.partials.get_mut(&msg.task_id) else {
            return Ok(None);
        };
        if !p.accepts(msg) {
            return Ok(None);
        }
        let (whole, mark) = p.complete(msg);
        if let Err(e) = self.validate_message(&whole) {
            if let Some(p) = self.cursor.partials.get_mut(&msg.task_id) {
                p.put_back(whole, &mark);
            }
            return Err(e);
        }
        Ok(Some(whole))
    }

    /// Reads chunk `msg` (validated, its sender's counter checked, not a re-delivery): the first
    /// chunk opens its sender's partial message (dropping one left open), the next one in order
    /// extends it, anything else drops it. Returns the whole message with the partial's `before`
    /// (the record read before its first chunk) when `whole` (from
    /// [`peek_chunk`](Self::peek_chunk)) completes it.
    pub(super) fn take_chunk(
        &mut self,
        msg: Cow<'_, SyncMessage>,
        whole: Option<SyncMessage>,
        again: bool,
    ) -> Option<(SyncMessage, Option<CheckpointRef>)> {
        let c = msg.chunk.clone().expect("a chunk");
        let before = self.cursor.last_read().cloned();
        if again && c.count > 1 {
            return None; // a re-delivered chunk: read before
        }
        if let Some(whole) = whole {
            let p = self.cursor.partials.remove(&msg.task_id);
            return Some(match p {
                Some(p) if c.count > 1 => (whole, p.before()),
                _ => (whole, before),
            });
        }
        if c.index == 0 {
            let (header, states) = split_states(msg);
            // (a message its sender's clock says was published within the wait holds back
            // checkpoints for the whole wait from its reading here, whatever the clocks say:
            // its sender's may run behind this task's; an older one, read late by a task that
            // started at an older checkpoint, not again)
            let header_ts = header.message_timestamp;
            let since = if self.now.saturating_sub(header_ts) >= self.read_whole_within() {
                header_ts
            } else {
                self.now
            };
            self.cursor.partials.insert(
                header.task_id.clone(),
                Partial::open(header, states, before, since),
            );
            return None;
        }
        let Some(p) = self.cursor.partials.get_mut(&msg.task_id) else {
            return None; // its first chunk was never read here: passed over
        };
        if p.accepts(&msg) {
            p.extend(split_states(msg).1);
        } else {
            // missing or out of order: the message is not applied here (nor anywhere: every
            // reader reads the same records in the same order)
            self.cursor.partials.remove(&msg.task_id);
        }
        None
    }

    /// Every record read: one that is not a chunk means its sender's partial message, if any,
    /// will never complete (its sender publishes its chunks in one go). (Other senders' records
    /// between a message's chunks are read normally, and do not make a checkpoint unclean for
    /// the timing of the next: see `checkpoint_in`.)
    pub(super) fn note_record(&mut self, msg: &SyncMessage) {
        if msg.chunk.is_none() {
            self.cursor.partials.remove(&msg.task_id);
        }
    }

    /// Until when a message being read in chunks holds back the checkpoints of this task, if one
    /// does (a checkpoint published now could name a record in the middle of it, and a reader
    /// starting after that record would miss the message): [`read_whole_within`] after its first
    /// chunk was read. A sender publishes its chunks in one go, so a message that has not been
    /// read whole by then never will (its sender died half-way); counting from the publication
    /// when the sender's clock says it is older than that, a task that reads an old partial
    /// message (it started at a checkpoint before it) is not held back again.
    ///
    ///
    /// Its own messages hold nothing back: it publishes them whole, and its checkpoint, published
    /// after them, lands after them and carries what they do (its own state; an own epoch,
    /// answer or checkpoint is read back whole before a checkpoint goes out, and a copy of the
    /// epoch in force is what the checkpoint re-publishes: see `checkpoint_waits`). (Held back
    /// by them, a lone leader whose producer lagged, reading a copy of its epoch or its own
    /// changes in chunks, let the checkpoint a restarted connector started at age out first.)
    ///
    /// [`read_whole_within`]: Self::read_whole_within
    pub(super) fn chunks_wait_until(&self) -> Option<u64> {
        let wait = self.read_whole_within();
        self.cursor
            .partials
            .of_others(&self.id)
            .map(|p| p.since().saturating_add(wait))
            .filter(|until| self.now < *until)
            .max()
    }

    /// The time a message published now takes to be read whole by a member that keeps up: its
    /// records land within `min(epochAckTimeout, stateRefreshInterval / 4)` of their
    /// publication, chunks spread over that time as a producer may land them, and are read
    /// within as much of their landing (what docs/sync.md's retention rule asks). It is how long
    /// a message being read in chunks holds back checkpoints (its last chunk can be read that
    /// long after its first: holding them back for half of it, a member that read the first
    /// chunk of a successor's clean checkpoint as it landed took it for abandoned while its
    /// last chunks were still landing, and published a checkpoint of its own naming a record in
    /// the middle of it, not clean; so did the other members whose turn came, a storm of
    /// checkpoints in a quiet log), and the shortest successor slot (a member reads the
    /// checkpoint of the author before it before its turn: see `refresh_delay`). At most half
    /// an interval: a sender dying half-way delays the next checkpoint by that much at most.
    pub(super) fn read_whole_within(&self) -> u64 {
        self.opts
            .epoch_ack_timeout
            .min(self.opts.state_refresh_interval / 4)
            .max(1)
            .saturating_mul(2)
    }
}
