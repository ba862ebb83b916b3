//! The epoch in force and the view of the other tasks under it.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use rustc_hash::FxHashMap as HashMap;

use super::delta;
use super::limits::{MAX_DEPARTED, MAX_HISTORY};
use crate::sync::types::{Delta, TaskState};

/// A state of a task read in an epoch not applied yet: its generation, the state, and the
/// changes only if no whole state of it was read (see `View::future`).
pub(super) type Deferred = (u64, TaskState, Option<Delta>);

/// The newest epoch a task has applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct EpochInfo {
    pub(super) id: String,
    pub(super) generation: u64,
    pub(super) base: String,
    /// Author and attempt, when known (not for an epoch applied from a re-publication).
    pub(super) leader: String,
    pub(super) attempt: u32,
}

/// The epoch in force, its members, and what this task knows of the other tasks.
#[derive(Debug, Clone, Default)]
pub(super) struct View {
    /// The epoch in force.
    epoch: Option<EpochInfo>,
    /// Its members.
    members: BTreeSet<String>,
    /// Whether this task is one of them.
    in_epoch: bool,
    /// The state of every other task this task knows, as of the epoch in force. (Readable and
    /// writable by the steps: what `positions` knows of an entry is checked against the entry's
    /// version and length before use, see `delta::Positions`.)
    pub(super) cache: BTreeMap<String, TaskState>,
    /// Where the partitions of each entry of `cache` are, for the entries changes were applied
    /// to (see `delta::Positions`).
    positions: HashMap<String, delta::Positions>,
    /// Tasks whose cached state is their own word (read from their message), not a leader's
    /// snapshot entry.
    own_words: BTreeSet<String>,
    /// Members known to have applied the epoch in force (their messages of it were read). A
    /// task starts what is new to it only once every member has.
    acked: BTreeSet<String>,
    /// Ids of the epochs this task applied (the last few).
    history: VecDeque<String>,
    /// Tasks that were members of an epoch this task applied and are not any more (they left,
    /// died or fenced themselves: they run nothing), oldest first, bounded.
    departed: VecDeque<String>,
    /// Newest state per (epoch, task) read from epochs not applied yet (a task that missed a
    /// NewEpoch replays them once it gets the epoch; bounded by epochs × tasks). With no whole
    /// state of the task read in that epoch, only the changes read: what they list, and what they
    /// dropped.
    future: BTreeMap<(String, String), Deferred>,
    /// Whether this task read messages of an epoch newer than the one it applied.
    behind: bool,
    /// Since when this task has been behind (read messages of an epoch it could not apply).
    behind_since: Option<u64>,
    /// NewEpoch ids read (applied or not) of generations above the epoch in force.
    read_epochs: BTreeSet<(u64, String)>,
    /// Of those, the forks: built on an epoch this task applied before the one in force (their
    /// leader missed an epoch; every task that did not rejects them). Checkpoints name them.
    forks: BTreeSet<(u64, String)>,
}

impl View {
    /// The epoch in force, if any.
    pub(super) fn epoch(&self) -> Option<&EpochInfo> {
        self.epoch.as_ref()
    }

    /// The members of the epoch in force.
    pub(super) fn members(&self) -> &BTreeSet<String> {
        &self.members
    }

    /// Whether this task is a member of the epoch in force.
    pub(super) fn in_epoch(&self) -> bool {
        self.in_epoch
    }

    /// The members known to have applied the epoch in force.
    pub(super) fn acked(&self) -> &BTreeSet<String> {
        &self.acked
    }

    /// The tasks that were members of an epoch this task applied and are not any more, oldest
    /// first (the latest `MAX_DEPARTED`).
    pub(super) fn departed(&self) -> &VecDeque<String> {
        &self.departed
    }

    /// Whether `id` is one of the last few epochs this task applied (the one in force too).
    pub(super) fn applied(&self, id: &str) -> bool {
        self.history.iter().any(|h| h == id)
    }

    /// Whether this task read messages of an epoch newer than the one it applied.
    pub(super) fn behind(&self) -> bool {
        self.behind
    }

    /// States read of epochs not applied yet, by (epoch, task).
    pub(super) fn future(&self) -> &BTreeMap<(String, String), Deferred> {
        &self.future
    }

    /// The forks read (generation, id), oldest first.
    pub(super) fn forks(&self) -> &BTreeSet<(u64, String)> {
        &self.forks
    }

    /// The cache to change, with the members and own words to decide by (borrowed apart).
    pub(super) fn cache_with_lookups(
        &mut self,
    ) -> (
        &mut BTreeMap<String, TaskState>,
        &BTreeSet<String>,
        &BTreeSet<String>,
    ) {
        (&mut self.cache, &self.members, &self.own_words)
    }

    /// Whether the NewEpoch `id` of generation `g` above the epoch in force was read.
    pub(super) fn has_read_epoch(&self, g: u64, id: &str) -> bool {
        self.read_epochs.contains(&(g, id.to_string()))
    }

    /// Whether a NewEpoch of generation `g` above the epoch in force was read.
    pub(super) fn read_epoch_of(&self, g: u64) -> bool {
        self.read_epochs.iter().any(|(r, _)| *r == g)
    }

    /// An epoch is applied: it is in force and in the history (the last `MAX_HISTORY`), and this
    /// task is behind no more.
    pub(super) fn enter(&mut self, epoch: EpochInfo) {
        self.history.push_back(epoch.id.clone());
        if self.history.len() > MAX_HISTORY {
            self.history.pop_front();
        }
        self.epoch = Some(epoch);
        self.behind = false;
    }

    /// The epoch's members are the members; those that left, and those in `told` that are not
    /// members, are remembered as departed (the latest `MAX_DEPARTED`). Known to have applied
    /// it: every member if `all_applied` (an epoch re-published by a member), else only `me`.
    pub(super) fn take_members(
        &mut self,
        members: BTreeSet<String>,
        told: &[String],
        all_applied: bool,
        me: &str,
    ) {
        let before = std::mem::replace(&mut self.members, members);
        let told = told.iter().filter(|d| !self.members.contains(*d));
        for gone in before.difference(&self.members).chain(told) {
            if !self.departed.contains(gone) {
                self.departed.push_back(gone.clone());
            }
        }
        while self.departed.len() > MAX_DEPARTED {
            self.departed.pop_front();
        }
        self.acked = if all_applied {
            self.members.clone()
        } else {
            let mut only = BTreeSet::new();
            only.insert(me.to_string());
            only
        };
    }

    /// `task` applied the epoch in force (its message of it was read).
    pub(super) fn ack(&mut self, task: &str) {
        if !self.acked.contains(task) {
            self.acked.insert(task.to_string());
        }
    }

    /// This task is a member of the epoch in force, or was left out of it.
    pub(super) fn set_in_epoch(&mut self, member: bool) {
        self.in_epoch = member;
    }

    /// The cached state of `task` is its own word (read from its message).
    pub(super) fn note_own_word(&mut self, task: &str) {
        if !self.own_words.contains(task) {
            self.own_words.insert(task.to_string());
        }
    }

    /// An epoch's entries replace the cache: none is a task's own word any more.
    pub(super) fn forget_own_words(&mut self) {
        self.own_words.clear();
    }

    /// A message of an epoch newer than the one applied was read.
    pub(super) fn fall_behind(&mut self) {
        self.behind = true;
    }

    /// A NewEpoch `id` of generation `g` above the epoch in force was read.
    pub(super) fn note_read_epoch(&mut self, g: u64, id: &str) {
        self.read_epochs.insert((g, id.to_string()));
    }

    /// Of those, `id` is a fork: built on an epoch this task applied before the one in force.
    pub(super) fn note_fork(&mut self, g: u64, id: &str) {
        self.read_epochs.insert((g, id.to_string()));
        self.forks.insert((g, id.to_string()));
    }

    /// An epoch of generation `applied` is applied: the epochs read of the generations it closes
    /// are forgotten, and `rejected` (the forks its author read, as (generation, id)) are known.
    pub(super) fn forget_applied(&mut self, applied: u64, rejected: Vec<(u64, String)>) {
        self.read_epochs.retain(|(g, _)| *g > applied);
        self.forks.retain(|(g, _)| *g > applied);
        for (g, e) in rejected.into_iter().filter(|(g, _)| *g > applied) {
            self.read_epochs.insert((g, e.clone()));
            self.forks.insert((g, e));
        }
    }

    /// The newest state read of `task` in the epoch `epoch` not applied yet, if any.
    pub(super) fn deferred(&self, epoch: &str, task: &str) -> Option<&Deferred> {
        self.future.get(&(epoch.to_string(), task.to_string()))
    }

    /// A state of `task` read in the epoch `epoch` not applied yet, newer than any before.
    pub(super) fn defer(&mut self, epoch: &str, task: &str, deferred: Deferred) {
        self.future
            .insert((epoch.to_string(), task.to_string()), deferred);
    }

    /// Every state read of epochs not applied yet, taken out (to replay and keep the later).
    pub(super) fn take_future(&mut self) -> BTreeMap<(String, String), Deferred> {
        std::mem::take(&mut self.future)
    }

    /// Keeps a state read of an epoch not applied yet (one `take_future` gave).
    pub(super) fn keep_future(&mut self, key: (String, String), deferred: Deferred) {
        self.future.insert(key, deferred);
    }

    /// The cached state of `task` and where its partitions are (kept from here on), to apply a
    /// change to.
    pub(super) fn entry_to_patch(
        &mut self,
        task: &str,
    ) -> Option<(&mut TaskState, &mut delta::Positions)> {
        let entry = self.cache.get_mut(task)?;
        if !self.positions.contains_key(task) {
            self.positions
                .insert(task.to_string(), delta::Positions::default());
        }
        Some((entry, self.positions.get_mut(task)?))
    }

    /// Since when this task has been behind (read messages of an epoch it could not apply).
    pub(super) fn behind_since(&self) -> Option<u64> {
        self.behind_since
    }

    /// After an input: how long this task has been behind, counted from `now` if it just fell
    /// behind; not at all if it is not.
    pub(super) fn note_behind(&mut self, now: u64) {
        self.behind_since = if self.behind {
            Some(self.behind_since.unwrap_or(now))
        } else {
            None
        };
    }

    /// An epoch is applied: it rebuilds the entries, whose positions are forgotten.
    pub(super) fn forget_positions(&mut self) {
        self.positions.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn behind_counts_from_when_it_fell_behind() {
        let mut v = View::default();
        v.note_behind(5);
        assert_eq!(v.behind_since(), None);
        v.fall_behind();
        v.note_behind(7);
        v.note_behind(9);
        assert_eq!(v.behind_since(), Some(7));
        v.enter(epoch("e1", 1));
        v.note_behind(11);
        assert_eq!(v.behind_since(), None);
    }

    fn epoch(id: &str, generation: u64) -> EpochInfo {
        EpochInfo {
            id: id.into(),
            generation,
            base: String::new(),
            leader: "t1".into(),
            attempt: 0,
        }
    }

    fn set(ids: &[&str]) -> BTreeSet<String> {
        ids.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn an_epoch_entered_is_in_force_in_the_last_few_applied_and_ends_being_behind() {
        let mut v = View::default();
        v.fall_behind();
        v.enter(epoch("e1", 1));
        assert!(!v.behind());
        assert_eq!(v.epoch().map(|e| e.id.as_str()), Some("e1"));
        for g in 2..=(MAX_HISTORY as u64 + 1) {
            v.enter(epoch(&format!("e{g}"), g));
        }
        assert!(!v.applied("e1"), "the oldest is forgotten past MAX_HISTORY");
        assert!(v.applied("e2"));
        assert_eq!(v.history.len(), MAX_HISTORY);
    }

    #[test]
    fn members_that_left_or_were_told_gone_are_departed_once_and_acks_start_over() {
        let mut v = View::default();
        v.take_members(set(&["t1", "t2", "t3"]), &[], false, "t1");
        assert_eq!(v.acked(), &set(&["t1"]));
        v.ack("t2");
        v.ack("t2");
        assert_eq!(v.acked(), &set(&["t1", "t2"]));
        let told = ["t4".to_string(), "t1".to_string()];
        v.take_members(set(&["t1", "t2"]), &told, true, "t1");
        assert_eq!(v.departed(), &["t3", "t4"], "t1 is a member: not departed");
        assert_eq!(
            v.acked(),
            &set(&["t1", "t2"]),
            "a re-publication: all applied it"
        );
        v.take_members(set(&["t1"]), &told, false, "t1");
        assert_eq!(v.departed(), &["t3", "t4", "t2"], "each once, oldest first");
    }

    #[test]
    fn forks_are_read_epochs_and_both_are_forgotten_once_their_generation_is_applied() {
        let mut v = View::default();
        v.note_read_epoch(3, "e3");
        v.note_fork(4, "f4");
        assert!(v.read_epoch_of(3) && v.has_read_epoch(4, "f4"));
        assert_eq!(v.forks().len(), 1);
        v.forget_applied(3, vec![(2, "old".into()), (5, "f5".into())]);
        assert!(!v.read_epoch_of(3));
        let forks: Vec<_> = v.forks().iter().map(|(_, e)| e.as_str()).collect();
        assert_eq!(
            forks,
            ["f4", "f5"],
            "the author's rejected ones above 3 are known"
        );
        assert!(v.has_read_epoch(5, "f5"));
    }

    #[test]
    fn a_deferred_state_is_kept_by_epoch_and_task_until_taken() {
        let mut v = View::default();
        v.defer("e2", "t2", (2, TaskState::empty("t2"), None));
        assert!(v.deferred("e2", "t2").is_some() && v.deferred("e2", "t3").is_none());
        let taken = v.take_future();
        assert!(v.future().is_empty());
        for (k, d) in taken {
            v.keep_future(k, d);
        }
        assert_eq!(v.future().len(), 1);
    }

    #[test]
    fn only_a_cached_entry_is_patched_and_its_positions_are_kept_until_an_epoch() {
        let mut v = View::default();
        assert!(v.entry_to_patch("t2").is_none());
        assert!(v.positions.is_empty());
        v.cache.insert("t2".into(), TaskState::empty("t2"));
        assert!(v.entry_to_patch("t2").is_some());
        assert_eq!(v.positions.len(), 1);
        v.forget_positions();
        assert!(v.positions.is_empty());
    }
}
