//! `BuildState::check_invariants`: a full, independent recomputation of everything the
//! indexes and the transitions are supposed to keep true. It reads through `get` only, so it
//! reports (never panics on) a state built from a corrupted snapshot.

use std::collections::{BTreeSet, HashMap, HashSet};

use super::error::{LifecycleError, OptionText};
use super::state::{BuildState, InstState, Ix};
use super::types::{JobRunState, JobRunStatus, PartitionStatus, WantState};
use super::uuid::derive_partition_uuid;

macro_rules! ensure {
    ($cond:expr, $($fmt:tt)+) => {
        if !$cond {
            return Err(LifecycleError::invariant(format!($($fmt)+)));
        }
    };
}

impl BuildState {
    /// Checks every invariant of the state, recomputing each index from the tables:
    ///
    /// - every ref's canonical instance is the last of its history, an existing instance of
    ///   that ref; histories hold each instance once, in creation order, chained by `previous`;
    /// - at most one lease per ref: only a canonical instance may be Building or UpstreamBuilding;
    /// - the UUID index maps each instance's UUID to it, and each UUID is
    ///   `derive_partition_uuid(jobRunId, ref)`;
    /// - job runs and instances agree: a Queued/Running job run's instances are all Building
    ///   and canonical, and every Building instance belongs to one; a Succeeded job run's are
    ///   Live or Tainted, a Failed one's Failed, a Canceled one's UpForRetry, a DepMissed one's
    ///   UpstreamBuilding (with exactly the merged missing deps of its event), UpForRetry or
    ///   UpstreamFailed;
    /// - `downstream_waiting` lists exactly the UpstreamBuilding instances waiting for each ref;
    ///   none of them waits for a Failed/UpstreamFailed ref or only for Live refs; the waits
    ///   form no cycle;
    /// - the wants-for-partition index lists exactly the wants naming each ref, in creation
    ///   order; the per-ref active/successful sets and the Idle set match the want states;
    /// - every Idle, Building or UpstreamBuilding want is in the state its canonical
    ///   partitions call for, and every Idle want is schedulable;
    /// - derivative wants and their source job runs point at each other; taints and Tainted
    ///   instances point at each other;
    /// - times are consistent: no want, job run or instance was updated before it was created
    ///   (a job run's last heartbeat lies in between), and the time of the last applied event
    ///   is the latest time the state records (events are applied in timestamp order).
    ///
    /// # Errors
    /// `INVARIANT_VIOLATION` naming the first broken invariant found.
    pub fn check_invariants(&self) -> Result<(), LifecycleError> {
        self.check_refs()?;
        self.check_instances()?;
        self.check_jobs()?;
        self.check_waiting()?;
        self.check_wants()?;
        self.check_taints()?;
        self.check_times()?;
        Ok(())
    }

    /// The latest time anything in the state records: with events applied in non-decreasing
    /// timestamp order, the timestamp of the last applied event (every event records its own
    /// timestamp somewhere: a creation, an `updatedAt`, a taint). `None` for an empty state.
    pub(crate) fn latest_recorded_time(&self) -> Option<u64> {
        let wants = self.wants.iter().map(|w| w.created_at.max(w.updated_at));
        let jobs = self.jobs.iter().map(|j| {
            j.created_at
                .max(j.updated_at)
                .max(j.last_heartbeat_at.unwrap_or(0))
        });
        let instances = self
            .instances
            .iter()
            .map(|i| i.created_at.max(i.updated_at));
        let taints = self.taints.iter().map(|t| t.created_at);
        wants.chain(jobs).chain(instances).chain(taints).max()
    }

    fn check_times(&self) -> Result<(), LifecycleError> {
        for want in &self.wants {
            ensure!(
                want.created_at <= want.updated_at,
                "want '{}' was updated ({}) before it was created ({})",
                want.id,
                want.updated_at,
                want.created_at
            );
        }
        for job in &self.jobs {
            ensure!(
                job.created_at <= job.updated_at,
                "job run '{}' was updated ({}) before it was created ({})",
                job.id,
                job.updated_at,
                job.created_at
            );
            if let Some(hb) = job.last_heartbeat_at {
                ensure!(
                    job.created_at <= hb && hb <= job.updated_at,
                    "job run '{}' has its last heartbeat ({hb}) outside {}..={}",
                    job.id,
                    job.created_at,
                    job.updated_at
                );
            }
        }
        for inst in &self.instances {
            ensure!(
                inst.created_at <= inst.updated_at,
                "instance {} was updated ({}) before it was created ({})",
                inst.uuid,
                inst.updated_at,
                inst.created_at
            );
        }
        let latest = self.latest_recorded_time();
        ensure!(
            self.last_event_at == latest,
            "the last applied event's time is {}, but the latest time recorded is {}",
            OptionText(self.last_event_at),
            OptionText(latest)
        );
        Ok(())
    }

    fn check_refs(&self) -> Result<(), LifecycleError> {
        ensure!(
            self.ref_ids.len() == self.refs.len(),
            "ref index has {} entries for {} refs",
            self.ref_ids.len(),
            self.refs.len()
        );
        let mut in_history = vec![0u32; self.instances.len()];
        for (r, entry) in self.refs.iter().enumerate() {
            ensure!(
                self.ref_ids.get(&entry.name) == Some(&(r as Ix)),
                "ref index does not map '{}' to its entry",
                entry.name
            );
            ensure!(!entry.name.is_empty(), "a ref is empty");
            let mut prev: Option<Ix> = None;
            for (k, &i) in entry.history.iter().enumerate() {
                let Some(inst) = self.instances.get(i as usize) else {
                    return Err(LifecycleError::invariant(format!(
                        "history of '{}' holds a missing instance",
                        entry.name
                    )));
                };
                ensure!(
                    inst.ref_ix == r as Ix,
                    "history of '{}' holds instance {} of another ref",
                    entry.name,
                    inst.uuid
                );
                ensure!(
                    prev.is_none_or(|p| p < i),
                    "history of '{}' is not in creation order",
                    entry.name
                );
                ensure!(
                    inst.previous == prev,
                    "instance {} of '{}' does not point to the instance before it",
                    inst.uuid,
                    entry.name
                );
                let canonical = k + 1 == entry.history.len();
                ensure!(
                    canonical || !inst.state.status().is_lease(),
                    "non-canonical instance {} of '{}' holds a lease ({})",
                    inst.uuid,
                    entry.name,
                    inst.state.status().as_str()
                );
                in_history[i as usize] += 1;
                prev = Some(i);
            }
        }
        for (i, count) in in_history.iter().enumerate() {
            let uuid = self
                .instances
                .get(i)
                .map(|x| x.uuid.to_string())
                .unwrap_or_default();
            ensure!(
                *count == 1,
                "instance {uuid} appears {count} times in ref histories"
            );
        }
        Ok(())
    }

    fn check_instances(&self) -> Result<(), LifecycleError> {
        ensure!(
            self.instance_ids.len() == self.instances.len(),
            "uuid index has {} entries for {} instances",
            self.instance_ids.len(),
            self.instances.len()
        );
        for (i, inst) in self.instances.iter().enumerate() {
            ensure!(
                self.instance_ids.get(&inst.uuid) == Some(&(i as Ix)),
                "uuid index does not map {} to its instance",
                inst.uuid
            );
            let Some(job) = self.jobs.get(inst.job as usize) else {
                return Err(LifecycleError::invariant(format!(
                    "instance {} names a missing job run",
                    inst.uuid
                )));
            };
            let name = self.ref_name(inst.ref_ix);
            ensure!(
                inst.uuid == derive_partition_uuid(&job.id, name),
                "instance {} is not derive_partition_uuid('{}', '{}')",
                inst.uuid,
                job.id,
                name
            );
            ensure!(
                job.instances.contains(&(i as Ix)),
                "job run '{}' does not list its instance {}",
                job.id,
                inst.uuid
            );
            match &inst.state {
                InstState::UpstreamBuilding { missing } => {
                    ensure!(
                        !missing.is_empty(),
                        "UpstreamBuilding instance {} waits for nothing",
                        inst.uuid
                    );
                    let distinct: HashSet<Ix> = missing.iter().copied().collect();
                    ensure!(
                        distinct.len() == missing.len(),
                        "UpstreamBuilding instance {} lists a missing dep twice",
                        inst.uuid
                    );
                    ensure!(
                        missing.iter().all(|&m| (m as usize) < self.refs.len()),
                        "instance {} waits for an unknown ref",
                        inst.uuid
                    );
                }
                InstState::UpstreamFailed { upstream } => {
                    ensure!(
                        (*upstream as usize) < self.refs.len(),
                        "instance {} failed because of an unknown ref",
                        inst.uuid
                    );
                }
                InstState::Tainted { taint } => {
                    let Some(t) = self.taints.get(*taint as usize) else {
                        return Err(LifecycleError::invariant(format!(
                            "instance {} names a missing taint",
                            inst.uuid
                        )));
                    };
                    ensure!(
                        t.tainted.contains(&(i as Ix)),
                        "taint '{}' does not list the instance {} it tainted",
                        t.id,
                        inst.uuid
                    );
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn check_jobs(&self) -> Result<(), LifecycleError> {
        ensure!(
            self.job_ids.len() == self.jobs.len(),
            "job run index has {} entries for {} job runs",
            self.job_ids.len(),
            self.jobs.len()
        );
        for (j, job) in self.jobs.iter().enumerate() {
            ensure!(
                self.job_ids.get(&job.id) == Some(&(j as Ix)),
                "job run index does not map '{}' to its job run",
                job.id
            );
            ensure!(!job.id.is_empty(), "a job run id is empty");
            ensure!(
                !job.instances.is_empty(),
                "job run '{}' builds nothing",
                job.id
            );
            let mut refs = HashMap::new();
            for (pos, &i) in job.instances.iter().enumerate() {
                let Some(inst) = self.instances.get(i as usize) else {
                    return Err(LifecycleError::invariant(format!(
                        "job run '{}' lists a missing instance",
                        job.id
                    )));
                };
                ensure!(
                    inst.job == j as Ix,
                    "instance {} listed by job run '{}' names another job run",
                    inst.uuid,
                    job.id
                );
                ensure!(
                    refs.insert(inst.ref_ix, pos).is_none(),
                    "job run '{}' builds '{}' twice",
                    job.id,
                    self.ref_name(inst.ref_ix)
                );
            }
            let status = job.state.status();
            // Merged missing deps per impacted ref, as the JobRunDepMiss handler computes them.
            let mut merged: HashMap<&str, Vec<&str>> = HashMap::new();
            if let JobRunState::DepMissed { missing_deps } = &job.state {
                ensure!(
                    !missing_deps.is_empty(),
                    "job run '{}' dep-missed on nothing",
                    job.id
                );
                for md in missing_deps {
                    for p in &md.impacted {
                        ensure!(
                            self.ref_ids
                                .get(p.as_str())
                                .is_some_and(|r| refs.contains_key(r)),
                            "job run '{}' reports '{}' impacted but does not build it",
                            job.id,
                            p
                        );
                        let entry = merged.entry(p.as_str()).or_default();
                        for m in &md.missing {
                            if !entry.contains(&m.as_str()) {
                                entry.push(m.as_str());
                            }
                        }
                    }
                }
            }
            for &i in job.instances.iter() {
                let Some(inst) = self.instances.get(i as usize) else {
                    continue;
                };
                let s = inst.state.status();
                let name = self.ref_name(inst.ref_ix);
                let canonical = self.canonical_ix(inst.ref_ix) == Some(i);
                let ok = match status {
                    JobRunStatus::Queued | JobRunStatus::Running => {
                        s == PartitionStatus::Building && canonical
                    }
                    JobRunStatus::Succeeded => {
                        matches!(s, PartitionStatus::Live | PartitionStatus::Tainted)
                    }
                    JobRunStatus::Failed => s == PartitionStatus::Failed,
                    JobRunStatus::Canceled => s == PartitionStatus::UpForRetry,
                    JobRunStatus::DepMissed => match &inst.state {
                        InstState::UpstreamBuilding { missing } => {
                            let names: Vec<&str> =
                                missing.iter().map(|&m| self.ref_name(m)).collect();
                            merged.get(name) == Some(&names)
                        }
                        InstState::UpForRetry => true,
                        InstState::UpstreamFailed { .. } => merged.contains_key(name),
                        _ => false,
                    },
                };
                ensure!(
                    ok,
                    "instance {} of '{}' is {} while its job run '{}' is {}",
                    inst.uuid,
                    name,
                    s.as_str(),
                    job.id,
                    status.as_str()
                );
            }
            for &w in &job.derivative_wants {
                let Some(want) = self.wants.get(w as usize) else {
                    return Err(LifecycleError::invariant(format!(
                        "job run '{}' lists a missing derivative want",
                        job.id
                    )));
                };
                ensure!(
                    want.source_job == Some(j as Ix),
                    "derivative want '{}' listed by job run '{}' names another source",
                    want.id,
                    job.id
                );
            }
            ensure!(
                job.derivative_wants.windows(2).all(|p| p[0] < p[1]),
                "derivative wants of job run '{}' are not in creation order",
                job.id
            );
        }
        Ok(())
    }

    fn check_waiting(&self) -> Result<(), LifecycleError> {
        let mut expected: Vec<BTreeSet<Ix>> = vec![BTreeSet::new(); self.refs.len()];
        for (i, inst) in self.instances.iter().enumerate() {
            let InstState::UpstreamBuilding { missing } = &inst.state else {
                continue;
            };
            let mut all_live = true;
            for &m in missing.iter() {
                let Some(set) = expected.get_mut(m as usize) else {
                    return Err(LifecycleError::invariant(format!(
                        "instance {} waits for an unknown ref",
                        inst.uuid
                    )));
                };
                set.insert(i as Ix);
                let status = self
                    .canonical_ix(m)
                    .and_then(|c| self.instances.get(c as usize))
                    .map(|c| c.state.status());
                ensure!(
                    !matches!(
                        status,
                        Some(PartitionStatus::Failed | PartitionStatus::UpstreamFailed)
                    ),
                    "instance {} still waits for '{}', which failed",
                    inst.uuid,
                    self.ref_name(m)
                );
                all_live &= status == Some(PartitionStatus::Live);
            }
            ensure!(
                !all_live,
                "instance {} still waits although all its upstreams are Live",
                inst.uuid
            );
        }
        for (r, entry) in self.refs.iter().enumerate() {
            ensure!(entry.waiting == expected[r], "downstream_waiting of '{}' does not match the UpstreamBuilding instances waiting for it", entry.name);
        }
        // No cycle among refs whose canonical instance waits (an iterative DFS with colors).
        let mut color = vec![0u8; self.refs.len()];
        for start in 0..self.refs.len() {
            if color[start] != 0 {
                continue;
            }
            let mut stack: Vec<(Ix, usize)> = vec![(start as Ix, 0)];
            color[start] = 1;
            while let Some(&mut (r, ref mut next)) = stack.last_mut() {
                let deps: &[Ix] = match self
                    .canonical_ix(r)
                    .and_then(|c| self.instances.get(c as usize))
                    .map(|c| &c.state)
                {
                    Some(InstState::UpstreamBuilding { missing }) => missing,
                    _ => &[],
                };
                if let Some(&m) = deps.get(*next) {
                    *next += 1;
                    match color.get(m as usize) {
                        Some(1) => {
                            return Err(LifecycleError::invariant(format!(
                                "partitions wait for each other in a cycle through '{}'",
                                self.ref_name(m)
                            )))
                        }
                        Some(0) => {
                            color[m as usize] = 1;
                            stack.push((m, 0));
                        }
                        _ => {}
                    }
                } else {
                    color[r as usize] = 2;
                    stack.pop();
                }
            }
        }
        Ok(())
    }

    fn check_wants(&self) -> Result<(), LifecycleError> {
        ensure!(
            self.want_ids.len() == self.wants.len(),
            "want index has {} entries for {} wants",
            self.want_ids.len(),
            self.wants.len()
        );
        let mut for_ref: Vec<Vec<Ix>> = vec![Vec::new(); self.refs.len()];
        let mut active: Vec<BTreeSet<Ix>> = vec![BTreeSet::new(); self.refs.len()];
        let mut successful: Vec<BTreeSet<(u64, Ix)>> = vec![BTreeSet::new(); self.refs.len()];
        let mut idle = BTreeSet::new();
        let mut sla_open = BTreeSet::new();
        for (w, want) in self.wants.iter().enumerate() {
            let w = w as Ix;
            ensure!(
                self.want_ids.get(&want.id) == Some(&w),
                "want index does not map '{}' to its want",
                want.id
            );
            ensure!(!want.id.is_empty(), "a want id is empty");
            ensure!(!want.refs.is_empty(), "want '{}' wants nothing", want.id);
            let distinct: HashSet<Ix> = want.refs.iter().copied().collect();
            ensure!(
                distinct.len() == want.refs.len(),
                "want '{}' names a ref twice",
                want.id
            );
            for &r in want.refs.iter() {
                let Some(list) = for_ref.get_mut(r as usize) else {
                    return Err(LifecycleError::invariant(format!(
                        "want '{}' names an unknown ref",
                        want.id
                    )));
                };
                list.push(w);
                if want.state.is_active() {
                    active[r as usize].insert(w);
                } else if want.state == WantState::Successful {
                    successful[r as usize].insert((want.ttl_end(), w));
                }
            }
            if let (true, Some(sla_end)) = (want.state.is_active(), want.sla_end()) {
                sla_open.insert((sla_end, w));
            }
            if want.state == WantState::Idle {
                idle.insert(w);
                ensure!(
                    self.is_schedulable(w),
                    "Idle want '{}' is not schedulable",
                    want.id
                );
            }
            if want.state.is_active() {
                let sensed = self.sense(&want.refs);
                ensure!(
                    sensed == want.state,
                    "want '{}' is {} but its partitions call for {}",
                    want.id,
                    want.state.as_str(),
                    sensed.as_str()
                );
            }
            if let Some(j) = want.source_job {
                let Some(job) = self.jobs.get(j as usize) else {
                    return Err(LifecycleError::invariant(format!(
                        "want '{}' names a missing source job run",
                        want.id
                    )));
                };
                ensure!(
                    job.derivative_wants.contains(&w),
                    "source job run '{}' does not list derivative want '{}'",
                    job.id,
                    want.id
                );
                let JobRunState::DepMissed { missing_deps } = &job.state else {
                    return Err(LifecycleError::invariant(format!(
                        "source job run '{}' of want '{}' is not DepMissed",
                        job.id, want.id
                    )));
                };
                for &r in want.refs.iter() {
                    let name = self.ref_name(r);
                    ensure!(
                        missing_deps
                            .iter()
                            .any(|md| md.missing.iter().any(|m| m == name)),
                        "derivative want '{}' wants '{}', not a missing dep of '{}'",
                        want.id,
                        name,
                        job.id
                    );
                }
            }
        }
        for (r, entry) in self.refs.iter().enumerate() {
            ensure!(
                entry.wants == for_ref[r],
                "wants_for_partition of '{}' does not list exactly the wants naming it",
                entry.name
            );
            ensure!(
                entry.active_wants == active[r],
                "active wants of '{}' do not match the want states",
                entry.name
            );
            ensure!(
                entry.successful_wants == successful[r],
                "successful wants of '{}' do not match the want states",
                entry.name
            );
        }
        ensure!(
            self.idle_wants == idle,
            "the Idle want set does not match the want states"
        );
        ensure!(
            self.sla_open_wants == sla_open,
            "the set of open wants with an SLA does not match the want states"
        );
        Ok(())
    }

    fn check_taints(&self) -> Result<(), LifecycleError> {
        ensure!(
            self.taint_ids.len() == self.taints.len(),
            "taint index has {} entries for {} taints",
            self.taint_ids.len(),
            self.taints.len()
        );
        for (t, taint) in self.taints.iter().enumerate() {
            ensure!(
                self.taint_ids.get(&taint.id) == Some(&(t as Ix)),
                "taint index does not map '{}' to its taint",
                taint.id
            );
            ensure!(!taint.id.is_empty(), "a taint id is empty");
            for &i in &taint.tainted {
                let Some(inst) = self.instances.get(i as usize) else {
                    return Err(LifecycleError::invariant(format!(
                        "taint '{}' lists a missing instance",
                        taint.id
                    )));
                };
                ensure!(
                    inst.state == InstState::Tainted { taint: t as Ix },
                    "instance {} listed by taint '{}' is not tainted by it",
                    inst.uuid,
                    taint.id
                );
                let name = self.ref_name(inst.ref_ix);
                ensure!(
                    taint.partitions.iter().any(|p| &**p == name),
                    "taint '{}' tainted '{}', which it does not name",
                    taint.id,
                    name
                );
            }
        }
        Ok(())
    }
}
