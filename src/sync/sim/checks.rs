//! The properties checked after every step (safety, no loss, the usable checkpoint) and the
//! group states the phases wait for.

use std::collections::BTreeSet;

use rustc_hash::FxHashMap as HashMap;

use super::{Check, Sim};

impl Sim {
    pub(super) fn check(&mut self) -> Check {
        if let Some(e) = self.deferred.take() {
            return Err(e);
        }
        self.gap_until_now();
        self.usable_gap_until_now();
        if self.cfg.check_usable && self.report.longest_without_usable > self.cfg.retention {
            return Err(format!(
                "no usable checkpoint in the retained log: the newest names a record of {:?}, now {}, retention {}",
                self.last_usable, self.now, self.cfg.retention
            ));
        }
        let alive = self.alive();
        // (the loss check below runs only then: the owners are gathered only for it)
        let stable = self.epoch_stable();
        // (looked up by token only: no order is read from them; sized once, for every owned
        // partition of a live task)
        let total: usize = alive
            .iter()
            .map(|&i| self.nodes[i].task.owned_partitions().len())
            .sum();
        let sized = || HashMap::with_capacity_and_hasher(total, Default::default());
        let mut active: HashMap<&str, &str> = sized();
        let mut owned: HashMap<&str, &str> = if stable { sized() } else { HashMap::default() };
        let mut claimed: HashMap<&str, &str> = sized(); // owned in a confirmed epoch

        // (a task the group expelled, woken from a freeze, is no live member: the time it runs
        // partitions a live member runs too is measured below)
        let woken: Vec<usize> = alive
            .iter()
            .copied()
            .filter(|&i| self.nodes[i].expelled)
            .collect();
        let alive: Vec<usize> = alive
            .into_iter()
            .filter(|&i| !self.nodes[i].expelled)
            .collect();
        for &i in &alive {
            let n = &self.nodes[i];
            // ownership counts once the task may act on it: a task whose epoch some member has
            // not applied yet (e.g. a fork built by a leader that missed a NewEpoch, which the
            // others reject) starts nothing, and gives the claim up when it learns of the fork
            let confirmed = n.task.epoch_confirmed();
            for p in n.task.owned_partitions() {
                if stable {
                    owned.insert(p.token.as_str(), n.id.as_str());
                }
                if confirmed {
                    if let Some(other) = claimed.insert(p.token.as_str(), n.id.as_str()) {
                        return Err(format!("safety: {} owned by {other} and {}", p.token, n.id));
                    }
                }
                if p.state.is_active() {
                    if let Some(other) = active.insert(p.token.as_str(), n.id.as_str()) {
                        return Err(format!(
                            "safety: {} active on {other} and {}",
                            p.token, n.id
                        ));
                    }
                }
            }
        }
        let dt = self.now.saturating_sub(self.checked_at);
        self.checked_at = self.now;
        for &i in &woken {
            let n = &self.nodes[i];
            let both = n.running.keys().any(|t| active.contains_key(t.as_str()));
            if both {
                self.overlap += dt;
            }
        }
        if stable {
            let alive_ids: BTreeSet<&str> =
                alive.iter().map(|&i| self.nodes[i].id.as_str()).collect();
            let mut shared: BTreeSet<&str> = BTreeSet::new();
            for &i in &alive {
                for s in self.nodes[i].task.shared_partitions() {
                    if alive_ids.contains(s.assignee.as_str()) {
                        shared.insert(s.token.as_str());
                    }
                }
            }
            // (a partition counts once every live task has read the record that names it: the
            // late record of a departed task names partitions nobody knew before)
            let read = alive
                .iter()
                .map(|&i| self.nodes[i].cursor)
                .min()
                .unwrap_or(0);
            // (`open`: the created partitions not finished)
            for (t, _) in self.open.iter().filter(|(_, &at)| at < read) {
                if !owned.contains_key(t.as_str()) && !shared.contains(t.as_str()) {
                    return Err(format!(
                        "loss: {t} is neither owned by nor shared to a live task; {}",
                        self.describe()
                    ));
                }
            }
        }
        Ok(())
    }

    pub(super) fn describe(&self) -> String {
        let mut s = format!("generation {} members {:?};", self.generation, self.members);
        for n in self.nodes.iter().filter(|n| n.alive) {
            s.push_str(&format!(
                " [{} epoch {:?} in {} leader {} waiting {:?} behind {} cursor {}/{} events {} owned {:?} shares {:?}]",
                n.id,
                n.task.epoch(),
                n.task.in_epoch(),
                n.task.is_leader(),
                n.task.waiting_for(),
                n.task.is_behind(),
                n.cursor,
                self.log.len(),
                n.events.len(),
                n.task.owned_partitions().iter().map(|p| format!("{}:{:?}", p.token, p.state)).collect::<Vec<_>>(),
                n.task.shared_partitions().iter().map(|p| format!("{}->{}", p.token, p.assignee)).collect::<Vec<_>>(),
            ));
        }
        s
    }

    pub(super) fn all_done(&self) -> bool {
        self.dag.keys().all(|t| self.finished.contains(t))
    }

    /// Group stable, every live task a member that applied the current generation's epoch,
    /// everything delivered (late records included).
    pub(super) fn converged(&self) -> bool {
        let alive = self.alive();
        self.one_epoch(&alive)
            && !alive.is_empty()
            && self.change_at.is_none()
            && self.delayed.is_empty()
            && self.in_flight.is_empty()
            && alive == self.members
            && alive.iter().all(|&i| {
                let n = &self.nodes[i];
                n.events.is_empty()
                    && n.cursor == self.log.len()
                    && n.task.in_epoch()
                    && n.task.epoch_generation() == self.generation
            })
    }

    /// Whether the tasks `alive` (at least one) hold one epoch (or none, all of them).
    fn one_epoch(&self, alive: &[usize]) -> bool {
        let mut epochs = alive.iter().map(|&i| self.nodes[i].task.epoch());
        epochs
            .next()
            .is_some_and(|first| epochs.all(|e| e == first))
    }

    /// Group stable and every live task applied the same epoch of the current generation (a
    /// leader's later attempt of a generation is another epoch: a reader that has not read it
    /// yet still sees the attempt before).
    pub(super) fn epoch_stable(&self) -> bool {
        let alive = self.alive();
        self.one_epoch(&alive)
            && self.change_at.is_none()
            && !alive.is_empty()
            && alive == self.members
            && alive.iter().all(|&i| {
                let n = &self.nodes[i];
                n.events.is_empty()
                    && n.task.in_epoch()
                    && n.task.epoch_generation() == self.generation
            })
    }
}
