//! The re-publications of the epoch in force a task times: resends to a task that missed the
//! epoch, checkpoints, what they carry and what a reader takes of them. Their state is
//! `refresh::Refresh`.

use rustc_hash::FxHashSet as HashSet;

use super::limits::{MAX_REJECTED, RESENT_DEPARTED};
use super::SyncTask;
use crate::sync::types::{MessageType, PartitionState, SyncMessage, SyncOutput, TaskState};

impl SyncTask {
    /// The members of the epoch in force keep a complete state of it in the log: its leader
    /// publishes a checkpoint `stateRefreshInterval` after the last clean one was published
    /// (at once if it has read none), however often epochs change; the member `r` places after the
    /// leader (in id order, of `n`) steps in when no clean checkpoint came `r` slots later (see
    /// `refresh_delay`: a leader that died or lags behind the log cannot publish a clean one),
    /// so that clean checkpoints are at most about two intervals apart while any member keeps up.
    pub(super) fn schedule_refresh(&mut self) {
        let due = self.refresh_due();
        self.refresh.schedule(due);
    }

    /// When this task's next checkpoint falls due: its turn (see `refresh_delay`) after the
    /// leader's, an interval after the last clean checkpoint it saw.
    fn refresh_due(&self) -> Option<u64> {
        let interval = self.opts.state_refresh_interval;
        let first = self
            .refresh
            .checkpoint_seen()
            .map_or(self.now, |t| t.saturating_add(interval));
        self.refresh_delay().map(|d| first.saturating_add(d))
    }

    /// A task that holds the epoch without being its member learns that it leads a generation
    /// none of the epoch's members is in: its checkpoint falls due at the leader's turn, not an
    /// interval later (see `refresh_delay`).
    pub(super) fn refresh_sooner(&mut self) {
        if self.view.in_epoch() || self.refresh.refresh_at().is_none() {
            return;
        }
        if let Some(at) = self.refresh_due() {
            self.refresh.due_by(at);
        }
    }

    /// How much later than the leader this task steps in with a checkpoint: `r` slots for the
    /// member `r` places after the leader among `n` members (0 for the leader), at most one
    /// interval; one interval for a task that is not a member; `None` before it has an epoch.
    /// A slot is `1 / n` of the interval, but never shorter than twice
    /// `min(epochAckTimeout, stateRefreshInterval / 4)`, the time a checkpoint takes to land (the
    /// chunks of a message land within it of their publication, as the retention rule asks) and
    /// to be read (a member that keeps up reads a record within it of its landing): a member
    /// reads the checkpoint of the author before it before its turn. When `n` such slots do not
    /// fit in the interval, the successors whose slot would end after it share the rest of the
    /// interval evenly: every member has a turn of its own (successors stepping in at one moment
    /// interleave their checkpoints' chunks, and none is clean). (With slots of `1 / n`
    /// interval, every member lagging by more than its slot stepped in with a checkpoint of its
    /// own, which could not be clean, as it had not read the log to its end: in a large group,
    /// lagging members added whole views to the log they lagged behind. With a floor of
    /// `epochAckTimeout` alone, a timeout longer than the interval left the first successor
    /// `1 / n` interval, less than the leader's checkpoint in chunks took to land: it stepped
    /// in over it, every interval.)
    pub(super) fn refresh_delay(&self) -> Option<u64> {
        let interval = self.opts.state_refresh_interval;
        if !self.view.in_epoch() {
            // a task that holds the epoch without being its member yet (a new task replaying
            // the log, waiting to join) steps in last: the members may all be gone. When it
            // leads a generation that none of them is in, they are: nobody else will step in
            self.view.epoch()?;
            let orphaned = self
                .leading
                .pending()
                .is_some_and(|p| p.members.iter().all(|m| !self.view.members().contains(m)));
            return Some(if orphaned { 0 } else { interval });
        }
        let (r, n) = self.place_after_leader()?;
        let slot = self.read_whole_within();
        if slot.saturating_mul(n) <= interval {
            return Some(interval.saturating_mul(r) / n.max(1));
        }
        // the first `k` successors (as many as fit before the interval ends) step in a slot
        // apart; the others share what is left of the interval
        let k = (interval.saturating_sub(1) / slot).min(r);
        let rest = interval.saturating_sub(k.saturating_mul(slot));
        let later = rest.saturating_mul(r - k) / n.saturating_sub(k).max(1);
        Some(k.saturating_mul(slot).saturating_add(later).min(interval))
    }

    /// This member's place after the leader of the epoch in force, in id order, and the number
    /// of members (`(0, n)` for the leader); `None` outside the epoch.
    pub(super) fn place_after_leader(&self) -> Option<(u64, u64)> {
        let leader = self.view.epoch().map(|e| e.leader.as_str())?;
        let n = self.view.members().len() as u64;
        let me = self.view.members().iter().position(|m| *m == self.id)? as u64;
        let at = self
            .view
            .members()
            .iter()
            .position(|m| m == leader)
            .unwrap_or(0) as u64;
        Some(((me + n - at) % n, n))
    }

    /// A task missed the epoch in force (it answered from an older epoch, or built a NewEpoch on
    /// one): show it the epoch once. The epoch's leader re-publishes it at once; the member `r`
    /// places after it waits `min(r, 4) / 4` of `epochAckTimeout` and holds back if it reads a
    /// re-publication of the epoch first (see `on_new_epoch`). One copy per miss, not one per
    /// member: with every member re-publishing, each newcomer cost the log a whole epoch per
    /// member, enough at scale to push newcomers behind retention.
    pub(super) fn want_resend(&mut self, out: &mut SyncOutput) {
        let Some((r, _)) = self.place_after_leader().filter(|_| self.view.in_epoch()) else {
            return;
        };
        if r == 0 {
            self.resend(out);
            return;
        }
        let wait = self.opts.epoch_ack_timeout.saturating_mul(r.min(4)) / 4;
        let at = self.now.saturating_add(wait.max(1));
        self.refresh.resend_by(at);
    }

    /// The epoch's leader publishes the epoch in force whole again, as a checkpoint computed
    /// after the last record it read (see the module docs).
    pub(super) fn checkpoint(&mut self, out: &mut SyncOutput) {
        let interval = self.opts.state_refresh_interval;
        let next = self
            .refresh_delay()
            .map(|d| self.now.saturating_add(interval).saturating_add(d));
        // like an epoch, a checkpoint is computed from a view that holds everything its author
        // published (one of its own records not read back yet may be a newer epoch): it goes
        // out once they are read back (see `finish`)
        self.refresh.fall_due(next, self.cursor.seq());
        if self.checkpoint_waits() {
            return;
        }
        self.refresh.stop_waiting();
        if let Some(until) = self.chunks_wait_until() {
            // it would name a record in the middle of a message: try again once the message
            // is complete, or abandoned
            if self.refresh.refresh_at().is_some() {
                self.refresh.schedule(Some(until));
            }
            return;
        }
        self.publish_checkpoint(out);
    }

    /// Publishes the epoch in force whole, as a checkpoint computed after the last record read
    /// (the caller checked that its own records are read back): whether it did (it has an
    /// epoch and has read a record).
    pub(super) fn publish_checkpoint(&mut self, out: &mut SyncOutput) -> bool {
        let (Some(after), Some(mut m)) = (self.cursor.last_read().cloned(), self.epoch_message())
        else {
            return false;
        };
        m.checkpoint = Some(after);
        // the forks it read (NewEpochs of later generations built on an epoch before the one in
        // force): a task starting here holds them read and rejected, as this task does
        let newest = self.view.forks().iter().rev().take(MAX_REJECTED);
        m.rejected = newest.map(|(_, e)| e.clone()).collect();
        out.publish.push(m);
        self.refresh.published_checkpoint(self.cursor.own_unread());
        true
    }

    /// Whether a due checkpoint waits for own records to be read back: for every own record
    /// published before it fell due, and for the own epochs, answers and checkpoints published
    /// since, not for the own `Regular` records published while it waits. A checkpoint
    /// published while some of those are in flight holds the own state they carry and lands
    /// after them: a task that starts at it applies it and reads them as older than what it
    /// holds (their `stateVersion`), so they change nothing. (Waiting for every own record, a
    /// task whose producer had a backlog and that changed its state faster than its records
    /// came back never checkpointed.) Nor does it wait for copies of the epoch in force (a
    /// leader whose producer lags publishes its epoch again every `rebalanceTimeout` until it
    /// reads it back, and re-publishes it for tasks that missed it), once everything else own
    /// but `Regular` records is read back: a task that starts at the checkpoint reads them
    /// as resends of what it holds. (Waiting for them, such a leader's first checkpoint waited
    /// for every copy to come back, and a connector restarted after a long stop, whose leader
    /// re-published its epoch twice, let the final checkpoint age past the retention first.)
    pub(super) fn checkpoint_waits(&self) -> bool {
        let Some(upto) = self.refresh.waiting() else {
            return false;
        };
        if !self.cursor.own_unread_upto(upto) {
            return false;
        }
        let in_force = self.view.epoch().map(|e| e.id.as_str());
        !in_force.is_some_and(|id| self.refresh.only_copies_after(self.cursor.own_read(), id))
    }

    /// Re-publish the epoch in force (for tasks that missed it).
    pub(super) fn resend(&mut self, out: &mut SyncOutput) {
        if self.view.in_epoch() {
            out.publish.extend(self.epoch_message());
        }
    }
}

impl SyncTask {
    /// The epoch in force as this task knows it, as a re-publication: every member's state.
    pub(super) fn epoch_message(&self) -> Option<SyncMessage> {
        let e = self.view.epoch()?;
        let mut states = Vec::new();
        for m in self.view.members() {
            if *m == self.id {
                if self.view.in_epoch() {
                    states.push(self.own.state().clone());
                }
            } else if let Some(s) = self.view.cache.get(m) {
                states.push(s.clone());
            }
        }
        self.give_ghost_shares(&mut states);
        let departed = self
            .view
            .departed()
            .iter()
            .rev()
            .take(RESENT_DEPARTED)
            .cloned();
        Some(SyncMessage {
            epoch_generation: e.generation,
            base_epoch: Some(e.base.clone()),
            resend: true,
            epoch_attempt: e.attempt,
            departed: departed.collect(),
            ..SyncMessage::new(
                MessageType::NewEpoch,
                e.id.clone(),
                self.id.clone(),
                self.now,
                states,
            )
        })
    }

    /// What a departed task's late record gave a member that has not taken it yet (see
    /// `adopt_departed`) is that member's: a task starting from a re-publication must know it.
    fn give_ghost_shares(&self, states: &mut [TaskState]) {
        let owned: HashSet<&str> = states
            .iter()
            .flat_map(|s| s.data.partitions.iter().map(|p| p.token.as_str()))
            .collect();
        let mut pending: Vec<(usize, PartitionState)> = Vec::new();
        for ghost in self
            .view
            .cache
            .values()
            .filter(|s| !self.view.members().contains(&s.task_id))
        {
            for sh in &ghost.share.partitions {
                let to = states.iter().position(|s| s.task_id == sh.assignee);
                if let (Some(k), false) = (to, owned.contains(sh.token.as_str())) {
                    pending.push((k, sh.to_partition()));
                }
            }
        }
        for (k, p) in pending {
            if !states[k].data.partitions.iter().any(|q| q.token == p.token) {
                states[k].data.partitions.push(p);
            }
        }
    }

    /// The unfinished partitions a re-publication of the epoch in force gives other members
    /// and that no state of this view knows (owned or shared) go to those members' entries.
    pub(super) fn take_unknown(&mut self, msg: &SyncMessage) {
        let candidates = || {
            msg.connector_state
                .iter()
                .filter(|st| st.task_id != self.id && self.view.members().contains(&st.task_id))
                .flat_map(|st| {
                    st.data
                        .partitions
                        .iter()
                        .filter(|p| !p.state.is_done())
                        .map(move |p| (st.task_id.as_str(), p))
                })
        };
        if candidates().next().is_none() {
            return;
        }
        // (the tokens of the view, borrowed; the view is changed after the pass. A checkpoint
        // names every partition, so at scale this is every token, read once per checkpoint.)
        let states = || self.all_states();
        let count = states()
            .map(|s| s.data.partitions.len() + s.share.partitions.len())
            .sum();
        let mut known: HashSet<&str> = HashSet::with_capacity_and_hasher(count, Default::default());
        for s in states() {
            known.extend(s.data.partitions.iter().map(|p| p.token.as_str()));
            known.extend(s.share.partitions.iter().map(|p| p.token.as_str()));
        }
        let mut taken: Vec<(&str, &PartitionState)> = Vec::new();
        for (task, p) in candidates() {
            if known.insert(p.token.as_str()) && self.view.cache.contains_key(task) {
                taken.push((task, p));
            }
        }
        drop(known);
        for (task, p) in taken {
            if let Some(entry) = self.view.cache.get_mut(task) {
                entry.data.partitions.push(p.clone());
            }
        }
    }
}
