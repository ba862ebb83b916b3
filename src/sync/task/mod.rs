//! The `SyncTask` state machine, split by the state each part owns: `validate` (what it is
//! given), `log` (what it reads of other tasks), `epoch` (which epoch applies and how; `claims`,
//! what the members claimed before it), `leader` (computing a new epoch), `settle` (the own
//! partitions), `republish` (the re-publications of the epoch in force: resends and
//! checkpoints), `deadline` (the timer table: every deadline, derived from the state it guards),
//! `chunking` (messages in chunks), `close` (a clean stop), `input`
//! (every other input: `on_rebalance`, `on_message`, `add_partitions`, `partition_started`,
//! `partition_finished`, `tick`, `fence`, and what frames every input; the views and
//! `poll_timeout` are here).
//! Each part's state is a type of its own in a file that knows nothing of `SyncTask` (`own`,
//! `cursor`, `leading`, `view`, `refresh`, `finishes`, `timer`, `chunk`, `delta`), so the parts' steps stand above the
//! task and the state below it. A state type keeps its own invariants: the fields they depend on
//! are private to it and change only through its methods (only `Own`'s methods change the own
//! lists, and whatever drops or reorders them notes it), while plain lookups stay readable.

// (tokens are hashed often: FxHash is several times faster than SipHash on them, and its
// fixed seed keeps every run alike; no output depends on the iteration order of a hash map)
use rustc_hash::FxHashSet as HashSet;

use super::error::{ErrorKind, SyncError};
use super::types::*;
use crate::quote::cut;

mod chunk;
mod chunking;
mod claims;
mod close;
mod cursor;
mod deadline;
mod delta;
mod epoch;
mod finishes;
mod input;
mod leader;
mod leading;
mod limits;
mod log;
mod own;
mod refresh;
mod republish;
mod settle;
mod timer;
mod validate;
mod view;

pub(crate) use chunk::join as join_chunk_states;
pub(crate) use chunk::{
    join_owned as join_chunk_states_owned, same_message as same_chunked_message, ChunkedState,
};
pub use limits::{MAX_CHUNKS, MAX_SAFE_INTEGER, MIN_RECORD_BYTES};

/// One connector task's side of the leader/epoch/partition-sharing protocol, as a sans-IO
/// state machine.
///
/// Methods come in three kinds, after quinn-proto:
/// - **inputs** (`on_rebalance`, `on_message`, `add_partitions`, `partition_started`,
///   `partition_finished`, `tick`): each takes the caller's clock `now` and returns a
///   [`SyncOutput`]: messages to append to the sync topic, partitions to start and to stop.
///   A rejected input returns a [`SyncError`] and leaves the task exactly as it was;
/// - **views** (`owned_partitions`, `known_tasks`, `epoch`, `is_leader`, ...);
/// - **`poll_timeout`**: the earliest `now` at which `tick` has something to do.
///
/// The task reads no clock, draws no random number and does no I/O. Everything read from the
/// sync topic, the task's own messages included, must be fed to `on_message` in topic order.
///
/// # Examples
/// ```
/// use partkit::sync::{PartitionSpec, RebalanceEvent, SyncTask};
/// let mut t = SyncTask::new("t1").unwrap();
/// let ev = RebalanceEvent { generation: 1, leader: true, members: Some(vec!["t1".into()]) };
/// let mut log = t.on_rebalance(&ev, 0).unwrap().publish;
/// // feed the topic back, own messages included, until nothing new is published
/// let mut i = 0;
/// while i < log.len() {
///     let out = t.on_message(&log[i].clone(), 1).unwrap();
///     log.extend(out.publish);
///     i += 1;
/// }
/// assert_eq!(t.epoch(), Some("1-t1"));
/// let out = t.add_partitions(&[PartitionSpec::new("p0", &[])], 2).unwrap();
/// assert_eq!(out.start, vec!["p0".to_string()]);
/// ```
#[derive(Debug, Clone)]
pub struct SyncTask {
    id: String,
    opts: SyncOptions,
    now: u64,
    /// Why this task fenced itself, once it has.
    fenced: Option<String>,
    /// The own partitions and shares, and what is known of where they changed (see `own`).
    own: own::Own,
    /// Where this task is in the sync log: its own counter, the senders' counters, the last
    /// record read, messages read in chunks (see `cursor`).
    cursor: cursor::Cursor,
    /// Rebalances and the leadership of the epochs this task computes (see `leader`).
    leading: leading::Leading,
    /// The epoch in force and the view of the other tasks under it (see `view`).
    view: view::View,
    /// The re-publications of the epoch in force: checkpoints and resends (see `timer`).
    refresh: refresh::Refresh,
    /// Every finish this task has read or reported, which it never starts again (see
    /// `finishes`).
    finishes: finishes::Finishes,
    /// `removal_deadline`, once computed since the last input (it walks the whole view, and a
    /// driver asks `poll_timeout` between inputs as often as it likes): every input clears it.
    removal_at: Memo,
}

/// A value derived from a task's state between two inputs, kept once computed (not part of the
/// state: `Debug` leaves it out).
#[derive(Clone, Default)]
struct Memo(std::cell::Cell<Option<Option<u64>>>);

impl Memo {
    fn get(&self) -> Option<Option<u64>> {
        self.0.get()
    }

    fn set(&self, v: Option<Option<u64>>) {
        self.0.set(v);
    }
}

impl std::fmt::Debug for Memo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("_")
    }
}

impl SyncTask {
    /// A task with default [`SyncOptions`].
    ///
    /// # Errors
    /// `SYNC_INVALID_TASK_ID` if `task_id` is empty.
    ///
    /// # Examples
    /// ```
    /// let t = partkit::sync::SyncTask::new("t1").unwrap();
    /// assert_eq!(t.task_id(), "t1");
    /// ```
    pub fn new(task_id: &str) -> Result<Self, SyncError> {
        Self::with_options(task_id, SyncOptions::default())
    }

    /// A task with explicit options.
    ///
    /// # Errors
    /// `SYNC_INVALID_TASK_ID` if `task_id` is empty; `SYNC_INVALID_OPTIONS` if a timeout is 0
    /// or `maxRecordBytes` is below [`MIN_RECORD_BYTES`].
    ///
    /// # Examples
    /// ```
    /// use partkit::sync::{SyncOptions, SyncTask};
    /// let opts = SyncOptions { rebalance_timeout: 0, ..SyncOptions::default() };
    /// assert_eq!(SyncTask::with_options("t1", opts).unwrap_err().code(), "SYNC_INVALID_OPTIONS");
    /// ```
    pub fn with_options(task_id: &str, opts: SyncOptions) -> Result<Self, SyncError> {
        if task_id.is_empty() {
            return Err(SyncError::new(
                ErrorKind::InvalidTaskId,
                "invalid task id: must not be empty",
            ));
        }
        let zero = [
            ("rebalanceTimeout", opts.rebalance_timeout),
            ("epochAckTimeout", opts.epoch_ack_timeout),
            ("stateRefreshInterval", opts.state_refresh_interval),
        ]
        .into_iter()
        .find(|(_, v)| *v == 0);
        if let Some((name, _)) = zero {
            return Err(SyncError::new(
                ErrorKind::InvalidOptions,
                format!("invalid options: {name} must be positive, got 0"),
            ));
        }
        if opts.max_record_bytes < MIN_RECORD_BYTES || opts.max_record_bytes > MAX_SAFE_INTEGER {
            return Err(SyncError::new(
                ErrorKind::InvalidOptions,
                format!("invalid options: maxRecordBytes must be at least {MIN_RECORD_BYTES}"),
            ));
        }
        Ok(SyncTask {
            id: task_id.to_string(),
            opts,
            now: 0,
            fenced: None,
            own: own::Own::new(task_id),
            cursor: cursor::Cursor::default(),
            leading: leading::Leading::default(),
            view: view::View::default(),
            refresh: refresh::Refresh::default(),
            finishes: finishes::Finishes::default(),
            removal_at: Memo::default(),
        })
    }

    /// This task's id.
    pub fn task_id(&self) -> &str {
        &self.id
    }

    /// The options in force.
    pub fn options(&self) -> &SyncOptions {
        &self.opts
    }

    /// Partitions this task owns (its `data.partitions`), tombstones included.
    pub fn owned_partitions(&self) -> &[PartitionState] {
        self.own.partitions()
    }

    /// Partitions this task hands to others (its `share.partitions`).
    pub fn shared_partitions(&self) -> &[SharedPartition] {
        self.own.shares()
    }

    /// This task's own state as it would publish it now.
    pub fn own_state(&self) -> &TaskState {
        self.own.state()
    }

    /// Every task state this task knows, its own included, ordered by task id.
    pub fn known_tasks(&self) -> Vec<TaskState> {
        let mut v: Vec<&TaskState> = self.view.cache.values().collect();
        v.push(self.own.state());
        sort_by_task_id(&mut v);
        v.into_iter().cloned().collect()
    }

    /// Id of the epoch in force for this task (`None` before the first one).
    pub fn epoch(&self) -> Option<&str> {
        self.view.epoch().map(|e| e.id.as_str())
    }

    /// Generation of the epoch in force (0 before the first one).
    pub fn epoch_generation(&self) -> u64 {
        self.view.epoch().map_or(0, |e| e.generation)
    }

    /// Members of the epoch in force.
    pub fn epoch_members(&self) -> Vec<String> {
        self.view.members().iter().cloned().collect()
    }

    /// Whether this task is a member of the epoch in force.
    pub fn in_epoch(&self) -> bool {
        self.view.in_epoch()
    }

    /// Whether every member of the epoch in force is known to have applied it (its ack, or any
    /// message of the epoch, was read). Until then the task starts nothing the epoch gave it:
    /// what it owns is a claim, not yet work (see "Starting only what every member applied" in
    /// the module docs).
    pub fn epoch_confirmed(&self) -> bool {
        self.view.in_epoch()
            && self
                .view
                .members()
                .iter()
                .all(|m| self.view.acked().contains(m))
    }

    /// Whether the latest rebalance made this task the leader.
    pub fn is_leader(&self) -> bool {
        self.leading.rebalance().is_some_and(|r| r.leader)
    }

    /// Whether a rebalance is in progress for this task (no epoch of its generation yet).
    pub fn rebalancing(&self) -> bool {
        self.leading
            .rebalance()
            .is_some_and(|r| r.generation > self.epoch_generation())
    }

    /// Whether this task may share partitions now: a member of the epoch in force, no rebalance
    /// in progress.
    pub fn sharing_enabled(&self) -> bool {
        self.view.in_epoch() && !self.rebalancing()
    }

    /// Whether this task has read messages of an epoch newer than the one it applied (it missed a
    /// NewEpoch; the epoch's leader re-publishes it).
    pub fn is_behind(&self) -> bool {
        self.view.behind()
    }

    /// Why this task fenced itself (it read the sync log with a hole), if it did. A fenced task
    /// does nothing more: every input returns an empty output.
    pub fn fenced(&self) -> Option<&str> {
        self.fenced.as_deref()
    }

    /// Members the leader still waits for (empty unless this task is a leader collecting answers).
    pub fn waiting_for(&self) -> Vec<String> {
        let Some(p) = self.leading.pending() else {
            return Vec::new();
        };
        let cur = self.lead_base();
        p.members
            .iter()
            .filter(|m| !self.leading.answered(m, p.generation, &cur))
            .cloned()
            .collect()
    }

    /// Load of a task in this task's view: owned partitions not Finished/Removed + shares
    /// addressed to it.
    pub fn load_of(&self, task_id: &str) -> usize {
        let owned = if task_id == self.id {
            self.own.state().owned_load()
        } else {
            self.view.cache.get(task_id).map_or(0, |s| s.owned_load())
        };
        let shared = self
            .all_states()
            .flat_map(|s| s.share.partitions.iter())
            .filter(|sh| sh.assignee == task_id)
            .count();
        owned + shared
    }

    /// The earliest `now` at which [`tick`](Self::tick) has work (leader timeout, epoch
    /// re-publication, checkpoint, delayed removal), or `None`. Only deadlines with work count:
    /// after `tick(now)` returned, this is always later than `now` (work that waits for an input,
    /// such as a finished parent waiting for its child, sets no deadline), so a driver can sleep
    /// until it.
    pub fn poll_timeout(&self) -> Option<u64> {
        self.timers().into_iter().map(|(_, at)| at).min()
    }

    /// The task's clock never goes back (an earlier `now` counts as the latest one seen) and
    /// stays a JSON-safe integer.
    fn clock(&mut self, now: u64) {
        self.now = self.now.max(now.min(MAX_SAFE_INTEGER));
    }

    fn cur_id(&self) -> String {
        self.view.epoch().map_or(String::new(), |e| e.id.clone())
    }

    fn own_index(&mut self, token: &str) -> Result<usize, SyncError> {
        self.own.index(token).ok_or_else(|| {
            SyncError::new(
                ErrorKind::UnknownPartition,
                format!(
                    "unknown partition: {} is not owned by {}",
                    cut(token),
                    cut(&self.id)
                ),
            )
        })
    }

    fn bad_transition(&self, token: &str, s: PartitionStatus, what: &str) -> SyncError {
        SyncError::new(
            ErrorKind::InvalidTransition,
            format!(
                "invalid transition: {} is {s:?} and cannot be {what}",
                cut(token)
            ),
        )
    }

    fn all_states(&self) -> impl Iterator<Item = &TaskState> + Clone {
        std::iter::once(self.own.state()).chain(self.view.cache.values())
    }

    /// The tokens of the partitions this task owns (its own `data`, shares left out).
    fn own_data_tokens(&self) -> HashSet<String> {
        self.own
            .partitions()
            .iter()
            .map(|p| p.token.clone())
            .collect()
    }

    /// The tokens of this task's own shares among `tokens` (partitions some state owns: the
    /// shares they resolve); empty without looking at `tokens` when it shares nothing.
    fn own_shares_among<'a>(&self, tokens: impl Iterator<Item = &'a str>) -> HashSet<String> {
        let shares = self.own.shares();
        if shares.is_empty() {
            return HashSet::default();
        }
        let mine: HashSet<&str> = shares.iter().map(|s| s.token.as_str()).collect();
        tokens
            .filter(|t| mine.contains(t))
            .map(str::to_string)
            .collect()
    }

    fn all_tokens(&self) -> Vec<String> {
        let mut v = Vec::new();
        for s in self.all_states() {
            v.extend(s.data.partitions.iter().map(|p| p.token.clone()));
            v.extend(s.share.partitions.iter().map(|p| p.token.clone()));
        }
        v
    }

    /// Publishes the own state: a `Regular` message in the epoch of the previous one carries only
    /// what changed since (see `delta`); the others carry it whole.
    fn publish_own(&mut self, kind: MessageType, out: &mut SyncOutput) {
        let epoch = self.cur_id();
        let change = kind == MessageType::Regular && self.view.epoch().is_some();
        let (state, delta) = self
            .own
            .publish(self.now, &epoch, change, self.opts.max_record_bytes);
        out.publish.push(SyncMessage {
            epoch_generation: self.epoch_generation(),
            rebalance_generation: match kind {
                MessageType::RebalanceAnswer => self.leading.rebalance().map(|r| r.generation),
                _ => None,
            },
            delta,
            ..SyncMessage::new(kind, epoch, self.id.clone(), self.now, vec![state])
        });
    }

    /// Common tail of every input: settle the own state, lead, publish changes.
    fn finish(&mut self, out: &mut SyncOutput) {
        if self.refresh.waiting().is_some() && !self.checkpoint_waits() {
            self.checkpoint(out);
        }
        self.settle(out);
        self.maybe_lead(out);
        if self.own.is_dirty() {
            self.publish_own(MessageType::Regular, out);
        }
        self.final_checkpoint(out);
    }
}
