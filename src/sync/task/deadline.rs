//! The timer table of a task: every deadline, derived from the state it guards so that it cannot
//! drift from it (quinn-proto's timer table). `poll_timeout` reports the earliest, `tick` does
//! the work of those due.

use rustc_hash::FxHashSet as HashSet;

use super::limits::STUCK_TIMEOUTS;
use super::timer::{removal_due, Timer};
use super::SyncTask;

impl SyncTask {
    /// Every deadline that has work, one per kind (quinn-proto's timer table, derived from the
    /// state it guards so that it cannot drift from it).
    pub(super) fn timers(&self) -> Vec<(Timer, u64)> {
        let mut v = Vec::new();
        if self.fenced.is_some() || self.closed() {
            return v;
        }
        if let Some(since) = self.view.behind_since() {
            v.push((Timer::Stuck, since.saturating_add(self.stuck_after())));
        }
        if let Some(at) = self.rebalance_deadline() {
            v.push((Timer::Rebalance, at));
        }
        if let Some(at) = self.leading.ack_deadline(self.opts.epoch_ack_timeout) {
            v.push((Timer::EpochAck, at));
        }
        if let Some(at) = self.refresh.resend_at() {
            v.push((Timer::Resend, at));
        }
        if let Some(at) = self.refresh.refresh_at() {
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
        let p = self.leading.pending()?;
        let timeout = self.opts.rebalance_timeout;
        if p.is_awaiting() {
            return self.leading.republish_at(timeout);
        }
        if p.generation <= self.epoch_generation() || self.cursor.own_unread() {
            // nothing to lead, or waiting to read its own messages back (an input)
            return None;
        }
        let wait = if self.missed().is_some() {
            timeout.saturating_mul(2)
        } else {
            timeout
        };
        Some(p.since().saturating_add(wait))
    }

    /// The earliest removal work on the own partitions that nothing blocks: a Finished partition
    /// no unfinished partition names as a parent, a tombstone nothing references any more. What
    /// blocks them changes only on an input, which computes this again (kept until the next
    /// input clears it: `removal_at`).
    pub(super) fn removal_deadline(&self) -> Option<u64> {
        if let Some(at) = self.removal_at.get() {
            return at;
        }
        let at = self.compute_removal_deadline();
        self.removal_at.set(Some(at));
        at
    }

    fn compute_removal_deadline(&self) -> Option<u64> {
        let (delay, ttl) = (self.opts.removal_delay, self.opts.tombstone_ttl);
        // (only the done own partitions are looked at, see `own::Marks`)
        let at = self.own.done_positions();
        if at.is_empty() {
            return None;
        }
        let parts = self.own.partitions();
        let done: HashSet<&str> = at.iter().map(|&i| parts[i].token.as_str()).collect();
        let blockers = self.removal_blockers(&done);
        at.iter()
            .map(|&i| &parts[i])
            .filter(|p| blockers.allow(p))
            .filter_map(|p| removal_due(p, delay, ttl))
            .min()
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
}
