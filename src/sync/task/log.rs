//! What a task reads of the other tasks: Regular messages and rebalance answers, older epochs' words, late records of departed tasks; and a hole in what it read (fencing).

use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::delta::patch;
use super::SyncTask;
use crate::sync::assign::rendezvous;
use crate::sync::types::{PartitionState, PartitionStatus, SyncMessage, SyncOutput, TaskState};

/// Takes into `cache` what `state` (its task's own word, from an epoch other than the one the
/// cache is in) says that the cache does not: progress of its partitions, partitions it owns that
/// no state owns, shares of unknown tokens. Removes and moves nothing.
pub(super) fn absorb_into(
    cache: &mut BTreeMap<String, TaskState>,
    own: &TaskState,
    state: &TaskState,
) {
    let cur_version = cache.get(&state.task_id).map(|c| c.state_version);
    if cur_version.is_some_and(|v| v >= state.state_version) {
        return;
    }
    let all = || std::iter::once(own).chain(cache.values());
    let known: HashSet<String> = all()
        .flat_map(|s| {
            s.data
                .partitions
                .iter()
                .map(|p| p.token.clone())
                .chain(s.share.partitions.iter().map(|p| p.token.clone()))
        })
        .collect();
    let owned: HashSet<String> = all()
        .flat_map(|s| s.data.partitions.iter().map(|p| p.token.clone()))
        .collect();
    let cur = cache
        .entry(state.task_id.clone())
        .or_insert_with(|| TaskState::empty(state.task_id.clone()));
    cur.state_version = state.state_version;
    for p in &state.data.partitions {
        if let Some(q) = cur.data.partitions.iter_mut().find(|q| q.token == p.token) {
            if p.state > q.state {
                q.state = p.state;
                q.finished_timestamp = p.finished_timestamp.or(q.finished_timestamp);
            }
        } else if !owned.contains(&p.token) {
            // unknown, or only shared so far: the sender owns it
            cur.data.partitions.push(p.clone());
        }
    }
    for sh in &state.share.partitions {
        if !known.contains(&sh.token) {
            cur.share.partitions.push(sh.clone());
        }
    }
}

/// Which member owns, or is to own, each partition of `states`: the partitions of the members'
/// entries, then the tokens of shares addressed to a member (in any entry: a sharer's, or a
/// departed task's late record kept as a share to the member it falls to), which that member
/// takes. A departed task's partition goes to the owner of its smallest parent (see
/// `adopt_departed`): a parent known only as a share to a member is that member's, which finds
/// the child again when it runs the parent (another member given the child would run it beside
/// it).
pub(super) fn member_owners<'a>(
    states: impl Iterator<Item = &'a TaskState> + Clone,
    members: &BTreeSet<String>,
) -> HashMap<&'a str, &'a str> {
    let mut owners: HashMap<&'a str, &'a str> = states
        .clone()
        .filter(|s| members.contains(&s.task_id))
        .flat_map(|s| {
            s.data
                .partitions
                .iter()
                .map(move |p| (p.token.as_str(), s.task_id.as_str()))
        })
        .collect();
    for sh in states.flat_map(|s| s.share.partitions.iter()) {
        if members.contains(&sh.assignee) {
            owners
                .entry(sh.token.as_str())
                .or_insert(sh.assignee.as_str());
        }
    }
    owners
}

/// What a departed task leaves to the members: its unfinished partitions (reset), then its
/// shares (with their assignee).
pub(super) fn left_by(st: &TaskState) -> impl Iterator<Item = (PartitionState, Option<&str>)> {
    let datas = st
        .data
        .partitions
        .iter()
        .filter(|p| !p.state.is_done())
        .map(|p| (p.reset(), None));
    let shares = st
        .share
        .partitions
        .iter()
        .map(|sh| (sh.to_partition(), Some(sh.assignee.as_str())));
    datas.chain(shares)
}

/// The partitions a state says are done (Finished or Removed), with when they finished.
fn done_partitions(state: &TaskState) -> HashMap<&str, Option<u64>> {
    state
        .data
        .partitions
        .iter()
        .filter(|p| p.state.is_done())
        .map(|p| (p.token.as_str(), p.finished_timestamp))
        .collect()
}

impl SyncTask {
    /// This task read the sync log with a hole (a NewEpoch may be in it): its view of epochs
    /// and owners can be wrong in ways no later message reveals, so it stops everything it runs
    /// and falls silent. Its partitions stay in its last published state, which the next epoch
    /// hands to live tasks once it has left the group.
    pub(super) fn fence_self(&mut self, why: String, out: &mut SyncOutput) {
        for p in self.own.partitions() {
            if p.state.is_active() && !out.stop.contains(&p.token) {
                out.stop.push(p.token.clone());
            }
        }
        self.leading.fence();
        self.refresh.silence();
        self.own.mark_clean();
        self.fenced = Some(why.clone());
        out.fenced = Some(why);
    }

    pub(super) fn merge(&mut self, state: &TaskState) {
        if state.task_id == self.id {
            return; // a task is the only author of its own state
        }
        match self.view.cache.get(&state.task_id) {
            Some(cur) if cur.state_version >= state.state_version => {}
            _ => {
                let mut state = state.clone();
                self.keep_done(&mut state);
                self.keep_unknown_to_sender(&mut state);
                self.keep_shares_for_members(&mut state);
                self.view.note_own_word(&state.task_id);
                self.view.cache.insert(state.task_id.clone(), state);
            }
        }
    }

    /// What the view knows done of a task's partitions stays done in its newer own word (see
    /// `delta::settled_over`).
    fn keep_done(&self, state: &mut TaskState) {
        let Some(old) = self.view.cache.get(&state.task_id) else {
            return;
        };
        let mut done: HashMap<&str, &PartitionState> = HashMap::default();
        for p in old.data.partitions.iter().filter(|p| p.state.is_done()) {
            done.insert(p.token.as_str(), p);
        }
        if done.is_empty() {
            return;
        }
        for p in &mut state.data.partitions {
            if let Some(held) = done.get(p.token.as_str()) {
                if super::delta::settled_over(held, p) {
                    *p = (*held).clone();
                }
            }
        }
    }

    /// An unfinished partition the view holds for a task that its newer own word does not name,
    /// and that no other state owns, is one the task has not learned of yet (a departed task's
    /// late record gave it to it, and it has not read that record, or never will): it stays in
    /// the task's entry, so that the next epoch hands it on if the task is gone. A task's own
    /// word drops an unfinished partition only when an epoch moves it to another member.
    fn keep_unknown_to_sender(&self, state: &mut TaskState) {
        let Some(old) = self.view.cache.get(&state.task_id) else {
            return;
        };
        let named: HashSet<&str> = state
            .data
            .partitions
            .iter()
            .map(|p| p.token.as_str())
            .collect();
        let missing: Vec<&PartitionState> = old
            .data
            .partitions
            .iter()
            .filter(|p| !p.state.is_done() && !named.contains(p.token.as_str()))
            .collect();
        let kept = self.owned_by_none_but(&state.task_id, missing);
        state.data.partitions.extend(kept);
    }

    /// The shares a departed task's entry holds for members (its late records' partitions, kept
    /// as shares to the member each falls to: `adopt_departed`) are the reader's, not the task's
    /// word: its newer word (e.g. the empty state it publishes once it applied the epoch that
    /// left it out) does not name them, and they stay until some state owns the partition
    /// (`clear_taken_ghost_shares`) or an epoch resolves them. Dropped with the entry, a child
    /// the departed task found (and shared) before reading that epoch was known to nobody, while
    /// its parent's finish, in the same records, counted
    /// (`a_departed_tasks_word_after_the_epoch_keeps_the_child_it_shared`).
    fn keep_shares_for_members(&self, state: &mut TaskState) {
        if self.view.members().contains(&state.task_id) {
            return;
        }
        let Some(old) = self.view.cache.get(&state.task_id) else {
            return;
        };
        if old.share.partitions.is_empty() {
            return;
        }
        let named: HashSet<&str> = state
            .share
            .partitions
            .iter()
            .map(|p| p.token.as_str())
            .collect();
        let owned: HashSet<&str> = self
            .all_states()
            .flat_map(|s| s.data.partitions.iter().map(|p| p.token.as_str()))
            .collect();
        let kept: Vec<_> = old
            .share
            .partitions
            .iter()
            .filter(|sh| !named.contains(sh.token.as_str()) && !owned.contains(sh.token.as_str()))
            .cloned()
            .collect();
        state.share.partitions.extend(kept);
    }

    /// Those of `parts` (partitions of `task`'s entry) that no other state owns, the own one
    /// included: what a task's newer word may not drop (see `keep_unknown_to_sender`).
    fn owned_by_none_but(&self, task: &str, parts: Vec<&PartitionState>) -> Vec<PartitionState> {
        if parts.is_empty() {
            return Vec::new();
        }
        let elsewhere: HashSet<&str> = self
            .all_states()
            .filter(|s| s.task_id != task)
            .flat_map(|s| s.data.partitions.iter().map(|p| p.token.as_str()))
            .collect();
        parts
            .into_iter()
            .filter(|p| !elsewhere.contains(p.token.as_str()))
            .cloned()
            .collect()
    }

    pub(super) fn sender_state(msg: &SyncMessage) -> &TaskState {
        msg.connector_state
            .iter()
            .find(|s| s.task_id == msg.task_id)
            .expect("validated")
    }

    pub(super) fn ack(&mut self, msg: &SyncMessage) {
        if let Some(e) = self.view.epoch() {
            if msg.sync_epoch == e.id {
                self.leading.acked(&msg.task_id);
                self.view.ack(&msg.task_id);
            }
        }
    }

    pub(super) fn on_regular(&mut self, msg: &SyncMessage) {
        let cur = self.cur_id();
        if msg.sync_epoch != cur {
            if msg.epoch_generation > self.epoch_generation() {
                self.view.fall_behind();
                self.defer(msg);
            } else {
                self.absorb(Self::sender_state(msg));
            }
            return;
        }
        if msg.task_id != self.id {
            self.merge_change(msg);
        } else {
            self.note_own_shares(msg);
        }
        self.ack(msg);
    }

    /// Another task's message of the epoch in force, taken as `merge` takes its whole state: a
    /// change is applied to the view's entry in place, so a reader's cost is what changed and
    /// one pass over the entry (not copies of the sender's whole state). What `merge` would keep
    /// of the entry that its new state lacks (`keep_unknown_to_sender`) can only be among the
    /// partitions the change drops.
    fn merge_change(&mut self, msg: &SyncMessage) {
        let st = Self::sender_state(msg);
        // (a departed task's word goes through `merge`, which keeps what its entry holds for
        // members: `keep_shares_for_members`)
        let departed = !self.view.members().contains(&msg.task_id);
        let (Some(delta), Some(cur), false) =
            (&msg.delta, self.view.cache.get(&msg.task_id), departed)
        else {
            let whole = self.patched(msg, None);
            self.merge(&whole);
            return;
        };
        if cur.state_version >= st.state_version {
            return; // read before: `merge` keeps the entry
        }
        let missing: Vec<&PartitionState> = if delta.removed.is_empty() {
            Vec::new()
        } else {
            let dropped: HashSet<&str> = delta.removed.iter().map(String::as_str).collect();
            let listed: HashSet<&str> = st
                .data
                .partitions
                .iter()
                .map(|p| p.token.as_str())
                .collect();
            cur.data
                .partitions
                .iter()
                .filter(|p| {
                    !p.state.is_done()
                        && dropped.contains(p.token.as_str())
                        && !listed.contains(p.token.as_str())
                })
                .collect()
        };
        let kept = self.owned_by_none_but(&msg.task_id, missing);
        // (the entry read above: nothing between changed the view)
        if let Some((entry, positions)) = self.view.entry_to_patch(&msg.task_id) {
            patch(entry, st, delta, Some(positions));
            entry.data.partitions.extend(kept);
            self.view.note_own_word(&msg.task_id);
        }
    }

    /// One of this task's own records of the epoch in force, read back: its shares are now what
    /// every reader holds of them (see `own_shares_read`).
    fn note_own_shares(&mut self, msg: &SyncMessage) {
        let shares = &Self::sender_state(msg).share.partitions;
        self.own.own_record_read(msg.delta.as_ref(), shares);
    }

    /// A state published in an older epoch must not replace the epoch's view of its sender (it
    /// lacks what the epoch gave it), but it is still the sender's own word about its own
    /// partitions: progress (e.g. Finished) and owned partitions unknown to the view are taken,
    /// nothing is removed or moved.
    pub(super) fn absorb(&mut self, state: &TaskState) {
        if self.is_departed(&state.task_id) {
            return; // see adopt_departed
        }
        if state.task_id != self.id && self.view.cache.contains_key(&state.task_id) {
            absorb_into(&mut self.view.cache, self.own.state(), state);
        }
    }

    /// A task's own word that a partition is done counts wherever it is read, even from an older
    /// epoch: a partition this task owns and another task says it finished (it owned it before,
    /// e.g. it finished it while leaving the group, and the record landed after the next epoch
    /// gave it here) is finished, and stopped if it runs.
    pub(super) fn take_finishes(&mut self, state: &TaskState, out: &mut SyncOutput) {
        if state.task_id == self.id {
            return;
        }
        let done = done_partitions(state);
        if done.is_empty() {
            return;
        }
        let now = self.now;
        // the own partitions it names, found by the index of the own tokens when it names fewer
        // than the task owns (a change: what it finished lately), in own order
        let parts = self.own.partitions();
        let at: Vec<usize> = if done.len() < parts.len() {
            let at = self.own.positions_of(done.keys().copied());
            let parts = self.own.partitions();
            debug_assert_eq!(
                at,
                (0..parts.len())
                    .filter(|&i| done.contains_key(parts[i].token.as_str()))
                    .collect::<Vec<_>>()
            );
            at
        } else {
            (0..parts.len()).collect()
        };
        for i in at {
            self.own.update(i, |p| {
                let (false, Some(f)) = (p.state.is_done(), done.get(p.token.as_str())) else {
                    return false;
                };
                if p.state.is_active() {
                    out.stop.push(p.token.clone());
                }
                p.state = PartitionStatus::Finished;
                p.finished_timestamp = Some(f.unwrap_or(now));
                true
            });
        }
    }

    /// A departed task's partition kept in its entry as a share to the member it falls to.
    pub(super) fn share_for_departed(&mut self, departed: &str, p: &PartitionState, to: &str) {
        self.view
            .cache
            .entry(departed.to_string())
            .or_insert_with(|| TaskState::empty(departed.to_string()))
            .share
            .partitions
            .push(p.shared_to(to));
    }

    /// A record of a task that has left the epoch, landing late (it finished a partition or
    /// found children while leaving, and its records landed after the epoch that left it out
    /// was computed), is still its own word: its finishes count in every state of the view, and
    /// of its unfinished partitions and shares that no state knows, those that fall to this task
    /// (it owns the smallest parent; else a share to it; else by rendezvous hashing over the
    /// members, as `apply_epoch` resolves the departed tasks' partitions its leader had not
    /// read) are its own at once; the others stay in the departed task's entry as shares to the
    /// member they fall to, which takes them when it reads the record itself (or the next epoch
    /// gives them to it, or to a live member).
    pub(super) fn adopt_departed(&mut self, state: &TaskState) {
        if self.view.members().is_empty() || !self.is_departed(&state.task_id) {
            return;
        }
        let done = done_partitions(state);
        for st in self.view.cache.values_mut() {
            for p in &mut st.data.partitions {
                if let (false, Some(f)) = (p.state.is_done(), done.get(p.token.as_str())) {
                    p.state = PartitionStatus::Finished;
                    p.finished_timestamp = *f;
                }
            }
            // (and the shares: one an earlier record of the departed task left to the member it
            // falls to is no new work once its finish is read)
            for p in &mut st.share.partitions {
                if let (false, Some(f)) = (p.state.is_done(), done.get(p.token.as_str())) {
                    p.state = PartitionStatus::Finished;
                    p.finished_timestamp = *f;
                }
            }
        }
        let mut known: HashSet<String> = self.all_tokens().into_iter().collect();
        let member_list: Vec<String> = self.view.members().iter().cloned().collect();
        // a member owning the smallest parent would find the partition again if it ran the
        // parent once more (its finish was in a late record too): it is that member's
        let parent_owner = member_owners(self.all_states(), self.view.members());
        let mut adopted: Vec<(String, PartitionState)> = Vec::new();
        for (p, assignee) in left_by(state) {
            if !known.insert(p.token.clone()) {
                continue;
            }
            let by_parent = p
                .parents
                .iter()
                .min()
                .and_then(|x| parent_owner.get(x.as_str()));
            let target = match (by_parent, assignee) {
                (Some(owner), _) => owner.to_string(),
                (None, Some(a)) if self.view.members().contains(a) => a.to_string(),
                _ => rendezvous(&p.token, &member_list),
            };
            adopted.push((target, p));
        }
        for (target, p) in adopted {
            if target == self.id && self.view.in_epoch() {
                self.own.push(p);
                self.own.mark_dirty();
            } else {
                // a share to the member it falls to, so that the next epoch, and every reader,
                // resolve it to that member whatever the members are by then
                self.share_for_departed(&state.task_id, &p, &target);
            }
        }
    }

    /// What a departed task's late record left as shares to members (see `adopt_departed`) is
    /// cleared once some state owns the partition, as a sharer clears its shares.
    pub(super) fn clear_taken_ghost_shares(&mut self) {
        let (cache, members, _) = self.view.cache_with_lookups();
        // (the shares first: most states have none, and a member lookup per state on every
        // input weighs with a thousand members)
        let is_ghost =
            |s: &TaskState| !s.share.partitions.is_empty() && !members.contains(&s.task_id);
        if !cache.values().any(is_ghost) {
            return;
        }
        let owned: HashSet<String> = std::iter::once(self.own.state())
            .chain(cache.values())
            .flat_map(|s| s.data.partitions.iter().map(|p| p.token.clone()))
            .collect();
        for st in cache.values_mut() {
            if !members.contains(&st.task_id) {
                st.share.partitions.retain(|sh| !owned.contains(&sh.token));
            }
        }
    }

    /// Whether `task` was a member of an epoch this task knows and is not a member of the epoch
    /// in force.
    pub(super) fn is_departed(&self, task: &str) -> bool {
        !self.view.members().contains(task) && self.view.departed().iter().any(|d| d == task)
    }

    pub(super) fn on_answer(&mut self, msg: &SyncMessage, out: &mut SyncOutput) {
        let g = msg.rebalance_generation.unwrap_or(0);
        self.leading.answer_read(&msg.task_id, g, &msg.sync_epoch);
        let cur = self.cur_id();
        if msg.sync_epoch == cur {
            if msg.task_id == self.id {
                self.note_own_shares(msg);
            }
            self.merge(Self::sender_state(msg));
            self.ack(msg);
        } else if msg.epoch_generation < self.epoch_generation() {
            self.absorb(Self::sender_state(msg));
            // the sender has not applied our epoch: if it missed it, show it once (its leader
            // at once, another member if the leader is slow or gone)
            if self.view.in_epoch()
                && msg.task_id != self.id
                && self.refresh.first_resend_to(g, &msg.task_id)
            {
                self.want_resend(out);
            }
        } else if msg.epoch_generation > self.epoch_generation() {
            self.view.fall_behind();
            self.defer(msg);
        }
    }

    pub(super) fn defer(&mut self, msg: &SyncMessage) {
        if msg.task_id == self.id {
            return;
        }
        let st = Self::sender_state(msg);
        let entry = self.view.deferred(&msg.sync_epoch, &msg.task_id);
        if entry.is_some_and(|(_, s, _)| st.state_version <= s.state_version) {
            return;
        }
        // a change applies to the state read before in that epoch; with none, it is kept as
        // changes only (applied to the epoch's entry for its sender once the epoch is)
        let (whole, dropped) = match (&msg.delta, entry) {
            (None, _) => (st.clone(), None),
            (Some(d), Some((_, s, dropped))) => {
                let dropped = dropped.as_ref().map(|before| {
                    let mut all = before.clone();
                    all.removed.extend(d.removed.iter().cloned());
                    all.unshared.extend(d.unshared.iter().cloned());
                    all
                });
                (self.patched(msg, Some(s)), dropped)
            }
            (Some(d), None) => (st.clone(), Some(d.clone())),
        };
        let deferred = (msg.epoch_generation, whole, dropped);
        self.view.defer(&msg.sync_epoch, &msg.task_id, deferred);
    }
}

impl SyncTask {
    /// The sender's whole state, as this reader holds it, with a change read from it applied
    /// (from `base` if given, else from the view's entry, else from nothing).
    pub(super) fn patched(&self, msg: &SyncMessage, base: Option<&TaskState>) -> TaskState {
        let st = Self::sender_state(msg);
        let Some(delta) = &msg.delta else {
            return st.clone();
        };
        let mut whole = base
            .or_else(|| self.view.cache.get(&msg.task_id))
            .cloned()
            .unwrap_or_else(|| TaskState::empty(msg.task_id.clone()));
        patch(&mut whole, st, delta, None);
        whole
    }
}
