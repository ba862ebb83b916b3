//! Validation of an event against the state, before anything changes (no mutation).

use std::collections::{HashMap, HashSet};

use crate::lifecycle::error::{ErrorKind, LifecycleError};
use crate::lifecycle::event::{JobRunBuffer, JobRunDepMiss, TaintCreate, WantCancel, WantCreate};
use crate::lifecycle::types::JobRunState;
use crate::lifecycle::uuid::derive_partition_uuid;

use super::{table_ix, BuildState, DepMissPlan, InstState, Ix};

impl BuildState {
    pub(super) fn check_want_create(&self, e: &WantCreate) -> Result<Option<Ix>, LifecycleError> {
        if self.want_ids.contains_key(e.want_id.as_str()) {
            return Err(LifecycleError::new(ErrorKind::DuplicateWant(
                e.want_id.clone(),
            )));
        }
        table_ix(self.wants.len(), "wants")?;
        self.check_new_refs(&e.partitions)?;
        let Some(source_id) = &e.source_job_run_id else {
            return Ok(None);
        };
        let j = self.job_ix(source_id)?;
        let job = &self.jobs[j as usize];
        let JobRunState::DepMissed { missing_deps } = &job.state else {
            return Err(LifecycleError::new(ErrorKind::JobRunWrongState {
                job_run_id: source_id.clone(),
                state: job.state.status().as_str(),
                event: "a derivative WantCreate (its source job run must be DepMissed)",
            }));
        };
        for p in &e.partitions {
            if !missing_deps
                .iter()
                .any(|md| md.missing.iter().any(|m| m == p))
            {
                return Err(LifecycleError::invalid_event(format!(
                    "partition '{p}' of derivative want '{}' is not a missing dep of job run '{source_id}'",
                    e.want_id
                )));
            }
        }
        Ok(Some(j))
    }

    pub(super) fn check_new_refs(&self, refs: &[String]) -> Result<(), LifecycleError> {
        let unknown = refs
            .iter()
            .filter(|r| !self.ref_ids.contains_key(r.as_str()))
            .count();
        table_ix(self.refs.len().saturating_add(unknown), "partition refs").map(|_| ())
    }

    pub(super) fn check_want_cancel(&self, e: &WantCancel) -> Result<Ix, LifecycleError> {
        let w = *self
            .want_ids
            .get(e.want_id.as_str())
            .ok_or_else(|| LifecycleError::new(ErrorKind::UnknownWant(e.want_id.clone())))?;
        let state = self.wants[w as usize].state;
        if !state.is_active() {
            return Err(LifecycleError::new(ErrorKind::WantWrongState {
                want_id: e.want_id.clone(),
                state: state.as_str(),
            }));
        }
        Ok(w)
    }

    pub(super) fn job_ix(&self, id: &str) -> Result<Ix, LifecycleError> {
        self.job_ids
            .get(id)
            .copied()
            .ok_or_else(|| LifecycleError::new(ErrorKind::UnknownJobRun(id.to_string())))
    }

    pub(super) fn active_job(&self, id: &str, event: &'static str) -> Result<Ix, LifecycleError> {
        let j = self.job_ix(id)?;
        let status = self.jobs[j as usize].state.status();
        if !status.is_active() {
            return Err(LifecycleError::new(ErrorKind::JobRunWrongState {
                job_run_id: id.to_string(),
                state: status.as_str(),
                event,
            }));
        }
        Ok(j)
    }

    pub(super) fn check_job_buffer(&self, e: &JobRunBuffer) -> Result<(), LifecycleError> {
        if self.job_ids.contains_key(e.job_run_id.as_str()) {
            return Err(LifecycleError::new(ErrorKind::DuplicateJobRun(
                e.job_run_id.clone(),
            )));
        }
        table_ix(self.jobs.len(), "job runs")?;
        table_ix(
            self.instances
                .len()
                .saturating_add(e.building_partitions.len()),
            "partitions",
        )?;
        self.check_new_refs(&e.building_partitions)?;
        let mut seen = HashSet::with_capacity(e.building_partitions.len());
        for r in &e.building_partitions {
            if !seen.insert(r.as_str()) {
                return Err(LifecycleError::new(ErrorKind::DuplicateRefInJob {
                    job_run_id: e.job_run_id.clone(),
                    partition_ref: r.clone(),
                }));
            }
            if let Some(c) = self.canonical_ix_by_name(r) {
                let inst = &self.instances[c as usize];
                if inst.state.status().is_lease() {
                    return Err(LifecycleError::new(ErrorKind::PartitionLeased {
                        partition_ref: r.clone(),
                        uuid: inst.uuid.to_string(),
                        state: inst.state.status().as_str(),
                    }));
                }
            }
            let uuid = derive_partition_uuid(&e.job_run_id, r);
            if self.instance_ids.contains_key(&uuid) {
                return Err(LifecycleError::invalid_event(format!(
                    "partition uuid {uuid} of job run '{}' and '{r}' already exists",
                    e.job_run_id
                )));
            }
        }
        Ok(())
    }

    pub(super) fn check_dep_miss(&self, e: &JobRunDepMiss) -> Result<DepMissPlan, LifecycleError> {
        let j = self.active_job(&e.job_run_id, "JobRunDepMiss")?;
        let job = &self.jobs[j as usize];
        let job_refs: HashMap<&str, usize> = job
            .instances
            .iter()
            .enumerate()
            .map(|(pos, &i)| (self.ref_name(self.instances[i as usize].ref_ix), pos))
            .collect();
        // Missing refs per position in the job, merged over entries, first-seen order.
        let mut missing_by_pos: Vec<Vec<&str>> = vec![Vec::new(); job.instances.len()];
        let mut all_missing: Vec<&str> = Vec::new();
        let mut seen_missing: HashSet<&str> = HashSet::new();
        for md in &e.missing_deps {
            for m in &md.missing {
                if job_refs.contains_key(m.as_str()) {
                    return Err(LifecycleError::new(ErrorKind::DependencyCycle(format!(
                        "job run '{}' reports its own partition '{m}' as a missing dep",
                        e.job_run_id
                    ))));
                }
                if seen_missing.insert(m.as_str()) {
                    all_missing.push(m.as_str());
                }
            }
            for p in &md.impacted {
                let Some(&pos) = job_refs.get(p.as_str()) else {
                    return Err(LifecycleError::invalid_event(format!(
                        "impacted partition '{p}' is not built by job run '{}'",
                        e.job_run_id
                    )));
                };
                for m in &md.missing {
                    if !missing_by_pos[pos].contains(&m.as_str()) {
                        missing_by_pos[pos].push(m.as_str());
                    }
                }
            }
        }
        let unknown = all_missing
            .iter()
            .filter(|m| !self.ref_ids.contains_key(**m))
            .count();
        table_ix(self.refs.len().saturating_add(unknown), "partition refs")?;
        // A cycle would appear if an upstream (transitively, through partitions that are
        // already waiting) waits for one of the partitions this event makes wait.
        let impacted: HashSet<&str> = missing_by_pos
            .iter()
            .enumerate()
            .filter(|(_, m)| !m.is_empty())
            .map(|(pos, _)| self.ref_name(self.instances[job.instances[pos] as usize].ref_ix))
            .collect();
        if let Some(message) = self.find_wait_cycle(&all_missing, &impacted) {
            return Err(LifecycleError::new(ErrorKind::DependencyCycle(message)));
        }
        let missing_by_pos = missing_by_pos
            .into_iter()
            .map(|v| v.into_iter().map(str::to_string).collect())
            .collect();
        Ok(DepMissPlan {
            job: j,
            missing_by_pos,
        })
    }

    /// Walks from `start` refs through canonical UpstreamBuilding instances to their missing
    /// deps; returns a description if it reaches one of `targets`.
    pub(super) fn find_wait_cycle(
        &self,
        start: &[&str],
        targets: &HashSet<&str>,
    ) -> Option<String> {
        let mut stack: Vec<(Ix, &str)> = Vec::new();
        let mut visited: HashSet<Ix> = HashSet::new();
        for &m in start {
            if let Some(&r) = self.ref_ids.get(m) {
                if visited.insert(r) {
                    stack.push((r, m));
                }
            }
        }
        while let Some((r, via)) = stack.pop() {
            let name = self.ref_name(r);
            if targets.contains(name) {
                return Some(format!(
                    "missing dep '{via}' waits (directly or through other waiting partitions) for '{name}', which this dep miss would make wait for it"
                ));
            }
            if let Some(c) = self.canonical_ix(r) {
                if let InstState::UpstreamBuilding { missing } = &self.instances[c as usize].state {
                    for &m in missing.iter() {
                        if visited.insert(m) {
                            stack.push((m, via));
                        }
                    }
                }
            }
        }
        None
    }

    pub(super) fn check_taint(&self, e: &TaintCreate) -> Result<(), LifecycleError> {
        if self.taint_ids.contains_key(e.taint_id.as_str()) {
            return Err(LifecycleError::new(ErrorKind::DuplicateTaint(
                e.taint_id.clone(),
            )));
        }
        table_ix(self.taints.len(), "taints").map(|_| ())
    }
}
