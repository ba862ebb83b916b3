//! The owned views the build state hands out, the applied transitions, and the snapshot format.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::event::MissingDeps;
use super::uuid::PartitionUuid;

/// The state of one partition instance. Only the canonical instance of a ref ever changes
/// state; superseded instances are frozen history.
///
/// JSON: flattened into the instance as `state` plus the state's own fields
/// (`missingDeps`, `failedUpstream`, `taintId`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(tag = "state", rename_all_fields = "camelCase")]
pub enum PartitionState {
    /// A job run is building it (a lease: no other job may build the ref).
    Building,
    /// Its job run reported a dep miss; it waits for these upstream refs to be Live (a lease).
    UpstreamBuilding {
        /// The upstream refs it waits for (non-empty).
        missing_deps: Vec<String>,
    },
    /// Ready to be rebuilt by a new job run (upstreams Live, or its job run was canceled or
    /// ended without reaching it).
    UpForRetry,
    /// Built successfully.
    Live,
    /// Its job run failed hard; new wants for the ref fail.
    Failed,
    /// An upstream it waited for failed; new wants for the ref are UpstreamFailed.
    UpstreamFailed {
        /// The upstream ref whose failure reached this instance.
        failed_upstream: String,
    },
    /// Was Live, then declared invalid; stays canonical until a new build replaces it.
    Tainted {
        /// The taint that hit it.
        taint_id: String,
    },
}

/// The name of a [`PartitionState`] (a partition instance's `state`), as used in
/// [`AppliedTransition`]s. Building and UpstreamBuilding hold the ref's lease.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "PartitionStateName"))]
#[allow(missing_docs)]
pub enum PartitionStatus {
    Building,
    UpstreamBuilding,
    UpForRetry,
    Live,
    Failed,
    UpstreamFailed,
    Tainted,
}

impl PartitionState {
    /// The state's name.
    pub fn status(&self) -> PartitionStatus {
        match self {
            PartitionState::Building => PartitionStatus::Building,
            PartitionState::UpstreamBuilding { .. } => PartitionStatus::UpstreamBuilding,
            PartitionState::UpForRetry => PartitionStatus::UpForRetry,
            PartitionState::Live => PartitionStatus::Live,
            PartitionState::Failed => PartitionStatus::Failed,
            PartitionState::UpstreamFailed { .. } => PartitionStatus::UpstreamFailed,
            PartitionState::Tainted { .. } => PartitionStatus::Tainted,
        }
    }
}

impl PartitionStatus {
    /// The name as text (`"UpstreamBuilding"`, ...).
    pub fn as_str(&self) -> &'static str {
        match self {
            PartitionStatus::Building => "Building",
            PartitionStatus::UpstreamBuilding => "UpstreamBuilding",
            PartitionStatus::UpForRetry => "UpForRetry",
            PartitionStatus::Live => "Live",
            PartitionStatus::Failed => "Failed",
            PartitionStatus::UpstreamFailed => "UpstreamFailed",
            PartitionStatus::Tainted => "Tainted",
        }
    }

    /// Building and UpstreamBuilding hold the ref's lease: no job run may start building it.
    pub fn is_lease(&self) -> bool {
        matches!(
            self,
            PartitionStatus::Building | PartitionStatus::UpstreamBuilding
        )
    }
}

/// One partition instance: a ref as built by one job run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", try_from = "PartitionInstanceRepr")]
pub struct PartitionInstance {
    /// Derived from `(jobRunId, ref)` ([`derive_partition_uuid`](super::derive_partition_uuid);
    /// `derivePartitionUuid` in JS), lower case.
    pub uuid: PartitionUuid,
    /// The partition ref.
    #[serde(rename = "ref")]
    pub partition_ref: String,
    /// The state, with its data.
    #[serde(flatten)]
    pub state: PartitionState,
    /// The job run that created the instance.
    pub job_run_id: String,
    /// Timestamp of the `JobRunBuffer` that created it.
    pub created_at: u64,
    /// Timestamp of its last state change.
    pub updated_at: u64,
    /// The instance of the same ref it replaced as canonical, if any (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub previous_uuid: Option<PartitionUuid>,
}

/// The state of a want. (`New` exists only for the instant of creation: it appears as the
/// `from` of the want's first [`AppliedTransition`], never as a stored state.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "WantStateName"))]
pub enum WantState {
    /// Nothing builds its non-Live refs: schedulable.
    Idle,
    /// One of its refs is being built.
    Building,
    /// One of its refs waits for upstream partitions.
    UpstreamBuilding,
    /// All its refs were Live (terminal, unless one of them is tainted within the want's TTL:
    /// then sensed again, usually Idle).
    Successful,
    /// One of its refs failed (terminal).
    Failed,
    /// One of its refs failed because of an upstream (terminal).
    UpstreamFailed,
    /// Canceled by `WantCancel` (terminal).
    Canceled,
}

impl WantState {
    /// The name as text.
    pub fn as_str(&self) -> &'static str {
        match self {
            WantState::Idle => "Idle",
            WantState::Building => "Building",
            WantState::UpstreamBuilding => "UpstreamBuilding",
            WantState::Successful => "Successful",
            WantState::Failed => "Failed",
            WantState::UpstreamFailed => "UpstreamFailed",
            WantState::Canceled => "Canceled",
        }
    }

    /// Idle, Building and UpstreamBuilding: the state follows the canonical partitions.
    pub fn is_active(&self) -> bool {
        matches!(
            self,
            WantState::Idle | WantState::Building | WantState::UpstreamBuilding
        )
    }
}

/// A want: partitions (by ref) that should exist.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Want {
    /// Its id.
    pub want_id: String,
    /// The refs wanted.
    pub partitions: Vec<String>,
    /// Its state.
    pub state: WantState,
    /// Timestamp of its `WantCreate`.
    pub created_at: u64,
    /// Timestamp of its last state change.
    pub updated_at: u64,
    /// From the `WantCreate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub data_timestamp: Option<u64>,
    /// From the `WantCreate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub ttl_seconds: Option<u64>,
    /// From the `WantCreate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub sla_seconds: Option<u64>,
    /// From the `WantCreate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub comment: Option<String>,
    /// For a derivative want: the dep-missed job run it was created for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub source_job_run_id: Option<String>,
}

/// The state of a job run, with its data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(tag = "state", rename_all_fields = "camelCase")]
pub enum JobRunState {
    /// Buffered, no heartbeat yet.
    Queued,
    /// Heartbeat seen.
    Running,
    /// Built its partitions.
    Succeeded,
    /// Failed hard.
    Failed {
        /// From the `JobRunFailure`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(test, ts(optional))]
        reason: Option<String>,
    },
    /// Stopped on missing upstream partitions.
    DepMissed {
        /// From the `JobRunDepMiss`.
        missing_deps: Vec<MissingDeps>,
    },
    /// Canceled.
    Canceled,
}

/// The name of a [`JobRunState`] (a job run's `state`), as used in [`AppliedTransition`]s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "JobRunStateName"))]
#[allow(missing_docs)]
pub enum JobRunStatus {
    Queued,
    Running,
    Succeeded,
    Failed,
    DepMissed,
    Canceled,
}

impl JobRunState {
    /// The state's name.
    pub fn status(&self) -> JobRunStatus {
        match self {
            JobRunState::Queued => JobRunStatus::Queued,
            JobRunState::Running => JobRunStatus::Running,
            JobRunState::Succeeded => JobRunStatus::Succeeded,
            JobRunState::Failed { .. } => JobRunStatus::Failed,
            JobRunState::DepMissed { .. } => JobRunStatus::DepMissed,
            JobRunState::Canceled => JobRunStatus::Canceled,
        }
    }
}

impl JobRunStatus {
    /// The name as text.
    pub fn as_str(&self) -> &'static str {
        match self {
            JobRunStatus::Queued => "Queued",
            JobRunStatus::Running => "Running",
            JobRunStatus::Succeeded => "Succeeded",
            JobRunStatus::Failed => "Failed",
            JobRunStatus::DepMissed => "DepMissed",
            JobRunStatus::Canceled => "Canceled",
        }
    }

    /// Queued or Running.
    pub fn is_active(&self) -> bool {
        matches!(self, JobRunStatus::Queued | JobRunStatus::Running)
    }
}

/// A job run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", try_from = "JobRunRepr")]
pub struct JobRun {
    /// Its id.
    pub job_run_id: String,
    /// From the `JobRunBuffer`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub job_label: Option<String>,
    /// Its state, with its data.
    #[serde(flatten)]
    pub state: JobRunState,
    /// The instances it created, in `buildingPartitions` order.
    pub partition_uuids: Vec<PartitionUuid>,
    /// The refs it builds, in the same order.
    pub partition_refs: Vec<String>,
    /// Timestamp of its `JobRunBuffer`.
    pub created_at: u64,
    /// Timestamp of its last event.
    pub updated_at: u64,
    /// Timestamp of its last heartbeat.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub last_heartbeat_at: Option<u64>,
    /// Wants created with `sourceJobRunId` = this job run, in creation order.
    pub derivative_want_ids: Vec<String>,
}

/// A taint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Taint {
    /// Its id.
    pub taint_id: String,
    /// The refs it names.
    pub partitions: Vec<String>,
    /// Timestamp of its `TaintCreate`.
    pub created_at: u64,
    /// The Live canonical instances it turned Tainted (refs with no Live canonical instance
    /// are left alone).
    pub tainted_uuids: Vec<PartitionUuid>,
}

// Strict deserialization of the flattened shapes: every field known, the state's own fields
// present exactly when the state has them (serde's `flatten` cannot deny unknown fields).

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct PartitionInstanceRepr {
    uuid: PartitionUuid,
    #[serde(rename = "ref")]
    partition_ref: String,
    state: PartitionStatus,
    #[serde(default)]
    missing_deps: Option<Vec<String>>,
    #[serde(default)]
    failed_upstream: Option<String>,
    #[serde(default)]
    taint_id: Option<String>,
    job_run_id: String,
    created_at: u64,
    updated_at: u64,
    #[serde(default)]
    previous_uuid: Option<PartitionUuid>,
}

impl TryFrom<PartitionInstanceRepr> for PartitionInstance {
    type Error = String;

    fn try_from(r: PartitionInstanceRepr) -> Result<Self, String> {
        let wrong = |field: &str| {
            format!(
                "partition {}: field {field} does not belong to state {}",
                r.uuid,
                r.state.as_str()
            )
        };
        let missing = |field: &str| {
            format!(
                "partition {}: state {} needs field {field}",
                r.uuid,
                r.state.as_str()
            )
        };
        let state = match r.state {
            PartitionStatus::UpstreamBuilding => PartitionState::UpstreamBuilding {
                missing_deps: r
                    .missing_deps
                    .clone()
                    .ok_or_else(|| missing("missingDeps"))?,
            },
            PartitionStatus::UpstreamFailed => PartitionState::UpstreamFailed {
                failed_upstream: r
                    .failed_upstream
                    .clone()
                    .ok_or_else(|| missing("failedUpstream"))?,
            },
            PartitionStatus::Tainted => PartitionState::Tainted {
                taint_id: r.taint_id.clone().ok_or_else(|| missing("taintId"))?,
            },
            PartitionStatus::Building => PartitionState::Building,
            PartitionStatus::UpForRetry => PartitionState::UpForRetry,
            PartitionStatus::Live => PartitionState::Live,
            PartitionStatus::Failed => PartitionState::Failed,
        };
        for (field, present, owner) in [
            (
                "missingDeps",
                r.missing_deps.is_some(),
                PartitionStatus::UpstreamBuilding,
            ),
            (
                "failedUpstream",
                r.failed_upstream.is_some(),
                PartitionStatus::UpstreamFailed,
            ),
            ("taintId", r.taint_id.is_some(), PartitionStatus::Tainted),
        ] {
            if present && r.state != owner {
                return Err(wrong(field));
            }
        }
        Ok(PartitionInstance {
            uuid: r.uuid,
            partition_ref: r.partition_ref,
            state,
            job_run_id: r.job_run_id,
            created_at: r.created_at,
            updated_at: r.updated_at,
            previous_uuid: r.previous_uuid,
        })
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct JobRunRepr {
    job_run_id: String,
    #[serde(default)]
    job_label: Option<String>,
    state: JobRunStatus,
    #[serde(default)]
    reason: Option<String>,
    #[serde(default)]
    missing_deps: Option<Vec<MissingDeps>>,
    partition_uuids: Vec<PartitionUuid>,
    partition_refs: Vec<String>,
    created_at: u64,
    updated_at: u64,
    #[serde(default)]
    last_heartbeat_at: Option<u64>,
    derivative_want_ids: Vec<String>,
}

impl TryFrom<JobRunRepr> for JobRun {
    type Error = String;

    fn try_from(r: JobRunRepr) -> Result<Self, String> {
        let state = match r.state {
            JobRunStatus::Failed => JobRunState::Failed {
                reason: r.reason.clone(),
            },
            JobRunStatus::DepMissed => JobRunState::DepMissed {
                missing_deps: r.missing_deps.clone().ok_or_else(|| {
                    format!(
                        "job run '{}': state DepMissed needs field missingDeps",
                        r.job_run_id
                    )
                })?,
            },
            JobRunStatus::Queued => JobRunState::Queued,
            JobRunStatus::Running => JobRunState::Running,
            JobRunStatus::Succeeded => JobRunState::Succeeded,
            JobRunStatus::Canceled => JobRunState::Canceled,
        };
        if (r.reason.is_some() && r.state != JobRunStatus::Failed)
            || (r.missing_deps.is_some() && r.state != JobRunStatus::DepMissed)
        {
            return Err(format!(
                "job run '{}': a field does not belong to state {}",
                r.job_run_id,
                r.state.as_str()
            ));
        }
        Ok(JobRun {
            job_run_id: r.job_run_id,
            job_label: r.job_label,
            state,
            partition_uuids: r.partition_uuids,
            partition_refs: r.partition_refs,
            created_at: r.created_at,
            updated_at: r.updated_at,
            last_heartbeat_at: r.last_heartbeat_at,
            derivative_want_ids: r.derivative_want_ids,
        })
    }
}

/// One state change caused by an event, in the order it happened.
///
/// JSON: `{kind: 'want', wantId, from, to}` (`from` is `'New'` on creation),
/// `{kind: 'partition', uuid, ref, from, to}` and `{kind: 'jobRun', jobRunId, from, to}`
/// (`from` is `null` on creation).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum AppliedTransition {
    /// A want changed state.
    Want {
        /// The want.
        want_id: String,
        /// The previous state; `"New"` (`None`) when the event created the want.
        #[serde(with = "want_from")]
        #[cfg_attr(test, ts(type = "WantStateName | \"New\""))]
        from: Option<WantState>,
        /// The new state.
        to: WantState,
    },
    /// A partition instance was created or changed state.
    Partition {
        /// The instance.
        uuid: PartitionUuid,
        /// Its ref.
        #[serde(rename = "ref")]
        partition_ref: String,
        /// The previous state; `null` (`None`) when the event created the instance.
        from: Option<PartitionStatus>,
        /// The new state.
        to: PartitionStatus,
    },
    /// A job run was created or changed state.
    JobRun {
        /// The job run.
        job_run_id: String,
        /// The previous state; `null` (`None`) when the event created the job run.
        from: Option<JobRunStatus>,
        /// The new state.
        to: JobRunStatus,
    },
}

mod want_from {
    use super::*;

    pub fn serialize<S: Serializer>(v: &Option<WantState>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(v.map(|w| w.as_str()).unwrap_or("New"))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<WantState>, D::Error> {
        let name = String::deserialize(d)?;
        if name == "New" {
            return Ok(None);
        }
        WantState::deserialize(serde::de::value::StrDeserializer::<D::Error>::new(&name)).map(Some)
    }
}

/// The whole build state as plain data: every want, job run, partition instance and taint in
/// creation order. Indexes are not stored: [`BuildState::from_snapshot`](super::BuildState::from_snapshot)
/// rebuilds them and checks every invariant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "BuildStateSnapshot"))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Snapshot {
    /// Always `"partkit.lifecycle"`.
    #[cfg_attr(test, ts(type = "\"partkit.lifecycle\""))]
    pub format: String,
    /// Always `1`.
    #[cfg_attr(test, ts(type = "1"))]
    pub version: u32,
    /// Wants in creation order.
    pub wants: Vec<Want>,
    /// Job runs in creation order.
    pub job_runs: Vec<JobRun>,
    /// Partition instances in creation order.
    pub partitions: Vec<PartitionInstance>,
    /// Taints in creation order.
    pub taints: Vec<Taint>,
}

/// The `format` of a [`Snapshot`].
pub const SNAPSHOT_FORMAT: &str = "partkit.lifecycle";
/// The `version` of a [`Snapshot`].
pub const SNAPSHOT_VERSION: u32 = 1;
