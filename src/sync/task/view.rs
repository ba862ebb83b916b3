//! The epoch in force and the view of the other tasks under it.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use rustc_hash::FxHashMap as HashMap;

use super::delta;
use crate::sync::types::{Delta, TaskState};

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
    pub(super) epoch: Option<EpochInfo>,
    /// Its members.
    pub(super) members: BTreeSet<String>,
    /// Whether this task is one of them.
    pub(super) in_epoch: bool,
    /// The state of every other task this task knows, as of the epoch in force.
    pub(super) cache: BTreeMap<String, TaskState>,
    /// Where the partitions of each entry of `cache` are, for the entries changes were applied
    /// to (see `delta::Positions`).
    positions: HashMap<String, delta::Positions>,
    /// Tasks whose cached state is their own word (read from their message), not a leader's
    /// snapshot entry.
    pub(super) own_words: BTreeSet<String>,
    /// Members known to have applied the epoch in force (their messages of it were read). A
    /// task starts what is new to it only once every member has.
    pub(super) acked: BTreeSet<String>,
    /// Ids of the epochs this task applied (the last few).
    pub(super) history: VecDeque<String>,
    /// Tasks that were members of an epoch this task applied and are not any more (they left,
    /// died or fenced themselves: they run nothing), oldest first, bounded.
    pub(super) departed: VecDeque<String>,
    /// Newest state per (epoch, task) read from epochs not applied yet (a task that missed a
    /// NewEpoch replays them once it gets the epoch; bounded by epochs × tasks). With no whole
    /// state of the task read in that epoch, only the changes read: what they list, and what they
    /// dropped.
    pub(super) future: BTreeMap<(String, String), (u64, TaskState, Option<Delta>)>,
    /// Whether this task read messages of an epoch newer than the one it applied.
    pub(super) behind: bool,
    /// Since when this task has been behind (read messages of an epoch it could not apply).
    behind_since: Option<u64>,
    /// NewEpoch ids read (applied or not) of generations above the epoch in force.
    pub(super) read_epochs: BTreeSet<(u64, String)>,
    /// Of those, the forks: built on an epoch this task applied before the one in force (their
    /// leader missed an epoch; every task that did not rejects them). Checkpoints name them.
    pub(super) forks: BTreeSet<(u64, String)>,
}

impl View {
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
        v.behind = true;
        v.note_behind(7);
        v.note_behind(9);
        assert_eq!(v.behind_since(), Some(7));
        v.behind = false;
        v.note_behind(11);
        assert_eq!(v.behind_since(), None);
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
