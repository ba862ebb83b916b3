//! Task coordination: the leader/epoch/partition-sharing protocol of a multi-task connector, as
//! a sans-IO state machine ([`SyncTask`]).
//!
//! N connector tasks share a growing set of partitions. A Kafka group rebalance tells each task
//! its generation and tells one task (the leader) the member list; a single-partition sync topic
//! carries every task's state in total order. The protocol never runs one partition on two live
//! tasks and never loses one.
//!
//! ## Protocol in short
//! - **Rebalance**: every task answers with its own state (`RebalanceAnswer`, carrying
//!   `rebalanceGeneration` and, as `syncEpoch`, the epoch it has applied). The leader records
//!   answers as it reads them (even before it learns it leads) and, once every member answered
//!   from the epoch the leader has applied, or after `rebalanceTimeout`, publishes a `NewEpoch`
//!   with id `"<generation>-<leader>"` computed by [`compute_epoch`].
//! - **Epoch validity**: a NewEpoch applies only if its generation is newer and its `baseEpoch` is
//!   the epoch the reader has applied: a decision every reader takes identically from the topic
//!   order, so an epoch computed from a stale view (a leader that timed out before reading an
//!   older leader's epoch) is ignored by all, and its leader recomputes.
//! - **Epoch application**: a member keeps what it owns, adds what the leader gave it, drops the
//!   shares the epoch resolved, and acknowledges with a `Regular` message (or re-answers, if a
//!   newer rebalance is pending). The leader re-publishes the epoch (`resend: true`) to members
//!   that have not acknowledged after `epochAckTimeout`, or at once when one answers from an
//!   older epoch. A task left out of an epoch of its own generation is fenced: it stops
//!   everything.
//! - **Holes**: every message carries its sender's counter (`messageSeq`). A task that sees a
//!   counter jump, that stays behind with no epoch it can apply, or that would have to lead from
//!   an epoch it never read, cannot trust its view: it stops everything, publishes nothing more
//!   and reports `fenced`; the caller replaces it with a task under a new id.
//! - **Incremental messages** carry the sender's own state only and are merged by the per-task
//!   monotonic `stateVersion`; messages of other epochs are ignored; unknown senders are accepted.
//! - **Sharing** (enabled between applying an epoch and the next rebalance): a new partition goes
//!   to the least-loaded member, ties broken by lowest load, then the finder, then smallest id.
//!   The assignee picks it up, the sharer clears the share once the partition is owned, and never
//!   re-owns an unpicked share: the next epoch resolves it.
//! - **Partitions**: Created → ReadyForStreaming (all parents Finished/Removed or unknown
//!   everywhere) → Scheduled (the task outputs `start`) → Running → Finished → Removed (after
//!   `removalDelay`, once every child is Finished/Removed) → dropped (after `tombstoneTtl`).
//!
//! Load of a task = owned partitions not Finished/Removed + shares addressed to it.

mod assign;
mod error;
pub mod sim;
mod task;
mod types;

pub use assign::compute_epoch;

/// The sync topic's `retention.ms` must be at least this many `stateRefreshInterval`s (or
/// infinite): the log then always holds a clean checkpoint to start from, even across a leader
/// change and the retries of a checkpoint that another record raced.
pub const MIN_RETENTION_REFRESHES: u64 = 4;
pub use error::SyncError;
pub use task::{SyncTask, MAX_SAFE_INTEGER};
pub use types::{
    CheckpointRef, MessageType, PartitionSpec, PartitionState, PartitionStatus, RebalanceEvent,
    SharedPartition, SyncMessage, SyncOptions, SyncOutput, TaskData, TaskShare, TaskState,
};
