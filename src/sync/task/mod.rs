//! The `SyncTask` state machine, split by the state each part owns: `validate` (what it is
//! given), `log` (what it reads of other tasks), `epoch` (which epoch applies and how), `leader`
//! (computing a new epoch), `settle` (the own partitions), `timer` (every deadline, and the
//! re-publications of the epoch it times: resends and checkpoints), `input` (the three inputs,
//! `on_rebalance`, `on_message` and `tick`, and what frames every input).

use std::collections::{BTreeMap, BTreeSet, VecDeque};

// (tokens are hashed often: FxHash is several times faster than SipHash on them, and its
// fixed seed keeps every run alike; no output depends on the iteration order of a hash map)
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::assign::{compute_epoch, rendezvous};
use super::error::{malformed, ErrorKind, SyncError};
use super::types::*;

mod chunk;
mod close;
mod delta;
mod epoch;
mod input;
mod leader;
mod log;
mod settle;
mod timer;
mod validate;

pub(crate) use chunk::join as join_chunk_states;
pub(crate) use chunk::{
    join_owned as join_chunk_states_owned, same_message as same_chunked_message, ChunkedState,
};
pub use chunk::{MAX_CHUNKS, MIN_RECORD_BYTES};
use log::{absorb_into, member_owners, MAX_DEPARTED};
use timer::{removal_due, RemovalBlockers, Timer};
use validate::invalid_partition;
pub use validate::MAX_SAFE_INTEGER;

/// The newest epoch a task has applied.
#[derive(Debug, Clone, PartialEq, Eq)]
struct EpochInfo {
    id: String,
    generation: u64,
    base: String,
    /// Author and attempt, when known (not for an epoch applied from a re-publication).
    leader: String,
    attempt: u32,
}

/// The latest rebalance a task was told about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct RebalanceInfo {
    generation: u64,
    leader: bool,
}

/// The latest `RebalanceAnswer` read from a task.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Answer {
    generation: u64,
    base: String,
}

/// A leader's rebalance that has no epoch in force yet.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Pending {
    generation: u64,
    members: Vec<String>,
    since: u64,
    /// Id of the NewEpoch published and not yet read back.
    awaiting: Option<String>,
    /// That NewEpoch, re-published as is if it is not read back in time.
    published: Option<(SyncMessage, u64)>,
    republished: u32,
    attempt: u32,
}

/// The leader's bookkeeping for the epoch it published and applied.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Lead {
    members: Vec<String>,
    acked: BTreeSet<String>,
    last_publish: u64,
    resends: u32,
}

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
    own: TaskState,
    cache: BTreeMap<String, TaskState>,
    epoch: Option<EpochInfo>,
    members: BTreeSet<String>,
    in_epoch: bool,
    rebalance: Option<RebalanceInfo>,
    answers: BTreeMap<String, Answer>,
    pending: Option<Pending>,
    lead: Option<Lead>,
    behind: bool,
    /// Newest state per (epoch, task) read from epochs not applied yet (a task that missed a
    /// NewEpoch replays them once it gets the epoch; bounded by epochs × tasks). With no whole
    /// state of the task read in that epoch, only the changes read: what they list, and what they
    /// dropped.
    future: BTreeMap<(String, String), (u64, TaskState, Option<Delta>)>,
    dirty: bool,
    resent_for: BTreeSet<(String, u64)>,
    /// Tasks whose cached state is their own word (read from their message), not a leader's
    /// snapshot entry.
    own_words: BTreeSet<String>,
    /// This task's shares (token, assignee) as every other reader holds them: those of its
    /// entry in the epoch in force, then as its own records of that epoch read back left them;
    /// `own_word_read` once one was read (only then are they its own word to the others, see
    /// `own_words`). A share it made and has not read back is not in a view the others had
    /// before an epoch it reads now, so it claims nothing there (see `keep_claims`).
    own_shares_read: HashMap<String, String>,
    own_word_read: bool,
    /// Ids of the epochs this task applied (the last few).
    history: VecDeque<String>,
    /// Messages this task has published (the last `messageSeq` it stamped).
    seq: u64,
    /// The highest `messageSeq` read from each sender (members of the epoch in force and
    /// senders read since).
    heard: BTreeMap<String, u64>,
    /// Own messages read back (the highest own `messageSeq` read, or a count where the
    /// transport dropped it).
    own_read: u64,
    /// NewEpoch ids read (applied or not) of generations above the epoch in force.
    read_epochs: BTreeSet<(u64, String)>,
    /// Generations above the epoch in force this task was told of as a member, not the leader
    /// (newest [`MAX_DEPARTED`] kept): a lone leader that read no NewEpoch of one of them may
    /// have missed it.
    joined: BTreeSet<u64>,
    /// Of those, the forks: built on an epoch this task applied before the one in force (their
    /// leader missed an epoch; every task that did not rejects them). Checkpoints name them.
    forks: BTreeSet<(u64, String)>,
    /// A checkpoint fell due while an own record other than a `Regular` one (an epoch, an
    /// answer, a checkpoint) was not read back yet: it goes out once it is.
    checkpoint_waiting: bool,
    /// The `messageSeq` of the newest own record other than a `Regular` one (see
    /// `checkpoint_waits`).
    last_not_regular: u64,
    /// Whether the last checkpoint this task published went out while own `Regular` records
    /// were not read back yet: it cannot be clean (they land between the record it names and
    /// itself), and is not retried for that (see `on_message`).
    checkpoint_over_own: bool,
    /// Whether the task was told to stop cleanly, and whether its final checkpoint went out.
    closing: close::Closing,
    /// Members known to have applied the epoch in force (their messages of it were read). A
    /// task starts what is new to it only once every member has.
    acked: BTreeSet<String>,
    /// Why this task fenced itself, once it has.
    fenced: Option<String>,
    /// Since when this task has been behind (read messages of an epoch it could not apply).
    behind_since: Option<u64>,
    /// The last record read (its sender and `messageSeq`): what a checkpoint published now is
    /// computed after.
    last_read: Option<CheckpointRef>,
    /// When this task, the leader of the epoch in force, next publishes a checkpoint of it.
    refresh_at: Option<u64>,
    /// When this task re-publishes the epoch in force for a task that missed it, unless it reads
    /// a re-publication of it first (see `want_resend`).
    resend_at: Option<u64>,
    /// When the last clean checkpoint this task read (by any author) was published (its
    /// `messageTimestamp`, or when it was read if earlier): a new epoch's leader publishes the
    /// next one `stateRefreshInterval` after it, however often epochs change, and a task that
    /// started at an old checkpoint does not wait a whole interval more.
    checkpoint_seen: Option<u64>,
    /// Tasks that were members of an epoch this task applied and are not any more (they left,
    /// died or fenced themselves: they run nothing), oldest first, bounded.
    departed: VecDeque<String>,
    /// Messages read chunk by chunk, per sender, not complete yet.
    partials: BTreeMap<String, chunk::Partial>,
    /// What this task last published of its own state (its next Regular message carries the
    /// change from it).
    sent: Option<delta::Sent>,
    /// Whether an own partition or share was dropped (or the lists rebuilt) since the last
    /// publication: otherwise the own lists are what was published, changed in place and
    /// extended, and a change is found without comparing tokens.
    reshaped: bool,
    /// The own partition last started or finished (callers start and finish partitions mostly in
    /// the order they were scheduled: `own_index` looks next to it first).
    last_index: usize,
    /// What changed in the own partitions, and where the waiting and done ones are (see
    /// `settle::Marks`).
    marks: settle::Marks,
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
        if opts.rebalance_timeout == 0
            || opts.epoch_ack_timeout == 0
            || opts.state_refresh_interval == 0
        {
            return Err(SyncError::new(
                ErrorKind::InvalidOptions,
                "invalid options: rebalanceTimeout, epochAckTimeout and stateRefreshInterval must be positive",
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
            own: TaskState::empty(task_id),
            cache: BTreeMap::new(),
            epoch: None,
            members: BTreeSet::new(),
            in_epoch: false,
            rebalance: None,
            answers: BTreeMap::new(),
            pending: None,
            lead: None,
            behind: false,
            future: BTreeMap::new(),
            dirty: false,
            resent_for: BTreeSet::new(),
            own_words: BTreeSet::new(),
            own_shares_read: HashMap::default(),
            own_word_read: false,
            history: VecDeque::new(),
            seq: 0,
            heard: BTreeMap::new(),
            own_read: 0,
            read_epochs: BTreeSet::new(),
            joined: BTreeSet::new(),
            forks: BTreeSet::new(),
            checkpoint_waiting: false,
            last_not_regular: 0,
            checkpoint_over_own: false,
            closing: close::Closing::Open,
            acked: BTreeSet::new(),
            fenced: None,
            behind_since: None,
            last_read: None,
            refresh_at: None,
            resend_at: None,
            checkpoint_seen: None,
            departed: VecDeque::new(),
            partials: BTreeMap::new(),
            sent: None,
            reshaped: false,
            last_index: 0,
            marks: settle::Marks::default(),
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
        &self.own.data.partitions
    }

    /// Partitions this task hands to others (its `share.partitions`).
    pub fn shared_partitions(&self) -> &[SharedPartition] {
        &self.own.share.partitions
    }

    /// This task's own state as it would publish it now.
    pub fn own_state(&self) -> &TaskState {
        &self.own
    }

    /// Every task state this task knows, its own included, ordered by task id.
    pub fn known_tasks(&self) -> Vec<TaskState> {
        let mut v: Vec<TaskState> = self.cache.values().cloned().collect();
        v.push(self.own.clone());
        v.sort_by(|a, b| a.task_id.cmp(&b.task_id));
        v
    }

    /// Id of the epoch in force for this task (`None` before the first one).
    pub fn epoch(&self) -> Option<&str> {
        self.epoch.as_ref().map(|e| e.id.as_str())
    }

    /// Generation of the epoch in force (0 before the first one).
    pub fn epoch_generation(&self) -> u64 {
        self.epoch.as_ref().map_or(0, |e| e.generation)
    }

    /// Members of the epoch in force.
    pub fn epoch_members(&self) -> Vec<String> {
        self.members.iter().cloned().collect()
    }

    /// Whether this task is a member of the epoch in force.
    pub fn in_epoch(&self) -> bool {
        self.in_epoch
    }

    /// Whether every member of the epoch in force is known to have applied it (its ack, or any
    /// message of the epoch, was read). Until then the task starts nothing the epoch gave it:
    /// what it owns is a claim, not yet work (see "Starting only what every member applied" in
    /// the module docs).
    pub fn epoch_confirmed(&self) -> bool {
        self.in_epoch && self.members.iter().all(|m| self.acked.contains(m))
    }

    /// Whether the latest rebalance made this task the leader.
    pub fn is_leader(&self) -> bool {
        self.rebalance.is_some_and(|r| r.leader)
    }

    /// Whether a rebalance is in progress for this task (no epoch of its generation yet).
    pub fn rebalancing(&self) -> bool {
        self.rebalance
            .is_some_and(|r| r.generation > self.epoch_generation())
    }

    /// Whether this task may share partitions now: a member of the epoch in force, no rebalance
    /// in progress.
    pub fn sharing_enabled(&self) -> bool {
        self.in_epoch && !self.rebalancing()
    }

    /// Whether this task has read messages of an epoch newer than the one it applied (it missed a
    /// NewEpoch; the epoch's leader re-publishes it).
    pub fn is_behind(&self) -> bool {
        self.behind
    }

    /// Why this task fenced itself (it read the sync log with a hole), if it did. A fenced task
    /// does nothing more: every input returns an empty output.
    pub fn fenced(&self) -> Option<&str> {
        self.fenced.as_deref()
    }

    /// Members the leader still waits for (empty unless this task is a leader collecting answers).
    pub fn waiting_for(&self) -> Vec<String> {
        let Some(p) = &self.pending else {
            return Vec::new();
        };
        let cur = self.lead_base();
        p.members
            .iter()
            .filter(|m| {
                !self
                    .answers
                    .get(*m)
                    .is_some_and(|a| a.generation >= p.generation && a.base == cur)
            })
            .cloned()
            .collect()
    }

    /// Load of a task in this task's view: owned partitions not Finished/Removed + shares
    /// addressed to it.
    pub fn load_of(&self, task_id: &str) -> usize {
        let owned = if task_id == self.id {
            self.own.owned_load()
        } else {
            self.cache.get(task_id).map_or(0, |s| s.owned_load())
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
        self.epoch.as_ref().map_or(String::new(), |e| e.id.clone())
    }

    fn own_index(&mut self, token: &str) -> Result<usize, SyncError> {
        let parts = &self.own.data.partitions;
        let at = |i: usize| parts.get(i).is_some_and(|p| p.token == token);
        let hinted = [self.last_index + 1, self.last_index]
            .into_iter()
            .find(|&i| at(i));
        // (out of order: by the index of the own tokens, see `settle::Marks`)
        let found = hinted.or_else(|| {
            if self.reshaped {
                self.marks.forget();
            }
            self.marks.position(parts, token)
        });
        found.ok_or_else(|| {
            SyncError::new(
                ErrorKind::UnknownPartition,
                format!("unknown partition: {token} is not owned by {}", self.id),
            )
        })
    }

    fn bad_transition(&self, token: &str, s: PartitionStatus, what: &str) -> SyncError {
        SyncError::new(
            ErrorKind::InvalidTransition,
            format!("invalid transition: {token} is {s:?} and cannot be {what}"),
        )
    }

    fn all_states(&self) -> impl Iterator<Item = &TaskState> {
        std::iter::once(&self.own).chain(self.cache.values())
    }

    /// The tokens of the partitions this task owns (its own `data`, shares left out).
    fn own_data_tokens(&self) -> HashSet<String> {
        self.own
            .data
            .partitions
            .iter()
            .map(|p| p.token.clone())
            .collect()
    }

    /// The tokens of this task's own shares among `tokens` (partitions some state owns: the
    /// shares they resolve); empty without looking at `tokens` when it shares nothing.
    fn own_shares_among<'a>(&self, tokens: impl Iterator<Item = &'a str>) -> HashSet<String> {
        let shares = &self.own.share.partitions;
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
        self.own.state_version += 1;
        self.own.state_timestamp = self.now;
        let epoch = self.cur_id();
        let max = self.opts.max_record_bytes;
        // (`change` brings `sent` to the own state: whichever goes out, the change or the whole)
        let change = match (&mut self.sent, kind, &self.epoch) {
            (Some(sent), MessageType::Regular, Some(_)) if sent.is_of(&epoch) => {
                Some(sent.change(&self.own, self.reshaped, &self.marks))
                    .filter(|c| c.worth(&self.own, max))
            }
            _ => None,
        };
        let (state, delta) = match change {
            Some(c) => {
                let st = TaskState {
                    task_id: self.id.clone(),
                    state_timestamp: self.own.state_timestamp,
                    state_version: self.own.state_version,
                    data: TaskData { partitions: c.data },
                    share: TaskShare {
                        partitions: c.share,
                    },
                };
                (st, Some(c.delta))
            }
            None => {
                self.sent = Some(delta::Sent::whole(&epoch, &self.own));
                (self.own.clone(), None)
            }
        };
        if self.reshaped {
            self.marks.forget();
        }
        self.reshaped = false;
        self.marks.published();
        out.publish.push(SyncMessage {
            sync_epoch: epoch,
            task_id: self.id.clone(),
            message_timestamp: self.now,
            kind,
            connector_state: vec![state],
            epoch_generation: self.epoch_generation(),
            base_epoch: None,
            rebalance_generation: match kind {
                MessageType::RebalanceAnswer => self.rebalance.map(|r| r.generation),
                _ => None,
            },
            resend: false,
            epoch_attempt: 0,
            message_seq: None,
            checkpoint: None,
            departed: Vec::new(),
            chunk: None,
            delta,
            rejected: Vec::new(),
        });
        self.dirty = false;
    }

    /// Common tail of every input: settle the own state, lead, publish changes.
    fn finish(&mut self, out: &mut SyncOutput) {
        if self.checkpoint_waiting && !self.checkpoint_waits() {
            self.checkpoint(out);
        }
        self.settle(out);
        self.maybe_lead(out);
        if self.dirty {
            self.publish_own(MessageType::Regular, out);
        }
        self.final_checkpoint(out);
    }
}
