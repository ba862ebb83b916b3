//! What the timer table keeps: the state of the re-publications of the epoch in force it times
//! (`Refresh`: checkpoints, resends, the clean stop), the kinds of deadline, the backoff and
//! when a finished partition may be removed. The steps that read and change it are `refresh`'s.

use std::collections::BTreeSet;

use rustc_hash::FxHashSet as HashSet;

use crate::sync::types::{MessageType, PartitionState, PartitionStatus, SyncMessage};

/// The re-publications of the epoch in force this task times: checkpoints and resends.
#[derive(Debug, Clone, Default)]
pub(super) struct Refresh {
    /// When this task, the leader of the epoch in force, next publishes a checkpoint of it.
    pub(super) refresh_at: Option<u64>,
    /// When this task re-publishes the epoch in force for a task that missed it, unless it reads
    /// a re-publication of it first (see `want_resend`).
    pub(super) resend_at: Option<u64>,
    /// When the last clean checkpoint this task read (by any author) was published (its
    /// `messageTimestamp`, or when it was read if earlier): a new epoch's leader publishes the
    /// next one `stateRefreshInterval` after it, however often epochs change, and a task that
    /// started at an old checkpoint does not wait a whole interval more.
    pub(super) checkpoint_seen: Option<u64>,
    /// When this task last read a clean checkpoint (its clock): an own checkpoint published
    /// before then that turns out not clean is not retried (see `retry_checkpoint`).
    pub(super) clean_read_at: Option<u64>,
    /// The own checkpoints in a row that were not clean: each retry waits twice as long.
    pub(super) unclean_retries: u32,
    /// A checkpoint fell due while own records were not read back yet: the newest own
    /// `messageSeq` when it did. It goes out once that record and every own epoch, answer and
    /// checkpoint are read back (see `checkpoint_waits`).
    pub(super) checkpoint_waiting: Option<u64>,
    /// Whether the last checkpoint this task published went out while own `Regular` records
    /// were not read back yet: it cannot be clean (they land between the record it names and
    /// itself), and is not retried for that (see `checkpoint_in`).
    pub(super) checkpoint_over_own: bool,
    /// The newest own `messageSeq` of a record that is neither `Regular` nor a plain NewEpoch
    /// (an answer, a checkpoint): a due checkpoint waits for it (see `checkpoint_waits`).
    pub(super) last_other: u64,
    /// The newest run of own plain NewEpochs of one epoch (a leader's epoch, published again
    /// while not read back, or re-published for tasks that missed it): its id and the
    /// `messageSeq` of its first record. Copies of the epoch in force do not hold a due
    /// checkpoint back (see `checkpoint_waits`).
    pub(super) epoch_copies: Option<(String, u64)>,
    /// Whether the task was told to stop cleanly, and whether its final checkpoint went out.
    pub(super) closing: Closing,
    /// The answers from an older epoch this task showed the epoch in force for, once each
    /// (their rebalance generation and sender, in this order: the set shares its code with the
    /// other sets of (generation, id); see `want_resend`).
    pub(super) resent_to: BTreeSet<(u64, String)>,
    /// The epochs built on an epoch older than the one in force (their leader missed it) this
    /// task showed the epoch in force for, once each.
    pub(super) resent_for_forks: BTreeSet<String>,
}

impl Refresh {
    /// An own record that is not `Regular` goes out as `seq` (see `last_other` and
    /// `epoch_copies`).
    pub(super) fn note_published(&mut self, m: &SyncMessage, seq: u64) {
        if m.kind == MessageType::NewEpoch && m.checkpoint.is_none() {
            if self
                .epoch_copies
                .as_ref()
                .is_none_or(|(id, _)| *id != m.sync_epoch)
            {
                self.epoch_copies = Some((m.sync_epoch.clone(), seq));
            }
        } else if m.kind != MessageType::Regular {
            self.last_other = seq;
        }
    }

    /// Whether every own record after `own_read` that is not `Regular` is a copy of the epoch
    /// `in_force` (see `checkpoint_waits`).
    pub(super) fn only_copies_after(&self, own_read: u64, in_force: &str) -> bool {
        own_read >= self.last_other
            && self
                .epoch_copies
                .as_ref()
                .is_some_and(|(id, first)| id == in_force && own_read.saturating_add(1) >= *first)
    }
}

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

/// Where a task is in stopping cleanly (see [`SyncTask::close`](super::SyncTask::close)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) enum Closing {
    /// Running.
    #[default]
    Open,
    /// Closing: its final checkpoint waits for its own records to be read back (or for a
    /// message being read in chunks to complete).
    Wanted,
    /// Closed: the final checkpoint went out, or none could (no epoch, behind, fenced).
    Done,
}
