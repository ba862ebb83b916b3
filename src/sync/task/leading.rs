//! What a task knows of rebalances and leads: the latest rebalance it was told about, the
//! latest answer read from each task, the rebalance it leads and the epoch it leads (the
//! leader's steps are in `leader`).

use std::collections::{BTreeMap, BTreeSet};

use crate::sync::types::SyncMessage;

/// The latest `RebalanceAnswer` read from a task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Answer {
    pub(super) generation: u64,
    pub(super) base: String,
}

/// The latest rebalance a task was told about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct RebalanceInfo {
    pub(super) generation: u64,
    pub(super) leader: bool,
}

/// A leader's rebalance that has no epoch in force yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Pending {
    pub(super) generation: u64,
    pub(super) members: Vec<String>,
    pub(super) since: u64,
    /// Id of the NewEpoch published and not yet read back.
    pub(super) awaiting: Option<String>,
    /// That NewEpoch, re-published as is if it is not read back in time.
    pub(super) published: Option<(SyncMessage, u64)>,
    pub(super) republished: u32,
    pub(super) attempt: u32,
}

/// The leader's bookkeeping for the epoch it published and applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Lead {
    pub(super) members: Vec<String>,
    pub(super) acked: BTreeSet<String>,
    pub(super) last_publish: u64,
    pub(super) resends: u32,
}

/// Rebalances this task was told of, and the epochs it leads.
#[derive(Debug, Clone, Default)]
pub(super) struct Leading {
    /// The latest rebalance this task was told about.
    pub(super) rebalance: Option<RebalanceInfo>,
    /// The latest answer read from each task.
    pub(super) answers: BTreeMap<String, Answer>,
    /// The rebalance this task leads that has no epoch in force yet.
    pub(super) pending: Option<Pending>,
    /// This task's bookkeeping as the leader of the epoch in force.
    pub(super) lead: Option<Lead>,
    /// Generations above the epoch in force this task was told of as a member, not the leader
    /// (newest `MAX_DEPARTED` kept): a lone leader that read no NewEpoch of one of them may
    /// have missed it.
    pub(super) joined: Generations,
}

/// A few generations, ascending, once each (`Leading::joined`, at most `MAX_DEPARTED`): a sorted
/// vector, not a B-tree of u64 of its own in the wasm.
#[derive(Clone, Default)]
pub(super) struct Generations(Vec<u64>);

impl Generations {
    pub(super) fn insert(&mut self, g: u64) {
        if let Err(i) = self.0.binary_search(&g) {
            self.0.insert(i, g);
        }
    }

    pub(super) fn retain(&mut self, keep: impl FnMut(&u64) -> bool) {
        self.0.retain(keep);
    }

    pub(super) fn len(&self) -> usize {
        self.0.len()
    }

    pub(super) fn pop_first(&mut self) -> Option<u64> {
        (!self.0.is_empty()).then(|| self.0.remove(0))
    }

    pub(super) fn iter(&self) -> std::slice::Iter<'_, u64> {
        self.0.iter()
    }
}

impl std::fmt::Debug for Generations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.0.iter()).finish()
    }
}
