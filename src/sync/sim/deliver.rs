//! Delivery: records of the log and rebalance events reach the tasks (with the delivery faults:
//! a missed NewEpoch, a duplicate), and the trace of what each task owns.

use std::collections::BTreeSet;
use std::rc::Rc;

use crate::sync::{MessageType, SyncMessage};

use super::{Check, Driver, Sim};

impl Sim {
    pub(super) fn deliver(&mut self, faults: bool) -> Check {
        if self.scale() {
            return self.deliver_all(faults);
        }
        if !self.chaos {
            return self.deliver_heal();
        }
        let alive: Vec<usize> = self
            .alive()
            .into_iter()
            .filter(|&i| self.nodes[i].cursor < self.log.len())
            .collect();
        let Some(i) = self.pick(&alive) else {
            return self.tick();
        };
        if self.nodes[i].slow && !self.rng.chance(150) {
            return Ok(());
        }
        let burst = self.rng.range(1, 4);
        self.deliver_to(i, burst, faults)
    }

    /// A scale run's delivery: every live task reads a burst of what it has not read yet (as
    /// Kafka consumers fetch continuously; a slow task now and then), so that reading keeps up
    /// with time as the log grows by view-sized records.
    pub(super) fn deliver_all(&mut self, faults: bool) -> Check {
        let burst = self.rng.range(1, 64);
        for i in self.alive() {
            if !self.nodes[i].alive || self.nodes[i].cursor >= self.log.len() {
                continue;
            }
            if self.nodes[i].slow && !self.rng.chance(150) {
                continue;
            }
            self.deliver_to(i, burst, faults)?;
        }
        Ok(())
    }

    /// Delivery once the faults stop: every live task reads a burst of 0–3 records, in a random
    /// order, as Kafka consumers fetch side by side. (During the chaos one task at a time reads,
    /// each at 1/n of the rate: with 27 tasks that was slower than the log grows by one chunked
    /// checkpoint per interval, and the readers never caught up all at once.)
    pub(super) fn deliver_heal(&mut self) -> Check {
        let mut order = self.alive();
        for k in (1..order.len()).rev() {
            order.swap(k, self.rng.below(k as u64 + 1) as usize);
        }
        let mut any = false;
        for i in order {
            if !self.nodes[i].alive || self.nodes[i].cursor >= self.log.len() {
                continue;
            }
            any = true;
            let burst = self.rng.range(0, 3);
            self.deliver_to(i, burst, false)?;
        }
        if !any {
            return self.tick();
        }
        Ok(())
    }

    /// A task that keeps up reads every record within `min(epochAckTimeout,
    /// stateRefreshInterval / 4)` of its landing (what docs/sync.md's retention rule asks of
    /// it), and is told of a rebalance within `rebalanceTimeout`: one that fell further behind
    /// reads to the end of the log, or gets its event, now. (Delivery picks one task per step,
    /// and time jumps to the next timer: without this, a task that kept up could go an interval
    /// without reading, or without learning that it leads, while the slow ones were picked.)
    pub(super) fn keep_up(&mut self) -> Check {
        if self.scale() {
            // (a scale run's tasks read side by side every step already: `deliver_all`)
            return Ok(());
        }
        let most = self.max_lag();
        for i in self.alive() {
            // and is told of a rebalance within `rebalanceTimeout` (a consumer that polls
            // learns its assignment within the group's rebalance)
            let n = &self.nodes[i];
            let timeout = self.cfg.options.rebalance_timeout;
            if !n.slow && !n.events.is_empty() && n.event_at.saturating_add(timeout) < self.now {
                self.deliver_event_to(i)?;
            }
            let n = &self.nodes[i];
            if !n.alive || n.slow || n.cursor >= self.log.len() {
                continue;
            }
            if self.log_time[n.cursor].saturating_add(most) < self.now {
                self.deliver_to(i, u64::MAX, self.chaos)?;
            }
        }
        Ok(())
    }

    /// Up to `burst` records of the log to task `i`, with the delivery faults when `faults`.
    pub(super) fn deliver_to(&mut self, i: usize, burst: u64, faults: bool) -> Check {
        for _ in 0..burst {
            let k = self.nodes[i].cursor;
            if k >= self.log.len() {
                break;
            }
            let msg = Rc::clone(&self.log[k]);
            self.nodes[i].cursor += 1;
            // a task misses a NewEpoch (it was not reading when it was published); copies and
            // re-publications of an epoch it missed reach it
            if faults
                && msg.kind == MessageType::NewEpoch
                && !msg.resend
                && !self.seen_epochs.contains(&(i, msg.sync_epoch.clone()))
                && self.rng.chance(self.cfg.faults.miss_epoch)
            {
                self.seen_epochs.insert((i, msg.sync_epoch.clone()));
                let l = format!(
                    "{} misses #{k} NewEpoch {}",
                    self.nodes[i].id, msg.sync_epoch
                );
                self.note(l);
                self.nodes[i].hole = self.cfg.check_offsets;
                self.nodes[i].skipped = Some(k);
                continue;
            }
            if self.nodes[i].hole {
                let now = self.clock(i);
                let out = self.nodes[i]
                    .task
                    .fence(&format!("offset {} was never read", k - 1), now);
                self.apply(i, out)?;
                break;
            }
            if msg.kind == MessageType::NewEpoch {
                self.seen_epochs.insert((i, msg.sync_epoch.clone()));
            }
            self.feed(i, k, &msg)?;
            if !self.nodes[i].alive {
                break;
            }
            if faults
                && k > 0
                && !self.cfg.check_offsets
                && self.rng.chance(self.cfg.faults.duplicate)
                && self.nodes[i].skipped != Some(k - 1)
            {
                let dup = Rc::clone(&self.log[k - 1]);
                self.feed(i, k - 1, &dup)?;
            }
        }
        Ok(())
    }

    pub(super) fn owned_set(&self, i: usize) -> BTreeSet<String> {
        if !self.trace_owned() {
            return BTreeSet::new();
        }
        let t = &self.nodes[i].task;
        t.owned_partitions()
            .iter()
            .map(|p| p.token.clone())
            .chain(
                t.shared_partitions()
                    .iter()
                    .map(|s| format!("{}->{}", s.token, s.assignee)),
            )
            .collect()
    }

    pub(super) fn note_owned(&mut self, i: usize, before: &BTreeSet<String>, why: &str) {
        self.note_owned_with(i, before, || why.to_string());
    }

    /// [`Self::note_owned`] with the reason made only when the set changed.
    pub(super) fn note_owned_with(
        &mut self,
        i: usize,
        before: &BTreeSet<String>,
        why: impl FnOnce() -> String,
    ) {
        let after = self.owned_set(i);
        if &after != before {
            let why = why();
            let added: Vec<&String> = after.difference(before).collect();
            let removed: Vec<&String> = before.difference(&after).collect();
            let l = format!("{} owns +{added:?} -{removed:?} ({why})", self.nodes[i].id);
            self.note(l);
        }
    }

    pub(super) fn feed(&mut self, i: usize, k: usize, msg: &SyncMessage) -> Check {
        let owned_before = self.owned_set(i);
        let before = self.nodes[i].task.epoch().map(str::to_string);
        let now = self.clock(i);
        let out = self.nodes[i]
            .task
            .on_message(msg, now)
            .map_err(|e| format!("{} rejected log message #{k}: {e}", self.nodes[i].id))?;
        let after = self.nodes[i].task.epoch().map(str::to_string);
        if before != after {
            if let Some(e) = &after {
                self.epochs.insert(e.clone());
            }
            let l = format!("{} applies epoch {:?} (#{k})", self.nodes[i].id, after);
            self.note(l);
        }
        self.note_owned_with(i, &owned_before, || {
            format!("#{k} {:?} from {}", msg.kind, msg.task_id)
        });
        self.apply(i, out)?;
        if self.cfg.driver == Driver::EveryInput && self.nodes[i].alive {
            // a loop that ticks after every record it feeds, due or not
            self.tick_node(i, now)?;
        }
        Ok(())
    }

    pub(super) fn deliver_event(&mut self) -> Check {
        let with: Vec<usize> = self
            .alive()
            .into_iter()
            .filter(|&i| !self.nodes[i].events.is_empty())
            .collect();
        let Some(i) = self.pick(&with) else {
            return self.tick();
        };
        self.deliver_event_to(i)
    }

    /// Task `i`'s pending rebalance event.
    fn deliver_event_to(&mut self, i: usize) -> Check {
        let ev = self.nodes[i].events.pop_front().expect("non-empty");
        let now = self.clock(i);
        let out = self.nodes[i]
            .task
            .on_rebalance(&ev, now)
            .map_err(|e| format!("{} rejected rebalance: {e}", self.nodes[i].id))?;
        let l = format!(
            "{} rebalance g{} leader {}",
            self.nodes[i].id, ev.generation, ev.leader
        );
        self.note(l);
        self.apply(i, out)
    }
}
