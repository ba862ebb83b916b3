//! The timer table: every deadline of a task, derived from the state it guards, and the
//! re-publications of the epoch in force that it times (resends to a task that missed the epoch,
//! checkpoints).

use std::collections::BTreeSet;

use rustc_hash::FxHashSet as HashSet;

use super::limits::{MAX_REJECTED, STUCK_TIMEOUTS};
use super::SyncTask;
use crate::sync::types::{PartitionState, PartitionStatus, SyncOutput};

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
    /// A checkpoint fell due while own records were not read back yet: it goes out once they
    /// are.
    pub(super) checkpoint_waiting: bool,
    /// Whether the task was told to stop cleanly, and whether its final checkpoint went out.
    pub(super) closing: super::close::Closing,
    /// The answers from an older epoch this task showed the epoch in force for, once each
    /// (their sender and rebalance generation; see `want_resend`).
    pub(super) resent_to: BTreeSet<(String, u64)>,
    /// The epochs built on an epoch older than the one in force (their leader missed it) this
    /// task showed the epoch in force for, once each.
    pub(super) resent_for_forks: BTreeSet<String>,
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

impl SyncTask {
    /// Every deadline that has work, one per kind (quinn-proto's timer table, derived from the
    /// state it guards so that it cannot drift from it).
    pub(super) fn timers(&self) -> Vec<(Timer, u64)> {
        let mut v = Vec::new();
        if self.fenced.is_some() {
            return v;
        }
        if let Some(since) = self.view.behind_since {
            v.push((Timer::Stuck, since.saturating_add(self.stuck_after())));
        }
        if let Some(at) = self.rebalance_deadline() {
            v.push((Timer::Rebalance, at));
        }
        if let Some(l) = &self.leading.lead {
            if l.members.iter().any(|m| !l.acked.contains(m)) {
                let wait = backoff(self.opts.epoch_ack_timeout, l.resends);
                v.push((Timer::EpochAck, l.last_publish.saturating_add(wait)));
            }
        }
        if let Some(at) = self.refresh.resend_at {
            v.push((Timer::Resend, at));
        }
        if let Some(at) = self.refresh.refresh_at {
            v.push((Timer::Refresh, at));
        }
        if let Some(at) = self.removal_deadline() {
            v.push((Timer::Removal, at));
        }
        if let Some(at) = self.close_deadline() {
            v.push((Timer::Close, at));
        }
        v
    }

    /// When a leader collecting answers publishes its epoch without waiting for more, or
    /// publishes again the epoch it has not read back (see `maybe_lead`).
    pub(super) fn rebalance_deadline(&self) -> Option<u64> {
        let p = self.leading.pending.as_ref()?;
        let timeout = self.opts.rebalance_timeout;
        if p.awaiting.is_some() {
            let (_, at) = p.published.as_ref()?;
            return Some(at.saturating_add(backoff(timeout, p.republished)));
        }
        if p.generation <= self.epoch_generation() || self.cursor.own_read < self.cursor.seq {
            // nothing to lead, or waiting to read its own messages back (an input)
            return None;
        }
        let wait = if self.missed().is_some() {
            timeout.saturating_mul(2)
        } else {
            timeout
        };
        Some(p.since.saturating_add(wait))
    }

    /// The earliest removal work on the own partitions that nothing blocks: a Finished partition
    /// no unfinished partition names as a parent, a tombstone nothing references any more. What
    /// blocks them changes only on an input, which computes this again.
    pub(super) fn removal_deadline(&self) -> Option<u64> {
        let (delay, ttl) = (self.opts.removal_delay, self.opts.tombstone_ttl);
        // (only the done own partitions are looked at, see `own::Marks`)
        let at = self.own.done_positions();
        if at.is_empty() {
            return None;
        }
        let parts = &self.own.state.data.partitions;
        let done: HashSet<&str> = at.iter().map(|&i| parts[i].token.as_str()).collect();
        let blockers = self.removal_blockers(&done);
        at.iter()
            .map(|&i| &parts[i])
            .filter(|p| blockers.allow(p))
            .filter_map(|p| removal_due(p, delay, ttl))
            .min()
    }

    /// The members of the epoch in force keep a complete state of it in the log: its leader
    /// publishes a checkpoint `stateRefreshInterval` after the last clean one was published
    /// (at once if it has read none), however often epochs change; the member `r` places after the
    /// leader (in id order, of `n`) steps in when no clean checkpoint came `r` slots later (see
    /// `refresh_delay`: a leader that died or lags behind the log cannot publish a clean one),
    /// so that clean checkpoints are at most about two intervals apart while any member keeps up.
    pub(super) fn schedule_refresh(&mut self) {
        let interval = self.opts.state_refresh_interval;
        self.refresh.checkpoint_waiting = false;
        let first = self
            .refresh
            .checkpoint_seen
            .map_or(self.now, |t| t.saturating_add(interval));
        self.refresh.refresh_at = self.refresh_delay().map(|d| first.saturating_add(d));
    }

    /// How much later than the leader this task steps in with a checkpoint: `r` slots for the
    /// member `r` places after the leader among `n` members (0 for the leader), at most one
    /// interval; one interval for a task that is not a member; `None` before it has an epoch.
    /// A slot is `1 / n` of the interval, but never shorter than `epochAckTimeout`, the time a
    /// member is expected to take to read what the leader publishes: a member that lags by less
    /// reads the leader's checkpoint before its turn. (With slots of `1 / n` interval, every
    /// member lagging by more than its slot stepped in with a checkpoint of its own, which could
    /// not be clean, as it had not read the log to its end: in a large group, lagging members
    /// added whole views to the log they lagged behind.)
    pub(super) fn refresh_delay(&self) -> Option<u64> {
        let interval = self.opts.state_refresh_interval;
        if !self.view.in_epoch {
            // a task that holds the epoch without being its member yet (a new task replaying
            // the log, waiting to join) steps in last: the members may all be gone
            return self.view.epoch.as_ref().map(|_| interval);
        }
        let (r, n) = self.place_after_leader()?;
        let slot = self.opts.epoch_ack_timeout;
        let delay = if slot.saturating_mul(n) > interval {
            slot.saturating_mul(r)
        } else {
            interval.saturating_mul(r) / n.max(1)
        };
        Some(delay.min(interval))
    }

    /// This member's place after the leader of the epoch in force, in id order, and the number
    /// of members (`(0, n)` for the leader); `None` outside the epoch.
    pub(super) fn place_after_leader(&self) -> Option<(u64, u64)> {
        let leader = self.view.epoch.as_ref().map(|e| e.leader.as_str())?;
        let n = self.view.members.len() as u64;
        let me = self.view.members.iter().position(|m| *m == self.id)? as u64;
        let at = self
            .view
            .members
            .iter()
            .position(|m| m == leader)
            .unwrap_or(0) as u64;
        Some(((me + n - at) % n, n))
    }

    /// A task missed the epoch in force (it answered from an older epoch, or built a NewEpoch on
    /// one): show it the epoch once. The epoch's leader re-publishes it at once; the member `r`
    /// places after it waits `min(r, 4) / 4` of `epochAckTimeout` and holds back if it reads a
    /// re-publication of the epoch first (see `on_new_epoch`). One copy per miss, not one per
    /// member: with every member re-publishing, each newcomer cost the log a whole epoch per
    /// member, enough at scale to push newcomers behind retention.
    pub(super) fn want_resend(&mut self, out: &mut SyncOutput) {
        let Some((r, _)) = self.place_after_leader().filter(|_| self.view.in_epoch) else {
            return;
        };
        if r == 0 {
            self.resend(out);
            return;
        }
        let wait = self.opts.epoch_ack_timeout.saturating_mul(r.min(4)) / 4;
        let at = self.now.saturating_add(wait.max(1));
        self.refresh.resend_at = Some(self.refresh.resend_at.map_or(at, |t| t.min(at)));
    }

    /// The epoch's leader publishes the epoch in force whole again, as a checkpoint computed
    /// after the last record it read (see the module docs).
    pub(super) fn checkpoint(&mut self, out: &mut SyncOutput) {
        let interval = self.opts.state_refresh_interval;
        self.refresh.refresh_at = self
            .refresh_delay()
            .map(|d| self.now.saturating_add(interval).saturating_add(d));
        // like an epoch, a checkpoint is computed from a view that holds everything its author
        // published (one of its own records not read back yet may be a newer epoch): it goes
        // out once they are read back (see `finish`)
        self.refresh.checkpoint_waiting = self.checkpoint_waits();
        if self.refresh.checkpoint_waiting {
            return;
        }
        if let Some(until) = self.chunks_wait_until() {
            // it would name a record in the middle of a message: try again once the message
            // is complete, or abandoned
            if self.refresh.refresh_at.is_some() {
                self.refresh.refresh_at = Some(until);
            }
            return;
        }
        self.publish_checkpoint(out);
    }

    /// Publishes the epoch in force whole, as a checkpoint computed after the last record read
    /// (the caller checked that its own records are read back): whether it did (it has an
    /// epoch and has read a record).
    pub(super) fn publish_checkpoint(&mut self, out: &mut SyncOutput) -> bool {
        let (Some(after), Some(mut m)) = (self.cursor.last_read.clone(), self.epoch_message())
        else {
            return false;
        };
        m.checkpoint = Some(after);
        // the forks it read (NewEpochs of later generations built on an epoch before the one in
        // force): a task starting here holds them read and rejected, as this task does
        let newest = self.view.forks.iter().rev().take(MAX_REJECTED);
        m.rejected = newest.map(|(_, e)| e.clone()).collect();
        out.publish.push(m);
        true
    }

    /// Whether a checkpoint waits for own records to be read back (see `checkpoint`).
    pub(super) fn checkpoint_waits(&self) -> bool {
        self.cursor.own_read < self.cursor.seq
    }

    /// How long a task may stay behind before it fences itself: the resends that let a task
    /// catch up on an epoch it missed come within a few timeouts, so a task still behind after
    /// this holds a view no epoch will repair (it applied an epoch the others rejected, or lost
    /// one whose leader is gone).
    pub(super) fn stuck_after(&self) -> u64 {
        self.opts
            .rebalance_timeout
            .saturating_add(self.opts.epoch_ack_timeout)
            .saturating_mul(STUCK_TIMEOUTS)
    }

    /// Re-publish the epoch in force (for tasks that missed it).
    pub(super) fn resend(&mut self, out: &mut SyncOutput) {
        if self.view.in_epoch {
            out.publish.extend(self.epoch_message());
        }
    }
}
