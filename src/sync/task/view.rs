//! The epoch in force and the view of the other tasks under it.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::delta;
use super::limits::RESENT_DEPARTED;
use super::SyncTask;
use crate::sync::types::{Delta, MessageType, PartitionState, SyncMessage, TaskState};

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
    pub(super) positions: HashMap<String, delta::Positions>,
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
    pub(super) behind_since: Option<u64>,
    /// NewEpoch ids read (applied or not) of generations above the epoch in force.
    pub(super) read_epochs: BTreeSet<(u64, String)>,
    /// Of those, the forks: built on an epoch this task applied before the one in force (their
    /// leader missed an epoch; every task that did not rejects them). Checkpoints name them.
    pub(super) forks: BTreeSet<(u64, String)>,
}

impl View {
    /// An epoch is applied: it rebuilds the entries, whose positions are forgotten.
    pub(super) fn forget_positions(&mut self) {
        self.positions.clear();
    }
}

impl SyncTask {
    /// The epoch in force as this task knows it, as a re-publication: every member's state.
    pub(super) fn epoch_message(&self) -> Option<SyncMessage> {
        let e = self.view.epoch.as_ref()?;
        let mut states = Vec::new();
        for m in &self.view.members {
            if *m == self.id {
                if self.view.in_epoch {
                    states.push(self.own.state.clone());
                }
            } else if let Some(s) = self.view.cache.get(m) {
                states.push(s.clone());
            }
        }
        self.give_ghost_shares(&mut states);
        let departed = self
            .view
            .departed
            .iter()
            .rev()
            .take(RESENT_DEPARTED)
            .cloned();
        Some(SyncMessage {
            sync_epoch: e.id.clone(),
            task_id: self.id.clone(),
            message_timestamp: self.now,
            kind: MessageType::NewEpoch,
            connector_state: states,
            epoch_generation: e.generation,
            base_epoch: Some(e.base.clone()),
            rebalance_generation: None,
            resend: true,
            epoch_attempt: e.attempt,
            message_seq: None,
            checkpoint: None,
            departed: departed.collect(),
            chunk: None,
            delta: None,
            rejected: Vec::new(),
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
            .filter(|s| !self.view.members.contains(&s.task_id))
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
                .filter(|st| st.task_id != self.id && self.view.members.contains(&st.task_id))
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
