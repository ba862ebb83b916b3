//! The inputs of a task (a rebalance, a message read, partitions found, started and finished,
//! time passing, a hole in the log; a clean stop is `close`'s) and the frame every input runs in:
//! a fenced task does nothing more, and what an input publishes is sealed (checkpoint first,
//! split into records of at most `maxRecordBytes`, numbered by the sender counter). The steps
//! they take are the parts' (`settle` for the own partitions, `log` and `epoch` for messages).

use std::borrow::Cow;

use super::limits::MAX_SAFE_INTEGER;
use super::timer::Timer;
use super::SyncTask;
use crate::sync::error::{ErrorKind, SyncError};
use crate::sync::types::{
    CheckpointRef, MessageType, PartitionSpec, RebalanceEvent, SyncMessage, SyncOutput,
};

impl SyncTask {
    /// A group rebalance: answer with the own state; a leader starts collecting answers.
    ///
    /// Stale or repeated generations are ignored. Sharing stays disabled until an epoch of this
    /// generation (or newer) is applied.
    ///
    /// # Errors
    /// `SYNC_INVALID_REBALANCE` if the generation is 0, or the event says `leader` without a
    /// member list that contains this task.
    pub fn on_rebalance(
        &mut self,
        event: &RebalanceEvent,
        now: u64,
    ) -> Result<SyncOutput, SyncError> {
        if self.closed() {
            // (its final checkpoint stays its last record: see `close`)
            return Ok(SyncOutput::default());
        }
        self.input(|t| t.on_rebalance_inner(event, now))
    }

    fn on_rebalance_inner(
        &mut self,
        event: &RebalanceEvent,
        now: u64,
    ) -> Result<SyncOutput, SyncError> {
        let members = self.rebalance_members(event)?;
        self.clock(now);
        let mut out = SyncOutput::default();
        if self.leading.told_of(event.generation) {
            return Ok(out);
        }
        self.leading
            .note_rebalance(event.generation, event.leader, self.epoch_generation());
        if event.generation <= self.epoch_generation() {
            // an epoch for this generation is already in force
            self.finish(&mut out);
            return Ok(out);
        }
        self.leading
            .collect(event.leader, event.generation, members, self.now);
        self.refresh_sooner();
        self.settle(&mut out);
        self.publish_own(MessageType::RebalanceAnswer, &mut out);
        self.maybe_lead(&mut out);
        Ok(out)
    }

    /// The members a rebalance gives a leader (sorted, each once; empty for a member), or why
    /// the event is refused.
    fn rebalance_members(&self, event: &RebalanceEvent) -> Result<Vec<String>, SyncError> {
        let bad = |why: &str| {
            SyncError::new(
                ErrorKind::InvalidRebalance,
                format!("invalid rebalance: {why}"),
            )
        };
        if event.generation == 0 || event.generation > MAX_SAFE_INTEGER {
            return Err(bad("generation must be in 1..=2^53-1"));
        }
        let mut members: Vec<String> = Vec::new();
        if event.leader {
            let Some(m) = &event.members else {
                return Err(bad("a leader needs the member list"));
            };
            if m.iter().any(|x| x.is_empty()) {
                return Err(bad("a member id is empty"));
            }
            members = crate::sync::types::sort_by_text(m.clone(), |s| s.as_str());
            members.dedup();
            if !members.contains(&self.id) {
                return Err(bad("the member list does not contain the leader"));
            }
        }
        Ok(members)
    }

    /// A message read from the sync topic (own messages included), in topic order.
    ///
    /// # Errors
    /// `SYNC_MALFORMED_MESSAGE` if the message is inconsistent (empty ids, a Regular or
    /// RebalanceAnswer without the sender's state, duplicate tokens, ...).
    pub fn on_message(&mut self, msg: &SyncMessage, now: u64) -> Result<SyncOutput, SyncError> {
        self.reopening_input(|t| t.on_message_inner(Cow::Borrowed(msg), now))
    }

    /// [`on_message`](Self::on_message) of a message the caller gives away (the wasm binding
    /// parsed it for this call): the states of a message read in chunks are moved into it, not
    /// copied (at scale they are the whole view).
    #[cfg(target_arch = "wasm32")]
    pub(crate) fn on_message_owned(
        &mut self,
        msg: SyncMessage,
        now: u64,
    ) -> Result<SyncOutput, SyncError> {
        self.reopening_input(|t| t.on_message_inner(Cow::Owned(msg), now))
    }

    fn on_message_inner(
        &mut self,
        record: Cow<'_, SyncMessage>,
        now: u64,
    ) -> Result<SyncOutput, SyncError> {
        let msg: &SyncMessage = &record;
        let whole = if msg.chunk.is_some() {
            self.validate_chunk(msg)?;
            self.peek_chunk(msg)?
        } else {
            self.validate_message(msg)?;
            None
        };
        self.clock(now);
        let mut out = SyncOutput::default();
        let Some(again) = self.count_record(msg, &mut out) else {
            return Ok(out);
        };
        // a chunk is read; the message it belongs to is taken when its last chunk is, as if it
        // stood at its first (what was read before that is what a checkpoint names). A record
        // read again (re-delivered, or landed twice) is not where the reader is: a checkpoint
        // names the newest record it read (naming the one read again, the next checkpoint after
        // a re-delivery was not clean)
        let here = self.cursor.place_of(msg, again);
        // (a message read whole is not copied: at scale a NewEpoch is the whole view)
        let (mut whole, before) = if msg.chunk.is_some() {
            match self.take_chunk(record, whole, again) {
                Some((whole, before)) => (Cow::Owned(whole), before),
                None => {
                    self.cursor.read_to(here);
                    return Ok(out);
                }
            }
        } else {
            (record, self.cursor.last_read().cloned())
        };
        // (every finish a record says is noted before anything of it is applied)
        self.finishes.note_message(&whole, self.now);
        if whole.checkpoint.is_some() {
            self.checkpoint_in(&whole, before.as_ref());
        }
        self.cursor.read_to(here);
        if before.is_none() && self.view.epoch().is_none() {
            self.cursor.start_at(&whole);
        }
        self.apply_message(&mut whole, before.is_none(), &mut out);
        self.finish(&mut out);
        Ok(out)
    }

    /// The sender counter of a record read: a jump is a hole in the log (this task fences
    /// itself: `None`); a counter not new is a record read again (`Some(true)`), which changes
    /// no message being read in chunks.
    fn count_record(&mut self, msg: &SyncMessage, out: &mut SyncOutput) -> Option<bool> {
        let again = match self.cursor.count(msg, &self.id) {
            Ok(again) => again,
            Err(hole) => {
                let why = format!(
                    "missed messages {}..={} of {} in the sync log; its view may be wrong",
                    hole.start(),
                    hole.end(),
                    msg.task_id
                );
                self.fence_self(why, out);
                return None;
            }
        };
        if !again {
            self.note_record(msg);
        }
        Some(again)
    }

    /// A checkpoint read whole: a clean one of the epoch in force (its first chunk directly
    /// follows the record it names, whatever other senders' records landed between its chunks)
    /// counts as the last clean one; one of this task's that is not clean is followed by
    /// another one, unless a clean one was read since it was published, after a backoff longer
    /// than its own publication took (see `retry_checkpoint`). (One of an older epoch, from a
    /// task that could not apply the newer one, is not a place to start from.)
    ///
    /// Records of other senders between a checkpoint's chunks landed after the record it names:
    /// a new task that starts at it applies it and replays them (`find_epoch_start` starts after
    /// the named record), a complete state as much as one nothing came between. Counting them
    /// against it, a checkpoint of hundreds of chunks whose publication took longer than the
    /// retry's wait was never clean once several authors published at once (each one's chunks
    /// between the others'), and every member of a large connector re-published its whole view
    /// every few seconds for as long as it ran (`checkpoints_in_hundreds_of_chunks_converge_after_a_leader_change`).
    fn checkpoint_in(&mut self, msg: &SyncMessage, before: Option<&CheckpointRef>) {
        let names_before = match (&msg.checkpoint, before) {
            (Some(c), Some(b)) => c.names_same_record(b),
            _ => false,
        };
        let own = msg.task_id == self.id;
        if names_before && msg.sync_epoch == self.cur_id() {
            self.checkpoint_read(msg);
        } else if own && self.refresh.checkpoint_over_own() && msg.sync_epoch == self.cur_id() {
            // published while own Regular records were in flight (see `checkpoint_waits`): not
            // clean, but a task can start at it, and another would be no cleaner
            self.checkpoint_read(msg);
        } else if own {
            self.retry_checkpoint(msg);
        }
    }

    /// An own checkpoint is not clean (another record landed between the one it was computed
    /// after and its first chunk): publish another one soon, unless a clean checkpoint (of any
    /// author) was read since this one was published. The wait is `min(epochAckTimeout,
    /// stateRefreshInterval)`, but at least as long as this one took from its publication to
    /// being read back whole, doubled for each unclean one in a row, at most an interval: the
    /// retries of authors who raced do not land on each other again and again.
    fn retry_checkpoint(&mut self, msg: &SyncMessage) {
        let interval = self.opts.state_refresh_interval;
        let took = self.now.saturating_sub(msg.message_timestamp);
        let base = self.opts.epoch_ack_timeout.min(interval).max(took);
        self.refresh
            .retry_unclean(msg.message_timestamp, self.now, base, interval);
    }

    /// A whole message read, by its kind; `first` when it is the first record this task read.
    fn apply_message(
        &mut self,
        whole: &mut Cow<'_, SyncMessage>,
        first: bool,
        out: &mut SyncOutput,
    ) {
        let msg: &SyncMessage = whole;
        if msg.kind == MessageType::NewEpoch && msg.epoch_generation > self.epoch_generation() {
            self.view
                .note_read_epoch(msg.epoch_generation, &msg.sync_epoch);
        }
        match msg.kind {
            MessageType::NewEpoch => {
                // (an epoch rebuilds the view: what the positions of its entries knew of them is
                // forgotten; the own lists keep their marks, see `Own`)
                self.view.forget_positions();
                self.on_new_epoch(whole, out);
                self.view.forget_positions();
                // a task that starts reading at a checkpoint (where `findEpochStart` puts it)
                // and applied it counts it as the last clean one: the next falls due an
                // interval after it was published, not after this task read it
                let fresh = first && self.refresh.checkpoint_seen().is_none();
                if fresh && whole.checkpoint.is_some() && whole.sync_epoch == self.cur_id() {
                    self.checkpoint_read(whole);
                }
            }
            MessageType::Regular => self.on_regular(msg),
            MessageType::RebalanceAnswer => self.on_answer(msg, out),
        }
        // (an epoch applied has moved its states into the view: its sender states are not read)
        let msg: &SyncMessage = whole;
        if msg.kind != MessageType::NewEpoch {
            self.take_finishes(Self::sender_state(msg), out);
            self.adopt_departed(Self::sender_state(msg));
        }
    }

    /// Partitions found by this task: initial partitions, or children read from a parent it
    /// owns. A token this task knows (any state of its view names it) given again with the same
    /// parents is a repeat, ignored; a merge child (several parents) is created only by the
    /// owner of its smallest parent token. When sharing is enabled each new partition goes to the
    /// least-loaded member (ties: lowest load, then this task, then smallest id), through the
    /// share section if that is another task.
    ///
    /// # Errors
    /// `SYNC_INVALID_PARTITION` for an empty token or parent, a partition that is its own parent,
    /// a token given twice, a known token given with other parents than it is known with, or a
    /// partition whose JSON would take more than a quarter of `maxRecordBytes` (every record
    /// must hold a whole partition and a header).
    pub fn add_partitions(
        &mut self,
        specs: &[PartitionSpec],
        now: u64,
    ) -> Result<SyncOutput, SyncError> {
        self.reopening_input(|t| t.add_partitions_inner(specs, now))
    }

    /// The caller started reading a Scheduled partition.
    ///
    /// # Errors
    /// `SYNC_UNKNOWN_PARTITION` if this task does not own `token`; `SYNC_INVALID_TRANSITION` if
    /// it is not Scheduled (Running is accepted as a repeat).
    pub fn partition_started(&mut self, token: &str, now: u64) -> Result<SyncOutput, SyncError> {
        self.reopening_input(|t| t.partition_started_inner(token, now))
    }

    /// The caller finished reading a partition (its children were given to `add_partitions`
    /// before).
    ///
    /// # Errors
    /// `SYNC_UNKNOWN_PARTITION` if this task does not own `token` (a partition given to another
    /// task by an epoch, or dropped `tombstoneTtl` after its removal); `SYNC_INVALID_TRANSITION`
    /// if it was never started (Created or ReadyForStreaming). A partition already done
    /// (Finished, or Removed after `removalDelay`) is a repeat: nothing changes. Finishing a
    /// Scheduled partition without `partition_started` is accepted (that call only shows the
    /// partition Running in what the task publishes).
    pub fn partition_finished(&mut self, token: &str, now: u64) -> Result<SyncOutput, SyncError> {
        self.reopening_input(|t| t.partition_finished_inner(token, now))
    }

    /// Time passed: does the work of every deadline of [`poll_timeout`](Self::poll_timeout)
    /// that is due (leader timeout, epoch re-publication, checkpoint, delayed removal).
    pub fn tick(&mut self, now: u64) -> SyncOutput {
        if self.closed() {
            return SyncOutput::default();
        }
        self.input(|t| Ok(t.tick_inner(now))).unwrap_or_default()
    }

    /// The caller found a hole in the sync log it fed (e.g. Kafka offsets jumped: records
    /// deleted by retention before they were read): the task cannot know what it missed, so it
    /// stops everything and fences itself, as when it sees a sender's `messageSeq` jump. The
    /// output lists in `stop` every partition it ran and carries `fenced: reason`; every later
    /// input is a no-op. An empty reason reads "the sync log has a hole".
    pub fn fence(&mut self, reason: &str, now: u64) -> SyncOutput {
        if self.fenced.is_some() {
            return SyncOutput::default();
        }
        self.clock(now);
        let mut out = SyncOutput::default();
        let why = if reason.is_empty() {
            "the sync log has a hole"
        } else {
            reason
        };
        self.fence_self(why.to_string(), &mut out);
        self.seal(out)
    }

    fn tick_inner(&mut self, now: u64) -> SyncOutput {
        self.clock(now);
        let kept = self
            .opts
            .removal_delay
            .saturating_add(self.opts.tombstone_ttl);
        self.finishes
            .forget_noted_before(self.now.saturating_sub(kept));
        let mut out = SyncOutput::default();
        let mut removal = false;
        for (timer, at) in self.timers() {
            if at > self.now {
                continue;
            }
            match timer {
                Timer::Stuck => {
                    let since = self.view.behind_since().unwrap_or(self.now);
                    let why = format!(
                        "stuck behind: epoch {} in force, newer epochs read for {} ms without one it can apply",
                        self.cur_id(),
                        self.now - since
                    );
                    self.fence_self(why, &mut out);
                    return out;
                }
                Timer::EpochAck => {
                    self.resend(&mut out);
                    self.leading.resent(self.now);
                }
                Timer::Resend => {
                    self.refresh.resend_done();
                    self.resend(&mut out);
                }
                Timer::Refresh => self.checkpoint(&mut out),
                // the leader's timeout is handled by `maybe_lead` in `finish`
                Timer::Rebalance => {}
                Timer::Removal => removal = true,
                // the final checkpoint is published by `finish`
                Timer::Close => {}
            }
        }
        self.settle_with(&mut out, removal);
        self.finish(&mut out);
        out
    }

    /// A clean checkpoint of the epoch in force was read: the next one falls due an interval
    /// after it was published (its `messageTimestamp`, or now if that is earlier).
    /// A checkpoint is a complete state as of the record it names: one that names a record older
    /// than an interval (a quiet log, whose last record is the checkpoint before; a new task that
    /// had read nothing newer) counts as published an interval after that record, so that the
    /// record the newest checkpoint names does not age past the retention while replacements
    /// that each live less than an interval re-publish it.
    fn checkpoint_read(&mut self, msg: &SyncMessage) {
        let named = msg
            .checkpoint
            .as_ref()
            .and_then(|c| c.after_timestamp)
            .map_or(u64::MAX, |t| {
                t.saturating_add(self.opts.state_refresh_interval)
            });
        let published = msg.message_timestamp.min(named).min(self.now);
        self.refresh.clean_read(published, self.now);
        self.schedule_refresh();
    }

    /// Common frame of every input: a fenced task does nothing more; otherwise the input runs
    /// and its output is sealed.
    pub(super) fn input(
        &mut self,
        run: impl FnOnce(&mut Self) -> Result<SyncOutput, SyncError>,
    ) -> Result<SyncOutput, SyncError> {
        if self.fenced.is_some() {
            return Ok(SyncOutput::default());
        }
        self.removal_at.set(None);
        run(self).map(|out| self.seal(out))
    }

    /// Common end of every input: stamps the sender counter on everything it publishes, and
    /// notes since when the task is behind.
    pub(super) fn seal(&mut self, mut out: SyncOutput) -> SyncOutput {
        // (what blocks removals may have changed)
        self.removal_at.set(None);
        if out.fenced.is_some() {
            // nothing a fenced task computed on the way may reach the topic or the connector
            out.publish.clear();
            out.start.clear();
        }
        // a checkpoint goes first: it is clean only if no record lands between the last one
        // its author read and itself (it reflects what the task publishes with it)
        if let Some(k) = out.publish.iter().position(|m| m.checkpoint.is_some()) {
            let c = out.publish.remove(k);
            out.publish.insert(0, c);
        }
        // no record is larger than maxRecordBytes
        out.publish = self.split_records(std::mem::take(&mut out.publish));
        for m in &mut out.publish {
            let seq = self.cursor.stamp(m.kind);
            m.message_seq = Some(seq);
            if m.kind != MessageType::Regular {
                self.refresh.note_published(m, seq);
            }
        }
        self.view.note_behind(self.now);
        out
    }
}
