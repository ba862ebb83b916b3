//! Wire and state types of the sync protocol.
//!
//! Field names are those of the Debezium Spanner connector's scaling design (`syncEpoch`,
//! `taskID`, `messageTimestamp`, `connectorState`, `stateTimestamp`, `data`, `share`) plus the
//! documented additions `type`, `stateVersion`, `epochGeneration`, `baseEpoch`,
//! `rebalanceGeneration`, `resend`, `epochAttempt`, `messageSeq`, `checkpoint`, `departed`, `chunk`,
//! `delta` and `rejected`.

use serde::{Deserialize, Serialize};

/// The sync topic's `retention.ms` must be at least this many `stateRefreshInterval`s (or
/// infinite): the log then always holds a usable checkpoint to start from, even across a leader
/// change and the retries of a checkpoint that another record raced.
pub const MIN_RETENTION_REFRESHES: u64 = 4;

/// Lifecycle of one partition, driven by its owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub enum PartitionStatus {
    /// Known, waiting for its parents to finish.
    Created,
    /// Every parent is Finished/Removed (or unknown everywhere): may be scheduled.
    ReadyForStreaming,
    /// The owner told its caller to start it.
    Scheduled,
    /// The caller reported it started.
    Running,
    /// The caller reported it finished.
    Finished,
    /// Finished and no longer needed by any child: a tombstone, purged later.
    Removed,
}

impl PartitionStatus {
    /// Finished or Removed: the partition needs no more work.
    pub fn is_done(self) -> bool {
        matches!(self, PartitionStatus::Finished | PartitionStatus::Removed)
    }

    /// Scheduled or Running: the owner is (about to be) reading it.
    pub fn is_active(self) -> bool {
        matches!(self, PartitionStatus::Scheduled | PartitionStatus::Running)
    }
}

/// One partition in a task's `data.partitions`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct PartitionState {
    /// Unique partition token.
    pub token: String,
    /// Tokens of the partitions this one was split or merged from.
    #[serde(default)]
    pub parents: Vec<String>,
    /// Lifecycle state.
    pub state: PartitionStatus,
    /// Start of the partition's data range (opaque to the protocol).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub start_timestamp: Option<u64>,
    /// End of the partition's data range (opaque to the protocol).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub end_timestamp: Option<u64>,
    /// When the owner saw it finish (drives delayed removal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub finished_timestamp: Option<u64>,
}

impl PartitionState {
    /// A fresh `Created` partition.
    pub fn created(token: impl Into<String>, parents: Vec<String>) -> Self {
        PartitionState {
            token: token.into(),
            parents,
            state: PartitionStatus::Created,
            start_timestamp: None,
            end_timestamp: None,
            finished_timestamp: None,
        }
    }

    /// The same partition handed to `assignee` through a task's `share` section.
    pub fn shared_to(&self, assignee: impl Into<String>) -> SharedPartition {
        SharedPartition {
            token: self.token.clone(),
            parents: self.parents.clone(),
            state: self.state,
            start_timestamp: self.start_timestamp,
            end_timestamp: self.end_timestamp,
            finished_timestamp: self.finished_timestamp,
            assignee: assignee.into(),
        }
    }

    /// A copy reset to `Created` (used when ownership moves to a new task).
    pub fn reset(&self) -> Self {
        PartitionState {
            state: PartitionStatus::Created,
            finished_timestamp: None,
            ..self.clone()
        }
    }
}

/// One partition in a task's `share.partitions`: a partition handed to `assignee`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SharedPartition {
    /// Unique partition token.
    pub token: String,
    /// Tokens of the partitions this one was split or merged from.
    #[serde(default)]
    pub parents: Vec<String>,
    /// Lifecycle state (always `Created` for shares written by partkit).
    pub state: PartitionStatus,
    /// Start of the partition's data range.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub start_timestamp: Option<u64>,
    /// End of the partition's data range.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub end_timestamp: Option<u64>,
    /// When the partition finished (normally absent for shares).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub finished_timestamp: Option<u64>,
    /// The task that should pick the partition up.
    pub assignee: String,
}

impl SharedPartition {
    /// The partition as the assignee will own it (reset to `Created`).
    pub fn to_partition(&self) -> PartitionState {
        PartitionState {
            token: self.token.clone(),
            parents: self.parents.clone(),
            state: PartitionStatus::Created,
            start_timestamp: self.start_timestamp,
            end_timestamp: self.end_timestamp,
            finished_timestamp: None,
        }
    }
}

/// `data` section of a task state: the partitions the task owns.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct TaskData {
    /// Owned partitions.
    #[serde(default)]
    pub partitions: Vec<PartitionState>,
}

/// `share` section of a task state: partitions the task hands to other tasks.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct TaskShare {
    /// Partitions handed to other tasks, each with its `assignee`.
    #[serde(default)]
    pub partitions: Vec<SharedPartition>,
}

/// The state of one task as carried in `connectorState`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct TaskState {
    /// Task id.
    #[serde(rename = "taskID")]
    pub task_id: String,
    /// When the task produced this state (informational: merging uses `stateVersion`).
    #[serde(default)]
    pub state_timestamp: u64,
    /// Per-task monotonic version; a receiver keeps the state with the greatest version.
    #[serde(default)]
    pub state_version: u64,
    /// Owned partitions.
    #[serde(default)]
    pub data: TaskData,
    /// Shared partitions.
    #[serde(default)]
    pub share: TaskShare,
}

/// Sorts states by task id, ties in their order.
pub(crate) fn sort_by_task_id(states: &mut [&TaskState]) {
    let sorted = sort_by_text(states.to_vec(), |s| s.task_id.as_str());
    states.copy_from_slice(&sorted);
}

/// `items` in the order of a stable sort by `key`, ties in their order. Every sort by a text
/// (task ids, tokens, ids) is this one: an unstable sort of plain `(key, position)` pairs (the
/// positions make the keys distinct, so it is stable), one instance of the sort code for every
/// caller and item type instead of a stable sort per type.
pub(crate) fn sort_by_text<T>(items: Vec<T>, key: impl Fn(&T) -> &str) -> Vec<T> {
    let order: Vec<usize> = {
        let mut keys: Vec<(&str, usize)> =
            items.iter().enumerate().map(|(i, t)| (key(t), i)).collect();
        sort_text_keys(&mut keys);
        keys.into_iter().map(|(_, i)| i).collect()
    };
    let mut slots: Vec<Option<T>> = items.into_iter().map(Some).collect();
    order
        .into_iter()
        .filter_map(|i| slots.get_mut(i).and_then(Option::take))
        .collect()
}

#[inline(never)]
fn sort_text_keys(keys: &mut [(&str, usize)]) {
    keys.sort_unstable();
}

/// `pairs` of a generation and a state in the order of a stable sort by generation, then the
/// state's version, ties in their order; the sort is of plain keys `(generation, version,
/// position)`, one instance for every caller.
pub(crate) fn by_generation<T: std::borrow::Borrow<TaskState>>(
    pairs: Vec<(u64, T)>,
) -> Vec<(u64, T)> {
    let mut keys: Vec<(u64, u64, usize)> = pairs
        .iter()
        .enumerate()
        .map(|(i, (g, st))| (*g, st.borrow().state_version, i))
        .collect();
    keys.sort_unstable();
    let mut slots: Vec<Option<(u64, T)>> = pairs.into_iter().map(Some).collect();
    keys.into_iter()
        .filter_map(|(_, _, i)| slots.get_mut(i).and_then(Option::take))
        .collect()
}

impl TaskState {
    /// An empty state for `task_id` at version 0.
    pub fn empty(task_id: impl Into<String>) -> Self {
        TaskState {
            task_id: task_id.into(),
            state_timestamp: 0,
            state_version: 0,
            data: TaskData::default(),
            share: TaskShare::default(),
        }
    }

    /// Load of this task as its own state sees it: owned partitions not Finished/Removed.
    /// (Shares addressed to the task are added by the caller, who sees every share section.)
    pub fn owned_load(&self) -> usize {
        self.data
            .partitions
            .iter()
            .filter(|p| !p.state.is_done())
            .count()
    }
}

/// Kind of a sync-topic message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub enum MessageType {
    /// Incremental message: the sender's own state, in the sender's current epoch.
    Regular,
    /// Answer to a rebalance: the sender's own state; `rebalanceGeneration` says which rebalance.
    RebalanceAnswer,
    /// A new epoch: the state of every member, published by the leader.
    NewEpoch,
}

impl MessageType {
    /// The name, as in JSON (`type`).
    pub fn as_str(self) -> &'static str {
        match self {
            MessageType::Regular => "Regular",
            MessageType::RebalanceAnswer => "RebalanceAnswer",
            MessageType::NewEpoch => "NewEpoch",
        }
    }
}

/// A message on the sync topic.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SyncMessage {
    /// Id of the epoch (`""` before the first epoch). For a `RebalanceAnswer`, the sender's current epoch.
    pub sync_epoch: String,
    /// Sender.
    #[serde(rename = "taskID")]
    pub task_id: String,
    /// When the message was generated.
    pub message_timestamp: u64,
    /// Message kind.
    #[serde(rename = "type")]
    pub kind: MessageType,
    /// `Regular`/`RebalanceAnswer`: the sender's state only. `NewEpoch`: every member's state.
    #[serde(default)]
    pub connector_state: Vec<TaskState>,
    /// Addition: Kafka group generation of `syncEpoch` (0 before the first epoch).
    #[serde(default)]
    #[cfg_attr(test, ts(as = "Option<_>", optional))]
    pub epoch_generation: u64,
    /// Addition, `NewEpoch` only: the epoch the leader computed this one from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub base_epoch: Option<String>,
    /// Addition, `RebalanceAnswer` only: the rebalance generation being answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub rebalance_generation: Option<u64>,
    /// Addition, `NewEpoch` only: a re-publication of an epoch already in force, for tasks that missed it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub resend: bool,
    /// Addition, `NewEpoch` only: the leader's attempt number for this generation (an attempt
    /// computed from a stale view is ignored by every task and replaced by the next one).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub epoch_attempt: u32,
    /// Addition: the sender's message counter (1, 2, 3, ... over every message it publishes,
    /// stamped by [`SyncTask`](super::SyncTask)). A reader that sees a sender's counter jump knows
    /// it missed a message of the sync log and fences itself. Optional on input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub message_seq: Option<u64>,
    /// Addition, `NewEpoch` with `resend` only: marks a periodic *checkpoint* of the epoch in
    /// force, published by the epoch's leader every `stateRefreshInterval`, and names the last
    /// record its author had read when it computed it. A checkpoint directly preceded in the log
    /// by that record is *clean*: a task that starts reading at it rebuilds the running tasks'
    /// view (see the module docs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub checkpoint: Option<CheckpointRef>,
    /// Addition, `NewEpoch` only: tasks that were members of earlier epochs and left (the
    /// latest ones), so that a task starting from this epoch or re-publication still takes in
    /// their records that land late (e.g. a finish published while leaving).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub departed: Vec<String>,
    /// Addition: this record is chunk `index` of `count` of one message larger than
    /// `maxRecordBytes` (every chunk carries the message's header, its own `messageSeq`, and a
    /// part of `connectorState` in order; a task's state may continue in the next chunk). A
    /// reader applies the message when it reads its last chunk, having read every other one in
    /// order; otherwise it does not apply it (see the module docs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub chunk: Option<ChunkRef>,
    /// Addition, `Regular` only: the sender's state in `connectorState` is a change, not its
    /// whole state: it lists only the partitions and shares that changed since the sender's
    /// previous message (whole, as they are now), and this names the ones it dropped. A reader
    /// applies it to what it holds for the sender (see the module docs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub delta: Option<Delta>,
    /// Addition, `NewEpoch` with `checkpoint` only: ids of NewEpochs of later generations that
    /// its author read and rejected (not built on the epoch in force; the latest ones), so that
    /// a task starting from this checkpoint knows, as the running tasks do, that messages of
    /// those epochs come from a fork and not from an epoch it missed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(test, ts(as = "Option<_>", optional))]
    pub rejected: Vec<String>,
}

impl SyncMessage {
    /// A message of `kind` from `task_id` in epoch `sync_epoch`, generated at
    /// `message_timestamp` and carrying `connector_state`, with every addition absent (generation
    /// 0, no counter, no checkpoint, chunk or change): set those with struct update syntax.
    pub fn new(
        kind: MessageType,
        sync_epoch: impl Into<String>,
        task_id: impl Into<String>,
        message_timestamp: u64,
        connector_state: Vec<TaskState>,
    ) -> Self {
        SyncMessage {
            sync_epoch: sync_epoch.into(),
            task_id: task_id.into(),
            message_timestamp,
            kind,
            connector_state,
            epoch_generation: 0,
            base_epoch: None,
            rebalance_generation: None,
            resend: false,
            epoch_attempt: 0,
            message_seq: None,
            checkpoint: None,
            departed: Vec::new(),
            chunk: None,
            delta: None,
            rejected: Vec::new(),
        }
    }
}

/// What a `Regular` message that carries a change (see [`SyncMessage::delta`]) dropped.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Delta {
    /// Tokens dropped from the sender's `data` (tombstones it purged).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(test, ts(as = "Option<_>", optional))]
    pub removed: Vec<String>,
    /// Tokens dropped from the sender's `share` (shares it cleared once taken).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(test, ts(as = "Option<_>", optional))]
    pub unshared: Vec<String>,
}

/// Which chunk of a message a record is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ChunkRef {
    /// 0-based index of this chunk.
    pub index: u32,
    /// How many chunks the message has.
    pub count: u32,
}

/// The record a checkpoint was computed after: its sender and that sender's `messageSeq`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct CheckpointRef {
    /// Sender of the record.
    #[serde(rename = "afterTaskID")]
    pub after_task_id: String,
    /// Its `messageSeq`.
    pub after_seq: u64,
    /// Its `messageTimestamp` (when it was published): a checkpoint is a complete state as of
    /// that record, so the next one falls due an interval after it at the latest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub after_timestamp: Option<u64>,
}

impl CheckpointRef {
    /// Whether both name the same record (sender and counter; the timestamp is a hint).
    pub fn names_same_record(&self, other: &CheckpointRef) -> bool {
        self.after_task_id == other.after_task_id && self.after_seq == other.after_seq
    }
}

fn is_zero(x: &u32) -> bool {
    *x == 0
}

/// A partition found by the caller: initial partitions or children read from a parent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PartitionSpec {
    /// Unique partition token.
    pub token: String,
    /// Parent tokens (empty for initial partitions).
    #[serde(default)]
    #[cfg_attr(test, ts(as = "Option<_>", optional))]
    pub parents: Vec<String>,
    /// Start of the partition's data range.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub start_timestamp: Option<u64>,
    /// End of the partition's data range.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub end_timestamp: Option<u64>,
}

impl PartitionSpec {
    /// A spec with a token and parents.
    pub fn new(token: impl Into<String>, parents: &[&str]) -> Self {
        PartitionSpec {
            token: token.into(),
            parents: parents.iter().map(|p| p.to_string()).collect(),
            start_timestamp: None,
            end_timestamp: None,
        }
    }
}

/// A group rebalance as seen by one task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RebalanceEvent {
    /// Kafka group generation.
    pub generation: u64,
    /// Whether this task leads the generation.
    pub leader: bool,
    /// The generation's members (required for the leader; ignored otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub members: Option<Vec<String>>,
}

/// What the caller must do after an input.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct SyncOutput {
    /// Messages to append to the sync topic, in order.
    pub publish: Vec<SyncMessage>,
    /// Partition tokens to start reading.
    pub start: Vec<String>,
    /// Partition tokens to stop reading (ownership moved away).
    pub stop: Vec<String>,
    /// Set once, when the task fences itself (it found a hole in the sync log it read, so its
    /// view may be wrong): `stop` lists everything it ran, and the task does nothing more. The
    /// caller leaves the group and starts a new task under a new id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub fenced: Option<String>,
}

impl SyncOutput {
    /// Nothing to do.
    pub fn is_empty(&self) -> bool {
        self.publish.is_empty()
            && self.start.is_empty()
            && self.stop.is_empty()
            && self.fenced.is_none()
    }
}

/// Tunables, all in the same unit as `now` (milliseconds in practice).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct SyncOptions {
    /// How long a leader waits for every member's answer before publishing the epoch anyway.
    pub rebalance_timeout: u64,
    /// How long the leader of an epoch waits for every member to acknowledge it before re-publishing it.
    pub epoch_ack_timeout: u64,
    /// How long a Finished partition stays before its owner marks it Removed.
    pub removal_delay: u64,
    /// How long a Removed tombstone stays before it is dropped from the state.
    pub tombstone_ttl: u64,
    /// How often the leader of the epoch in force re-publishes it whole as a checkpoint, so that
    /// the sync log always holds a complete state within retention. The sync topic's retention
    /// must be at least [`MIN_RETENTION_REFRESHES`] times this.
    pub state_refresh_interval: u64,
    /// Largest record the task publishes, in bytes of JSON: a larger message goes out as chunks
    /// (see [`ChunkRef`]). At least [`MIN_RECORD_BYTES`](super::MIN_RECORD_BYTES); the default,
    /// 900,000, fits Kafka's default `max.message.bytes` (1,048,588) with room for the record's
    /// key and headers. Every task of a connector uses the same value.
    pub max_record_bytes: u64,
}

impl SyncOptions {
    /// The least `retention.ms` of the sync topic for these options:
    /// [`MIN_RETENTION_REFRESHES`] × `state_refresh_interval`
    /// (or an infinite retention).
    ///
    /// # Examples
    /// ```
    /// use partkit::sync::SyncOptions;
    /// assert_eq!(SyncOptions::default().min_retention(), 1_200_000);
    /// ```
    pub fn min_retention(&self) -> u64 {
        self.state_refresh_interval
            .saturating_mul(MIN_RETENTION_REFRESHES)
    }
}

impl Default for SyncOptions {
    fn default() -> Self {
        SyncOptions {
            rebalance_timeout: 120_000,
            epoch_ack_timeout: 30_000,
            removal_delay: 2 * 3_600_000,
            tombstone_ttl: 24 * 3_600_000,
            state_refresh_interval: 300_000,
            max_record_bytes: 900_000,
        }
    }
}
