//! The leader of a rebalance: when and from what view it computes and publishes the new epoch.

use std::collections::BTreeMap;

use super::limits::RESENT_DEPARTED;
use super::log::absorb_into;
use super::SyncTask;
use crate::sync::assign::compute_epoch;
use crate::sync::types::{by_generation, MessageType, SyncMessage, SyncOutput, TaskState};

impl SyncTask {
    /// The newest epoch this task has read messages of without applying it (it missed its
    /// NewEpoch), if any.
    pub(super) fn missed(&self) -> Option<(u64, String)> {
        let cur = self.epoch_generation();
        self.view
            .future()
            .iter()
            .filter(|(_, (g, _, _))| *g > cur)
            .map(|((e, _), (g, _, _))| (*g, e.clone()))
            .max()
    }

    /// The epoch a new epoch computed now builds on: the one applied, or the newest one missed
    /// (its members' own words are known from their messages).
    pub(super) fn lead_base(&self) -> String {
        self.missed().map_or_else(|| self.cur_id(), |(_, e)| e)
    }

    pub(super) fn maybe_lead(&mut self, out: &mut SyncOutput) {
        let Some(p) = self.leading.pending() else {
            return;
        };
        if p.is_awaiting() {
            self.republish_if_due(out);
            return;
        }
        let Some((generation, attempt, members)) = self.ready_to_lead(out) else {
            return;
        };
        let cache = self.lead_view(&members);
        let view: Vec<&TaskState> = std::iter::once(self.own.state())
            .chain(cache.values())
            .collect();
        let mut states = compute_epoch(&view, &members);
        for s in &mut states {
            if s.task_id == self.id {
                s.state_timestamp = self.own.state().state_timestamp;
                s.state_version = self.own.state().state_version;
            }
        }
        let departed = self.departed_for_epoch(&cache, &members);
        self.publish_epoch(generation, attempt, states, departed, out);
    }

    /// The NewEpoch published and not read back in time (the leader lost the topic for a
    /// while) is published again, identical, so whoever applied it ignores the copy.
    fn republish_if_due(&mut self, out: &mut SyncOutput) {
        let due = self
            .leading
            .republish_due(self.now, self.opts.rebalance_timeout);
        out.publish.extend(due);
    }

    /// Whether the leader computes its epoch now: its generation, attempt and members if so
    /// (every answer is in, or the timeout passed, and its own messages were read back); a
    /// leader that cannot know its view fences itself.
    fn ready_to_lead(&mut self, out: &mut SyncOutput) -> Option<(u64, u32, Vec<String>)> {
        let now = self.now;
        let timeout = self.opts.rebalance_timeout;
        let p = self.leading.pending()?;
        let (generation, attempt, since) = (p.generation, p.attempt(), p.since());
        if generation <= self.epoch_generation() {
            self.leading.drop_pending();
            return None;
        }
        // the view an epoch is computed from includes everything this task published before:
        // an epoch of its own not read back yet would be forked from, not built on
        if self.cursor.own_unread() {
            return None;
        }
        // a leader that missed an epoch waits for a member to re-publish it (its own answer
        // asks for that); if none does within twice the timeout it fences itself rather than
        // build on an epoch whose assignment it never read (it may have been given partitions
        // it does not know it has), and the group elects another leader
        let missed = self.missed();
        let all = self.waiting_for().is_empty() && missed.is_none();
        let wait = if missed.is_some() {
            timeout.saturating_mul(2)
        } else {
            timeout
        };
        if !all && now < since.saturating_add(wait) {
            return None;
        }
        // (an epoch it read and rejected is not missed: its messages come from a fork)
        if let Some((_, e)) = missed
            .as_ref()
            .filter(|(g, e)| !self.view.has_read_epoch(*g, e))
        {
            let why = format!("leading generation {generation}, it missed epoch {e} and no member re-published it");
            self.fence_self(why, out);
            return None;
        }
        let members = self
            .leading
            .pending()
            .map(|p| p.members.clone())
            .unwrap_or_default();
        if let Some(g) = self.joined_unseen(generation, members.len()) {
            let why = format!("leading generation {generation} alone, it never read the NewEpoch of generation {g}, of which it was a member");
            self.fence_self(why, out);
            return None;
        }
        Some((generation, attempt, members))
    }

    /// A leader alone (`members` 1) that was a member of a generation whose NewEpoch it never
    /// read cannot tell a leader that died before publishing from a NewEpoch it silently missed
    /// (a transport without the offset check), and no member can re-publish it: the latest such
    /// generation before `generation`, for which it fences itself (its replacement replays the
    /// log from its start).
    fn joined_unseen(&self, generation: u64, members: usize) -> Option<u64> {
        if members != 1 {
            return None;
        }
        let applied = self.epoch_generation();
        let read = |g: u64| self.view.read_epoch_of(g);
        self.leading.joined_unread(applied, generation, read)
    }

    /// The view the epoch is computed from: the cache, with what the members said in epochs
    /// this task has not applied.
    fn lead_view(&self, members: &[String]) -> BTreeMap<String, TaskState> {
        // a leader that missed an epoch knows its members' own words from their messages
        let mut cache = self.view.cache.clone();
        let deferred: Vec<(u64, &TaskState)> = by_generation(
            self.view
                .future()
                .values()
                .map(|(g, st, _)| (*g, st))
                .collect(),
        );
        for (_, st) in &deferred {
            if st.task_id != self.id {
                absorb_into(&mut cache, self.own.state(), st);
            }
        }
        // what a member says it owns (in an epoch this task has not applied) beats the entry of
        // a departed task: the member may run it already
        for (_, st) in &deferred {
            if st.task_id == self.id || !members.contains(&st.task_id) {
                continue;
            }
            for p in &st.data.partitions {
                let mut held_by_departed = false;
                for (tid, other) in cache.iter_mut() {
                    if *tid != st.task_id && !members.contains(tid) {
                        let before = other.data.partitions.len();
                        other.data.partitions.retain(|q| q.token != p.token);
                        held_by_departed |= other.data.partitions.len() != before;
                    }
                }
                if held_by_departed {
                    let entry = cache
                        .entry(st.task_id.clone())
                        .or_insert_with(|| TaskState::empty(st.task_id.clone()));
                    if !entry.data.partitions.iter().any(|q| q.token == p.token) {
                        entry.data.partitions.push(p.clone());
                    }
                }
            }
        }
        cache
    }

    /// The tasks of the view that this epoch leaves out, and those left out before, are named:
    /// a task that starts reading at this epoch (it never read the base) still takes in their
    /// records that land late (e.g. a finish or children found while leaving).
    fn departed_for_epoch(
        &self,
        cache: &BTreeMap<String, TaskState>,
        members: &[String],
    ) -> Vec<String> {
        let mut departed: Vec<String> = cache
            .keys()
            .filter(|t| **t != self.id && !members.contains(*t))
            .cloned()
            .collect();
        for d in self.view.departed().iter().rev() {
            if departed.len() >= RESENT_DEPARTED {
                break;
            }
            if !members.contains(d) && !departed.contains(d) {
                departed.push(d.clone());
            }
        }
        departed.truncate(RESENT_DEPARTED);
        departed
    }

    /// The NewEpoch goes out; the leader awaits reading it back.
    fn publish_epoch(
        &mut self,
        generation: u64,
        attempt: u32,
        states: Vec<TaskState>,
        departed: Vec<String>,
        out: &mut SyncOutput,
    ) {
        let id = if attempt == 0 {
            format!("{generation}-{}", self.id)
        } else {
            format!("{generation}-{}-{attempt}", self.id)
        };
        let msg = SyncMessage {
            epoch_generation: generation,
            base_epoch: Some(self.lead_base()),
            epoch_attempt: attempt,
            departed,
            ..SyncMessage::new(
                MessageType::NewEpoch,
                id.clone(),
                self.id.clone(),
                self.now,
                states,
            )
        };
        out.publish.push(msg.clone());
        self.leading.epoch_published(id, msg, self.now);
    }
}
