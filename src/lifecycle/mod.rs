//! Partition lifecycle: an event-sourced build state with partition UUIDs.
//!
//! Users declare *wants* (partition refs that should exist); an orchestrator queues *job
//! runs* that build refs; each build of a ref is a *partition instance* with its own UUID,
//! derived from `(job run id, ref)` ([`derive_partition_uuid`]). Exactly one instance per ref
//! is *canonical* (the latest build); older instances stay queryable as history. Wants
//! reference refs and follow the canonical instances; job runs reference the instances
//! (UUIDs) they built.
//!
//! [`BuildState::apply`] is the only mutator: it takes one [`BuildEvent`], validates all of
//! it against the current state, and either refuses it with a [`LifecycleError`] (state
//! untouched) or applies it and returns the [`AppliedTransition`]s it caused.
//! [`BuildState::replay`] rebuilds a state from a log; [`BuildState::snapshot`] /
//! [`BuildState::from_snapshot`] save and restore it as plain JSON-safe data.
//! Events are applied in timestamp order: an event stamped earlier than the last applied one is
//! refused (`TIMESTAMP_NOT_MONOTONIC`); equal timestamps are fine.
//!
//! # Partition states
//! `Building` (lease) → `Live` | `Failed` | `UpstreamBuilding` (lease, on a dep miss) |
//! `UpForRetry` (job run canceled, or not impacted by its dep miss);
//! `UpstreamBuilding` → `UpForRetry` (every missing upstream is Live) | `UpstreamFailed`
//! (a missing upstream is Failed or UpstreamFailed, propagated down the chain);
//! `Live` → `Tainted` (stays canonical until a new job run builds the ref).
//! A `JobRunBuffer` may build a ref only while its canonical instance holds no lease.
//!
//! # Want states
//! A new want senses the canonical instances of its refs, in this priority order: any
//! Failed → `Failed`; any UpstreamFailed → `UpstreamFailed`; all Live → `Successful`; any
//! Building → `Building`; any UpstreamBuilding → `UpstreamBuilding`; otherwise (not built,
//! UpForRetry, Tainted) → `Idle`. Idle, Building and UpstreamBuilding wants are sensed again
//! whenever a canonical instance of one of their refs changes, so they always reflect the
//! partitions; Successful, Failed, UpstreamFailed and Canceled are final, except that a taint
//! of one of its refs reopens a Successful want that is still within its TTL at the taint's
//! timestamp (`createdAt + ttlSeconds * 1000 > timestamp`; no TTL = never expires): it is
//! sensed again (→ Idle, schedulable), so it triggers the rebuild.
//!
//! # TTL and SLA
//! Neither is a state (DataBuild's partition-identity design defines no
//! expired want state). TTL says how long the
//! orchestrator keeps trying: [`BuildState::schedulable_wants_at`] leaves out wants whose TTL
//! has ended at the caller's `now`, and a taint reopens only wants within their TTL. SLA is an
//! alarm threshold: [`BuildState::wants_past_sla`] lists the wants still open past it.

mod error;
mod event;
mod invariants;
mod snapshot;
mod state;
mod types;
mod uuid;

pub use error::LifecycleError;
pub use event::{
    BuildEvent, JobRunBuffer, JobRunDepMiss, JobRunFailure, JobRunRef, MissingDeps, TaintCreate,
    WantCancel, WantCreate, MAX_SAFE_INTEGER,
};
pub use state::BuildState;
pub use types::{
    AppliedTransition, JobRun, JobRunState, JobRunStatus, PartitionInstance, PartitionState,
    PartitionStatus, Snapshot, Taint, Want, WantState, SNAPSHOT_FORMAT, SNAPSHOT_VERSION,
};
pub use uuid::{derive_partition_uuid, ParseUuidError, PartitionUuid};
