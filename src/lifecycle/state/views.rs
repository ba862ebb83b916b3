//! Lookups by index and name, and the read-only views ([`PartitionInstance`], [`Want`],
//! [`JobRun`], [`Taint`]) built from the tables.

use crate::lifecycle::types::{
    JobRun, PartitionInstance, PartitionState, PartitionStatus, Taint, Want,
};
use crate::lifecycle::uuid::PartitionUuid;

use super::{BuildState, InstState, Instance, Ix};

impl BuildState {
    pub(crate) fn ref_name(&self, r: Ix) -> &str {
        self.refs.get(r as usize).map(|e| &*e.name).unwrap_or("")
    }

    pub(crate) fn canonical_ix(&self, r: Ix) -> Option<Ix> {
        self.refs
            .get(r as usize)
            .and_then(|e| e.history.last().copied())
    }

    pub(super) fn canonical_ix_by_name(&self, name: &str) -> Option<Ix> {
        self.ref_ids.get(name).and_then(|&r| self.canonical_ix(r))
    }

    // ----- views -----

    /// The canonical (current) instance of `partition_ref`, if any job run ever built it.
    pub fn canonical_partition(&self, partition_ref: &str) -> Option<PartitionInstance> {
        self.canonical_ix_by_name(partition_ref)
            .map(|i| self.instance_view(i))
    }

    /// The instance with this UUID.
    pub fn partition(&self, uuid: &PartitionUuid) -> Option<PartitionInstance> {
        self.instance_ids.get(uuid).map(|&i| self.instance_view(i))
    }

    /// The instance with this UUID, given as text (any case); `None` if the text is no UUID.
    pub fn partition_by_str(&self, uuid: &str) -> Option<PartitionInstance> {
        uuid.parse().ok().and_then(|u| self.partition(&u))
    }

    /// Every instance of `partition_ref`, oldest first; the canonical one is last.
    pub fn partition_history(&self, partition_ref: &str) -> Vec<PartitionInstance> {
        self.ref_ids
            .get(partition_ref)
            .map(|&r| {
                self.refs[r as usize]
                    .history
                    .iter()
                    .map(|&i| self.instance_view(i))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The want with this id.
    pub fn want(&self, want_id: &str) -> Option<Want> {
        self.want_ids.get(want_id).map(|&w| self.want_view(w))
    }

    /// Ids of every want naming `partition_ref`, in creation order, whatever their state.
    pub fn wants_for_partition(&self, partition_ref: &str) -> Vec<String> {
        self.ref_ids
            .get(partition_ref)
            .map(|&r| {
                self.refs[r as usize]
                    .wants
                    .iter()
                    .map(|&w| self.wants[w as usize].id.to_string())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The job run with this id.
    pub fn job_run(&self, job_run_id: &str) -> Option<JobRun> {
        self.job_ids.get(job_run_id).map(|&j| self.job_view(j))
    }

    /// The taint with this id.
    pub fn taint(&self, taint_id: &str) -> Option<Taint> {
        self.taint_ids.get(taint_id).map(|&t| self.taint_view(t))
    }

    /// The wants the orchestrator may start a job for, in creation order: Idle wants for which
    /// every ref that is not Live has no canonical instance, or a Tainted or UpForRetry one
    /// (Building and UpstreamBuilding are leases). TTL is not applied (the core has no clock):
    /// see [`schedulable_wants_at`](BuildState::schedulable_wants_at).
    pub fn schedulable_wants(&self) -> Vec<Want> {
        self.schedulable(None)
    }

    /// [`schedulable_wants`](BuildState::schedulable_wants) without the wants whose TTL has
    /// ended at `now` (milliseconds): those with `createdAt + ttlSeconds * 1000 <= now`. A want
    /// without `ttlSeconds` never expires. Expiry is not a state: an expired want keeps its
    /// state (an Idle one stays Idle), the orchestrator just stops being offered it.
    pub fn schedulable_wants_at(&self, now: u64) -> Vec<Want> {
        self.schedulable(Some(now))
    }

    pub(super) fn schedulable(&self, now: Option<u64>) -> Vec<Want> {
        self.idle_wants
            .iter()
            .filter(|&&w| now.is_none_or(|now| self.wants[w as usize].within_ttl(now)))
            .filter(|&&w| self.is_schedulable(w))
            .map(|&w| self.want_view(w))
            .collect()
    }

    /// The wants past their SLA at `now` (milliseconds), in creation order: wants with
    /// `slaSeconds` that are still Idle, Building or UpstreamBuilding although
    /// `createdAt + slaSeconds * 1000 <= now`. The SLA is an alarm threshold, not a state
    /// change: these wants keep their state and are still scheduled (within their TTL). Wants
    /// that ended (Successful, Failed, UpstreamFailed, Canceled) are not listed; a Successful
    /// want reopened by a taint is listed again once it is past its SLA.
    pub fn wants_past_sla(&self, now: u64) -> Vec<Want> {
        let mut due: Vec<Ix> = match now.checked_add(1) {
            Some(end) => self
                .sla_open_wants
                .range(..(end, 0))
                .map(|&(_, w)| w)
                .collect(),
            None => self.sla_open_wants.iter().map(|&(_, w)| w).collect(),
        };
        super::sort_ix(&mut due);
        due.into_iter().map(|w| self.want_view(w)).collect()
    }

    pub(crate) fn is_schedulable(&self, w: Ix) -> bool {
        self.wants[w as usize].refs.iter().all(|&r| {
            match self
                .canonical_ix(r)
                .map(|c| self.instances[c as usize].state.status())
            {
                None => true,
                Some(s) => matches!(
                    s,
                    PartitionStatus::Live | PartitionStatus::Tainted | PartitionStatus::UpForRetry
                ),
            }
        })
    }

    /// How many partition instances (all of history) the state holds.
    pub fn partition_count(&self) -> usize {
        self.instances.len()
    }

    /// How many wants the state holds.
    pub fn want_count(&self) -> usize {
        self.wants.len()
    }

    /// How many job runs the state holds.
    pub fn job_run_count(&self) -> usize {
        self.jobs.len()
    }

    /// How many distinct partition refs the state knows (from wants, jobs and dep misses).
    pub fn ref_count(&self) -> usize {
        self.refs.len()
    }

    pub(crate) fn instance_view(&self, i: Ix) -> PartitionInstance {
        let inst = &self.instances[i as usize];
        let state = match &inst.state {
            InstState::Building => PartitionState::Building,
            InstState::UpstreamBuilding { missing } => PartitionState::UpstreamBuilding {
                missing_deps: missing
                    .iter()
                    .map(|&m| self.ref_name(m).to_string())
                    .collect(),
            },
            InstState::UpForRetry => PartitionState::UpForRetry,
            InstState::Live => PartitionState::Live,
            InstState::Failed => PartitionState::Failed,
            InstState::UpstreamFailed { upstream } => PartitionState::UpstreamFailed {
                failed_upstream: self.ref_name(*upstream).to_string(),
            },
            InstState::Tainted { taint } => PartitionState::Tainted {
                taint_id: self
                    .taints
                    .get(*taint as usize)
                    .map(|t| t.id.to_string())
                    .unwrap_or_default(),
            },
        };
        PartitionInstance {
            uuid: inst.uuid,
            partition_ref: self.ref_name(inst.ref_ix).to_string(),
            state,
            job_run_id: self
                .jobs
                .get(inst.job as usize)
                .map(|j| j.id.to_string())
                .unwrap_or_default(),
            created_at: inst.created_at,
            updated_at: inst.updated_at,
            previous_uuid: inst
                .previous
                .and_then(|p| self.instances.get(p as usize))
                .map(|p| p.uuid),
        }
    }

    pub(crate) fn want_view(&self, w: Ix) -> Want {
        let want = &self.wants[w as usize];
        Want {
            want_id: want.id.to_string(),
            partitions: want
                .refs
                .iter()
                .map(|&r| self.ref_name(r).to_string())
                .collect(),
            state: want.state,
            created_at: want.created_at,
            updated_at: want.updated_at,
            data_timestamp: want.data_timestamp,
            ttl_seconds: want.ttl_seconds,
            sla_seconds: want.sla_seconds,
            comment: want.comment.as_deref().map(str::to_string),
            source_job_run_id: want
                .source_job
                .and_then(|j| self.jobs.get(j as usize))
                .map(|j| j.id.to_string()),
        }
    }

    pub(crate) fn job_view(&self, j: Ix) -> JobRun {
        let job = &self.jobs[j as usize];
        let instances: Vec<&Instance> = job
            .instances
            .iter()
            .filter_map(|&i| self.instances.get(i as usize))
            .collect();
        JobRun {
            job_run_id: job.id.to_string(),
            job_label: job.label.as_deref().map(str::to_string),
            state: job.state.clone(),
            partition_uuids: instances.iter().map(|i| i.uuid).collect(),
            partition_refs: instances
                .iter()
                .map(|i| self.ref_name(i.ref_ix).to_string())
                .collect(),
            created_at: job.created_at,
            updated_at: job.updated_at,
            last_heartbeat_at: job.last_heartbeat_at,
            derivative_want_ids: job
                .derivative_wants
                .iter()
                .filter_map(|&w| self.wants.get(w as usize))
                .map(|w| w.id.to_string())
                .collect(),
        }
    }

    pub(crate) fn taint_view(&self, t: Ix) -> Taint {
        let taint = &self.taints[t as usize];
        Taint {
            taint_id: taint.id.to_string(),
            partitions: taint.partitions.iter().map(|p| p.to_string()).collect(),
            created_at: taint.created_at,
            tainted_uuids: taint
                .tainted
                .iter()
                .filter_map(|&i| self.instances.get(i as usize))
                .map(|i| i.uuid)
                .collect(),
        }
    }
}
