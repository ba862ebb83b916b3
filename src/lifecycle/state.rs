//! `BuildState`: the indexes, the event handlers and the read-only views.

use std::collections::{BTreeSet, HashMap, HashSet};

use super::error::{ErrorKind, LifecycleError};
use super::event::{BuildEvent, JobRunBuffer, JobRunDepMiss, TaintCreate, WantCancel, WantCreate};
use super::types::{
    AppliedTransition, JobRun, JobRunState, JobRunStatus, PartitionInstance, PartitionState,
    PartitionStatus, Taint, Want, WantState,
};
use super::uuid::{derive_partition_uuid, PartitionUuid};

/// Index of a ref, instance, want, job run or taint in its table. Tables only grow, so an
/// index is stable for the life of the state.
pub(crate) type Ix = u32;

/// The event-sourced build state: wants (by ref), job runs (by partition UUID), partition
/// instances (one canonical per ref, older ones kept as history) and taints.
///
/// [`apply`](BuildState::apply) is the only mutator. It validates the whole event against
/// the current state first and changes nothing when it refuses the event. Every lookup an
/// event needs goes through a hash index or a per-ref index, so the cost of an event depends
/// on what the event touches (its refs, the wants and waiting partitions of those refs), not
/// on the length of the log.
///
/// # Examples
/// ```
/// use partkit::lifecycle::{BuildEvent, BuildState, PartitionStatus, WantState};
/// let mut state = BuildState::new();
/// for text in [
///     r#"{"type":"WantCreate","timestamp":1,"wantId":"w1","partitions":["data/beta"]}"#,
///     r#"{"type":"JobRunBuffer","timestamp":2,"jobRunId":"j1","buildingPartitions":["data/beta"]}"#,
///     r#"{"type":"JobRunSuccess","timestamp":3,"jobRunId":"j1"}"#,
/// ] {
///     state.apply(&BuildEvent::from_json(text).unwrap()).unwrap();
/// }
/// assert_eq!(state.want("w1").unwrap().state, WantState::Successful);
/// let live = state.canonical_partition("data/beta").unwrap();
/// assert_eq!(live.state.status(), PartitionStatus::Live);
/// assert_eq!(live.uuid, partkit::lifecycle::derive_partition_uuid("j1", "data/beta"));
/// ```
#[derive(Debug, Clone, Default)]
pub struct BuildState {
    pub(crate) refs: Vec<RefEntry>,
    pub(crate) ref_ids: HashMap<Box<str>, Ix>,
    pub(crate) instances: Vec<Instance>,
    pub(crate) instance_ids: HashMap<PartitionUuid, Ix>,
    pub(crate) wants: Vec<WantRec>,
    pub(crate) want_ids: HashMap<Box<str>, Ix>,
    pub(crate) jobs: Vec<JobRec>,
    pub(crate) job_ids: HashMap<Box<str>, Ix>,
    pub(crate) taints: Vec<TaintRec>,
    pub(crate) taint_ids: HashMap<Box<str>, Ix>,
    /// Wants in state Idle, by creation order.
    pub(crate) idle_wants: BTreeSet<Ix>,
    /// Wants in state Idle, Building or UpstreamBuilding that have an SLA, keyed by its end
    /// (`createdAt + slaSeconds * 1000`): [`BuildState::wants_past_sla`] is a range query.
    pub(crate) sla_open_wants: BTreeSet<(u64, Ix)>,
    /// The timestamp of the last applied event (`None` before the first): events are applied
    /// in non-decreasing timestamp order.
    pub(crate) last_event_at: Option<u64>,
}

/// Everything known about one partition ref.
#[derive(Debug, Clone, Default)]
pub(crate) struct RefEntry {
    pub(crate) name: Box<str>,
    /// Instances of this ref, oldest first; the last one is canonical.
    pub(crate) history: Vec<Ix>,
    /// Every want naming this ref, in creation order (never pruned, as DataBuild's partition-identity design decides).
    pub(crate) wants: Vec<Ix>,
    /// Wants naming this ref whose state is Idle, Building or UpstreamBuilding: the ones an
    /// event on this ref may move. Keeps per-event work independent of old, finished wants.
    pub(crate) active_wants: BTreeSet<Ix>,
    /// Wants naming this ref whose state is Successful, keyed by the end of their TTL
    /// (`createdAt + ttlSeconds * 1000`, `u64::MAX` without TTL): a taint of the ref at time T
    /// reopens those whose TTL ends after T, found by a range query, so old finished wants
    /// cost nothing.
    pub(crate) successful_wants: BTreeSet<(u64, Ix)>,
    /// UpstreamBuilding instances whose missing deps include this ref (`downstream_waiting`).
    pub(crate) waiting: BTreeSet<Ix>,
}

#[derive(Debug, Clone)]
pub(crate) struct Instance {
    pub(crate) uuid: PartitionUuid,
    pub(crate) ref_ix: Ix,
    pub(crate) job: Ix,
    pub(crate) state: InstState,
    pub(crate) created_at: u64,
    pub(crate) updated_at: u64,
    pub(crate) previous: Option<Ix>,
}

/// [`PartitionState`] with refs and taints as indexes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum InstState {
    Building,
    UpstreamBuilding { missing: Box<[Ix]> },
    UpForRetry,
    Live,
    Failed,
    UpstreamFailed { upstream: Ix },
    Tainted { taint: Ix },
}

impl InstState {
    pub(crate) fn status(&self) -> PartitionStatus {
        match self {
            InstState::Building => PartitionStatus::Building,
            InstState::UpstreamBuilding { .. } => PartitionStatus::UpstreamBuilding,
            InstState::UpForRetry => PartitionStatus::UpForRetry,
            InstState::Live => PartitionStatus::Live,
            InstState::Failed => PartitionStatus::Failed,
            InstState::UpstreamFailed { .. } => PartitionStatus::UpstreamFailed,
            InstState::Tainted { .. } => PartitionStatus::Tainted,
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct WantRec {
    pub(crate) id: Box<str>,
    pub(crate) refs: Box<[Ix]>,
    pub(crate) state: WantState,
    pub(crate) created_at: u64,
    pub(crate) updated_at: u64,
    pub(crate) data_timestamp: Option<u64>,
    pub(crate) ttl_seconds: Option<u64>,
    pub(crate) sla_seconds: Option<u64>,
    pub(crate) comment: Option<Box<str>>,
    pub(crate) source_job: Option<Ix>,
}

impl WantRec {
    /// When the want's TTL ends, in milliseconds (`u64::MAX` without TTL): the want is within
    /// its TTL at time `t` while `t < ttl_end()`.
    pub(crate) fn ttl_end(&self) -> u64 {
        match self.ttl_seconds {
            Some(ttl) => self.created_at.saturating_add(ttl.saturating_mul(1000)),
            None => u64::MAX,
        }
    }

    /// Whether the want is within its TTL at time `t` (always, without TTL).
    pub(crate) fn within_ttl(&self, t: u64) -> bool {
        self.ttl_seconds.is_none() || t < self.ttl_end()
    }

    /// When the want's SLA ends, in milliseconds, if it has one.
    pub(crate) fn sla_end(&self) -> Option<u64> {
        self.sla_seconds
            .map(|sla| self.created_at.saturating_add(sla.saturating_mul(1000)))
    }
}

#[derive(Debug, Clone)]
pub(crate) struct JobRec {
    pub(crate) id: Box<str>,
    pub(crate) label: Option<Box<str>>,
    pub(crate) state: JobRunState,
    /// Instances it created, in `buildingPartitions` order.
    pub(crate) instances: Box<[Ix]>,
    pub(crate) created_at: u64,
    pub(crate) updated_at: u64,
    pub(crate) last_heartbeat_at: Option<u64>,
    pub(crate) derivative_wants: Vec<Ix>,
}

#[derive(Debug, Clone)]
pub(crate) struct TaintRec {
    pub(crate) id: Box<str>,
    pub(crate) partitions: Box<[Box<str>]>,
    pub(crate) created_at: u64,
    pub(crate) tainted: Vec<Ix>,
}

/// What an event touched, gathered while it is applied: wants of these refs are re-sensed.
#[derive(Default)]
struct Touched {
    /// Refs whose canonical instance was created or changed state.
    refs: Vec<Ix>,
    /// Refs whose Live canonical instance was tainted: their Successful wants reopen.
    tainted_refs: Vec<Ix>,
}

fn table_ix(len: usize, what: &str) -> Result<Ix, LifecycleError> {
    Ix::try_from(len)
        .ok()
        .filter(|&ix| ix < Ix::MAX)
        .ok_or_else(|| LifecycleError::invalid_event(format!("too many {what}")))
}

impl BuildState {
    /// An empty state.
    pub fn new() -> Self {
        Self::default()
    }

    /// Applies `events` in order to an empty state.
    ///
    /// # Errors
    /// Stops at the first refused event and returns its error, with
    /// [`event_index`](LifecycleError::event_index) set to the event's index in `events`.
    pub fn replay<'a, I>(events: I) -> Result<BuildState, LifecycleError>
    where
        I: IntoIterator<Item = &'a BuildEvent>,
    {
        let mut state = BuildState::new();
        for (index, event) in events.into_iter().enumerate() {
            state.apply(event).map_err(|e| e.at_event(index))?;
        }
        Ok(state)
    }

    /// Parses each JSON value as an event and applies it, like [`BuildState::replay`]; a
    /// malformed value is refused (`INVALID_EVENT`) with its index.
    ///
    /// # Errors
    /// As [`BuildState::replay`].
    pub fn replay_values<'a, I>(values: I) -> Result<BuildState, LifecycleError>
    where
        I: IntoIterator<Item = &'a serde_json::Value>,
    {
        let mut state = BuildState::new();
        for (index, value) in values.into_iter().enumerate() {
            let event = BuildEvent::deserialize_value(value).map_err(|e| e.at_event(index))?;
            state.apply(&event).map_err(|e| e.at_event(index))?;
        }
        Ok(state)
    }

    /// Parses a JSON array of events and applies them to an empty state, like
    /// [`BuildState::replay`] (the bulk path: one text instead of a million objects).
    ///
    /// # Errors
    /// As [`BuildState::replay`]; a malformed element is `INVALID_EVENT` with its index, text
    /// that is not a JSON array is `INVALID_EVENT` without one.
    pub fn replay_json(text: &str) -> Result<BuildState, LifecycleError> {
        let mut state = BuildState::new();
        state.apply_json_log(text)?;
        Ok(state)
    }

    /// Applies the events of a JSON array text in order; stops at the first refused event
    /// (the events before it stay applied) and returns how many were applied.
    ///
    /// # Errors
    /// The first refused event's error, with its index in the array.
    pub fn apply_json_log(&mut self, text: &str) -> Result<usize, LifecycleError> {
        apply_log(self, text)
    }

    /// Reserves room for `additional` more refs, instances, wants, job runs and taints, so
    /// that applying an event that adds at most that many of each grows no table: the
    /// allocation that could fail happens here, fallibly, before anything changes.
    ///
    /// # Errors
    /// [`std::collections::TryReserveError`] when the memory cannot be had; the state is
    /// unchanged.
    pub fn try_reserve(
        &mut self,
        additional: usize,
    ) -> Result<(), std::collections::TryReserveError> {
        self.refs.try_reserve(additional)?;
        self.ref_ids.try_reserve(additional)?;
        self.instances.try_reserve(additional)?;
        self.instance_ids.try_reserve(additional)?;
        self.wants.try_reserve(additional)?;
        self.want_ids.try_reserve(additional)?;
        self.jobs.try_reserve(additional)?;
        self.job_ids.try_reserve(additional)?;
        self.taints.try_reserve(additional)?;
        self.taint_ids.try_reserve(additional)?;
        Ok(())
    }

    /// Applies one event and returns the state changes it caused, in order.
    ///
    /// The whole event is checked against the current state before anything changes; a
    /// refused event leaves the state exactly as it was.
    ///
    /// # Errors
    /// A [`LifecycleError`] whose [`code`](LifecycleError::code) says why the event was refused
    /// (`INVALID_EVENT`, `UNKNOWN_WANT`, `DUPLICATE_WANT`, `WANT_WRONG_STATE`,
    /// `UNKNOWN_JOB_RUN`, `DUPLICATE_JOB_RUN`, `JOB_RUN_WRONG_STATE`, `DUPLICATE_REF_IN_JOB`,
    /// `PARTITION_LEASED`, `DUPLICATE_TAINT`, `DEPENDENCY_CYCLE`, `TIMESTAMP_NOT_MONOTONIC`).
    /// The shape of the event is checked first, then its timestamp (it may equal, but not
    /// precede, the last applied event's), then everything else.
    pub fn apply(&mut self, event: &BuildEvent) -> Result<Vec<AppliedTransition>, LifecycleError> {
        event.check_shape()?;
        let ts = event.timestamp();
        if let Some(last) = self.last_event_at {
            if ts < last {
                return Err(LifecycleError::new(ErrorKind::TimestampNotMonotonic {
                    timestamp: ts,
                    last,
                }));
            }
        }
        let transitions = self.apply_checked(event, ts)?;
        self.last_event_at = Some(ts);
        Ok(transitions)
    }

    /// The time of the last applied event (`None` for a state no event has touched). The next
    /// event's `timestamp` must be at least this. A state restored from a snapshot takes the
    /// latest time the snapshot records, which is the same value.
    pub fn last_event_at(&self) -> Option<u64> {
        self.last_event_at
    }

    /// [`apply`](BuildState::apply) after the shape and timestamp checks: validates the event
    /// against the state (no change on error), then applies it.
    fn apply_checked(
        &mut self,
        event: &BuildEvent,
        ts: u64,
    ) -> Result<Vec<AppliedTransition>, LifecycleError> {
        match event {
            BuildEvent::WantCreate(e) => {
                let source = self.check_want_create(e)?;
                Ok(self.do_want_create(e, source))
            }
            BuildEvent::WantCancel(e) => {
                let w = self.check_want_cancel(e)?;
                Ok(self.do_want_cancel(w, ts))
            }
            BuildEvent::JobRunBuffer(e) => {
                self.check_job_buffer(e)?;
                Ok(self.do_job_buffer(e))
            }
            BuildEvent::JobRunHeartbeat(e) => {
                let j = self.active_job(&e.job_run_id, "JobRunHeartbeat")?;
                Ok(self.do_heartbeat(j, ts))
            }
            BuildEvent::JobRunSuccess(e) => {
                let j = self.active_job(&e.job_run_id, "JobRunSuccess")?;
                Ok(self.do_job_end(j, ts, JobRunState::Succeeded))
            }
            BuildEvent::JobRunFailure(e) => {
                let j = self.active_job(&e.job_run_id, "JobRunFailure")?;
                Ok(self.do_job_end(
                    j,
                    ts,
                    JobRunState::Failed {
                        reason: e.reason.clone(),
                    },
                ))
            }
            BuildEvent::JobRunCancel(e) => {
                let j = self.active_job(&e.job_run_id, "JobRunCancel")?;
                Ok(self.do_job_end(j, ts, JobRunState::Canceled))
            }
            BuildEvent::JobRunDepMiss(e) => {
                let plan = self.check_dep_miss(e)?;
                Ok(self.do_dep_miss(e, plan))
            }
            BuildEvent::TaintCreate(e) => {
                self.check_taint(e)?;
                Ok(self.do_taint(e))
            }
        }
    }

    // ----- validation (no mutation) -----

    fn check_want_create(&self, e: &WantCreate) -> Result<Option<Ix>, LifecycleError> {
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

    fn check_new_refs(&self, refs: &[String]) -> Result<(), LifecycleError> {
        let unknown = refs
            .iter()
            .filter(|r| !self.ref_ids.contains_key(r.as_str()))
            .count();
        table_ix(self.refs.len().saturating_add(unknown), "partition refs").map(|_| ())
    }

    fn check_want_cancel(&self, e: &WantCancel) -> Result<Ix, LifecycleError> {
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

    fn job_ix(&self, id: &str) -> Result<Ix, LifecycleError> {
        self.job_ids
            .get(id)
            .copied()
            .ok_or_else(|| LifecycleError::new(ErrorKind::UnknownJobRun(id.to_string())))
    }

    fn active_job(&self, id: &str, event: &'static str) -> Result<Ix, LifecycleError> {
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

    fn check_job_buffer(&self, e: &JobRunBuffer) -> Result<(), LifecycleError> {
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

    fn check_dep_miss(&self, e: &JobRunDepMiss) -> Result<DepMissPlan, LifecycleError> {
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
    fn find_wait_cycle(&self, start: &[&str], targets: &HashSet<&str>) -> Option<String> {
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

    fn check_taint(&self, e: &TaintCreate) -> Result<(), LifecycleError> {
        if self.taint_ids.contains_key(e.taint_id.as_str()) {
            return Err(LifecycleError::new(ErrorKind::DuplicateTaint(
                e.taint_id.clone(),
            )));
        }
        table_ix(self.taints.len(), "taints").map(|_| ())
    }

    // ----- mutation (infallible: every check has passed) -----

    fn intern_ref(&mut self, name: &str) -> Ix {
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

    fn do_want_create(&mut self, e: &WantCreate, source: Option<Ix>) -> Vec<AppliedTransition> {
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

    fn do_want_cancel(&mut self, w: Ix, ts: u64) -> Vec<AppliedTransition> {
        let mut out = Vec::with_capacity(1);
        self.set_want_state(w, WantState::Canceled, ts, &mut out);
        out
    }

    fn do_job_buffer(&mut self, e: &JobRunBuffer) -> Vec<AppliedTransition> {
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

    fn do_heartbeat(&mut self, j: Ix, ts: u64) -> Vec<AppliedTransition> {
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

    fn set_job_state(
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
    fn do_job_end(&mut self, j: Ix, ts: u64, state: JobRunState) -> Vec<AppliedTransition> {
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

    fn do_dep_miss(&mut self, e: &JobRunDepMiss, plan: DepMissPlan) -> Vec<AppliedTransition> {
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

    fn do_taint(&mut self, e: &TaintCreate) -> Vec<AppliedTransition> {
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

    /// Changes the state of a canonical instance, unregistering it from `waiting` when it
    /// leaves UpstreamBuilding.
    fn set_instance_state(
        &mut self,
        i: Ix,
        state: InstState,
        ts: u64,
        out: &mut Vec<AppliedTransition>,
        touched: &mut Touched,
    ) {
        let inst = &mut self.instances[i as usize];
        let from = inst.state.status();
        let old = std::mem::replace(&mut inst.state, state);
        inst.updated_at = ts;
        let to = inst.state.status();
        let (uuid, r) = (inst.uuid, inst.ref_ix);
        if let InstState::UpstreamBuilding { missing } = old {
            for &m in missing.iter() {
                self.refs[m as usize].waiting.remove(&i);
            }
        }
        touched.refs.push(r);
        out.push(AppliedTransition::Partition {
            uuid,
            partition_ref: self.ref_name(r).to_string(),
            from: Some(from),
            to,
        });
    }

    /// Wakes the partitions waiting for the refs of `settled` instances (which just became
    /// Live, Failed or UpstreamFailed): all upstreams Live → UpForRetry; an upstream Failed or
    /// UpstreamFailed → UpstreamFailed, which in turn wakes its own waiters (down the chain).
    fn propagate(
        &mut self,
        settled: Vec<Ix>,
        ts: u64,
        out: &mut Vec<AppliedTransition>,
        touched: &mut Touched,
    ) {
        let mut work = settled;
        while let Some(i) = work.pop() {
            let inst = &self.instances[i as usize];
            let r = inst.ref_ix;
            let failed = match inst.state.status() {
                PartitionStatus::Live => false,
                PartitionStatus::Failed | PartitionStatus::UpstreamFailed => true,
                _ => continue,
            };
            let waiters: Vec<Ix> = self.refs[r as usize].waiting.iter().copied().collect();
            for w in waiters {
                if failed {
                    self.set_instance_state(
                        w,
                        InstState::UpstreamFailed { upstream: r },
                        ts,
                        out,
                        touched,
                    );
                    work.push(w);
                } else if let InstState::UpstreamBuilding { missing } =
                    &self.instances[w as usize].state
                {
                    match self.upstream_outcome(missing) {
                        Upstream::AllLive => {
                            self.set_instance_state(w, InstState::UpForRetry, ts, out, touched);
                        }
                        // Cannot happen while the invariants hold (a failed upstream would
                        // already have failed this waiter); handled the same way regardless.
                        Upstream::Failed(upstream) => {
                            self.set_instance_state(
                                w,
                                InstState::UpstreamFailed { upstream },
                                ts,
                                out,
                                touched,
                            );
                            work.push(w);
                        }
                        Upstream::Waiting => {}
                    }
                }
            }
        }
    }

    fn upstream_outcome(&self, missing: &[Ix]) -> Upstream {
        let mut all_live = true;
        for &m in missing {
            match self
                .canonical_ix(m)
                .map(|c| self.instances[c as usize].state.status())
            {
                Some(PartitionStatus::Failed | PartitionStatus::UpstreamFailed) => {
                    return Upstream::Failed(m)
                }
                Some(PartitionStatus::Live) => {}
                _ => all_live = false,
            }
        }
        if all_live {
            Upstream::AllLive
        } else {
            Upstream::Waiting
        }
    }

    /// Re-senses the active wants of touched refs (and reopens the Successful wants of
    /// tainted refs that are within their TTL at `ts`), each once, in creation order.
    fn resense(&mut self, touched: Touched, ts: u64, out: &mut Vec<AppliedTransition>) {
        let mut wants: Vec<Ix> = Vec::new();
        for &r in &touched.refs {
            wants.extend(self.refs[r as usize].active_wants.iter().copied());
        }
        for &r in &touched.tainted_refs {
            let within_ttl = self.refs[r as usize]
                .successful_wants
                .range((ts.saturating_add(1), 0)..);
            wants.extend(within_ttl.map(|&(_, w)| w));
        }
        wants.sort_unstable();
        wants.dedup();
        for w in wants {
            let want = &self.wants[w as usize];
            if !(want.state.is_active() || want.state == WantState::Successful) {
                continue;
            }
            let sensed = self.sense(&want.refs);
            if sensed != want.state {
                self.set_want_state(w, sensed, ts, out);
            }
        }
    }

    /// The state a want's refs call for, in the priority order of DataBuild's
    /// partition-identity design: any canonical Failed →
    /// Failed; any UpstreamFailed → UpstreamFailed; all Live → Successful; any Building →
    /// Building; any UpstreamBuilding → UpstreamBuilding; otherwise (no instance yet,
    /// UpForRetry, Tainted) → Idle.
    pub(crate) fn sense(&self, refs: &[Ix]) -> WantState {
        let (mut failed, mut upstream_failed, mut building, mut upstream_building) =
            (false, false, false, false);
        let mut all_live = true;
        for &r in refs {
            let status = self
                .canonical_ix(r)
                .map(|c| self.instances[c as usize].state.status());
            if status != Some(PartitionStatus::Live) {
                all_live = false;
            }
            match status {
                Some(PartitionStatus::Failed) => failed = true,
                Some(PartitionStatus::UpstreamFailed) => upstream_failed = true,
                Some(PartitionStatus::Building) => building = true,
                Some(PartitionStatus::UpstreamBuilding) => upstream_building = true,
                _ => {}
            }
        }
        if failed {
            WantState::Failed
        } else if upstream_failed {
            WantState::UpstreamFailed
        } else if all_live {
            WantState::Successful
        } else if building {
            WantState::Building
        } else if upstream_building {
            WantState::UpstreamBuilding
        } else {
            WantState::Idle
        }
    }

    fn set_want_state(
        &mut self,
        w: Ix,
        state: WantState,
        ts: u64,
        out: &mut Vec<AppliedTransition>,
    ) {
        self.unlist_want(w);
        let want = &mut self.wants[w as usize];
        let from = want.state;
        want.state = state;
        want.updated_at = ts;
        out.push(AppliedTransition::Want {
            want_id: want.id.to_string(),
            from: Some(from),
            to: state,
        });
        self.list_want(w);
    }

    /// Adds a want to the per-ref sets its state belongs to.
    pub(crate) fn list_want(&mut self, w: Ix) {
        let want = &self.wants[w as usize];
        let state = want.state;
        let expiry = want.ttl_end();
        if state == WantState::Idle {
            self.idle_wants.insert(w);
        }
        if let (true, Some(sla_end)) = (state.is_active(), want.sla_end()) {
            self.sla_open_wants.insert((sla_end, w));
        }
        for &r in want.refs.iter() {
            let entry = &mut self.refs[r as usize];
            if state.is_active() {
                entry.active_wants.insert(w);
            } else if state == WantState::Successful {
                entry.successful_wants.insert((expiry, w));
            }
        }
    }

    fn unlist_want(&mut self, w: Ix) {
        let want = &self.wants[w as usize];
        let expiry = want.ttl_end();
        if let Some(sla_end) = want.sla_end() {
            self.sla_open_wants.remove(&(sla_end, w));
        }
        self.idle_wants.remove(&w);
        for &r in want.refs.iter() {
            let entry = &mut self.refs[r as usize];
            entry.active_wants.remove(&w);
            entry.successful_wants.remove(&(expiry, w));
        }
    }

    // ----- lookups -----

    pub(crate) fn ref_name(&self, r: Ix) -> &str {
        self.refs.get(r as usize).map(|e| &*e.name).unwrap_or("")
    }

    pub(crate) fn canonical_ix(&self, r: Ix) -> Option<Ix> {
        self.refs
            .get(r as usize)
            .and_then(|e| e.history.last().copied())
    }

    fn canonical_ix_by_name(&self, name: &str) -> Option<Ix> {
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

    fn schedulable(&self, now: Option<u64>) -> Vec<Want> {
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
        due.sort_unstable();
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

/// Parses a JSON array of events and applies each as soon as it is parsed (one pass, no
/// intermediate list of events); stops at the first element that is no event (malformed JSON
/// included) or is refused, with its index.
fn apply_log(state: &mut BuildState, text: &str) -> Result<usize, LifecycleError> {
    struct LogVisitor<'a> {
        state: &'a mut BuildState,
        applied: usize,
        refused: Option<LifecycleError>,
    }

    impl<'de> serde::de::Visitor<'de> for &mut LogVisitor<'_> {
        type Value = ();

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a JSON array of events")
        }

        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            while let Some(event) = seq.next_element::<BuildEvent>()? {
                if let Err(e) = self.state.apply(&event) {
                    self.refused = Some(e.at_event(self.applied));
                    return Err(serde::de::Error::custom("refused"));
                }
                self.applied += 1;
            }
            Ok(())
        }
    }

    let mut visitor = LogVisitor {
        state,
        applied: 0,
        refused: None,
    };
    let mut de = serde_json::Deserializer::from_str(text);
    let result =
        serde::Deserializer::deserialize_seq(&mut de, &mut visitor).and_then(|()| de.end());
    if let Some(refused) = visitor.refused {
        return Err(refused);
    }
    match result {
        Ok(()) => Ok(visitor.applied),
        Err(e) if text.trim_start().starts_with('[') => {
            Err(LifecycleError::invalid_event(e.to_string()).at_event(visitor.applied))
        }
        Err(e) => Err(LifecycleError::invalid_event(format!(
            "the log is not a JSON array: {e}"
        ))),
    }
}

struct DepMissPlan {
    job: Ix,
    /// Per position in the job's partitions: the merged missing refs (empty = not impacted).
    missing_by_pos: Vec<Vec<String>>,
}

enum Upstream {
    Failed(Ix),
    AllLive,
    Waiting,
}

impl BuildEvent {
    pub(crate) fn deserialize_value(
        value: &serde_json::Value,
    ) -> Result<BuildEvent, LifecycleError> {
        serde::Deserialize::deserialize(value)
            .map_err(|e: serde_json::Error| LifecycleError::invalid_event(e.to_string()))
    }
}
