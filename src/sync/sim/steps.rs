//! The main loop: the chaos phase (faults on), the heal phase, the balance phase, and what one
//! step does.

use std::collections::BTreeMap;

use crate::sync::PartitionSpec;

use super::{Check, Part, Sim};

impl Sim {
    pub(super) fn run_all(&mut self) -> Check {
        let every = self.cfg.check_every();
        // (a scale run's chaos lasts until a task has died half-way through a chunked publish,
        // up to four times as long)
        let most = if self.scale() {
            self.cfg.chaos_steps * 4
        } else {
            self.cfg.chaos_steps
        };
        for k in 0..most {
            if k >= self.cfg.chaos_steps && self.report.chunk_deaths > 0 {
                break;
            }
            self.chaos_step()?;
            if self.step % every == 0 {
                self.check()?;
            }
        }
        self.check()?;
        self.note("== heal".into());
        self.chaos = false;
        for n in &mut self.nodes {
            n.slow = false;
            n.lag = 0;
        }
        if self.scale() {
            // long-running partitions, no more work: the group converges with every partition
            // known (the last check then finds each owned by or shared to a live task)
            self.frozen = true;
            self.heal_until(|s| s.converged() && s.created.len() >= s.dag.len())?;
            return self.check();
        }
        // (the roots too: a group that applied its first epoch only as the faults stopped adds
        // them now, not in the balance phase, which counts every new partition as balance work;
        // and every frozen task woke and was replaced: a replacement joining in the balance
        // phase would find the others loaded with what they took before it came)
        self.heal_until(|s| {
            s.converged()
                && s.roots_added
                && s.nodes
                    .iter()
                    .all(|n| n.frozen_until.is_none() && !n.expelled)
        })?;
        if self.cfg.balance_partitions > 0 {
            self.balance_phase()?;
        }
        self.heal_until(|s| s.all_done() && s.converged())?;
        if self.cfg.burst > 0 {
            self.quiet_tail()?;
        }
        Ok(())
    }

    /// A burst run goes on quietly for three intervals once everything finished: the log gets
    /// about one checkpoint per interval (a retry now and then), not a storm of checkpoints
    /// that never come out clean, each from several tasks.
    pub(super) fn quiet_tail(&mut self) -> Check {
        let interval = self.cfg.options.state_refresh_interval;
        let (from, until) = (self.log.len(), self.now + 3 * interval);
        while self.now < until {
            self.heal_step()?;
            if self.step % self.cfg.check_every() == 0 {
                self.check()?;
            }
        }
        let checkpoints = self.log[from..]
            .iter()
            .filter(|m| m.checkpoint.is_some())
            .filter(|m| m.chunk.as_ref().is_none_or(|c| c.index == 0))
            .count();
        self.report.tail_checkpoints = checkpoints;
        if checkpoints > 6 {
            return Err(format!(
                "checkpoint storm: {checkpoints} checkpoints in three quiet intervals; {}",
                self.describe()
            ));
        }
        self.check()
    }

    pub(super) fn heal_until(&mut self, done: impl Fn(&Sim) -> bool) -> Check {
        let mut budget = self.cfg.heal_budget;
        while !done(self) {
            if budget == 0 {
                let missing: Vec<&String> = self
                    .dag
                    .keys()
                    .filter(|t| !self.finished.contains(*t))
                    .take(20)
                    .collect();
                return Err(format!(
                    "liveness: not converged after the heal budget; unfinished: {missing:?}; {}",
                    self.describe()
                ));
            }
            budget -= 1;
            self.heal_step()?;
            if self.step % self.cfg.check_every() == 0 {
                self.check()?;
            }
        }
        self.check()
    }

    pub(super) fn chaos_step(&mut self) -> Check {
        self.step += 1;
        self.now += self.rng.range(0, 3);
        self.land_delayed();
        self.expire()?;
        self.keep_up()?;
        // one task at least keeps up with the log (with every task behind by more than the
        // retention, no task could keep a complete state in it): after a crash took the last
        // one, another catches up
        let alive = self.alive();
        if alive.iter().all(|&i| self.nodes[i].slow) {
            if let Some(&i) = alive.first() {
                self.nodes[i].slow = false;
            }
        }
        self.wake()?;
        self.membership()?;
        self.calm_near_retention();
        if self.calm.is_some() {
            // (the connector runs: a task that died just before is replaced)
            if self.alive().is_empty() && !self.nodes.iter().any(|n| n.frozen_until.is_some()) {
                self.restart_capped(usize::MAX);
            }
            return self.ordinary_step(false);
        }
        let f = self.cfg.faults.clone();
        // (no draw in the runs without whole stops: their other draws stay as they were)
        if f.whole_stop > 0 && self.rng.chance(f.whole_stop) {
            return self.whole_stop();
        }
        if f.rolling > 0 && self.rng.chance(f.rolling) {
            return self.rolling_restart();
        }
        if f.backlog > 0 && self.rng.chance(f.backlog) {
            self.backlog();
            return Ok(());
        }
        if f.clock_step > 0 && self.rng.chance(f.clock_step) {
            self.clock_step();
            return Ok(());
        }
        if f.freeze > 0 && self.rng.chance(f.freeze) {
            self.freeze();
            return Ok(());
        }
        if self.rng.chance(f.leave) {
            return self.leave();
        }
        if self.rng.chance(f.crash) {
            return self.crash(false);
        }
        if self.rng.chance(f.leader_death) {
            // a no-op when no leader is collecting answers
            self.crash(true)?;
        }
        if self.rng.chance(f.restart) || self.alive().is_empty() {
            self.restart();
            return Ok(());
        }
        if self.rng.chance(f.quick_rebalance) && self.generation > 0 {
            self.note("quick rebalance".into());
            self.change_at = Some(self.step);
            return Ok(());
        }
        if self.rng.chance(f.garbage) {
            return self.garbage();
        }
        if self.rng.chance(20) {
            let alive = self.alive();
            let keeping_up = alive.iter().filter(|&&i| !self.nodes[i].slow).count();
            if let Some(i) = self
                .pick(&alive)
                .filter(|&i| self.nodes[i].slow || keeping_up > 1)
            {
                self.nodes[i].slow = !self.nodes[i].slow;
                let l = format!("{} slow={}", self.nodes[i].id, self.nodes[i].slow);
                self.note(l);
            }
        }
        self.ordinary_step(true)
    }

    pub(super) fn heal_step(&mut self) -> Check {
        self.step += 1;
        self.now += self.rng.range(0, 3);
        self.land_delayed();
        self.expire()?;
        self.keep_up()?;
        self.wake()?;
        if self.alive().is_empty() && !self.nodes.iter().any(|n| n.frozen_until.is_some()) {
            self.restart_capped(usize::MAX);
        }
        self.membership()?;
        self.ordinary_step(false)
    }

    pub(super) fn ordinary_step(&mut self, faults: bool) -> Check {
        match self.rng.below(100) {
            0..=49 => self.deliver(faults),
            50..=61 => self.deliver_event(),
            62..=84 => self.work(),
            _ => self.tick(),
        }
    }

    pub(super) fn balance_phase(&mut self) -> Check {
        self.frozen = true;
        self.note("== balance".into());
        let alive = self.alive();
        let before: BTreeMap<usize, usize> = alive
            .iter()
            .map(|&i| {
                (
                    i,
                    self.nodes[i]
                        .task
                        .owned_partitions()
                        .iter()
                        .filter(|p| !p.state.is_done())
                        .count(),
                )
            })
            .collect();
        for k in 0..self.cfg.balance_partitions {
            let token = format!("b{k:03}");
            self.dag.insert(
                token.clone(),
                Part {
                    parents: vec![],
                    children: vec![],
                    work: 1,
                },
            );
            let alive = self.alive();
            let Some(i) = self.pick(&alive) else { break };
            let now = self.clock(i);
            let out = self.nodes[i]
                .task
                .add_partitions(&[PartitionSpec::new(token.clone(), &[])], now)
                .map_err(|e| format!("balance add: {e}"))?;
            self.apply(i, out)?;
            self.heal_until(|s| {
                s.converged()
                    && s.alive()
                        .iter()
                        .all(|&j| s.nodes[j].task.shared_partitions().is_empty())
            })?;
        }
        let alive = self.alive();
        let load = |s: &Sim, i: usize| {
            s.nodes[i]
                .task
                .owned_partitions()
                .iter()
                .filter(|p| !p.state.is_done())
                .count()
        };
        let min = alive.iter().map(|&i| load(self, i)).min().unwrap_or(0);
        for &i in &alive {
            let l = load(self, i);
            let took = before.get(&i).map_or(l > 0, |&b| l > b);
            if took && l > min + 1 {
                return Err(format!(
                    "balance: {} took new work and has load {l}, least-loaded task has {min}; {}",
                    self.nodes[i].id,
                    self.describe()
                ));
            }
        }
        self.frozen = false;
        Ok(())
    }
}
