//! The event handlers: each applies an event that passed its check (infallible).

use crate::lifecycle::event::{JobRunBuffer, JobRunDepMiss, TaintCreate, WantCreate};
use crate::lifecycle::types::{
    AppliedTransition, JobRunState, JobRunStatus, PartitionStatus, WantState,
};
use crate::lifecycle::uuid::derive_partition_uuid;

use super::{
    BuildState, DepMissPlan, InstState, Instance, Ix, JobRec, RefEntry, TaintRec, Touched,
    Upstream, WantRec,
};

impl BuildState {
    pub(super) fn intern_ref(&mut self, name: &str) -> Ix {
        if let Some(&r) = self.ref_ids.get(name) {
            return r;
        }
        let r = self.refs.len() as Ix;
        self.refs.push(RefEntry {
            name: name.into(),
            ..RefEntry::default()
        });
        self.ref_ids.insert(name.into(), r);
        r
    }

    pub(super) fn do_want_create(
        &mut self,
        e: &WantCreate,
        source: Option<Ix>,
    ) -> Vec<AppliedTransition> {
        let w = self.wants.len() as Ix;
        let refs: Box<[Ix]> = e.partitions.iter().map(|p| self.intern_ref(p)).collect();
        for &r in refs.iter() {
            self.refs[r as usize].wants.push(w);
        }
        let state = self.sense(&refs);
        self.wants.push(WantRec {
            id: e.want_id.as_str().into(),
            refs,
            state,
            created_at: e.timestamp,
            updated_at: e.timestamp,
            data_timestamp: e.data_timestamp,
            ttl_seconds: e.ttl_seconds,
            sla_seconds: e.sla_seconds,
            comment: e.comment.as_deref().map(Into::into),
            source_job: source,
        });
        self.want_ids.insert(e.want_id.as_str().into(), w);
        self.list_want(w);
        if let Some(j) = source {
            self.jobs[j as usize].derivative_wants.push(w);
        }
        vec![AppliedTransition::Want {
            want_id: e.want_id.clone(),
            from: None,
            to: state,
        }]
    }

    pub(super) fn do_want_cancel(&mut self, w: Ix, ts: u64) -> Vec<AppliedTransition> {
        let mut out = Vec::with_capacity(1);
        self.set_want_state(w, WantState::Canceled, ts, &mut out);
        out
    }

    pub(super) fn do_job_buffer(&mut self, e: &JobRunBuffer) -> Vec<AppliedTransition> {
        let ts = e.timestamp;
        let j = self.jobs.len() as Ix;
        let mut out = Vec::with_capacity(e.building_partitions.len() * 2 + 1);
        out.push(AppliedTransition::JobRun {
            job_run_id: e.job_run_id.clone(),
            from: None,
            to: JobRunStatus::Queued,
        });
        let mut touched = Touched::default();
        let mut instances = Vec::with_capacity(e.building_partitions.len());
        for p in &e.building_partitions {
            let r = self.intern_ref(p);
            let i = self.instances.len() as Ix;
            let uuid = derive_partition_uuid(&e.job_run_id, p);
            let previous = self.refs[r as usize].history.last().copied();
            self.instances.push(Instance {
                uuid,
                ref_ix: r,
                job: j,
                state: InstState::Building,
                created_at: ts,
                updated_at: ts,
                previous,
            });
            self.instance_ids.insert(uuid, i);
            self.refs[r as usize].history.push(i);
            instances.push(i);
            touched.refs.push(r);
            out.push(AppliedTransition::Partition {
                uuid,
                partition_ref: p.clone(),
                from: None,
                to: PartitionStatus::Building,
            });
        }
        self.jobs.push(JobRec {
            id: e.job_run_id.as_str().into(),
            label: e.job_label.as_deref().map(Into::into),
            state: JobRunState::Queued,
            instances: instances.into_boxed_slice(),
            created_at: ts,
            updated_at: ts,
            last_heartbeat_at: None,
            derivative_wants: Vec::new(),
        });
        self.job_ids.insert(e.job_run_id.as_str().into(), j);
        self.resense(touched, ts, &mut out);
        out
    }

    pub(super) fn do_heartbeat(&mut self, j: Ix, ts: u64) -> Vec<AppliedTransition> {
        let job = &mut self.jobs[j as usize];
        job.last_heartbeat_at = Some(ts);
        job.updated_at = ts;
        if job.state == JobRunState::Queued {
            job.state = JobRunState::Running;
            return vec![AppliedTransition::JobRun {
                job_run_id: job.id.to_string(),
                from: Some(JobRunStatus::Queued),
                to: JobRunStatus::Running,
            }];
        }
        Vec::new()
    }

    pub(super) fn set_job_state(
        &mut self,
        j: Ix,
        state: JobRunState,
        ts: u64,
        out: &mut Vec<AppliedTransition>,
    ) {
        let job = &mut self.jobs[j as usize];
        let from = job.state.status();
        let to = state.status();
        job.state = state;
        job.updated_at = ts;
        out.push(AppliedTransition::JobRun {
            job_run_id: job.id.to_string(),
            from: Some(from),
            to,
        });
    }

    /// Success, failure or cancel: every instance of the job goes Live, Failed or UpForRetry.
    pub(super) fn do_job_end(
        &mut self,
        j: Ix,
        ts: u64,
        state: JobRunState,
    ) -> Vec<AppliedTransition> {
        let target = match state.status() {
            JobRunStatus::Succeeded => InstState::Live,
            JobRunStatus::Failed => InstState::Failed,
            _ => InstState::UpForRetry,
        };
        let mut out = Vec::new();
        self.set_job_state(j, state, ts, &mut out);
        let mut touched = Touched::default();
        let mut settled = Vec::new();
        let instances = self.jobs[j as usize].instances.clone();
        for &i in instances.iter() {
            self.set_instance_state(i, target.clone(), ts, &mut out, &mut touched);
            settled.push(i);
        }
        self.propagate(settled, ts, &mut out, &mut touched);
        self.resense(touched, ts, &mut out);
        out
    }

    pub(super) fn do_dep_miss(
        &mut self,
        e: &JobRunDepMiss,
        plan: DepMissPlan,
    ) -> Vec<AppliedTransition> {
        let ts = e.timestamp;
        let j = plan.job;
        let mut out = Vec::new();
        self.set_job_state(
            j,
            JobRunState::DepMissed {
                missing_deps: e.missing_deps.clone(),
            },
            ts,
            &mut out,
        );
        let mut touched = Touched::default();
        let mut settled = Vec::new();
        let instances = self.jobs[j as usize].instances.clone();
        for (pos, &i) in instances.iter().enumerate() {
            let missing_names = &plan.missing_by_pos[pos];
            if missing_names.is_empty() {
                // Not impacted: the job ended without building it; nothing blocks a retry.
                self.set_instance_state(i, InstState::UpForRetry, ts, &mut out, &mut touched);
                continue;
            }
            let missing: Box<[Ix]> = missing_names.iter().map(|m| self.intern_ref(m)).collect();
            self.set_instance_state(
                i,
                InstState::UpstreamBuilding {
                    missing: missing.clone(),
                },
                ts,
                &mut out,
                &mut touched,
            );
            // The upstreams may already have settled: sense them now, since no later
            // transition of theirs would wake this partition.
            match self.upstream_outcome(&missing) {
                Upstream::Failed(upstream) => {
                    self.set_instance_state(
                        i,
                        InstState::UpstreamFailed { upstream },
                        ts,
                        &mut out,
                        &mut touched,
                    );
                    settled.push(i);
                }
                Upstream::AllLive => {
                    self.set_instance_state(i, InstState::UpForRetry, ts, &mut out, &mut touched);
                }
                Upstream::Waiting => {
                    for &m in missing.iter() {
                        self.refs[m as usize].waiting.insert(i);
                    }
                }
            }
        }
        self.propagate(settled, ts, &mut out, &mut touched);
        self.resense(touched, ts, &mut out);
        out
    }

    pub(super) fn do_taint(&mut self, e: &TaintCreate) -> Vec<AppliedTransition> {
        let ts = e.timestamp;
        let t = self.taints.len() as Ix;
        let mut out = Vec::new();
        let mut touched = Touched::default();
        let mut tainted = Vec::new();
        for p in &e.partitions {
            let Some(c) = self.canonical_ix_by_name(p) else {
                continue;
            };
            if self.instances[c as usize].state != InstState::Live {
                continue;
            }
            self.set_instance_state(
                c,
                InstState::Tainted { taint: t },
                ts,
                &mut out,
                &mut touched,
            );
            touched.tainted_refs.push(self.instances[c as usize].ref_ix);
            tainted.push(c);
        }
        self.taints.push(TaintRec {
            id: e.taint_id.as_str().into(),
            partitions: e.partitions.iter().map(|p| p.as_str().into()).collect(),
            created_at: ts,
            tainted,
        });
        self.taint_ids.insert(e.taint_id.as_str().into(), t);
        self.resense(touched, ts, &mut out);
        out
    }
}
