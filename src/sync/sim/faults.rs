//! The faults: crashes (a leader's among them), restarts under a new id (where a new task
//! starts reading), clean leaves racing their records, garbage fed to a task.

use std::rc::Rc;

use crate::sync::{MessageType, SyncMessage};

use super::{Check, Phase, Sim};

impl Sim {
    pub(super) fn crash(&mut self, leader_only: bool) -> Check {
        let alive = self.alive();
        let candidates: Vec<usize> = if leader_only {
            alive
                .into_iter()
                .filter(|&i| self.nodes[i].task.is_leader() && self.nodes[i].task.rebalancing())
                .collect()
        } else {
            alive
        };
        let Some(i) = self.pick(&candidates) else {
            return Ok(());
        };
        let n = &mut self.nodes[i];
        n.stop();
        let id = n.id.clone();
        self.report.crashes += 1;
        let delay = self.rng.range(1, 30) as usize;
        let at = self.step + delay;
        self.change_at = Some(self.change_at.map_or(at, |c| c.min(at)));
        self.note(format!(
            "crash {id}{}",
            if leader_only {
                " (leader collecting answers)"
            } else {
                ""
            }
        ));
        Ok(())
    }

    pub(super) fn restart(&mut self) {
        self.restart_capped(self.cap(64));
    }

    pub(super) fn restart_capped(&mut self, cap: usize) {
        if self.nodes.len() >= cap {
            return;
        }
        let i = self.spawn();
        // subscription order: read the sync topic up to its end from where the transport starts
        // (the latest clean checkpoint), then join the group
        let (start, first) = self.start_offset();
        self.nodes[i].cursor = start;
        self.nodes[i].read_from = start;
        let l = format!(
            "{} starts reading at #{} (retained from #{}): {}",
            self.nodes[i].id,
            self.nodes[i].cursor,
            self.retained_from,
            self.log
                .get(self.nodes[i].cursor)
                .map_or(String::new(), |m| format!(
                    "{:?} {} from {}#{:?}{}",
                    m.kind,
                    m.sync_epoch,
                    m.task_id,
                    m.message_seq,
                    m.checkpoint.as_ref().map_or(String::new(), |c| format!(
                        " (checkpoint after {}#{})",
                        c.after_task_id, c.after_seq
                    ))
                ))
        );
        self.note(l);
        if let Some(msg) = first {
            self.replay(i, &msg);
        }
        let ticks = self.cfg.faults.replay_ticks;
        while self.nodes[i].cursor < self.log.len() && self.nodes[i].alive {
            let msg = Rc::clone(&self.log[self.nodes[i].cursor]);
            self.nodes[i].cursor += 1;
            self.replay(i, &msg);
            // a transport that feeds the log in batches: the task's timer fires in between
            // (no draw in the runs without it: their other draws stay as they were)
            if ticks > 0 && self.nodes[i].alive && self.rng.chance(ticks) {
                let now = self.clock(i);
                if let Err(e) = self.tick_node(i, now) {
                    self.deferred
                        .get_or_insert(format!("tick while replaying: {e}"));
                }
            }
        }
        let at = self.step + self.rng.range(1, 5) as usize;
        self.change_at = Some(self.change_at.map_or(at, |c| c.min(at)));
    }

    /// The whole connector stops cleanly and starts again: every live task is told to `close`
    /// and fed what it reads (and ticked) until it is `closed`, as `KafkaTaskSync.close()` does
    /// (the faults pause meanwhile: a clean stop); then every task is gone, time passes (half
    /// the retention to as long as the record the final checkpoint names is retained: up to the
    /// whole retention), retention deletes what it deletes, and a new task starts
    /// where the start rule says. Whatever was added must still finish: the final checkpoints
    /// hold the state (docs/sync.md, "The longest safe stop").
    pub(super) fn whole_stop(&mut self) -> Check {
        let alive = self.alive();
        let frozen = self
            .nodes
            .iter()
            .any(|n| n.frozen_until.is_some() || n.expelled);
        if alive.is_empty() || frozen {
            return Ok(());
        }
        self.note(format!("whole stop: {} tasks close", alive.len()));
        let chaos = std::mem::replace(&mut self.chaos, false);
        let from = self.log.len();
        for &i in &alive {
            // (a producer flushes what it holds when its task closes)
            self.nodes[i].lag = 0;
            let now = self.clock(i);
            let out = self.nodes[i].task.close(now);
            self.apply(i, out)?;
        }
        let closed = |s: &Sim| alive.iter().all(|&i| s.nodes[i].task.closed());
        let mut rounds = 0;
        // (and what they published lands: a producer flushes what it holds when its task
        // closes, before the process exits)
        while !closed(self) || !self.in_flight.is_empty() {
            rounds += 1;
            if rounds > 3_000 {
                let open: Vec<&str> = alive
                    .iter()
                    .filter(|&&i| !self.nodes[i].task.closed())
                    .map(|&i| self.nodes[i].id.as_str())
                    .collect();
                return Err(format!(
                    "whole stop: {open:?} did not close; {}",
                    self.describe()
                ));
            }
            self.step += 1;
            self.now += self.rng.range(1, 3);
            self.land_delayed();
            for &i in &alive {
                if self.nodes[i].alive {
                    self.deliver_to(i, u64::MAX, false)?;
                }
            }
            self.tick()?;
        }
        self.chaos = chaos;
        // a task that fenced itself while closing (it found a hole in what it had read before)
        // left no final checkpoint: that stop is not a clean one, and is kept short
        // (so did a stop in which no task left one: each had missed an epoch, or fenced)
        let ids: Vec<&str> = alive.iter().map(|&i| self.nodes[i].id.as_str()).collect();
        let left = self.log[from..]
            .iter()
            .any(|m| m.checkpoint.is_some() && ids.contains(&m.task_id.as_str()));
        let clean = left && alive.iter().all(|&i| self.nodes[i].task.fenced().is_none());
        // (every task: also a replacement of one that fenced itself meanwhile)
        for i in self.alive() {
            self.nodes[i].stop();
        }
        // (up to the whole retention: as long as the record the newest usable checkpoint, the
        // final one, names is retained when the connector starts again: "after a clean stop, a
        // D shorter than the retention finds it")
        let r = self.cfg.retention.max(1);
        let interval = self.cfg.options.state_refresh_interval;
        let most = self
            .last_usable
            .map_or(0, |t| t.saturating_add(r).saturating_sub(self.now));
        let d = if clean && most > 1 {
            self.rng.range((r / 2).min(most - 1), most)
        } else {
            self.rng.range(1, interval)
        };
        self.note(format!("the connector is stopped for {d} (retention {r})"));
        self.now += d;
        self.expire()?;
        if clean {
            // the restarted connector finds the state its final checkpoints hold, and counts
            // from its start (its leader checkpoints once it leads: the one it started at is
            // older than an interval)
            let (start, first) = self.start_offset();
            let named = |m: &SyncMessage| m.checkpoint.is_some();
            let at_checkpoint = first.is_some() || self.log.get(start).is_some_and(|m| named(m));
            if !at_checkpoint {
                return Err(format!(
                    "a clean stop of {d} (retention {r}) found no checkpoint: the start rule says #{start}; {}",
                    self.describe()
                ));
            }
            // "a stop of D leaves it retention - D, less how much older than the stop the
            // record the final checkpoint names is" to publish its own first checkpoint: when
            // that is less than a task needs from its start to publish one, the faults pause
            // until it has, and the stretch without a usable checkpoint counts from the start
            // (docs/sync.md, "The longest safe stop")
            if most.saturating_sub(d) < self.checkpoint_needs() {
                self.note("no faults until the restarted connector's first checkpoint".into());
                self.calm = Some(self.now);
                self.last_usable = Some(self.now);
            }
        }
        self.restart();
        Ok(())
    }

    /// A rolling restart (as a deployment replaces a connector's processes one at a time):
    /// once the group is stable, every live task in turn is told to `close` and fed what it
    /// reads (and ticked) until it is `closed`, leaves the group, and a new task joins in its
    /// place; the next one closes once the group is stable again. The faults pause meanwhile.
    /// A finished partition started again meanwhile fails the run: a closing task's records
    /// are read back before it leaves, so the next epoch knows every finish.
    pub(super) fn rolling_restart(&mut self) -> Check {
        let frozen = |s: &Sim| {
            s.nodes
                .iter()
                .any(|n| n.frozen_until.is_some() || n.expelled)
        };
        if self.alive().is_empty() || frozen(self) {
            return Ok(());
        }
        let chaos = std::mem::replace(&mut self.chaos, false);
        self.heal_until(|s| s.converged())?;
        let tasks = self.alive();
        self.note(format!(
            "rolling restart: {} tasks, one after another",
            tasks.len()
        ));
        let (reruns, bytes) = (self.report.reruns, self.report.bytes);
        for i in tasks {
            if !self.nodes[i].alive || frozen(self) {
                continue;
            }
            self.nodes[i].lag = 0;
            let now = self.clock(i);
            let out = self.nodes[i].task.close(now);
            self.apply(i, out)?;
            let mut rounds = 0;
            while self.nodes[i].alive
                && (!self.nodes[i].task.closed() || !self.in_flight.is_empty())
            {
                rounds += 1;
                if rounds > 3_000 {
                    let id = &self.nodes[i].id;
                    return Err(format!(
                        "rolling restart: {id} did not close; {}",
                        self.describe()
                    ));
                }
                self.step += 1;
                self.now += self.rng.range(1, 3);
                self.land_delayed();
                for j in self.alive() {
                    if self.nodes[j].alive {
                        self.deliver_to(j, u64::MAX, false)?;
                    }
                }
                self.tick()?;
            }
            if self.nodes[i].alive {
                self.nodes[i].stop();
                let l = format!("{} closed and leaves", self.nodes[i].id);
                self.note(l);
                self.change_at = Some(
                    self.change_at
                        .map_or(self.step + 1, |c| c.min(self.step + 1)),
                );
            }
            self.report.rolling_tasks += 1;
            self.restart_capped(usize::MAX);
            self.heal_until(|s| s.converged())?;
        }
        self.chaos = chaos;
        self.report.rolling += 1;
        let again = self.report.reruns - reruns;
        self.report.rolling_reruns += again;
        self.report.rolling_bytes += self.report.bytes - bytes;
        if again > 0 {
            return Err(format!(
                "rolling restart: {again} finished partitions started again"
            ));
        }
        self.note("rolling restart done".into());
        Ok(())
    }

    /// A random live task's producer gets a backlog, or loses it: its records land later, in
    /// order (a busy producer, a slow broker). Its own records come back late, so its
    /// checkpoints and epochs wait for them.
    pub(super) fn backlog(&mut self) {
        let alive = self.alive();
        let Some(i) = self.pick(&alive) else { return };
        // (within what docs/sync.md asks of a transport: a record lands within
        // `min(epochAckTimeout, stateRefreshInterval / 4)` of being published)
        let most = self.max_lag();
        let lag = if self.nodes[i].lag > 0 {
            0
        } else {
            self.rng.range(1, most.max(2))
        };
        self.nodes[i].lag = lag;
        let l = format!("{} producer lag={lag}", self.nodes[i].id);
        self.note(l);
    }

    /// A live task's clock steps: its offset from the simulation's clock is drawn again, up to
    /// half an interval (back when it was further ahead, forward otherwise).
    pub(super) fn clock_step(&mut self) {
        let alive = self.alive();
        let Some(i) = self.pick(&alive) else { return };
        let most = (self.cfg.options.state_refresh_interval / 2).max(2);
        let skew = self.rng.range(0, most);
        let before = std::mem::replace(&mut self.nodes[i].skew, skew);
        let l = format!(
            "{} clock steps by {}",
            self.nodes[i].id,
            skew as i64 - before as i64
        );
        self.note(l);
    }

    /// A live task freezes (no reads, ticks or publishes: a GC pause, a suspended VM) for
    /// longer than `rebalanceTimeout`, the group's session here: the group expels it soon (as
    /// after a crash) and moves on without it. One at a time, and never the last live task.
    pub(super) fn freeze(&mut self) {
        if self
            .nodes
            .iter()
            .any(|n| n.frozen_until.is_some() || n.expelled)
        {
            return;
        }
        let alive = self.alive();
        if alive.len() < 2 {
            return;
        }
        let Some(i) = self.pick(&alive) else { return };
        let timeout = self.cfg.options.rebalance_timeout;
        let d = self.rng.range(timeout + 1, 3 * timeout);
        let n = &mut self.nodes[i];
        n.alive = false;
        n.frozen_until = Some(self.now + d);
        let l = format!("{} freezes for {d}", n.id);
        self.note(l);
        let at = self.step + self.rng.range(1, 30) as usize;
        self.change_at = Some(self.change_at.map_or(at, |c| c.min(at)));
    }

    /// A frozen task wakes: with a session check (`check_offsets`, as `KafkaTaskSync`) its
    /// transport stops everything at once, the gap being longer than the session; without
    /// one it acts (reads on, ticks, runs and finishes partitions) until it learns it was
    /// expelled, up to `rebalanceTimeout` later, and then stops everything. The connector
    /// replaces it.
    pub(super) fn wake(&mut self) -> Check {
        for i in 0..self.nodes.len() {
            if self.nodes[i].frozen_until.is_some_and(|t| t <= self.now) {
                self.nodes[i].frozen_until = None;
                self.report.frozen += 1;
                if self.cfg.check_offsets {
                    let l = format!(
                        "{} wakes past its session: stops everything",
                        self.nodes[i].id
                    );
                    self.note(l);
                    self.nodes[i].stop();
                    self.restart();
                    continue;
                }
                let learns = self.rng.range(1, self.cfg.options.rebalance_timeout);
                let n = &mut self.nodes[i];
                n.alive = true;
                n.expelled = true;
                n.learns_at = self.now + learns;
                self.overlap = 0;
                let l = format!("{} wakes, expelled, and acts until {}", n.id, n.learns_at);
                self.note(l);
            }
            // (one that crashed, left or fenced itself meanwhile is gone already)
            let gone = self.nodes[i].expelled && !self.nodes[i].alive;
            if gone || self.nodes[i].expelled && self.nodes[i].learns_at <= self.now {
                let n = &mut self.nodes[i];
                n.expelled = false;
                n.stop();
                let l = format!("{} learns it was expelled: stops everything", n.id);
                self.note(l);
                if self.overlap > 0 {
                    let r = &mut self.report;
                    r.frozen_overlapping += 1;
                    r.frozen_overlap_max = r.frozen_overlap_max.max(self.overlap);
                    r.frozen_overlap_total += self.overlap;
                }
                self.overlap = 0;
                if !gone {
                    self.restart();
                }
            }
        }
        Ok(())
    }

    /// The faults pause when the record the newest usable checkpoint names is older than the
    /// retention less the time a task needs to publish one from its start
    /// (`checkpoint_needs`), until a newer one lands: a chain of tasks each crashing sooner
    /// (every new leader dying while it collects answers, the first task of a connector
    /// restarted after a long stop dying) leaves none, whatever the protocol (see
    /// [`SimConfig::check_usable`]).
    pub(super) fn calm_near_retention(&mut self) {
        let Some(u) = self.last_usable.filter(|_| self.cfg.check_usable) else {
            return;
        };
        if self.calm.is_some() {
            return;
        }
        let needs = self.checkpoint_needs();
        let age = self.now.saturating_sub(u);
        if age > self.cfg.retention.saturating_sub(needs) {
            self.calm = Some(self.now);
            self.report.usable_calms += 1;
            self.note(format!(
                "no faults until a newer usable checkpoint lands: the newest names a record {age} old (retention {})",
                self.cfg.retention
            ));
        }
    }

    /// The time a task needs from its start to publish a usable checkpoint (it joins, leads,
    /// has its epoch read back and its checkpoint land): `stateRefreshInterval + 3 ×
    /// rebalanceTimeout`, and where records land late (producers with a backlog, a burst
    /// run's chunks spread over the time a producer may take) three times that lag besides (the
    /// answers, the epoch and the checkpoint each land up to that late), as docs/sync.md
    /// states it (`stateRefreshInterval + 3 × (rebalanceTimeout + L)`).
    pub(super) fn checkpoint_needs(&self) -> u64 {
        let o = &self.cfg.options;
        // (producers with a backlog, and a burst run's chunks landing spread over that time)
        let lag = if self.cfg.faults.backlog > 0 || self.cfg.burst > 0 {
            self.max_lag()
        } else {
            0
        };
        o.state_refresh_interval
            .saturating_add(o.rebalance_timeout.saturating_add(lag).saturating_mul(3))
    }

    /// The longest a producer with a backlog takes to deliver a record.
    pub(super) fn max_lag(&self) -> u64 {
        let o = &self.cfg.options;
        o.epoch_ack_timeout.min(o.state_refresh_interval / 4)
    }

    /// One message of a new task's replay (what goes wrong is noted, not a failure).
    pub(super) fn replay(&mut self, i: usize, msg: &SyncMessage) {
        let now = self.clock(i);
        match self.nodes[i].task.on_message(msg, now) {
            Ok(out) => {
                if let Err(e) = self.apply(i, out) {
                    self.note(format!("restart replay failed: {e}"));
                }
            }
            Err(e) => self.note(format!("restart replay error {e}")),
        }
    }

    /// A task finishes a running partition and leaves the group cleanly right away (it stops
    /// everything); its last records land some steps later, possibly after the next epoch.
    pub(super) fn leave(&mut self) -> Check {
        let with: Vec<usize> = self
            .alive()
            .into_iter()
            .filter(|&i| {
                self.nodes[i]
                    .running
                    .values()
                    .any(|p| matches!(p, Phase::Running(_)))
            })
            .collect();
        let Some(i) = self.pick(&with) else {
            return Ok(());
        };
        let t = self.nodes[i]
            .running
            .iter()
            .find(|(_, p)| matches!(p, Phase::Running(_)))
            .map(|(t, _)| t.clone())
            .unwrap_or_default();
        let due = self.step + self.rng.range(1, 40) as usize;
        self.divert = Some(due);
        let r = self.finish_partition(i, &t);
        self.divert = None;
        r?;
        let n = &mut self.nodes[i];
        n.stop();
        let l = format!("{} leaves; its records land at step {due}", n.id);
        self.note(l);
        let at = self.step + self.rng.range(1, 5) as usize;
        self.change_at = Some(self.change_at.map_or(at, |c| c.min(at)));
        Ok(())
    }

    pub(super) fn garbage(&mut self) -> Check {
        let alive = self.alive();
        let Some(i) = self.pick(&alive) else {
            return Ok(());
        };
        let mut msg = match self.log.last() {
            Some(m) => SyncMessage::clone(m),
            None => return Ok(()),
        };
        match self.rng.below(4) {
            0 => msg.task_id.clear(),
            1 => msg.connector_state.clear(),
            2 => {
                if let Some(s) = msg.connector_state.first_mut() {
                    if let Some(p) = s.data.partitions.first().cloned() {
                        s.data.partitions.push(p);
                    } else {
                        s.task_id.clear();
                    }
                }
            }
            _ => {
                msg.kind = MessageType::NewEpoch;
                msg.sync_epoch.clear();
            }
        }
        if msg.kind == MessageType::NewEpoch && msg.connector_state.is_empty() {
            msg.epoch_generation = 0; // an empty epoch is well-formed: make it malformed
        }
        let before = format!("{:?}", self.nodes[i].task);
        let now = self.clock(i);
        match self.nodes[i].task.on_message(&msg, now) {
            Ok(_) => Err(format!(
                "{} accepted a malformed message: {msg:?}",
                self.nodes[i].id
            )),
            Err(_) => {
                if format!("{:?}", self.nodes[i].task) != before {
                    return Err(format!(
                        "{} changed state on a rejected message",
                        self.nodes[i].id
                    ));
                }
                Ok(())
            }
        }
    }
}
