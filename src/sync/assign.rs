//! The leader's new-epoch computation, a pure function (benchmarked on its own).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::types::{PartitionState, SharedPartition, TaskState};

/// Rendezvous (highest random weight) choice of a member for a token: the same on every task,
/// independent of which other tokens it knows.
pub(crate) fn rendezvous(token: &str, members: &[String]) -> String {
    /// FNV-1a 64 of the parts, each followed by a zero byte.
    fn fnv(parts: &[&[u8]]) -> u64 {
        use std::hash::Hasher;
        let mut h = fnv::FnvHasher::default();
        for part in parts {
            h.write(part);
            h.write_u8(0);
        }
        h.finish()
    }
    members
        .iter()
        .max_by_key(|m| {
            (
                fnv(&[token.as_bytes(), m.as_bytes()]),
                std::cmp::Reverse((*m).clone()),
            )
        })
        .cloned()
        .unwrap_or_default()
}

/// Computes the states of a new epoch.
///
/// `view` holds every task state the leader knows (members and departed tasks, the leader's own
/// included); `members` the ids of the live tasks of the new generation. Rules:
/// - every member keeps every partition it owns (survivors are never robbed);
/// - a token owned by two members (never produced by partkit) stays with the first in id order;
/// - a share addressed to a member becomes that member's `Created` partition (it is not
///   re-shared elsewhere); a departed task's share to a departed task joins the pool; a live
///   task's share to a departed task stays in that task's share section (the sharer re-addresses
///   it to a member once it applies the epoch);
/// - unfinished partitions of departed tasks join the pool, reset to `Created`; their
///   Finished/Removed partitions stay known as they are, each with the member that rendezvous
///   hashing picks for its token ([`rendezvous`]), which removes it `removalDelay` after it
///   finished and drops its tombstone `tombstoneTtl` later, like its own: a finished partition
///   that an epoch forgot could come back as new work with a stale share or a late record that
///   still names it (they spread over the members, and cost them no load);
/// - the pool, in token order, goes one by one to the least-loaded member (ties: smallest id);
/// - departed tasks leave the state.
///
/// Returns one state per member, in `members` order, with the member's known version and
/// timestamp (a member never seen gets an empty state at version 0).
///
/// # Examples
/// ```
/// use partkit::sync::{compute_epoch, PartitionState, TaskState};
/// let mut dead = TaskState::empty("dead");
/// dead.data.partitions.push(PartitionState::created("p1", vec![]));
/// dead.data.partitions.push(PartitionState::created("p2", vec![]));
/// let a = TaskState::empty("a");
/// let out = compute_epoch(&[&dead, &a], &["a".to_string(), "b".to_string()]);
/// assert_eq!(out[0].data.partitions[0].token, "p1");
/// assert_eq!(out[1].data.partitions[0].token, "p2");
/// ```
pub fn compute_epoch(view: &[&TaskState], members: &[String]) -> Vec<TaskState> {
    let by_id: HashMap<&str, &TaskState> = view.iter().map(|s| (s.task_id.as_str(), *s)).collect();
    let mut epoch = Placing::new(members);
    epoch.keep_owned(&by_id);
    let mut states: Vec<&TaskState> = view.to_vec();
    super::types::sort_by_task_id(&mut states);
    epoch.place_shares(&states);
    epoch.pool_departed(&states);
    epoch.deal_pool();
    epoch.out
}

/// An epoch being computed (see [`compute_epoch`]): the members' entries, the tokens placed,
/// and the pool of partitions left to deal.
struct Placing<'a> {
    members: &'a [String],
    member_index: HashMap<&'a str, usize>,
    out: Vec<TaskState>,
    /// Tokens some entry owns (or a live sharer keeps as a share).
    owned: HashSet<&'a str>,
    /// Tokens in the pool.
    pooled: HashSet<&'a str>,
    pool: Vec<PartitionState>,
}

impl<'a> Placing<'a> {
    fn new(members: &'a [String]) -> Self {
        Placing {
            members,
            member_index: members
                .iter()
                .enumerate()
                .map(|(i, m)| (m.as_str(), i))
                .collect(),
            out: Vec::with_capacity(members.len()),
            owned: HashSet::default(),
            pooled: HashSet::default(),
            pool: Vec::new(),
        }
    }

    /// Step 1: survivors keep what they own.
    fn keep_owned(&mut self, by_id: &HashMap<&str, &'a TaskState>) {
        for m in self.members {
            let mut entry = match by_id.get(m.as_str()) {
                Some(s) => TaskState {
                    task_id: m.clone(),
                    state_timestamp: s.state_timestamp,
                    state_version: s.state_version,
                    data: Default::default(),
                    share: Default::default(),
                },
                None => TaskState::empty(m.clone()),
            };
            if let Some(s) = by_id.get(m.as_str()) {
                for p in &s.data.partitions {
                    if self.owned.insert(p.token.as_str()) {
                        entry.data.partitions.push(p.clone());
                    }
                }
            }
            self.out.push(entry);
        }
    }

    /// Step 2: shares to a member -> that member; otherwise -> the pool (`states` in id order).
    fn place_shares(&mut self, states: &[&'a TaskState]) {
        // a token in some task's data is that task's (handled above and in step 3), not the share's
        let in_data: HashSet<&str> = states
            .iter()
            .flat_map(|s| s.data.partitions.iter().map(|p| p.token.as_str()))
            .collect();
        for s in states {
            for sh in &s.share.partitions {
                if in_data.contains(sh.token.as_str())
                    || self.owned.contains(sh.token.as_str())
                    || self.pooled.contains(sh.token.as_str())
                {
                    continue;
                }
                match (
                    self.member_index.get(sh.assignee.as_str()),
                    self.member_index.get(s.task_id.as_str()),
                ) {
                    (Some(&i), _) => {
                        self.owned.insert(sh.token.as_str());
                        self.out[i].data.partitions.push(taken(sh));
                    }
                    (None, Some(&sharer)) => {
                        // a live sharer's share to a departed task stays the sharer's to
                        // re-address: its own state is newer than this view, which may miss a
                        // re-address
                        self.owned.insert(sh.token.as_str());
                        self.out[sharer].share.partitions.push(sh.clone());
                    }
                    (None, None) if sh.state.is_done() => {
                        // (a departed task's finish read after its share was left: no new
                        // work, but known, like a departed task's done partitions below)
                        self.owned.insert(sh.token.as_str());
                        let keeper = rendezvous(&sh.token, self.members);
                        if let Some(&i) = self.member_index.get(keeper.as_str()) {
                            self.out[i].data.partitions.push(taken(sh));
                        }
                    }
                    (None, None) => {
                        self.pooled.insert(sh.token.as_str());
                        self.pool.push(sh.to_partition());
                    }
                }
            }
        }
    }

    /// Step 3: departed tasks' unfinished partitions -> the pool; their done ones stay known,
    /// with the member rendezvous hashing picks (done partitions first: a token a departed task
    /// finished is done, whatever another departed task's stale entry says of it).
    fn pool_departed(&mut self, states: &[&'a TaskState]) {
        let departed = || {
            states
                .iter()
                .filter(|s| !self.member_index.contains_key(s.task_id.as_str()))
        };
        let mut kept_done: Vec<(usize, PartitionState)> = Vec::new();
        for s in departed() {
            for p in s.data.partitions.iter().filter(|p| p.state.is_done()) {
                if self.owned.insert(p.token.as_str()) && !self.pooled.contains(p.token.as_str()) {
                    let keeper = rendezvous(&p.token, self.members);
                    if let Some(&i) = self.member_index.get(keeper.as_str()) {
                        kept_done.push((i, p.clone()));
                    }
                }
            }
        }
        for s in departed() {
            for p in &s.data.partitions {
                if p.state.is_done()
                    || self.owned.contains(p.token.as_str())
                    || self.pooled.contains(p.token.as_str())
                {
                    continue;
                }
                self.pooled.insert(p.token.as_str());
                self.pool.push(p.reset());
            }
        }
        for (i, p) in kept_done {
            self.out[i].data.partitions.push(p);
        }
    }

    /// Step 4: the pool -> the least-loaded member, ties by id (members are in id order by
    /// convention, but the index breaks ties by the id itself to not depend on it).
    fn deal_pool(&mut self) {
        if self.pool.is_empty() || self.members.is_empty() {
            return;
        }
        let pool = super::types::sort_by_text(std::mem::take(&mut self.pool), |p| p.token.as_str());
        let mut heap: BinaryHeap<Reverse<(usize, &str, usize)>> = self
            .out
            .iter()
            .enumerate()
            .map(|(i, s)| Reverse((s.owned_load(), s.task_id.as_str(), i)))
            .collect();
        let mut assigned: Vec<Vec<PartitionState>> = vec![Vec::new(); self.out.len()];
        for p in pool {
            if let Some(Reverse((load, id, i))) = heap.pop() {
                assigned[i].push(p);
                heap.push(Reverse((load + 1, id, i)));
            }
        }
        drop(heap);
        for (i, extra) in assigned.into_iter().enumerate() {
            self.out[i].data.partitions.extend(extra);
        }
    }
}

/// A share as the partition its new owner takes: new work (`Created`), or done as it is when
/// the sharer's finish was read after the share was left (see `SyncTask::adopt_departed`).
fn taken(sh: &SharedPartition) -> PartitionState {
    let mut p = sh.to_partition();
    if sh.state.is_done() {
        p.state = sh.state;
        p.finished_timestamp = sh.finished_timestamp;
    }
    p
}
