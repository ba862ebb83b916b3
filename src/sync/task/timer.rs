//! The kinds of deadline of the timer table, the backoff, and when a finished partition may be
//! removed. The table itself is `deadline`'s (derived from the state each deadline guards).

use rustc_hash::FxHashSet as HashSet;

use crate::sync::types::{PartitionState, PartitionStatus};

/// When removal work on a done partition falls due: Finished -> Removed after `delay`, Removed
/// -> dropped after `ttl` more (counted from when it finished).
pub(super) fn removal_due(p: &PartitionState, delay: u64, ttl: u64) -> Option<u64> {
    let f = p.finished_timestamp.unwrap_or(0);
    match p.state {
        PartitionStatus::Finished => Some(f.saturating_add(delay)),
        PartitionStatus::Removed => Some(f.saturating_add(delay).saturating_add(ttl)),
        _ => None,
    }
}

/// What keeps own done partitions from being removed (see `SyncTask::removal_blockers`).
pub(super) struct RemovalBlockers {
    pub(super) open_children: HashSet<String>,
    pub(super) referenced: HashSet<String>,
    pub(super) rebalancing: bool,
}

impl RemovalBlockers {
    /// Whether the next removal step of `p` may happen (when it is due).
    pub(super) fn allow(&self, p: &PartitionState) -> bool {
        match p.state {
            PartitionStatus::Finished => !self.open_children.contains(&p.token),
            PartitionStatus::Removed => !self.rebalancing && !self.referenced.contains(&p.token),
            _ => false,
        }
    }
}

/// The wait before re-publishing, the `n`th time, something not acknowledged or not read back
/// (an epoch, by its leader): `base`, doubled each time, at most 16 times `base`.
pub(super) fn backoff(base: u64, n: u32) -> u64 {
    base.saturating_mul(1u64 << n.min(4))
}

/// The kinds of timed work of a task (see `SyncTask::timers`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Timer {
    /// Behind for too long with no epoch it can apply: fence.
    Stuck,
    /// A leader collecting answers publishes its epoch, or re-publishes one not read back.
    Rebalance,
    /// The epoch's leader re-publishes it to members that have not acknowledged it.
    EpochAck,
    /// A member re-publishes the epoch in force for a task that missed it (nobody did first).
    Resend,
    /// The epoch's leader (or, when none is clean for a while, a successor) publishes a checkpoint.
    Refresh,
    /// The owner marks a Finished partition Removed, or drops a tombstone.
    Removal,
    /// A closing task's final checkpoint, held back by a message being read in chunks, may go
    /// out (see `final_checkpoint`).
    Close,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn done(token: &str, state: PartitionStatus, at: u64) -> PartitionState {
        PartitionState {
            state,
            finished_timestamp: Some(at),
            ..PartitionState::created(token, vec![])
        }
    }

    #[test]
    fn backoff_doubles_up_to_sixteen_times_the_base() {
        let waits: Vec<u64> = (0..7).map(|n| backoff(10, n)).collect();
        assert_eq!(waits, [10, 20, 40, 80, 160, 160, 160]);
        assert_eq!(backoff(u64::MAX, 3), u64::MAX);
    }

    #[test]
    fn removal_falls_due_after_the_delay_and_a_tombstone_after_the_ttl_more() {
        let f = done("p", PartitionStatus::Finished, 100);
        assert_eq!(removal_due(&f, 10, 1_000), Some(110));
        let r = done("p", PartitionStatus::Removed, 100);
        assert_eq!(removal_due(&r, 10, 1_000), Some(1_110));
        let running = PartitionState::created("p", vec![]);
        assert_eq!(removal_due(&running, 10, 1_000), None);
        assert_eq!(
            removal_due(&done("p", PartitionStatus::Removed, u64::MAX), 1, 1),
            Some(u64::MAX)
        );
    }

    #[test]
    fn an_open_child_keeps_a_finish_and_a_reference_or_a_rebalance_keeps_a_tombstone() {
        let set = |t: &[&str]| t.iter().map(|s| s.to_string()).collect::<HashSet<String>>();
        let b = RemovalBlockers {
            open_children: set(&["a"]),
            referenced: set(&["b"]),
            rebalancing: false,
        };
        assert!(!b.allow(&done("a", PartitionStatus::Finished, 0)));
        assert!(b.allow(&done("b", PartitionStatus::Finished, 0)));
        assert!(b.allow(&done("a", PartitionStatus::Removed, 0)));
        assert!(!b.allow(&done("b", PartitionStatus::Removed, 0)));
        assert!(!b.allow(&PartitionState::created("c", vec![])));
        let rebalancing = RemovalBlockers {
            rebalancing: true,
            ..b
        };
        assert!(!rebalancing.allow(&done("a", PartitionStatus::Removed, 0)));
        assert!(rebalancing.allow(&done("b", PartitionStatus::Finished, 0)));
    }
}
