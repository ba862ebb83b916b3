//! Epochs: which NewEpoch applies and how it is applied.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::claims::{claimed_elsewhere, claims_before};
use super::log::{left_by, member_owners};
use super::view::EpochInfo;
use super::{delta, SyncTask};
use crate::sync::assign::rendezvous;
use crate::sync::types::{
    by_generation, MessageType, PartitionState, PartitionStatus, SyncMessage, SyncOutput, TaskState,
};

/// The leader named in an epoch id `"<generation>-<leader>"` or `"<generation>-<leader>-<attempt>"`.
pub(super) fn epoch_leader(id: &str, generation: u64, attempt: u32) -> String {
    let rest = id.strip_prefix(&format!("{generation}-")).unwrap_or("");
    let rest = if attempt > 0 {
        rest.strip_suffix(&format!("-{attempt}")).unwrap_or("")
    } else {
        rest
    };
    rest.to_string()
}

/// The generation named in an epoch id (`"<generation>-<leader>..."`).
pub(super) fn generation_of(id: &str) -> Option<u64> {
    id.split('-').next()?.parse().ok()
}

/// A member's unfinished partition the epoch does not know (its leader computed from a view that
/// lacked it, e.g. a re-publication gave it to the member after a departed task's late record)
/// stays that member's (`st`: its state before the epoch; `orphan`: whether no state of the
/// epoch owns a partition, it is not resolved yet, and not done).
fn keep_unknown_to_epoch(
    st: &TaskState,
    orphan: &dyn Fn(&PartitionState, &HashSet<String>) -> bool,
    added: &mut HashSet<String>,
    kept: &mut Vec<(String, PartitionState)>,
) {
    for p in &st.data.partitions {
        if p.state.is_done() || !orphan(p, added) {
            continue;
        }
        added.insert(p.token.clone());
        kept.push((st.task_id.clone(), p.clone()));
    }
}

impl SyncTask {
    /// A NewEpoch read whole; if it applies, its states move into the view (`msg` keeps the
    /// header; a message the caller still holds is copied).
    pub(super) fn on_new_epoch(&mut self, msg: &mut Cow<'_, SyncMessage>, out: &mut SyncOutput) {
        let cur_id = self.cur_id();
        if msg.sync_epoch == cur_id {
            self.reread_in_force(msg);
            return;
        }
        let base = msg.base_epoch.clone().unwrap_or_default();
        let base = base.as_str();
        let valid = self.builds_on_view(msg, base, &cur_id);
        if !valid && self.rolled_back_to(msg, base, out) {
            return;
        }
        let superseded = self.supersedes_in_force(msg);
        if !valid && !superseded {
            self.reject_epoch(msg, base, &cur_id, out);
            return;
        }
        self.apply_epoch(msg, base, superseded && !valid, out);
    }

    /// A duplicate or re-publication of the epoch in force changes nothing, but a member's
    /// unfinished partition it names that this view does not know at all (this task started
    /// from an older checkpoint, whose author had not read it) is that member's.
    fn reread_in_force(&mut self, msg: &SyncMessage) {
        if msg.resend {
            self.take_unknown(msg);
            // whoever missed it can read it here: no other copy is needed
            self.refresh.resend_done();
        }
    }

    /// Valid: newer, and built on the epoch in force. A task that knows it missed an epoch (it
    /// read messages of it) accepts what builds on that epoch, a re-publication of the epoch it
    /// missed, or its leader's later attempt of the same generation; not an epoch of a later
    /// generation built on its older base (every task that missed nothing rejected it).
    /// Re-publications pass the same check: a task that missed an epoch it does not know of may
    /// have applied, and re-publish, one every other task rejected.
    ///
    /// A task that has applied no epoch yet (a new task replaying the log from a checkpoint or
    /// from the start) takes the first whole epoch it reads, or a re-publication of the epoch
    /// whose messages it read: running tasks re-publish the epoch in force when they read its
    /// answer, so a fresh leader always gets the epoch it builds on.
    fn builds_on_view(&self, msg: &SyncMessage, base: &str, cur_id: &str) -> bool {
        let newer = msg.epoch_generation > self.epoch_generation();
        newer
            && match self.missed() {
                Some((g, missed)) => {
                    self.view.future().keys().any(|(e, _)| e == base)
                        || (base == cur_id && (msg.resend || msg.epoch_generation == g))
                        || (self.view.epoch().is_none() && msg.resend && msg.sync_epoch == missed)
                }
                None => base == cur_id || self.view.epoch().is_none(),
            }
    }

    /// A leader that applied its own epoch, acknowledged by nobody, learns from a
    /// re-publication of an older epoch built on the same base (not valid here) that everyone
    /// else applied that one and rejected ours (we had missed it): it rolls back to it and
    /// computes the generation again on top of it. (An older epoch read for the first time after
    /// ours comes after ours in the log: everyone rejected it, as we do.) Whether it did.
    fn rolled_back_to(
        &mut self,
        msg: &mut Cow<'_, SyncMessage>,
        base: &str,
        out: &mut SyncOutput,
    ) -> bool {
        let (Some(e), Some(l)) = (self.view.epoch(), self.leading.lead()) else {
            return false;
        };
        if !(msg.resend
            && msg.epoch_generation < e.generation
            && base == e.base
            && l.acked.iter().all(|a| *a == self.id))
        {
            return false;
        }
        let (generation, attempt, members) = (e.generation, e.attempt + 1, l.members.clone());
        self.yield_unstarted_to(msg);
        self.apply_epoch(msg, base, false, out);
        // (unless it leads a newer generation already: that epoch builds on the rolled-back one)
        self.leading
            .lead_again(generation, attempt, members, self.now);
        true
    }

    /// Rolling back: what the rolled-back epoch gave this task and it never started (nobody
    /// acknowledged that epoch) is no claim of its own where the epoch everyone applied gives
    /// it to another task, a done one included (a tombstone has one owner too), unless only
    /// this task knows it is done. (Kept as this task's word, it stayed this task's through the
    /// rollback and the generation computed again on top, while the other member owned it too.)
    fn yield_unstarted_to(&mut self, msg: &SyncMessage) {
        let elsewhere: HashMap<&str, bool> = msg
            .connector_state
            .iter()
            .filter(|s| s.task_id != self.id)
            .flat_map(|s| &s.data.partitions)
            .map(|p| (p.token.as_str(), p.state.is_done()))
            .collect();
        self.own.retain(|p| match elsewhere.get(p.token.as_str()) {
            _ if p.state.is_active() => true,
            Some(&done) => p.state.is_done() && !done,
            None => true,
        });
    }

    /// Whether the epoch in force was an attempt its leader found stale and replaced with `msg`:
    /// everyone that did not miss an epoch applied the replacement, so follow it.
    fn supersedes_in_force(&self, msg: &SyncMessage) -> bool {
        !msg.resend
            && self.view.epoch().is_some_and(|e| {
                e.generation == msg.epoch_generation
                    && e.leader == msg.task_id
                    && msg.epoch_attempt > e.attempt
            })
    }

    /// An epoch that does not apply: a newer one puts this task behind (a fork if built on an
    /// epoch it applied before the one in force, whose leader is shown the epoch in force once);
    /// the leader's own epoch computed from a stale base is computed again.
    fn reject_epoch(&mut self, msg: &SyncMessage, base: &str, cur_id: &str, out: &mut SyncOutput) {
        let newer = msg.epoch_generation > self.epoch_generation();
        if newer {
            self.view.fall_behind();
            if base != cur_id && self.view.applied(base) {
                self.view.note_fork(msg.epoch_generation, &msg.sync_epoch);
            }
        }
        // built on an epoch older than ours: its leader missed ours; show it (once)
        if newer
            && self.view.in_epoch()
            && base != cur_id
            && self.view.applied(base)
            && self.refresh.first_resend_for_fork(&msg.sync_epoch)
        {
            self.want_resend(out);
        }
        if msg.task_id == self.id {
            // computed from a stale base: recompute once members re-answer
            self.leading.own_epoch_rejected(&msg.sync_epoch, self.now);
        }
    }

    /// Applies an epoch, in named steps. `replacing` is set when it replaces an attempt of the
    /// same generation by the same leader (computed from a stale view): what the replaced
    /// attempt gave is not a member's own word, so the new attempt is authoritative on owners.
    pub(super) fn apply_epoch(
        &mut self,
        msg: &mut Cow<'_, SyncMessage>,
        base: &str,
        replacing: bool,
        out: &mut SyncOutput,
    ) {
        let resolved = self.shares_resolved_by(&msg.connector_state);
        let (prev, mut mine) = self.enter_epoch(msg, base);
        // a re-publication of the epoch before is of no use any more: this one is in the log
        self.refresh.resend_done();
        let epoch_shares: HashMap<String, String> = mine
            .iter()
            .flat_map(|m| &m.share.partitions)
            .map(|sh| (sh.token.clone(), sh.assignee.clone()))
            .collect();
        if !replacing {
            self.keep_claims(&prev, &mut mine);
        }
        // (what the others hold of this task's shares from now on)
        self.own.shares_of_epoch(epoch_shares);
        let done_before = self.carry_progress(&prev);
        let orphans_mine = self.resolve_orphans(&prev, mine.as_ref(), &done_before, msg.resend);
        match &mine {
            Some(entry) => self.take_assignment(entry, &resolved, orphans_mine, &done_before, out),
            None => self.left_out(msg, out),
        }
        let older = self.replay_deferred(msg);
        // states of older epochs read before this one (a task that started reading the log
        // before its first epoch) still count for what their senders say of their own
        // partitions, as when read after it: finishes, and late records of departed tasks
        for st in &older {
            self.absorb(st);
            self.take_finishes(st, out);
            self.adopt_departed(st);
        }
        self.acknowledge(msg, out);
    }

    /// The epoch is in force: its id, members (those that left are remembered as departed) and
    /// states. Returns the view before it (the leader computed from what it had read, which
    /// can be older than what this task read) and the epoch's entry for this task, if a member.
    fn enter_epoch(
        &mut self,
        msg: &mut Cow<'_, SyncMessage>,
        base: &str,
    ) -> (BTreeMap<String, TaskState>, Option<TaskState>) {
        self.record_epoch(msg, base);
        self.take_members(msg);
        self.forget_applied_generations(msg);
        self.forget_gone_senders();
        self.take_states(msg)
    }

    /// The epoch's id, author and base are in force, and in the history of epochs applied.
    fn record_epoch(&mut self, msg: &SyncMessage, base: &str) {
        self.view.enter(EpochInfo {
            id: msg.sync_epoch.clone(),
            generation: msg.epoch_generation,
            base: base.to_string(),
            leader: if msg.resend {
                epoch_leader(&msg.sync_epoch, msg.epoch_generation, msg.epoch_attempt)
            } else {
                msg.task_id.clone()
            },
            attempt: msg.epoch_attempt,
        });
    }

    /// The epoch's members are the members; those that left (and those it says departed) are
    /// remembered as departed, the latest `MAX_DEPARTED`.
    fn take_members(&mut self, msg: &SyncMessage) {
        // (inserted one by one: a BTreeSet collected or made from an array sorts its input, a
        // stable sort of String in the wasm that nothing else needs)
        let mut members = BTreeSet::new();
        for s in &msg.connector_state {
            members.insert(s.task_id.clone());
        }
        // who is known to have applied it: everyone, for an epoch re-published by a member that
        // applied it; otherwise this task, until the others' acknowledgements are read
        self.view
            .take_members(members, &msg.departed, msg.resend, &self.id);
    }

    /// Epochs read of the generations the epoch closes are forgotten; the forks its author read
    /// are known (a task starting here did not read their NewEpochs).
    fn forget_applied_generations(&mut self, msg: &SyncMessage) {
        let rejected = msg
            .rejected
            .iter()
            .filter_map(|e| Some((generation_of(e)?, e.clone())))
            .collect();
        self.view.forget_applied(msg.epoch_generation, rejected);
    }

    /// Counters of senders that are gone are no longer needed (bounded memory), but those of the
    /// latest departed tasks are kept: a late record of one after a record this task missed
    /// (e.g. the NewEpoch it led) is a hole like any other.
    fn forget_gone_senders(&mut self) {
        let (members, me) = (self.view.members(), &self.id);
        let departed: HashSet<&String> = self.view.departed().iter().collect();
        self.cursor
            .forget_senders(|t| members.contains(t) || t == me || departed.contains(t));
    }

    /// The epoch's states are the view (moved out of a message given away: at scale they are
    /// the whole view). Returns the view before it and the epoch's entry for this task.
    fn take_states(
        &mut self,
        msg: &mut Cow<'_, SyncMessage>,
    ) -> (BTreeMap<String, TaskState>, Option<TaskState>) {
        let mut cache = BTreeMap::new();
        let mut mine_entry: Option<TaskState> = None;
        let states = match msg {
            Cow::Owned(m) => std::mem::take(&mut m.connector_state),
            Cow::Borrowed(m) => m.connector_state.clone(),
        };
        for s in states {
            if s.task_id == self.id {
                mine_entry = Some(s);
            } else {
                cache.insert(s.task_id.clone(), s);
            }
        }
        let prev = std::mem::replace(&mut self.view.cache, cache);
        (prev, mine_entry)
    }

    /// A member owning a partition (its own word, or a share addressed to it, read before the
    /// epoch) keeps it even if the leader, not having read that, gave it to another member. This
    /// task's own shares count as the others read them (`own_shares_read`): one it made after
    /// the epoch's record, not read back yet, reaches the others after the epoch, from an older
    /// epoch, and claims nothing there (see `absorb`).
    fn keep_claims(&mut self, prev: &BTreeMap<String, TaskState>, mine: &mut Option<TaskState>) {
        let (cache, members, own_words) = self.view.cache_with_lookups();
        let claims = claims_before(prev, &self.own, members, own_words, &self.id);
        let entries = cache.values_mut().chain(mine.as_mut());
        let moved = claimed_elsewhere(&claims, entries);
        for (m, p) in moved {
            let target = if m == self.id {
                mine.as_mut()
            } else {
                self.view.cache.get_mut(&m)
            };
            if let Some(t) = target {
                if !t.data.partitions.iter().any(|q| q.token == p.token) {
                    t.data.partitions.push(p);
                }
            }
        }
    }

    /// What the view before the epoch knew is not lost: the own words of members are absorbed
    /// (progress, partitions nobody owns), and a partition known to be done stays done. Returns
    /// the done partitions with when they finished.
    fn carry_progress(
        &mut self,
        prev: &BTreeMap<String, TaskState>,
    ) -> HashMap<String, Option<u64>> {
        self.view.forget_own_words();
        let mut done_before: HashMap<String, Option<u64>> = HashMap::default();
        for st in prev.values().chain(std::iter::once(self.own.state())) {
            for p in &st.data.partitions {
                if p.state.is_done() {
                    done_before.insert(p.token.clone(), p.finished_timestamp);
                }
            }
        }
        for st in prev.values() {
            if self.view.cache.contains_key(&st.task_id) {
                self.absorb(st);
            }
        }
        if !done_before.is_empty() {
            for st in self.view.cache.values_mut() {
                for p in &mut st.data.partitions {
                    if !p.state.is_done() {
                        if let Some(f) = done_before.get(&p.token) {
                            p.state = PartitionStatus::Finished;
                            p.finished_timestamp = *f;
                        }
                    }
                }
            }
        }
        done_before
    }

    /// Partitions of departed tasks the leader had not read about (it timed out as a slow
    /// reader) are still someone's: every reader resolves them the same way, a share to its
    /// assignee if that is a member, otherwise to the member owning the smallest parent, else
    /// by rendezvous hashing over the members. Returns those that fall to this task.
    ///
    /// From a re-publication (`resent`), the rule for late records goes first for shares too:
    /// what the readers of the original read before it is in the re-publication (its author
    /// read it before the original), so a record it does not know came after the original,
    /// where every other reader took it as a late record (`adopt_departed`).
    fn resolve_orphans(
        &mut self,
        prev: &BTreeMap<String, TaskState>,
        mine: Option<&TaskState>,
        done_before: &HashMap<String, Option<u64>>,
        resent: bool,
    ) -> Vec<PartitionState> {
        let mut orphans_mine: Vec<PartitionState> = Vec::new();
        // (the view is read in one pass and changed after it: what a member keeps goes to its
        // entry, what falls to another member to the departed task's entry as a share; nothing
        // the pass reads, the members' owned tokens, changes but by those it adds, kept aside)
        let mut kept: Vec<(String, PartitionState)> = Vec::new();
        let mut departed_shares: Vec<(String, PartitionState, String)> = Vec::new();
        let known = self.owned_in_epoch(mine);
        let mut added: HashSet<String> = HashSet::default();
        // (an orphan is a partition no state of the epoch owns, not resolved yet, not done)
        let orphan = |p: &PartitionState, added: &HashSet<String>| {
            !known.contains(p.token.as_str())
                && !added.contains(&p.token)
                && !done_before.contains_key(&p.token)
        };
        let member_list: Vec<String> = self.view.members().iter().cloned().collect();
        let mut parent_owner: Option<HashMap<String, String>> = None;
        for st in prev.values() {
            if member_list.is_empty() {
                continue;
            }
            if self.view.members().contains(&st.task_id) {
                if self.view.cache.contains_key(&st.task_id) {
                    keep_unknown_to_epoch(st, &orphan, &mut added, &mut kept);
                }
                continue;
            }
            for (p, assignee) in left_by(st) {
                if !orphan(&p, &added) {
                    continue;
                }
                added.insert(p.token.clone());
                let owners = parent_owner.get_or_insert_with(|| self.orphan_owners(mine, &kept));
                let target = self.orphan_target(&p, assignee, owners, resent, &member_list);
                if target == self.id {
                    orphans_mine.push(p);
                } else {
                    // kept in the departed task's entry as a share to the member it falls to
                    // (as `adopt_departed` does), not as that member's own word: an epoch that
                    // comes before the member has taken it resolves it again
                    departed_shares.push((st.task_id.clone(), p, target));
                }
            }
        }
        self.place_orphans(kept, departed_shares);
        orphans_mine
    }

    /// What `resolve_orphans` kept for members goes to their entries; what falls to a member
    /// from a departed task, to the departed task's entry as a share to that member.
    fn place_orphans(
        &mut self,
        kept: Vec<(String, PartitionState)>,
        departed_shares: Vec<(String, PartitionState, String)>,
    ) {
        for (task, p) in kept {
            if let Some(t) = self.view.cache.get_mut(&task) {
                t.data.partitions.push(p);
            }
        }
        for (departed, p, to) in departed_shares {
            self.share_for_departed(&departed, &p, &to);
        }
    }

    /// The tokens the epoch's states own (the view's, and this task's entry in it).
    fn owned_in_epoch<'a>(&'a self, mine: Option<&'a TaskState>) -> HashSet<&'a str> {
        let count = self
            .view
            .cache
            .values()
            .chain(mine)
            .map(|st| st.data.partitions.len())
            .sum();
        let mut known: HashSet<&str> = HashSet::with_capacity_and_hasher(count, Default::default());
        for st in self.view.cache.values().chain(mine) {
            known.extend(st.data.partitions.iter().map(|p| p.token.as_str()));
        }
        known
    }

    /// The members' partitions as of now, by token: the view's (see `member_owners`) and those
    /// kept for members so far.
    fn orphan_owners(
        &self,
        mine: Option<&TaskState>,
        kept: &[(String, PartitionState)],
    ) -> HashMap<String, String> {
        let mut owners: HashMap<String, String> =
            member_owners(self.view.cache.values().chain(mine), self.view.members())
                .into_iter()
                .map(|(t, o)| (t.to_string(), o.to_string()))
                .collect();
        for (task, q) in kept {
            owners.insert(q.token.clone(), task.clone());
        }
        owners
    }

    /// The member a departed task's orphan falls to. A share to a member is that member's: it
    /// took the share when it read it, as the sharer was a member then; anything else goes by
    /// the rule for late records of departed tasks, `adopt_departed`, to the member owning its
    /// smallest parent, so that a partition read before the epoch by one reader and after it by
    /// another, e.g. one that read a re-publication of the epoch, falls to the same member;
    /// else by rendezvous hashing over the members.
    fn orphan_target(
        &self,
        p: &PartitionState,
        assignee: Option<&str>,
        owners: &HashMap<String, String>,
        resent: bool,
        member_list: &[String],
    ) -> String {
        let by_parent = p.parents.iter().min().and_then(|x| owners.get(x));
        let to_assignee = assignee.filter(|a| self.view.members().contains(*a));
        match (to_assignee, by_parent) {
            (Some(a), _) if !resent => a.to_string(),
            (_, Some(owner)) => owner.clone(),
            (Some(a), None) => a.to_string(),
            (None, None) => rendezvous(&p.token, member_list),
        }
    }

    /// A member takes what the epoch gives it: it drops what the epoch gives another member
    /// (stopping it), adds what it was given and the orphans that fall to it, and drops the
    /// shares the epoch resolved.
    fn take_assignment(
        &mut self,
        entry: &TaskState,
        resolved: &HashSet<String>,
        orphans_mine: Vec<PartitionState>,
        done_before: &HashMap<String, Option<u64>>,
        out: &mut SyncOutput,
    ) {
        self.drop_given_elsewhere(out);
        self.take_given(entry, orphans_mine, done_before);
        // shares the epoch resolved are gone; unknown ones (published in an older epoch) stay
        let own_data = self.own_data_tokens();
        self.own
            .retain_shares(|s| !resolved.contains(&s.token) && !own_data.contains(&s.token));
        self.own.version_at_least(entry.state_version);
        self.view.set_in_epoch(true);
    }

    /// The epoch is authoritative on conflicts: an own partition it gives another member is
    /// dropped (and stopped if it runs).
    fn drop_given_elsewhere(&mut self, out: &mut SyncOutput) {
        let count = self
            .view
            .cache
            .values()
            .map(|s| s.data.partitions.len())
            .sum();
        let mut elsewhere: HashSet<&str> =
            HashSet::with_capacity_and_hasher(count, Default::default());
        elsewhere.extend(
            self.view
                .cache
                .values()
                .flat_map(|s| s.data.partitions.iter().map(|p| p.token.as_str())),
        );
        let mut stop = Vec::new();
        self.own.retain(|p| {
            if elsewhere.contains(p.token.as_str()) {
                if p.state.is_active() {
                    stop.push(p.token.clone());
                }
                false
            } else {
                true
            }
        });
        out.stop.extend(stop);
    }

    /// What the leader gave this task (reset if it ran elsewhere; done if known done), then the
    /// orphans that fall to it.
    fn take_given(
        &mut self,
        entry: &TaskState,
        orphans_mine: Vec<PartitionState>,
        done_before: &HashMap<String, Option<u64>>,
    ) {
        let have = self.own_data_tokens();
        for p in &entry.data.partitions {
            if !have.contains(&p.token) {
                let mut p = if p.state.is_active() {
                    p.reset()
                } else {
                    p.clone()
                };
                if let (false, Some(f)) = (p.state.is_done(), done_before.get(&p.token)) {
                    p.state = PartitionStatus::Finished;
                    p.finished_timestamp = *f;
                }
                self.own.push(p);
            }
        }
        let have = self.own_data_tokens();
        for p in orphans_mine {
            if !have.contains(&p.token) {
                self.own.push(p);
            }
        }
    }

    /// The own shares whose partition an epoch's `states` hold (the epoch resolved them: a member
    /// owns it now), found before the states move into the view. (Only the own shares are looked
    /// up: nothing between then and `take_assignment` changes them.)
    fn shares_resolved_by(&self, states: &[TaskState]) -> HashSet<String> {
        self.own_shares_among(
            states
                .iter()
                .flat_map(|s| &s.data.partitions)
                .map(|p| p.token.as_str()),
        )
    }

    /// A task outside the epoch: if the epoch is of its own generation, the group considers it
    /// gone, and it stops everything it ran.
    fn left_out(&mut self, msg: &SyncMessage, out: &mut SyncOutput) {
        self.view.set_in_epoch(false);
        let expected = self
            .leading
            .rebalance()
            .is_none_or(|r| r.generation <= msg.epoch_generation);
        if expected {
            // left out of an epoch of our generation: the group considers us gone (fenced)
            for p in self.own.partitions() {
                if p.state.is_active() {
                    out.stop.push(p.token.clone());
                }
            }
            self.own.clear();
        }
    }

    /// States published in this epoch that were read before it (it was missed) are merged;
    /// bookkeeping of the generations it closed goes. Returns the states read of older epochs
    /// (oldest first).
    fn replay_deferred(&mut self, msg: &SyncMessage) -> Vec<TaskState> {
        // states published in this epoch that were read before it (it was missed)
        // (only changes read of a task: applied to the epoch's entry for it)
        // (moved out, not cloned: what this epoch closes leaves `future`)
        let mut replay: Vec<TaskState> = Vec::new();
        let mut older: Vec<(u64, TaskState)> = Vec::new();
        for ((e, k), (g, st, dropped)) in self.view.take_future() {
            if e == msg.sync_epoch {
                let whole = match (&dropped, self.view.cache.get(&st.task_id)) {
                    (Some(d), Some(entry)) if entry.state_version < st.state_version => {
                        let mut whole = entry.clone();
                        delta::patch(&mut whole, &st, d, None);
                        Some(whole)
                    }
                    _ => None,
                };
                if g > msg.epoch_generation {
                    // (a generation that does not match its epoch: kept, as any later one)
                    replay.push(whole.unwrap_or_else(|| st.clone()));
                    self.view.keep_future((e, k), (g, st, dropped));
                } else {
                    replay.push(whole.unwrap_or(st));
                }
            } else if g > msg.epoch_generation {
                self.view.keep_future((e, k), (g, st, dropped));
            } else {
                older.push((g, st));
            }
        }
        let older = by_generation(older);
        // bookkeeping of generations this epoch closed is no longer needed (bounded memory)
        let closed = msg.epoch_generation;
        self.refresh.forget_resends_upto(closed);
        for st in &replay {
            self.merge(st);
            self.view.ack(&st.task_id);
        }
        // (a newer rebalance led: members re-answer from the new base, with a fresh timeout)
        self.leading.epoch_applied(closed, self.now);
        older.into_iter().map(|(_, st)| st).collect()
    }

    /// The leader of the epoch starts collecting acknowledgements, checkpoints are scheduled,
    /// and the task acknowledges the epoch with its own state.
    fn acknowledge(&mut self, msg: &SyncMessage, out: &mut SyncOutput) {
        let leads = msg.task_id == self.id && !msg.resend;
        let members = if leads {
            self.view.members().iter().cloned().collect()
        } else {
            Vec::new()
        };
        self.leading
            .epoch_in_force(leads, members, &self.id, self.now);
        self.schedule_refresh();
        // acknowledge the epoch with the own state (re-answer if a newer rebalance is pending);
        // a task outside the epoch (a newcomer replaying the topic) has nothing to say
        self.settle(out);
        // (a newcomer with a rebalance pending answers again from this epoch: its leader waits
        // for answers from the epoch it applied)
        if self.view.in_epoch() || self.rebalancing() || !out.stop.is_empty() {
            let kind = if self.rebalancing() {
                MessageType::RebalanceAnswer
            } else {
                MessageType::Regular
            };
            self.publish_own(kind, out);
        }
    }
}
