//! The inputs of a task (a rebalance, a message read, time passing) and the frame every input
//! runs in (the other inputs, `addPartitions`, `partitionStarted`, `partitionFinished`, are in
//! `settle`): a fenced task does nothing more, and what an input publishes is sealed (checkpoint
//! first, split into records of at most `maxRecordBytes`, numbered by the sender counter).

use std::borrow::Cow;

use super::leading::{Pending, RebalanceInfo};
use super::limits::{MAX_DEPARTED, MAX_SAFE_INTEGER};
use super::timer::{backoff, Timer};
use super::SyncTask;
use crate::sync::error::{ErrorKind, SyncError};
use crate::sync::types::{CheckpointRef, MessageType, RebalanceEvent, SyncMessage, SyncOutput};

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
        if self
            .leading
            .rebalance
            .is_some_and(|r| r.generation >= event.generation)
        {
            return Ok(out);
        }
        self.note_rebalance(event);
        if event.generation <= self.epoch_generation() {
            // an epoch for this generation is already in force
            self.finish(&mut out);
            return Ok(out);
        }
        self.leading.pending = event.leader.then(|| Pending {
            generation: event.generation,
            members,
            since: self.now,
            awaiting: None,
            published: None,
            republished: 0,
            attempt: 0,
        });
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

    /// A newer rebalance is the latest: the generations this task joined as a member since the
    /// epoch in force are remembered (the latest `MAX_DEPARTED`).
    fn note_rebalance(&mut self, event: &RebalanceEvent) {
        if let Some(prev) = self.leading.rebalance.filter(|r| !r.leader) {
            self.leading.joined.insert(prev.generation);
        }
        let applied = self.epoch_generation();
        self.leading.joined.retain(|g| *g > applied);
        while self.leading.joined.len() > MAX_DEPARTED {
            self.leading.joined.pop_first();
        }
        self.leading.rebalance = Some(RebalanceInfo {
            generation: event.generation,
            leader: event.leader,
        });
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
        let here = match msg.message_seq {
            _ if again => self.cursor.last_read.clone(),
            Some(seq) => Some(CheckpointRef {
                after_task_id: msg.task_id.clone(),
                after_seq: seq,
                after_timestamp: Some(msg.message_timestamp),
            }),
            None => None,
        };
        // (a message read whole is not copied: at scale a NewEpoch is the whole view)
        let (mut whole, before) = if msg.chunk.is_some() {
            match self.take_chunk(record, whole, again) {
                Some((whole, before)) => (Cow::Owned(whole), before),
                None => {
                    self.cursor.last_read = here;
                    return Ok(out);
                }
            }
        } else {
            (record, self.cursor.last_read.clone())
        };
        // (every finish a record says is noted before anything of it is applied)
        self.finishes.note_message(&whole, self.now);
        if whole.checkpoint.is_some() {
            self.checkpoint_in(&whole, before.as_ref());
        }
        self.cursor.last_read = here;
        if before.is_none() && self.view.epoch.is_none() {
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
        let again = msg
            .message_seq
            .zip(self.cursor.heard.get(&msg.task_id))
            .is_some_and(|(seq, last)| seq <= *last);
        if let Some(seq) = msg.message_seq {
            let last = self.cursor.heard.entry(msg.task_id.clone()).or_insert(seq);
            if seq > last.saturating_add(1) {
                let why = format!(
                    "missed messages {}..={} of {} in the sync log; its view may be wrong",
                    *last + 1,
                    seq - 1,
                    msg.task_id
                );
                self.fence_self(why, out);
                return None;
            }
            *last = (*last).max(seq);
        }
        if msg.task_id == self.id {
            self.cursor.own_read = msg
                .message_seq
                .map_or(self.cursor.own_read + 1, |s| self.cursor.own_read.max(s));
        }
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
        } else if own && self.refresh.checkpoint_over_own && msg.sync_epoch == self.cur_id() {
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
        if self
            .refresh
            .clean_read_at
            .is_some_and(|at| at >= msg.message_timestamp)
        {
            return;
        }
        let interval = self.opts.state_refresh_interval;
        let took = self.now.saturating_sub(msg.message_timestamp);
        let base = self.opts.epoch_ack_timeout.min(interval).max(took);
        let wait = backoff(base, self.refresh.unclean_retries).min(interval);
        self.refresh.unclean_retries = self.refresh.unclean_retries.saturating_add(1);
        let retry = self.now.saturating_add(wait);
        if let Some(at) = &mut self.refresh.refresh_at {
            *at = (*at).min(retry);
        }
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
                .read_epochs
                .insert((msg.epoch_generation, msg.sync_epoch.clone()));
        }
        match msg.kind {
            MessageType::NewEpoch => {
                // (an epoch rebuilds the own lists and the view: what `marks` and the positions of the
                // view's entries knew of them is forgotten)
                self.own.marks.forget();
                self.view.forget_positions();
                self.on_new_epoch(whole, out);
                self.own.marks.forget();
                self.view.forget_positions();
                // a task that starts reading at a checkpoint (where `findEpochStart` puts it)
                // and applied it counts it as the last clean one: the next falls due an
                // interval after it was published, not after this task read it
                let fresh = first && self.refresh.checkpoint_seen.is_none();
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

    /// Time passed: does the work of every deadline of [`poll_timeout`](Self::poll_timeout)
    /// that is due (leader timeout, epoch re-publication, checkpoint, delayed removal).
    pub fn tick(&mut self, now: u64) -> SyncOutput {
        if self.closed() {
            return SyncOutput::default();
        }
        self.input(|t| Ok(t.tick_inner(now))).unwrap_or_default()
    }

    fn tick_inner(&mut self, now: u64) -> SyncOutput {
        self.clock(now);
        let kept = self.opts.removal_delay.saturating_add(self.opts.tombstone_ttl);
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
                    let since = self.view.behind_since.unwrap_or(self.now);
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
                    if let Some(l) = &mut self.leading.lead {
                        l.last_publish = self.now;
                        l.resends += 1;
                    }
                }
                Timer::Resend => {
                    self.refresh.resend_at = None;
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
        self.refresh.checkpoint_seen = Some(msg.message_timestamp.min(named).min(self.now));
        self.refresh.clean_read_at = Some(self.now);
        self.refresh.unclean_retries = 0;
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
        run(self).map(|out| self.seal(out))
    }

    /// Common end of every input: stamps the sender counter on everything it publishes, and
    /// notes since when the task is behind.
    pub(super) fn seal(&mut self, mut out: SyncOutput) -> SyncOutput {
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
            self.cursor.seq += 1;
            m.message_seq = Some(self.cursor.seq);
            if m.kind != MessageType::Regular {
                self.cursor.last_not_regular = self.cursor.seq;
                self.refresh.note_published(m, self.cursor.seq);
            }
        }
        self.view.behind_since = if self.view.behind {
            Some(self.view.behind_since.unwrap_or(self.now))
        } else {
            None
        };
        out
    }
}
