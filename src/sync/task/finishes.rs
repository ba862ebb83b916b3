//! The finishes a task has read: the one fact of the protocol that never goes back. A record that
//! says a partition is Finished or Removed (in any state it carries, its owned partitions or its
//! shares, of any epoch or kind) was written after that partition's owner finished it; nothing
//! the task reads later (a share re-addressed from a departed task, a stale answer, an epoch
//! computed before the finish landed) can make it new work again. The task notes every such
//! record here as it reads it, and the one step that starts partitions (`schedule_ready`) asks
//! this ledger first: a partition whose finish the task has read is taken as finished, never
//! started. The guarantee does not rest on every path that hands a task a partition keeping the
//! done mark of the view: it holds by construction at the start.
//!
//! Entries are kept `removalDelay + tombstoneTtl` after they were read (at least as long as the
//! finished partition's tombstone lives), then forgotten, oldest first (memory bounded by the
//! partitions finished within that time, as the tombstones already are).

use std::collections::VecDeque;

use rustc_hash::FxHashMap as HashMap;

use crate::sync::types::{SyncMessage, TaskState};

/// Tokens whose finish this task has read, with when each finished.
#[derive(Debug, Clone, Default)]
pub(super) struct Finishes {
    /// When each partition finished (its `finishedTimestamp`, if the record carried one).
    finished: HashMap<String, Option<u64>>,
    /// When each entry was noted, oldest first (an entry is noted once).
    noted: VecDeque<(u64, String)>,
}

impl Finishes {
    /// Every partition `msg` says is done (a message read whole: the chunks of one joined).
    pub(super) fn note_message(&mut self, msg: &SyncMessage, now: u64) {
        for st in &msg.connector_state {
            self.note_state(st, now);
        }
    }

    /// Every partition `st` says is done, owned or shared.
    pub(super) fn note_state(&mut self, st: &TaskState, now: u64) {
        for p in &st.data.partitions {
            if p.state.is_done() {
                self.note(&p.token, p.finished_timestamp, now);
            }
        }
        for sh in &st.share.partitions {
            if sh.state.is_done() {
                self.note(&sh.token, sh.finished_timestamp, now);
            }
        }
    }

    /// `token` finished (at `at`, if known): noted once, when first read.
    pub(super) fn note(&mut self, token: &str, at: Option<u64>, now: u64) {
        if let Some(f) = self.finished.get_mut(token) {
            if f.is_none() {
                *f = at;
            }
            return;
        }
        self.finished.insert(token.to_string(), at);
        self.noted.push_back((now, token.to_string()));
    }

    /// Whether this task read that `token` finished, and when it finished (if known).
    pub(super) fn get(&self, token: &str) -> Option<Option<u64>> {
        if self.finished.is_empty() {
            return None;
        }
        self.finished.get(token).copied()
    }

    /// Forgets the entries noted before `cutoff`.
    pub(super) fn forget_noted_before(&mut self, cutoff: u64) {
        while self.noted.front().is_some_and(|(at, _)| *at < cutoff) {
            if let Some((_, token)) = self.noted.pop_front() {
                self.finished.remove(&token);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sync::types::{MessageType, PartitionState, PartitionStatus};

    fn with(token: &str, state: PartitionStatus, at: Option<u64>) -> PartitionState {
        PartitionState {
            state,
            finished_timestamp: at,
            ..PartitionState::created(token, vec![])
        }
    }

    #[test]
    fn every_done_partition_of_a_message_is_noted_owned_or_shared() {
        let mut st = TaskState::empty("t1");
        st.data.partitions = vec![
            with("f", PartitionStatus::Finished, Some(5)),
            with("r", PartitionStatus::Removed, Some(3)),
            with("run", PartitionStatus::Running, None),
        ];
        st.share.partitions = vec![
            with("s", PartitionStatus::Finished, None).shared_to("t2"),
            with("c", PartitionStatus::Created, None).shared_to("t2"),
        ];
        let msg = SyncMessage::new(MessageType::Regular, "e1", "t1", 9, vec![st]);
        let mut f = Finishes::default();
        assert_eq!(f.get("f"), None);
        f.note_message(&msg, 10);
        assert_eq!(f.get("f"), Some(Some(5)));
        assert_eq!(f.get("r"), Some(Some(3)));
        assert_eq!(f.get("s"), Some(None));
        assert_eq!((f.get("run"), f.get("c")), (None, None));
    }

    #[test]
    fn a_finish_is_noted_once_and_learns_its_time_if_it_had_none() {
        let mut f = Finishes::default();
        f.note("p", None, 1);
        f.note("p", Some(7), 2);
        f.note("p", Some(8), 3);
        assert_eq!(f.get("p"), Some(Some(7)));
        assert_eq!(f.noted.len(), 1, "noted once, when first read");
        f.forget_noted_before(2);
        assert_eq!(f.get("p"), None, "forgotten by when it was first noted");
    }

    #[test]
    fn entries_are_forgotten_oldest_first() {
        let mut f = Finishes::default();
        for (i, t) in ["a", "b", "c"].iter().enumerate() {
            f.note(t, None, i as u64 * 10);
        }
        f.forget_noted_before(15);
        assert_eq!((f.get("a"), f.get("b")), (None, None));
        assert_eq!(f.get("c"), Some(None));
        f.forget_noted_before(15);
        assert_eq!(f.get("c"), Some(None));
    }
}
