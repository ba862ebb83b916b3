//! The world the tasks run in: the partitions (a split/merge DAG, or a scale run's flat set),
//! the group coordinator handing out generations, time and the work on partitions.

use std::collections::{BTreeMap, BTreeSet};

use crate::sync::{PartitionSpec, RebalanceEvent};

use super::{Check, Driver, Part, Phase, Rng, Sim};

pub(super) fn build_dag(rng: &mut Rng, n: usize) -> (BTreeMap<String, Part>, Vec<String>) {
    let mut dag: BTreeMap<String, Part> = BTreeMap::new();
    let mut next = 0usize;
    let new_token = |next: &mut usize| {
        *next += 1;
        format!("p{:03}", *next - 1)
    };
    let roots_n = rng.range(1, 3.min(n as u64).max(1)) as usize;
    let mut leaves: Vec<String> = Vec::new();
    let mut roots = Vec::new();
    for _ in 0..roots_n {
        let t = new_token(&mut next);
        dag.insert(
            t.clone(),
            Part {
                parents: vec![],
                children: vec![],
                work: rng.range(1, 6) as u32,
            },
        );
        leaves.push(t.clone());
        roots.push(t);
    }
    while dag.len() < n {
        let merge = leaves.len() >= 2 && rng.chance(300);
        if merge {
            let a = leaves.remove(rng.below(leaves.len() as u64) as usize);
            let b = leaves.remove(rng.below(leaves.len() as u64) as usize);
            let c = new_token(&mut next);
            dag.get_mut(&a).expect("leaf").children.push(c.clone());
            dag.get_mut(&b).expect("leaf").children.push(c.clone());
            dag.insert(
                c.clone(),
                Part {
                    parents: vec![a, b],
                    children: vec![],
                    work: rng.range(1, 6) as u32,
                },
            );
            leaves.push(c);
        } else {
            let a = leaves.remove(rng.below(leaves.len() as u64) as usize);
            for _ in 0..rng.range(2, 3) {
                let c = new_token(&mut next);
                dag.get_mut(&a).expect("leaf").children.push(c.clone());
                dag.insert(
                    c.clone(),
                    Part {
                        parents: vec![a.clone()],
                        children: vec![],
                        work: rng.range(1, 6) as u32,
                    },
                );
                leaves.push(c);
            }
        }
    }
    (dag, roots)
}

/// A scale run's partitions: `n` roots, none split or merged (they are long-running).
pub(super) fn flat_dag(rng: &mut Rng, n: usize) -> (BTreeMap<String, Part>, Vec<String>) {
    let roots: Vec<String> = (0..n).map(|i| format!("p{i:06}")).collect();
    let dag = roots
        .iter()
        .map(|t| {
            let part = Part {
                parents: vec![],
                children: vec![],
                work: rng.range(1, 6) as u32,
            };
            (t.clone(), part)
        })
        .collect();
    (dag, roots)
}

impl Sim {
    pub(super) fn membership(&mut self) -> Check {
        let Some(at) = self.change_at else {
            return Ok(());
        };
        if self.step < at {
            return Ok(());
        }
        // (a task the group expelled is no member)
        let alive: Vec<usize> = self
            .alive()
            .into_iter()
            .filter(|&i| !self.nodes[i].expelled)
            .collect();
        if alive.is_empty() {
            return Ok(());
        }
        self.change_at = None;
        self.generation += 1;
        self.members = alive.clone();
        let leader = alive[self.rng.below(alive.len() as u64) as usize];
        let ids: Vec<String> = alive.iter().map(|&i| self.nodes[i].id.clone()).collect();
        self.note(format!(
            "generation {} members {:?} leader {}",
            self.generation, ids, self.nodes[leader].id
        ));
        for &i in &alive {
            let ev = RebalanceEvent {
                generation: self.generation,
                leader: i == leader,
                members: if i == leader { Some(ids.clone()) } else { None },
            };
            // like Kafka, a member only ever learns the group's latest generation
            self.nodes[i].events.clear();
            self.nodes[i].events.push_back(ev);
            self.nodes[i].event_at = self.now;
        }
        Ok(())
    }

    pub(super) fn work(&mut self) -> Check {
        if self.frozen {
            return self.tick();
        }
        let with: Vec<usize> = self
            .alive()
            .into_iter()
            .filter(|&i| !self.nodes[i].running.is_empty())
            .collect();
        let Some(i) = self.pick(&with) else {
            return self.tick();
        };
        let tokens: Vec<String> = self.nodes[i].running.keys().cloned().collect();
        let t = tokens[self.rng.below(tokens.len() as u64) as usize].clone();
        let phase = self.nodes[i].running[&t];
        let now = self.clock(i);
        match phase {
            Phase::Scheduled => {
                let out = self.nodes[i]
                    .task
                    .partition_started(&t, now)
                    .map_err(|e| format!("{} partition_started({t}): {e}", self.nodes[i].id))?;
                self.nodes[i].running.insert(t.clone(), Phase::Running(0));
                self.apply(i, out)
            }
            Phase::Running(p) => {
                let work = self.dag.get(&t).map_or(1, |d| d.work);
                if p + 1 < work {
                    self.nodes[i].running.insert(t, Phase::Running(p + 1));
                    return Ok(());
                }
                self.finish_partition(i, &t)
            }
        }
    }

    /// Task `i` finishes running partition `t`: its children first, then the finish.
    pub(super) fn finish_partition(&mut self, i: usize, t: &str) -> Check {
        let now = self.clock(i);
        let children: Vec<PartitionSpec> = self
            .dag
            .get(t)
            .map(|d| {
                d.children
                    .iter()
                    .map(|c| PartitionSpec {
                        token: c.clone(),
                        parents: self.dag[c].parents.clone(),
                        start_timestamp: Some(now),
                        end_timestamp: None,
                    })
                    .collect()
            })
            .unwrap_or_default();
        if !children.is_empty() {
            let owned_before = self.owned_set(i);
            let out = self.nodes[i]
                .task
                .add_partitions(&children, now)
                .map_err(|e| format!("{} add_partitions: {e}", self.nodes[i].id))?;
            let l = format!(
                "{} finds children of {t}: {:?}",
                self.nodes[i].id,
                children
                    .iter()
                    .map(|c| c.token.as_str())
                    .collect::<Vec<_>>()
            );
            self.note(l);
            self.note_owned(i, &owned_before, "add_partitions");
            self.apply(i, out)?;
            if !self.nodes[i].alive {
                return Ok(()); // it died publishing
            }
        }
        let out = self.nodes[i]
            .task
            .partition_finished(t, now)
            .map_err(|e| format!("{} partition_finished({t}): {e}", self.nodes[i].id))?;
        self.nodes[i].running.remove(t);
        self.finished.insert(t.to_string());
        self.open.remove(t);
        let l = format!("{} finishes {t}", self.nodes[i].id);
        self.note(l);
        self.apply(i, out)
    }

    /// Task `i` ticks at `now`; none may have a deadline at or before `now` afterwards.
    pub(super) fn tick_node(&mut self, i: usize, now: u64) -> Check {
        let owned_before = self.owned_set(i);
        let out = self.nodes[i].task.tick(now);
        self.note_owned(i, &owned_before, "tick");
        self.apply(i, out)?;
        if let Some(t) = self.nodes[i].task.poll_timeout().filter(|&t| t <= now) {
            return Err(format!(
                "timers: {} has pollTimeout {t} <= now {now} after tick",
                self.nodes[i].id
            ));
        }
        Ok(())
    }

    /// Time goes to the next wake-up of a task (`poll_timeout`, as quinn's test `Pair` steps
    /// to the next timeout), or on a little when no task has one; the tasks that are due tick,
    /// and none may have a deadline at or before its `now` afterwards.
    pub(super) fn tick(&mut self) -> Check {
        let next = self
            .alive()
            .into_iter()
            .filter_map(|i| {
                let n = &self.nodes[i];
                n.task.poll_timeout().map(|t| t.saturating_sub(n.skew))
            })
            .min();
        // (never past what a reader that keeps up could lag by: a quiet stretch of time in which
        // no task reads would fence every reader at once)
        let most = self.now + (self.cfg.retention / 64).max(1);
        let periodic = match self.cfg.driver {
            Driver::Periodic(p) => Some(p.max(1)),
            _ => None,
        };
        match (periodic, next) {
            // a fixed-rate loop: the next period's boundary, whatever is due
            (Some(p), _) => self.now = ((self.now / p + 1) * p).min(most),
            (None, Some(t)) if t > self.now => self.now = t.min(most),
            (None, Some(_)) => {}
            (None, None) => self.now += self.rng.range(1, 60),
        }
        for i in self.alive() {
            let now = self.clock(i);
            if periodic.is_none() && self.nodes[i].task.poll_timeout().is_none_or(|t| t > now) {
                continue;
            }
            // a task that keeps up has mostly read the log to its end when its timer fires (a
            // Kafka consumer fetches continuously): what it publishes now reflects it
            if !self.nodes[i].slow && self.rng.chance(800) {
                self.deliver_to(i, u64::MAX, self.chaos)?;
                if !self.nodes[i].alive {
                    continue;
                }
            }
            self.tick_node(i, now)?;
        }
        // roots: added once, by the first task that applies an epoch
        if !self.roots_added {
            if let Some(i) = self
                .alive()
                .into_iter()
                .find(|&i| self.nodes[i].task.in_epoch())
            {
                let now = self.clock(i);
                let specs: Vec<PartitionSpec> = self
                    .roots
                    .iter()
                    .map(|r| PartitionSpec::new(r.clone(), &[]))
                    .collect();
                let out = self.nodes[i]
                    .task
                    .add_partitions(&specs, now)
                    .map_err(|e| format!("roots: {e}"))?;
                self.roots_added = true;
                let l = if self.scale() || self.cfg.burst > 0 {
                    format!("{} adds {} roots", self.nodes[i].id, self.roots.len())
                } else {
                    format!("{} adds roots {:?}", self.nodes[i].id, self.roots)
                };
                self.note(l);
                self.note_owned(i, &BTreeSet::new(), "roots");
                self.apply(i, out)?;
                if (self.scale() || self.cfg.burst > 0) && !self.nodes[i].alive {
                    // it died half-way through publishing them: they are known to nobody, and
                    // the connector's next task finds its initial partitions again
                    self.roots_added = false;
                }
            }
        }
        Ok(())
    }
}
