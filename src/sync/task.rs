//! The `SyncTask` state machine.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};

use super::assign::compute_epoch;
use super::error::{malformed, ErrorKind, SyncError};
use super::types::*;

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
    /// NewEpoch replays them once it gets the epoch; bounded by epochs × tasks).
    future: BTreeMap<(String, String), (u64, TaskState)>,
    dirty: bool,
    resent_for: BTreeSet<(String, u64)>,
    /// Tasks whose cached state is their own word (read from their message), not a leader's
    /// snapshot entry.
    own_words: BTreeSet<String>,
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
    /// Why this task fenced itself, once it has.
    fenced: Option<String>,
    /// Since when this task has been behind (read messages of an epoch it could not apply).
    behind_since: Option<u64>,
    /// The last record read (its sender and `messageSeq`): what a checkpoint published now is
    /// computed after.
    last_read: Option<CheckpointRef>,
    /// When this task, the leader of the epoch in force, next publishes a checkpoint of it.
    refresh_at: Option<u64>,
    /// When this task last read a clean checkpoint (by any author): a new epoch's leader
    /// publishes the next one `stateRefreshInterval` after it, however often epochs change.
    checkpoint_seen: Option<u64>,
    /// Tasks that were members of an epoch this task applied and are not any more (they left,
    /// died or fenced themselves: they run nothing), oldest first, bounded.
    departed: VecDeque<String>,
}

fn invalid_partition(why: impl std::fmt::Display) -> SyncError {
    SyncError::new(
        ErrorKind::InvalidPartition,
        format!("invalid partition: {why}"),
    )
}

/// Rendezvous (highest random weight) choice of a member for a token: the same on every task,
/// independent of which other tokens it knows.
fn rendezvous(token: &str, members: &[String]) -> String {
    fn fnv(parts: &[&[u8]]) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for part in parts {
            for b in part.iter().chain(std::iter::once(&0u8)) {
                h ^= u64::from(*b);
                h = h.wrapping_mul(0x0100_0000_01b3);
            }
        }
        h
    }
    members
        .iter()
        .max_by_key(|m| {
            (
                fnv(&[token.as_bytes(), m.as_bytes()]),
                std::cmp::Reverse((*m).clone()),
            )
        })
        .cloned()
        .unwrap_or_default()
}

/// Takes into `cache` what `state` (its task's own word, from an epoch other than the one the
/// cache is in) says that the cache does not: progress of its partitions, partitions it owns that
/// no state owns, shares of unknown tokens. Removes and moves nothing.
fn absorb_into(cache: &mut BTreeMap<String, TaskState>, own: &TaskState, state: &TaskState) {
    let cur_version = cache.get(&state.task_id).map(|c| c.state_version);
    if cur_version.is_some_and(|v| v >= state.state_version) {
        return;
    }
    let all = || std::iter::once(own).chain(cache.values());
    let known: HashSet<String> = all()
        .flat_map(|s| {
            s.data
                .partitions
                .iter()
                .map(|p| p.token.clone())
                .chain(s.share.partitions.iter().map(|p| p.token.clone()))
        })
        .collect();
    let owned: HashSet<String> = all()
        .flat_map(|s| s.data.partitions.iter().map(|p| p.token.clone()))
        .collect();
    let cur = cache
        .entry(state.task_id.clone())
        .or_insert_with(|| TaskState::empty(state.task_id.clone()));
    cur.state_version = state.state_version;
    for p in &state.data.partitions {
        if let Some(q) = cur.data.partitions.iter_mut().find(|q| q.token == p.token) {
            if p.state > q.state {
                q.state = p.state;
                q.finished_timestamp = p.finished_timestamp.or(q.finished_timestamp);
            }
        } else if !owned.contains(&p.token) {
            // unknown, or only shared so far: the sender owns it
            cur.data.partitions.push(p.clone());
        }
    }
    for sh in &state.share.partitions {
        if !known.contains(&sh.token) {
            cur.share.partitions.push(sh.clone());
        }
    }
}

/// Largest number the protocol carries: JSON numbers are exact integers only up to 2^53 - 1
/// (`Number.MAX_SAFE_INTEGER`), so a larger one is refused rather than silently rounded.
pub const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// How many departed task ids a task remembers (their late records are adopted, see
/// `SyncTask::adopt_departed`).
const MAX_DEPARTED: usize = 4096;

/// How many departed task ids a re-publication of an epoch carries (the latest ones).
const RESENT_DEPARTED: usize = 64;

/// A task behind for this many `rebalanceTimeout + epochAckTimeout` fences itself.
const STUCK_TIMEOUTS: u64 = 8;

fn safe(n: Option<u64>, what: &str) -> Result<(), SyncError> {
    match n {
        Some(v) if v > MAX_SAFE_INTEGER => Err(malformed(format!("{what} {v} is above 2^53-1"))),
        _ => Ok(()),
    }
}

/// The leader named in an epoch id `"<generation>-<leader>"` or `"<generation>-<leader>-<attempt>"`.
fn epoch_leader(id: &str, generation: u64, attempt: u32) -> String {
    let rest = id.strip_prefix(&format!("{generation}-")).unwrap_or("");
    let rest = if attempt > 0 {
        rest.strip_suffix(&format!("-{attempt}")).unwrap_or("")
    } else {
        rest
    };
    rest.to_string()
}

fn validate_state(s: &TaskState) -> Result<(), SyncError> {
    if s.task_id.is_empty() {
        return Err(malformed("a state has an empty taskID"));
    }
    safe(Some(s.state_timestamp), "stateTimestamp")?;
    safe(Some(s.state_version), "stateVersion")?;
    for p in &s.data.partitions {
        safe(p.start_timestamp, "startTimestamp")?;
        safe(p.end_timestamp, "endTimestamp")?;
        safe(p.finished_timestamp, "finishedTimestamp")?;
    }
    for p in &s.share.partitions {
        safe(p.start_timestamp, "startTimestamp")?;
        safe(p.end_timestamp, "endTimestamp")?;
        safe(p.finished_timestamp, "finishedTimestamp")?;
    }
    let mut seen = HashSet::new();
    for p in &s.data.partitions {
        if p.token.is_empty() {
            return Err(malformed(format!(
                "state of {} has a partition with an empty token",
                s.task_id
            )));
        }
        if !seen.insert(p.token.as_str()) {
            return Err(malformed(format!(
                "state of {} owns {} twice",
                s.task_id, p.token
            )));
        }
    }
    let mut seen = HashSet::new();
    for p in &s.share.partitions {
        if p.token.is_empty() || p.assignee.is_empty() {
            return Err(malformed(format!(
                "state of {} has a share with an empty token or assignee",
                s.task_id
            )));
        }
        if !seen.insert(p.token.as_str()) {
            return Err(malformed(format!(
                "state of {} shares {} twice",
                s.task_id, p.token
            )));
        }
    }
    Ok(())
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
    /// `SYNC_INVALID_TASK_ID` if `task_id` is empty; `SYNC_INVALID_OPTIONS` if a timeout is 0.
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
            history: VecDeque::new(),
            seq: 0,
            heard: BTreeMap::new(),
            own_read: 0,
            read_epochs: BTreeSet::new(),
            fenced: None,
            behind_since: None,
            last_read: None,
            refresh_at: None,
            checkpoint_seen: None,
            departed: VecDeque::new(),
        })
    }

    // ----------------------------------------------------------------------------- views

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

    // ----------------------------------------------------------------------------- inputs

    /// A group rebalance: answer with the own state; a leader starts collecting answers.
    ///
    /// Stale or repeated generations are ignored. Sharing stays disabled until an epoch of this
    /// generation (or newer) is applied.
    ///
    /// # Errors
    /// `SYNC_INVALID_REBALANCE` if the generation is 0, or the event says `leader` without a
    /// member list that contains this task.
    pub fn on_rebalance(
        &mut self,
        event: &RebalanceEvent,
        now: u64,
    ) -> Result<SyncOutput, SyncError> {
        self.input(|t| t.on_rebalance_inner(event, now))
    }

    fn on_rebalance_inner(
        &mut self,
        event: &RebalanceEvent,
        now: u64,
    ) -> Result<SyncOutput, SyncError> {
        let bad = |why: &str| {
            SyncError::new(
                ErrorKind::InvalidRebalance,
                format!("invalid rebalance: {why}"),
            )
        };
        if event.generation == 0 || event.generation > MAX_SAFE_INTEGER {
            return Err(bad("generation must be in 1..=2^53-1"));
        }
        let mut members: Vec<String> = Vec::new();
        if event.leader {
            let Some(m) = &event.members else {
                return Err(bad("a leader needs the member list"));
            };
            if m.iter().any(|x| x.is_empty()) {
                return Err(bad("a member id is empty"));
            }
            members = m.clone();
            members.sort();
            members.dedup();
            if !members.contains(&self.id) {
                return Err(bad("the member list does not contain the leader"));
            }
        }
        self.clock(now);
        let mut out = SyncOutput::default();
        if self
            .rebalance
            .is_some_and(|r| r.generation >= event.generation)
        {
            return Ok(out);
        }
        self.rebalance = Some(RebalanceInfo {
            generation: event.generation,
            leader: event.leader,
        });
        if event.generation <= self.epoch_generation() {
            // an epoch for this generation is already in force
            self.finish(&mut out);
            return Ok(out);
        }
        self.pending = if event.leader {
            Some(Pending {
                generation: event.generation,
                members,
                since: self.now,
                awaiting: None,
                published: None,
                republished: 0,
                attempt: 0,
            })
        } else {
            None
        };
        self.settle(&mut out);
        self.publish_own(MessageType::RebalanceAnswer, &mut out);
        self.maybe_lead(&mut out);
        Ok(out)
    }

    /// A message read from the sync topic (own messages included), in topic order.
    ///
    /// # Errors
    /// `SYNC_MALFORMED_MESSAGE` if the message is inconsistent (empty ids, a Regular or
    /// RebalanceAnswer without the sender's state, duplicate tokens, ...).
    pub fn on_message(&mut self, msg: &SyncMessage, now: u64) -> Result<SyncOutput, SyncError> {
        self.input(|t| t.on_message_inner(msg, now))
    }

    fn on_message_inner(&mut self, msg: &SyncMessage, now: u64) -> Result<SyncOutput, SyncError> {
        self.validate_message(msg)?;
        self.clock(now);
        let mut out = SyncOutput::default();
        if let Some(seq) = msg.message_seq {
            let last = self.heard.entry(msg.task_id.clone()).or_insert(seq);
            if seq > last.saturating_add(1) {
                let why = format!(
                    "missed messages {}..={} of {} in the sync log; its view may be wrong",
                    *last + 1,
                    seq - 1,
                    msg.task_id
                );
                self.fence_self(why, &mut out);
                return Ok(out);
            }
            *last = (*last).max(seq);
        }
        if msg.task_id == self.id {
            self.own_read = msg
                .message_seq
                .map_or(self.own_read + 1, |s| self.own_read.max(s));
        }
        if msg.checkpoint.is_some() {
            if msg.checkpoint == self.last_read {
                self.checkpoint_seen = Some(self.now);
                self.schedule_refresh();
            } else if msg.task_id == self.id {
                // another record landed between the one it was computed after and itself: no
                // reader can start at it, so publish another one soon
                let retry = self.now.saturating_add(
                    self.opts
                        .epoch_ack_timeout
                        .min(self.opts.state_refresh_interval),
                );
                if let Some(at) = &mut self.refresh_at {
                    *at = (*at).min(retry);
                }
            }
        }
        self.last_read = msg.message_seq.map(|seq| CheckpointRef {
            after_task_id: msg.task_id.clone(),
            after_seq: seq,
        });
        if msg.kind == MessageType::NewEpoch && msg.epoch_generation > self.epoch_generation() {
            self.read_epochs
                .insert((msg.epoch_generation, msg.sync_epoch.clone()));
        }
        match msg.kind {
            MessageType::NewEpoch => self.on_new_epoch(msg, &mut out),
            MessageType::Regular => self.on_regular(msg),
            MessageType::RebalanceAnswer => self.on_answer(msg, &mut out),
        }
        if msg.kind != MessageType::NewEpoch {
            self.take_finishes(Self::sender_state(msg), &mut out);
            self.adopt_departed(Self::sender_state(msg));
        }
        self.finish(&mut out);
        Ok(out)
    }

    /// Partitions found by this task: initial partitions, or children read from a parent it
    /// owns. Known tokens are ignored; a merge child (several parents) is created only by the
    /// owner of its smallest parent token. When sharing is enabled each new partition goes to the
    /// least-loaded member (ties: lowest load, then this task, then smallest id), through the
    /// share section if that is another task.
    ///
    /// # Errors
    /// `SYNC_INVALID_PARTITION` for an empty token or parent, a partition that is its own parent,
    /// or a token given twice.
    pub fn add_partitions(
        &mut self,
        specs: &[PartitionSpec],
        now: u64,
    ) -> Result<SyncOutput, SyncError> {
        self.input(|t| t.add_partitions_inner(specs, now))
    }

    fn add_partitions_inner(
        &mut self,
        specs: &[PartitionSpec],
        now: u64,
    ) -> Result<SyncOutput, SyncError> {
        let mut batch = HashSet::new();
        for s in specs {
            if s.token.is_empty() {
                return Err(invalid_partition("empty token"));
            }
            if s.parents.iter().any(|p| p.is_empty()) {
                return Err(invalid_partition(format!(
                    "{} has an empty parent token",
                    s.token
                )));
            }
            if s.parents.contains(&s.token) {
                return Err(invalid_partition(format!("{} is its own parent", s.token)));
            }
            if !batch.insert(s.token.as_str()) {
                return Err(invalid_partition(format!("{} given twice", s.token)));
            }
            if [s.start_timestamp, s.end_timestamp]
                .iter()
                .flatten()
                .any(|&t| t > MAX_SAFE_INTEGER)
            {
                return Err(invalid_partition(format!(
                    "{} has a timestamp above 2^53-1",
                    s.token
                )));
            }
        }
        self.clock(now);
        let mut known: HashSet<String> = self.all_tokens().into_iter().collect();
        let own_tokens = self.own_data_tokens();
        let sharing = self.sharing_enabled();
        let mut loads: BTreeMap<String, usize> = BTreeMap::new();
        if sharing {
            for m in &self.members {
                loads.insert(m.clone(), self.load_of(m));
            }
        }
        for s in specs {
            if known.contains(&s.token) {
                continue;
            }
            if s.parents.len() > 1 {
                let smallest = s.parents.iter().min().expect("len > 1");
                if !own_tokens.contains(smallest) {
                    continue; // the owner of the smallest parent creates it
                }
            }
            let mut p = PartitionState::created(s.token.clone(), s.parents.clone());
            p.start_timestamp = s.start_timestamp;
            p.end_timestamp = s.end_timestamp;
            let target = if sharing {
                loads
                    .iter()
                    .min_by_key(|(m, l)| (**l, *m != &self.id, (*m).clone()))
                    .map(|(m, _)| m.clone())
                    .unwrap_or_else(|| self.id.clone())
            } else {
                self.id.clone()
            };
            if target == self.id {
                self.own.data.partitions.push(p);
            } else {
                self.own.share.partitions.push(p.shared_to(target.clone()));
            }
            if let Some(l) = loads.get_mut(&target) {
                *l += 1;
            }
            known.insert(s.token.clone());
            self.dirty = true;
        }
        let mut out = SyncOutput::default();
        self.finish(&mut out);
        Ok(out)
    }

    /// The caller started reading a Scheduled partition.
    ///
    /// # Errors
    /// `SYNC_UNKNOWN_PARTITION` if this task does not own `token`; `SYNC_INVALID_TRANSITION` if
    /// it is not Scheduled (Running is accepted as a repeat).
    pub fn partition_started(&mut self, token: &str, now: u64) -> Result<SyncOutput, SyncError> {
        self.input(|t| t.partition_started_inner(token, now))
    }

    fn partition_started_inner(&mut self, token: &str, now: u64) -> Result<SyncOutput, SyncError> {
        let idx = self.own_index(token)?;
        match self.own.data.partitions[idx].state {
            PartitionStatus::Scheduled => {}
            PartitionStatus::Running => return Ok(SyncOutput::default()),
            s => return Err(self.bad_transition(token, s, "started")),
        }
        self.clock(now);
        self.own.data.partitions[idx].state = PartitionStatus::Running;
        self.dirty = true;
        let mut out = SyncOutput::default();
        self.finish(&mut out);
        Ok(out)
    }

    /// The caller finished reading a partition (its children were given to `add_partitions`
    /// before).
    ///
    /// # Errors
    /// `SYNC_UNKNOWN_PARTITION` if this task does not own `token`; `SYNC_INVALID_TRANSITION` if
    /// it is neither Scheduled nor Running (Finished is accepted as a repeat).
    pub fn partition_finished(&mut self, token: &str, now: u64) -> Result<SyncOutput, SyncError> {
        self.input(|t| t.partition_finished_inner(token, now))
    }

    fn partition_finished_inner(&mut self, token: &str, now: u64) -> Result<SyncOutput, SyncError> {
        let idx = self.own_index(token)?;
        match self.own.data.partitions[idx].state {
            PartitionStatus::Scheduled | PartitionStatus::Running => {}
            PartitionStatus::Finished => return Ok(SyncOutput::default()),
            s => return Err(self.bad_transition(token, s, "finished")),
        }
        self.clock(now);
        let p = &mut self.own.data.partitions[idx];
        p.state = PartitionStatus::Finished;
        p.finished_timestamp = Some(self.now);
        self.dirty = true;
        let mut out = SyncOutput::default();
        self.finish(&mut out);
        Ok(out)
    }

    /// The caller found a hole in the sync log it fed (e.g. Kafka offsets jumped: records
    /// deleted by retention before they were read): the task cannot know what it missed, so it
    /// stops everything and fences itself, as when it sees a sender's `messageSeq` jump. The
    /// output lists in `stop` every partition it ran and carries `fenced: reason`; every later
    /// input is a no-op. An empty reason reads "the sync log has a hole".
    pub fn fence(&mut self, reason: &str, now: u64) -> SyncOutput {
        if self.fenced.is_some() {
            return SyncOutput::default();
        }
        self.clock(now);
        let mut out = SyncOutput::default();
        let why = if reason.is_empty() {
            "the sync log has a hole"
        } else {
            reason
        };
        self.fence_self(why.to_string(), &mut out);
        self.seal(out)
    }

    /// Time passed: does the work of every deadline of [`poll_timeout`](Self::poll_timeout)
    /// that is due (leader timeout, epoch re-publication, checkpoint, delayed removal).
    pub fn tick(&mut self, now: u64) -> SyncOutput {
        self.input(|t| Ok(t.tick_inner(now))).unwrap_or_default()
    }

    fn tick_inner(&mut self, now: u64) -> SyncOutput {
        self.clock(now);
        let mut out = SyncOutput::default();
        let mut removal = false;
        for (timer, at) in self.timers() {
            if at > self.now {
                continue;
            }
            match timer {
                Timer::Stuck => {
                    let since = self.behind_since.unwrap_or(self.now);
                    let why = format!(
                        "stuck behind: epoch {} in force, newer epochs read for {} ms without one it can apply",
                        self.cur_id(),
                        self.now - since
                    );
                    self.fence_self(why, &mut out);
                    return out;
                }
                Timer::EpochAck => {
                    self.resend(&mut out);
                    if let Some(l) = &mut self.lead {
                        l.last_publish = self.now;
                        l.resends += 1;
                    }
                }
                Timer::Refresh => self.checkpoint(&mut out),
                // the leader's timeout is handled by `maybe_lead` in `finish`
                Timer::Rebalance => {}
                Timer::Removal => removal = true,
            }
        }
        self.settle_with(&mut out, removal);
        self.finish(&mut out);
        out
    }

    // ----------------------------------------------------------------------------- timers

    /// Every deadline that has work, one per kind (quinn-proto's timer table, derived from the
    /// state it guards so that it cannot drift from it).
    fn timers(&self) -> Vec<(Timer, u64)> {
        let mut v = Vec::new();
        if self.fenced.is_some() {
            return v;
        }
        if let Some(since) = self.behind_since {
            v.push((Timer::Stuck, since.saturating_add(self.stuck_after())));
        }
        if let Some(at) = self.rebalance_deadline() {
            v.push((Timer::Rebalance, at));
        }
        if let Some(l) = &self.lead {
            if l.members.iter().any(|m| !l.acked.contains(m)) {
                let wait = self
                    .opts
                    .epoch_ack_timeout
                    .saturating_mul(1u64 << l.resends.min(4));
                v.push((Timer::EpochAck, l.last_publish.saturating_add(wait)));
            }
        }
        if let Some(at) = self.refresh_at {
            v.push((Timer::Refresh, at));
        }
        if let Some(at) = self.removal_deadline() {
            v.push((Timer::Removal, at));
        }
        v
    }

    /// When a leader collecting answers publishes its epoch without waiting for more, or
    /// publishes again the epoch it has not read back (see `maybe_lead`).
    fn rebalance_deadline(&self) -> Option<u64> {
        let p = self.pending.as_ref()?;
        let timeout = self.opts.rebalance_timeout;
        if p.awaiting.is_some() {
            let (_, at) = p.published.as_ref()?;
            return Some(at.saturating_add(timeout.saturating_mul(1u64 << p.republished.min(4))));
        }
        if p.generation <= self.epoch_generation() || self.own_read < self.seq {
            // nothing to lead, or waiting to read its own messages back (an input)
            return None;
        }
        let wait = if self.missed().is_some() {
            timeout.saturating_mul(2)
        } else {
            timeout
        };
        Some(p.since.saturating_add(wait))
    }

    /// The earliest removal work on the own partitions that nothing blocks: a Finished partition
    /// no unfinished partition names as a parent, a tombstone nothing references any more. What
    /// blocks them changes only on an input, which computes this again.
    fn removal_deadline(&self) -> Option<u64> {
        let (delay, ttl) = (self.opts.removal_delay, self.opts.tombstone_ttl);
        let done: HashSet<&str> = self
            .own
            .data
            .partitions
            .iter()
            .filter(|p| p.state.is_done())
            .map(|p| p.token.as_str())
            .collect();
        if done.is_empty() {
            return None;
        }
        let blockers = self.removal_blockers(&done);
        self.own
            .data
            .partitions
            .iter()
            .filter(|p| blockers.allow(p))
            .filter_map(|p| removal_due(p, delay, ttl))
            .min()
    }

    /// The members of the epoch in force keep a complete state of it in the log: its leader
    /// publishes a checkpoint `stateRefreshInterval` after the last clean one it read (at once
    /// if it has read none), however often epochs change; the member `r` places after the
    /// leader (in id order, of `n`) steps in when no clean checkpoint came `r / n` intervals
    /// later (a leader that died or lags behind the log cannot publish a clean one), so that
    /// clean checkpoints are at most about two intervals apart while any member keeps up.
    fn schedule_refresh(&mut self) {
        let interval = self.opts.state_refresh_interval;
        let first = self.checkpoint_seen.map_or(self.now, |t| t.saturating_add(interval));
        self.refresh_at = self.refresh_delay().map(|d| first.saturating_add(d));
    }

    /// How much later than the leader this task steps in with a checkpoint: `r / n` intervals
    /// for the member `r` places after the leader among `n` members (0 for the leader); `None`
    /// if it is not a member of the epoch in force.
    fn refresh_delay(&self) -> Option<u64> {
        if !self.in_epoch {
            return None;
        }
        let leader = self.epoch.as_ref().map(|e| e.leader.as_str())?;
        let n = self.members.len() as u64;
        let me = self.members.iter().position(|m| *m == self.id)? as u64;
        let at = self.members.iter().position(|m| m == leader).unwrap_or(0) as u64;
        let r = (me + n - at) % n;
        Some(self.opts.state_refresh_interval.saturating_mul(r) / n.max(1))
    }

    /// The epoch's leader publishes the epoch in force whole again, as a checkpoint computed
    /// after the last record it read (see the module docs).
    fn checkpoint(&mut self, out: &mut SyncOutput) {
        let interval = self.opts.state_refresh_interval;
        self.refresh_at = self
            .refresh_delay()
            .map(|d| self.now.saturating_add(interval).saturating_add(d));
        let Some(after) = self.last_read.clone() else {
            return;
        };
        let at = out.publish.len();
        self.resend(out);
        if let Some(m) = out.publish.get_mut(at) {
            m.checkpoint = Some(after);
        }
    }

    // ----------------------------------------------------------------------------- internals

    /// Common frame of every input: a fenced task does nothing more; otherwise the input runs
    /// and its output is sealed.
    fn input(
        &mut self,
        run: impl FnOnce(&mut Self) -> Result<SyncOutput, SyncError>,
    ) -> Result<SyncOutput, SyncError> {
        if self.fenced.is_some() {
            return Ok(SyncOutput::default());
        }
        run(self).map(|out| self.seal(out))
    }

    /// Common end of every input: stamps the sender counter on everything it publishes, and
    /// notes since when the task is behind.
    fn seal(&mut self, mut out: SyncOutput) -> SyncOutput {
        if out.fenced.is_some() {
            // nothing a fenced task computed on the way may reach the topic or the connector
            out.publish.clear();
            out.start.clear();
        }
        // a checkpoint goes first: it is clean only if no record lands between the last one
        // its author read and itself (it reflects what the task publishes with it)
        if let Some(k) = out.publish.iter().position(|m| m.checkpoint.is_some()) {
            let c = out.publish.remove(k);
            out.publish.insert(0, c);
        }
        for m in &mut out.publish {
            self.seq += 1;
            m.message_seq = Some(self.seq);
        }
        self.behind_since = if self.behind {
            Some(self.behind_since.unwrap_or(self.now))
        } else {
            None
        };
        out
    }

    /// How long a task may stay behind before it fences itself: the resends that let a task
    /// catch up on an epoch it missed come within a few timeouts, so a task still behind after
    /// this holds a view no epoch will repair (it applied an epoch the others rejected, or lost
    /// one whose leader is gone).
    fn stuck_after(&self) -> u64 {
        self.opts
            .rebalance_timeout
            .saturating_add(self.opts.epoch_ack_timeout)
            .saturating_mul(STUCK_TIMEOUTS)
    }

    /// This task read the sync log with a hole (a NewEpoch may be in it): its view of epochs
    /// and owners can be wrong in ways no later message reveals, so it stops everything it runs
    /// and falls silent. Its partitions stay in its last published state, which the next epoch
    /// hands to live tasks once it has left the group.
    fn fence_self(&mut self, why: String, out: &mut SyncOutput) {
        for p in &self.own.data.partitions {
            if p.state.is_active() && !out.stop.contains(&p.token) {
                out.stop.push(p.token.clone());
            }
        }
        self.pending = None;
        self.lead = None;
        self.refresh_at = None;
        self.dirty = false;
        self.fenced = Some(why.clone());
        out.fenced = Some(why);
    }

    /// The task's clock never goes back (an earlier `now` counts as the latest one seen) and
    /// stays a JSON-safe integer.
    fn clock(&mut self, now: u64) {
        self.now = self.now.max(now.min(MAX_SAFE_INTEGER));
    }

    fn cur_id(&self) -> String {
        self.epoch.as_ref().map_or(String::new(), |e| e.id.clone())
    }

    /// The newest epoch this task has read messages of without applying it (it missed its
    /// NewEpoch), if any.
    fn missed(&self) -> Option<(u64, String)> {
        let cur = self.epoch_generation();
        self.future
            .iter()
            .filter(|(_, (g, _))| *g > cur)
            .map(|((e, _), (g, _))| (*g, e.clone()))
            .max()
    }

    /// The epoch a new epoch computed now builds on: the one applied, or the newest one missed
    /// (its members' own words are known from their messages).
    fn lead_base(&self) -> String {
        self.missed().map_or_else(|| self.cur_id(), |(_, e)| e)
    }

    fn own_index(&self, token: &str) -> Result<usize, SyncError> {
        self.own
            .data
            .partitions
            .iter()
            .position(|p| p.token == token)
            .ok_or_else(|| {
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

    fn all_tokens(&self) -> Vec<String> {
        let mut v = Vec::new();
        for s in self.all_states() {
            v.extend(s.data.partitions.iter().map(|p| p.token.clone()));
            v.extend(s.share.partitions.iter().map(|p| p.token.clone()));
        }
        v
    }

    fn validate_message(&self, msg: &SyncMessage) -> Result<(), SyncError> {
        if msg.task_id.is_empty() {
            return Err(malformed("empty taskID"));
        }
        safe(Some(msg.message_timestamp), "messageTimestamp")?;
        safe(Some(msg.epoch_generation), "epochGeneration")?;
        safe(msg.rebalance_generation, "rebalanceGeneration")?;
        safe(msg.message_seq, "messageSeq")?;
        match msg.kind {
            MessageType::Regular | MessageType::RebalanceAnswer => {
                let own: Vec<&TaskState> = msg
                    .connector_state
                    .iter()
                    .filter(|s| s.task_id == msg.task_id)
                    .collect();
                if own.len() != 1 {
                    return Err(malformed(format!(
                        "a {:?} message must carry exactly one state of its sender {}",
                        msg.kind, msg.task_id
                    )));
                }
                validate_state(own[0])?;
                if msg.kind == MessageType::RebalanceAnswer && msg.rebalance_generation.is_none() {
                    return Err(malformed("a RebalanceAnswer needs rebalanceGeneration"));
                }
            }
            MessageType::NewEpoch => {
                if msg.sync_epoch.is_empty() || msg.epoch_generation == 0 {
                    return Err(malformed(
                        "a NewEpoch needs a syncEpoch and a positive epochGeneration",
                    ));
                }
                if !msg.resend && !msg.connector_state.iter().any(|s| s.task_id == msg.task_id) {
                    return Err(malformed("a NewEpoch must carry the state of its leader"));
                }
                let mut ids = HashSet::new();
                for s in &msg.connector_state {
                    validate_state(s)?;
                    if !ids.insert(s.task_id.as_str()) {
                        return Err(malformed(format!("NewEpoch lists {} twice", s.task_id)));
                    }
                }
            }
        }
        Ok(())
    }

    fn merge(&mut self, state: &TaskState) {
        if state.task_id == self.id {
            return; // a task is the only author of its own state
        }
        match self.cache.get(&state.task_id) {
            Some(cur) if cur.state_version >= state.state_version => {}
            _ => {
                self.cache.insert(state.task_id.clone(), state.clone());
                self.own_words.insert(state.task_id.clone());
            }
        }
    }

    fn sender_state(msg: &SyncMessage) -> &TaskState {
        msg.connector_state
            .iter()
            .find(|s| s.task_id == msg.task_id)
            .expect("validated")
    }

    fn ack(&mut self, msg: &SyncMessage) {
        if let (Some(l), Some(e)) = (&mut self.lead, &self.epoch) {
            if msg.sync_epoch == e.id {
                l.acked.insert(msg.task_id.clone());
            }
        }
    }

    fn on_regular(&mut self, msg: &SyncMessage) {
        let cur = self.cur_id();
        if msg.sync_epoch != cur {
            if msg.epoch_generation > self.epoch_generation() {
                self.behind = true;
                self.defer(msg);
            } else {
                self.absorb(Self::sender_state(msg));
            }
            return;
        }
        self.merge(Self::sender_state(msg));
        self.ack(msg);
    }

    /// A state published in an older epoch must not replace the epoch's view of its sender (it
    /// lacks what the epoch gave it), but it is still the sender's own word about its own
    /// partitions: progress (e.g. Finished) and owned partitions unknown to the view are taken,
    /// nothing is removed or moved.
    fn absorb(&mut self, state: &TaskState) {
        if self.is_departed(&state.task_id) {
            return; // see adopt_departed
        }
        if state.task_id != self.id && self.cache.contains_key(&state.task_id) {
            absorb_into(&mut self.cache, &self.own, state);
        }
    }

    /// A task's own word that a partition is done counts wherever it is read, even from an older
    /// epoch: a partition this task owns and another task says it finished (it owned it before,
    /// e.g. it finished it while leaving the group, and the record landed after the next epoch
    /// gave it here) is finished, and stopped if it runs.
    fn take_finishes(&mut self, state: &TaskState, out: &mut SyncOutput) {
        if state.task_id == self.id {
            return;
        }
        let done: HashMap<&str, Option<u64>> = state
            .data
            .partitions
            .iter()
            .filter(|p| p.state.is_done())
            .map(|p| (p.token.as_str(), p.finished_timestamp))
            .collect();
        if done.is_empty() {
            return;
        }
        let now = self.now;
        for p in &mut self.own.data.partitions {
            if let (false, Some(f)) = (p.state.is_done(), done.get(p.token.as_str())) {
                if p.state.is_active() {
                    out.stop.push(p.token.clone());
                }
                p.state = PartitionStatus::Finished;
                p.finished_timestamp = Some(f.unwrap_or(now));
                self.dirty = true;
            }
        }
    }

    /// A record of a task that has left the epoch, landing late (it finished a partition or
    /// found children while leaving, and its records landed after the epoch that left it out
    /// was computed), is still its own word: its finishes count in every state of the view, and
    /// of its unfinished partitions and shares that no state knows, those that fall to this task
    /// (a share to it, or by rendezvous hashing over the members, as `apply_epoch` resolves the
    /// departed tasks' partitions its leader had not read) are its own at once; the others stay
    /// in the departed task's entry as shares to the member they fall to, which takes them when
    /// it reads the record itself (or the next epoch gives them to it, or to a live member).
    fn adopt_departed(&mut self, state: &TaskState) {
        if self.members.is_empty() || !self.is_departed(&state.task_id) {
            return;
        }
        let done: HashMap<&str, Option<u64>> = state
            .data
            .partitions
            .iter()
            .filter(|p| p.state.is_done())
            .map(|p| (p.token.as_str(), p.finished_timestamp))
            .collect();
        for st in self.cache.values_mut() {
            for p in &mut st.data.partitions {
                if let (false, Some(f)) = (p.state.is_done(), done.get(p.token.as_str())) {
                    p.state = PartitionStatus::Finished;
                    p.finished_timestamp = *f;
                }
            }
        }
        let mut known: HashSet<String> = self.all_tokens().into_iter().collect();
        let member_list: Vec<String> = self.members.iter().cloned().collect();
        let datas = state
            .data
            .partitions
            .iter()
            .filter(|p| !p.state.is_done())
            .map(|p| (p.reset(), None));
        let shares = state
            .share
            .partitions
            .iter()
            .map(|sh| (sh.to_partition(), Some(sh.assignee.as_str())));
        for (p, assignee) in datas.chain(shares) {
            if !known.insert(p.token.clone()) {
                continue;
            }
            let target = match assignee {
                Some(a) if self.members.contains(a) => a.to_string(),
                _ => rendezvous(&p.token, &member_list),
            };
            if target == self.id && self.in_epoch {
                self.own.data.partitions.push(p);
                self.dirty = true;
            } else {
                // a share to the member it falls to, so that the next epoch, and every reader,
                // resolve it to that member whatever the members are by then
                self.cache
                    .entry(state.task_id.clone())
                    .or_insert_with(|| TaskState::empty(state.task_id.clone()))
                    .share
                    .partitions
                    .push(p.shared_to(target));
            }
        }
    }

    /// Whether `task` was a member of an epoch this task knows and is not a member of the epoch
    /// in force.
    fn is_departed(&self, task: &str) -> bool {
        !self.members.contains(task) && self.departed.iter().any(|d| d == task)
    }

    fn on_answer(&mut self, msg: &SyncMessage, out: &mut SyncOutput) {
        let g = msg.rebalance_generation.unwrap_or(0);
        let newer = self
            .answers
            .get(&msg.task_id)
            .is_none_or(|a| g >= a.generation);
        if newer {
            self.answers.insert(
                msg.task_id.clone(),
                Answer {
                    generation: g,
                    base: msg.sync_epoch.clone(),
                },
            );
        }
        let cur = self.cur_id();
        if msg.sync_epoch == cur {
            self.merge(Self::sender_state(msg));
            self.ack(msg);
        } else if msg.epoch_generation < self.epoch_generation() {
            self.absorb(Self::sender_state(msg));
            // the sender has not applied our epoch: if it missed it, re-publish it once
            // the sender has not applied our epoch: if it missed it, any member re-publishes it
            // once (the epoch's leader may be slow or gone)
            if self.in_epoch
                && msg.task_id != self.id
                && self.resent_for.insert((msg.task_id.clone(), g))
            {
                self.resend(out);
            }
        } else if msg.epoch_generation > self.epoch_generation() {
            self.behind = true;
            self.defer(msg);
        }
    }

    fn defer(&mut self, msg: &SyncMessage) {
        if msg.task_id == self.id {
            return;
        }
        let st = Self::sender_state(msg);
        let key = (msg.sync_epoch.clone(), msg.task_id.clone());
        let newer = self
            .future
            .get(&key)
            .is_none_or(|(_, s)| st.state_version > s.state_version);
        if newer {
            self.future.insert(key, (msg.epoch_generation, st.clone()));
        }
    }

    fn on_new_epoch(&mut self, msg: &SyncMessage, out: &mut SyncOutput) {
        let cur_id = self.cur_id();
        if msg.sync_epoch == cur_id {
            return; // duplicate or re-publication of the epoch in force
        }
        let base = msg.base_epoch.as_deref().unwrap_or("");
        let newer = msg.epoch_generation > self.epoch_generation();

        // Valid: newer, and built on the epoch in force. A task that knows it missed an epoch (it
        // read messages of it) accepts what builds on that epoch, a re-publication of the epoch
        // it missed, or its leader's later attempt of the same generation; not an epoch of a
        // later generation built on its older base (every task that missed nothing rejected
        // it). Re-publications pass the same check: a task that missed an epoch it does not know
        // of may have applied, and re-publish, one every other task rejected.
        //
        // A task that has applied no epoch yet (a new task replaying the log from a checkpoint
        // or from the start) takes the first whole epoch it reads, or a re-publication of the
        // epoch whose messages it read: running tasks re-publish the epoch in force when they
        // read its answer, so a fresh leader always gets the epoch it builds on.
        let valid = newer
            && match self.missed() {
                Some((g, missed)) => {
                    self.future.keys().any(|(e, _)| e == base)
                        || (base == cur_id && (msg.resend || msg.epoch_generation == g))
                        || (self.epoch.is_none() && msg.resend && msg.sync_epoch == missed)
                }
                None => base == cur_id || self.epoch.is_none(),
            };
        // A leader that applied its own epoch, acknowledged by nobody, learns of an older epoch
        // built on the same base: everyone else applied that one and rejected ours (we had
        // missed it). Roll back to it and compute the generation again on top of it.
        if let (Some(e), Some(l)) = (&self.epoch, &self.lead) {
            if !valid
                && msg.epoch_generation < e.generation
                && base == e.base
                && l.acked.iter().all(|a| *a == self.id)
            {
                let (generation, attempt, members) =
                    (e.generation, e.attempt + 1, l.members.clone());
                self.apply_epoch(msg, base, out);
                // leading a newer generation already: that epoch builds on the rolled-back one
                if self
                    .pending
                    .as_ref()
                    .is_none_or(|p| p.generation <= generation)
                {
                    self.pending = Some(Pending {
                        generation,
                        members,
                        since: self.now,
                        awaiting: None,
                        published: None,
                        republished: 0,
                        attempt,
                    });
                }
                return;
            }
        }
        // the epoch in force was an attempt its leader found stale and replaced: everyone that
        // did not miss an epoch applied the replacement, so follow it
        let superseded = !msg.resend
            && self.epoch.as_ref().is_some_and(|e| {
                e.generation == msg.epoch_generation
                    && e.leader == msg.task_id
                    && msg.epoch_attempt > e.attempt
            });
        let valid = valid || superseded;
        if !valid {
            if newer {
                self.behind = true;
            }
            // built on an epoch older than ours: its leader missed ours; show it (once)
            if newer
                && self.in_epoch
                && base != cur_id
                && self.history.iter().any(|h| h == base)
                && self.resent_for.insert((msg.sync_epoch.clone(), 0))
            {
                self.resend(out);
            }
            if msg.task_id == self.id {
                if let Some(p) = &mut self.pending {
                    if p.awaiting.as_deref() == Some(msg.sync_epoch.as_str()) {
                        // computed from a stale base: recompute once members re-answer
                        p.awaiting = None;
                        p.published = None;
                        p.since = self.now;
                    }
                }
            }
            return;
        }
        self.apply_epoch(msg, base, out);
    }

    fn apply_epoch(&mut self, msg: &SyncMessage, base: &str, out: &mut SyncOutput) {
        self.epoch = Some(EpochInfo {
            id: msg.sync_epoch.clone(),
            generation: msg.epoch_generation,
            base: base.to_string(),
            leader: if msg.resend {
                epoch_leader(&msg.sync_epoch, msg.epoch_generation, msg.epoch_attempt)
            } else {
                msg.task_id.clone()
            },
            attempt: msg.epoch_attempt,
        });
        self.behind = false;
        self.history.push_back(msg.sync_epoch.clone());
        if self.history.len() > 64 {
            self.history.pop_front();
        }
        let before = std::mem::replace(
            &mut self.members,
            msg.connector_state
                .iter()
                .map(|s| s.task_id.clone())
                .collect(),
        );
        let told = msg.departed.iter().filter(|d| !self.members.contains(*d));
        for gone in before.difference(&self.members).chain(told) {
            if !self.departed.contains(gone) {
                self.departed.push_back(gone.clone());
            }
        }
        while self.departed.len() > MAX_DEPARTED {
            self.departed.pop_front();
        }
        let applied = msg.epoch_generation;
        self.read_epochs.retain(|(g, _)| *g > applied);
        // counters of departed senders are no longer needed (bounded memory)
        let (members, me) = (&self.members, &self.id);
        self.heard.retain(|t, _| members.contains(t) || t == me);
        let mut cache = BTreeMap::new();
        let mut mine_entry: Option<TaskState> = None;
        for s in &msg.connector_state {
            if s.task_id == self.id {
                mine_entry = Some(s.clone());
            } else {
                cache.insert(s.task_id.clone(), s.clone());
            }
        }
        // the leader computed from what it had read, which can be older than what this task
        // read before the epoch: keep the newer own-words of members, and never restart a
        // partition known to be finished
        let prev = std::mem::replace(&mut self.cache, cache);
        // a member owning a partition (its own word, or a share addressed to it, read before the
        // epoch) keeps it even if the leader, not having read that, gave it to another member
        {
            let mut claims: HashMap<String, Option<String>> = HashMap::new();
            fn claim(claims: &mut HashMap<String, Option<String>>, token: &str, who: &str) {
                let e = claims
                    .entry(token.to_string())
                    .or_insert_with(|| Some(who.to_string()));
                if e.as_deref() != Some(who) {
                    *e = None; // ambiguous: leave it to the epoch
                }
            }
            // only the tasks' own words count: a snapshot entry is a leader's belief, which a
            // task that applied a divergent epoch could hold wrongly
            let prev_states = prev
                .values()
                .filter(|st| self.own_words.contains(&st.task_id))
                .chain(std::iter::once(&self.own));
            for st in prev_states.clone() {
                if self.members.contains(&st.task_id) {
                    for p in &st.data.partitions {
                        claim(&mut claims, &p.token, &st.task_id);
                    }
                }
            }
            let owned_claims: HashSet<String> = claims.keys().cloned().collect();
            for st in prev_states {
                for sh in &st.share.partitions {
                    if self.members.contains(&sh.assignee) && !owned_claims.contains(&sh.token) {
                        claim(&mut claims, &sh.token, &sh.assignee);
                    }
                }
            }
            let mut moved: Vec<(String, PartitionState)> = Vec::new();
            let entries = self.cache.values_mut().chain(mine_entry.as_mut());
            for st in entries {
                let task = st.task_id.clone();
                st.data.partitions.retain(|p| match claims.get(&p.token) {
                    Some(Some(m)) if *m != task => {
                        moved.push((m.clone(), p.clone()));
                        false
                    }
                    _ => true,
                });
            }
            for (m, p) in moved {
                let target = if m == self.id {
                    mine_entry.as_mut()
                } else {
                    self.cache.get_mut(&m)
                };
                if let Some(t) = target {
                    if !t.data.partitions.iter().any(|q| q.token == p.token) {
                        t.data.partitions.push(p);
                    }
                }
            }
        }
        let mine = mine_entry.as_ref();
        self.own_words.clear();
        let mut done_before: HashMap<String, Option<u64>> = HashMap::new();
        for st in prev.values().chain(std::iter::once(&self.own)) {
            for p in &st.data.partitions {
                if p.state.is_done() {
                    done_before.insert(p.token.clone(), p.finished_timestamp);
                }
            }
        }
        for st in prev.values() {
            if self.cache.contains_key(&st.task_id) {
                self.absorb(st);
            }
        }
        if !done_before.is_empty() {
            for st in self.cache.values_mut() {
                for p in &mut st.data.partitions {
                    if !p.state.is_done() {
                        if let Some(f) = done_before.get(&p.token) {
                            p.state = PartitionStatus::Finished;
                            p.finished_timestamp = *f;
                        }
                    }
                }
            }
        }
        // partitions of departed tasks the leader had not read about (it timed out as a slow
        // reader) are still someone's: every reader resolves them the same way, a share to its
        // assignee if that is a member, otherwise by rendezvous hashing over the members
        let mut orphans_mine: Vec<PartitionState> = Vec::new();
        {
            let mut known: HashSet<String> = HashSet::new();
            for st in self.cache.values().chain(mine) {
                known.extend(st.data.partitions.iter().map(|p| p.token.clone()));
            }
            let member_list: Vec<String> = self.members.iter().cloned().collect();
            for st in prev.values() {
                if self.members.contains(&st.task_id) || member_list.is_empty() {
                    continue;
                }
                let shares = st
                    .share
                    .partitions
                    .iter()
                    .map(|sh| (sh.to_partition(), Some(sh.assignee.as_str())));
                let datas = st
                    .data
                    .partitions
                    .iter()
                    .filter(|p| !p.state.is_done())
                    .map(|p| (p.reset(), None));
                for (p, assignee) in datas.chain(shares) {
                    if known.contains(&p.token) || done_before.contains_key(&p.token) {
                        continue;
                    }
                    known.insert(p.token.clone());
                    let target = match assignee {
                        Some(a) if self.members.contains(a) => a.to_string(),
                        _ => rendezvous(&p.token, &member_list),
                    };
                    if target == self.id {
                        orphans_mine.push(p);
                    } else if let Some(t) = self.cache.get_mut(&target) {
                        t.data.partitions.push(p);
                    }
                }
            }
        }
        if let Some(entry) = mine {
            // the epoch is authoritative on conflicts: a token it gives another member is dropped
            let elsewhere: HashSet<&str> = self
                .cache
                .values()
                .flat_map(|s| s.data.partitions.iter().map(|p| p.token.as_str()))
                .collect();
            let mut stop = Vec::new();
            self.own.data.partitions.retain(|p| {
                if elsewhere.contains(p.token.as_str()) {
                    if p.state.is_active() {
                        stop.push(p.token.clone());
                    }
                    false
                } else {
                    true
                }
            });
            out.stop.extend(stop);
            // additions: what the leader gave this task
            let have = self.own_data_tokens();
            for p in &entry.data.partitions {
                if !have.contains(&p.token) {
                    let mut p = if p.state.is_active() {
                        p.reset()
                    } else {
                        p.clone()
                    };
                    if let (false, Some(f)) = (p.state.is_done(), done_before.get(&p.token)) {
                        p.state = PartitionStatus::Finished;
                        p.finished_timestamp = *f;
                    }
                    self.own.data.partitions.push(p);
                }
            }
            let have = self.own_data_tokens();
            for p in orphans_mine {
                if !have.contains(&p.token) {
                    self.own.data.partitions.push(p);
                }
            }
            // shares the epoch resolved are gone; unknown ones (published in an older epoch) stay
            let resolved: HashSet<&str> = msg
                .connector_state
                .iter()
                .flat_map(|s| s.data.partitions.iter().map(|p| p.token.as_str()))
                .collect();
            let own_data = self.own_data_tokens();
            self.own
                .share
                .partitions
                .retain(|s| !resolved.contains(s.token.as_str()) && !own_data.contains(&s.token));
            self.own.state_version = self.own.state_version.max(entry.state_version);
            self.in_epoch = true;
        } else {
            self.in_epoch = false;
            let expected = self
                .rebalance
                .is_none_or(|r| r.generation <= msg.epoch_generation);
            if expected {
                // left out of an epoch of our generation: the group considers us gone (fenced)
                for p in &self.own.data.partitions {
                    if p.state.is_active() {
                        out.stop.push(p.token.clone());
                    }
                }
                self.own.data.partitions.clear();
                self.own.share.partitions.clear();
            }
        }
        // states published in this epoch that were read before it (it was missed)
        let replay: Vec<TaskState> = self
            .future
            .iter()
            .filter(|((e, _), _)| *e == msg.sync_epoch)
            .map(|(_, (_, st))| st.clone())
            .collect();
        self.future.retain(|_, (g, _)| *g > msg.epoch_generation);
        // bookkeeping of generations this epoch closed is no longer needed (bounded memory)
        let closed = msg.epoch_generation;
        self.answers.retain(|_, a| a.generation > closed);
        self.resent_for.retain(|(_, g)| *g > closed);
        for st in &replay {
            self.merge(st);
        }
        if let Some(p) = &mut self.pending {
            if p.generation <= msg.epoch_generation {
                self.pending = None;
            } else {
                // members re-answer from the new base: give them a fresh timeout
                p.since = self.now;
                p.awaiting = None;
                p.published = None;
            }
        }
        self.lead = if msg.task_id == self.id && !msg.resend {
            Some(Lead {
                members: self.members.iter().cloned().collect(),
                acked: BTreeSet::from([self.id.clone()]),
                last_publish: self.now,
                resends: 0,
            })
        } else {
            None
        };
        self.schedule_refresh();
        // acknowledge the epoch with the own state (re-answer if a newer rebalance is pending);
        // a task outside the epoch (a newcomer replaying the topic) has nothing to say
        self.settle(out);
        // (a newcomer with a rebalance pending answers again from this epoch: its leader waits
        // for answers from the epoch it applied)
        if self.in_epoch || self.rebalancing() || !out.stop.is_empty() {
            let kind = if self.rebalancing() {
                MessageType::RebalanceAnswer
            } else {
                MessageType::Regular
            };
            self.publish_own(kind, out);
        }
    }

    /// Re-publish the epoch in force (for tasks that missed it).
    fn resend(&mut self, out: &mut SyncOutput) {
        if !self.in_epoch {
            return;
        }
        let Some(e) = &self.epoch else { return };
        let mut states = Vec::new();
        for m in &self.members {
            if *m == self.id {
                if self.in_epoch {
                    states.push(self.own.clone());
                }
            } else if let Some(s) = self.cache.get(m) {
                states.push(s.clone());
            }
        }
        let departed = self.departed.iter().rev().take(RESENT_DEPARTED).cloned();
        out.publish.push(SyncMessage {
            sync_epoch: e.id.clone(),
            task_id: self.id.clone(),
            message_timestamp: self.now,
            kind: MessageType::NewEpoch,
            connector_state: states,
            epoch_generation: e.generation,
            base_epoch: Some(e.base.clone()),
            rebalance_generation: None,
            resend: true,
            epoch_attempt: e.attempt,
            message_seq: None,
            checkpoint: None,
            departed: departed.collect(),
        });
    }

    fn publish_own(&mut self, kind: MessageType, out: &mut SyncOutput) {
        self.own.state_version += 1;
        self.own.state_timestamp = self.now;
        out.publish.push(SyncMessage {
            sync_epoch: self.cur_id(),
            task_id: self.id.clone(),
            message_timestamp: self.now,
            kind,
            connector_state: vec![self.own.clone()],
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
        });
        self.dirty = false;
    }

    /// Common tail of every input: settle the own state, lead, publish changes.
    fn finish(&mut self, out: &mut SyncOutput) {
        self.settle(out);
        self.maybe_lead(out);
        if self.dirty {
            self.publish_own(MessageType::Regular, out);
        }
    }

    fn maybe_lead(&mut self, out: &mut SyncOutput) {
        let now = self.now;
        let timeout = self.opts.rebalance_timeout;
        let Some(p) = &mut self.pending else { return };
        if p.awaiting.is_some() {
            // not read back in time (the leader lost the topic for a while): publish it again,
            // identical, so whoever applied it ignores the copy
            if let Some((m, at)) = &mut p.published {
                let wait = timeout.saturating_mul(1u64 << p.republished.min(4));
                if now >= at.saturating_add(wait) {
                    *at = now;
                    p.republished += 1;
                    out.publish.push(m.clone());
                }
            }
            return;
        }
        let (generation, attempt, since) = (p.generation, p.attempt, p.since);
        if generation <= self.epoch_generation() {
            self.pending = None;
            return;
        }
        // the view an epoch is computed from includes everything this task published before:
        // an epoch of its own not read back yet would be forked from, not built on
        if self.own_read < self.seq {
            return;
        }
        // a leader that missed an epoch waits for a member to re-publish it (its own answer
        // asks for that); if none does within twice the timeout it fences itself rather than
        // build on an epoch whose assignment it never read (it may have been given partitions
        // it does not know it has), and the group elects another leader
        let missed = self.missed();
        let all = self.waiting_for().is_empty() && missed.is_none();
        let wait = if missed.is_some() {
            timeout.saturating_mul(2)
        } else {
            timeout
        };
        if !all && now < since.saturating_add(wait) {
            return;
        }
        // (an epoch it read and rejected is not missed: its messages come from a fork)
        if let Some((_, e)) = missed.as_ref().filter(|m| !self.read_epochs.contains(*m)) {
            let why = format!("leading generation {generation}, it missed epoch {e} and no member re-published it");
            self.fence_self(why, out);
            return;
        }
        let members = self
            .pending
            .as_ref()
            .map(|p| p.members.clone())
            .unwrap_or_default();
        // a leader that missed an epoch knows its members' own words from their messages
        let mut cache = self.cache.clone();
        let mut deferred: Vec<&(u64, TaskState)> = self.future.values().collect();
        deferred.sort_by_key(|(g, st)| (*g, st.state_version));
        for (_, st) in &deferred {
            if st.task_id != self.id {
                absorb_into(&mut cache, &self.own, st);
            }
        }
        // what a member says it owns (in an epoch this task has not applied) beats the entry of
        // a departed task: the member may run it already
        for (_, st) in &deferred {
            if st.task_id == self.id || !members.contains(&st.task_id) {
                continue;
            }
            for p in &st.data.partitions {
                let mut held_by_departed = false;
                for (tid, other) in cache.iter_mut() {
                    if *tid != st.task_id && !members.contains(tid) {
                        let before = other.data.partitions.len();
                        other.data.partitions.retain(|q| q.token != p.token);
                        held_by_departed |= other.data.partitions.len() != before;
                    }
                }
                if held_by_departed {
                    let entry = cache
                        .entry(st.task_id.clone())
                        .or_insert_with(|| TaskState::empty(st.task_id.clone()));
                    if !entry.data.partitions.iter().any(|q| q.token == p.token) {
                        entry.data.partitions.push(p.clone());
                    }
                }
            }
        }
        let view: Vec<&TaskState> = std::iter::once(&self.own).chain(cache.values()).collect();
        let mut states = compute_epoch(&view, &members);
        for s in &mut states {
            if s.task_id == self.id {
                s.state_timestamp = self.own.state_timestamp;
                s.state_version = self.own.state_version;
            }
        }
        let id = if attempt == 0 {
            format!("{generation}-{}", self.id)
        } else {
            format!("{generation}-{}-{attempt}", self.id)
        };
        let msg = SyncMessage {
            sync_epoch: id.clone(),
            task_id: self.id.clone(),
            message_timestamp: self.now,
            kind: MessageType::NewEpoch,
            connector_state: states,
            epoch_generation: generation,
            base_epoch: Some(self.lead_base()),
            rebalance_generation: None,
            resend: false,
            epoch_attempt: attempt,
            message_seq: None,
            checkpoint: None,
            departed: Vec::new(),
        };
        out.publish.push(msg.clone());
        if let Some(p) = &mut self.pending {
            p.awaiting = Some(id);
            p.published = Some((msg, self.now));
            p.republished = 0;
            p.attempt += 1;
        }
    }

    /// Bring the own state up to date with the view: pick up shares, clear picked-up shares,
    /// re-address orphaned shares, readiness and scheduling; with `timers` (on `tick`) also the
    /// delayed removal of finished partitions and the purge of tombstones. Each step scans the
    /// whole view only when the own state gives it something to look for, and copies no token.
    fn settle_with(&mut self, out: &mut SyncOutput, timers: bool) {
        let own_tokens: HashSet<&str> = self
            .own
            .data
            .partitions
            .iter()
            .map(|p| p.token.as_str())
            .collect();
        // pick up shares addressed to this task
        let mut picked: Vec<PartitionState> = Vec::new();
        if self.in_epoch {
            let mut candidates: Vec<&SharedPartition> = Vec::new();
            let mut seen: HashSet<&str> = HashSet::new();
            for s in self.cache.values() {
                for sh in &s.share.partitions {
                    if sh.assignee == self.id
                        && !own_tokens.contains(sh.token.as_str())
                        && seen.insert(sh.token.as_str())
                    {
                        candidates.push(sh);
                    }
                }
            }
            if !candidates.is_empty() {
                let wanted: HashSet<&str> = candidates.iter().map(|c| c.token.as_str()).collect();
                let taken: HashSet<&str> = self
                    .cache
                    .values()
                    .flat_map(|s| s.data.partitions.iter())
                    .map(|p| p.token.as_str())
                    .filter(|t| wanted.contains(t))
                    .collect();
                picked = candidates
                    .into_iter()
                    .filter(|c| !taken.contains(c.token.as_str()))
                    .map(|c| c.to_partition())
                    .collect();
            }
        }
        // the sharer clears a share once the partition is owned
        let mut cleared: HashSet<String> = HashSet::new();
        if !self.own.share.partitions.is_empty() {
            let mine: HashSet<&str> = self
                .own
                .share
                .partitions
                .iter()
                .map(|p| p.token.as_str())
                .collect();
            cleared = self
                .cache
                .values()
                .flat_map(|s| s.data.partitions.iter())
                .map(|p| p.token.as_str())
                .chain(own_tokens.iter().copied())
                .filter(|t| mine.contains(t))
                .map(str::to_string)
                .collect();
        }
        drop(own_tokens);
        if !picked.is_empty() {
            self.own.data.partitions.extend(picked);
            self.dirty = true;
        }
        if !cleared.is_empty() {
            self.own
                .share
                .partitions
                .retain(|s| !cleared.contains(&s.token));
            self.dirty = true;
        }
        // a share addressed to a task that left the epoch goes to the least-loaded member
        if self.sharing_enabled()
            && self
                .own
                .share
                .partitions
                .iter()
                .any(|s| !self.members.contains(&s.assignee))
        {
            let mut loads: BTreeMap<String, usize> = self
                .members
                .iter()
                .map(|m| (m.clone(), self.load_of(m)))
                .collect();
            let mut shares = std::mem::take(&mut self.own.share.partitions);
            for sh in &mut shares {
                if self.members.contains(&sh.assignee) {
                    continue;
                }
                // the sharer re-owns it only when it is the only member left
                let target = loads
                    .iter()
                    .filter(|(m, _)| *m != &self.id || self.members.len() == 1)
                    .min_by_key(|(m, l)| (**l, (*m).clone()))
                    .map(|(m, _)| m.clone());
                if let Some(t) = target {
                    *loads.get_mut(&t).expect("present") += 1;
                    sh.assignee = t;
                }
            }
            let (mine, others): (Vec<_>, Vec<_>) =
                shares.into_iter().partition(|s| s.assignee == self.id);
            self.own.share.partitions = others;
            self.own
                .data
                .partitions
                .extend(mine.iter().map(|s| s.to_partition()));
            self.dirty = true;
        }
        // readiness: Created -> ReadyForStreaming -> Scheduled when every parent is done (or
        // unknown everywhere); the owner starts what is ready
        let parents: HashSet<&str> = self
            .own
            .data
            .partitions
            .iter()
            .filter(|p| p.state == PartitionStatus::Created)
            .flat_map(|p| p.parents.iter().map(|x| x.as_str()))
            .collect();
        let mut open: HashSet<String> = HashSet::new(); // parents that are not done
        if !parents.is_empty() {
            for s in std::iter::once(&self.own).chain(self.cache.values()) {
                for p in &s.data.partitions {
                    if !p.state.is_done() && parents.contains(p.token.as_str()) {
                        open.insert(p.token.clone());
                    }
                }
                for p in &s.share.partitions {
                    if parents.contains(p.token.as_str()) {
                        open.insert(p.token.clone());
                    }
                }
            }
        }
        drop(parents);
        for p in &mut self.own.data.partitions {
            let ready = match p.state {
                PartitionStatus::Created => p.parents.iter().all(|x| !open.contains(x)),
                PartitionStatus::ReadyForStreaming => true,
                _ => false,
            };
            if ready {
                p.state = PartitionStatus::Scheduled;
                out.start.push(p.token.clone());
                self.dirty = true;
            }
        }
        if timers {
            self.remove_finished();
        }
    }

    fn settle(&mut self, out: &mut SyncOutput) {
        self.settle_with(out, false);
    }

    /// Of the own `candidates` tokens (Finished or Removed), those that an unfinished partition
    /// names as a parent, and those that another task's state or a share still references.
    fn removal_blockers(&self, candidates: &HashSet<&str>) -> RemovalBlockers {
        let mut b = RemovalBlockers {
            open_children: HashSet::new(),
            referenced: HashSet::new(),
            rebalancing: self.rebalancing(),
        };
        for s in std::iter::once(&self.own).chain(self.cache.values()) {
            let other = s.task_id != self.id;
            for p in &s.data.partitions {
                if other && candidates.contains(p.token.as_str()) {
                    b.referenced.insert(p.token.clone());
                }
                if !p.state.is_done() {
                    for x in &p.parents {
                        if candidates.contains(x.as_str()) {
                            b.open_children.insert(x.clone());
                        }
                    }
                }
            }
            for p in &s.share.partitions {
                if candidates.contains(p.token.as_str()) {
                    b.referenced.insert(p.token.clone());
                }
                for x in &p.parents {
                    if candidates.contains(x.as_str()) {
                        b.open_children.insert(x.clone());
                    }
                }
            }
        }
        b
    }

    /// Finished -> Removed after `removal_delay` once no unfinished partition names it as a
    /// parent; Removed -> dropped after `tombstone_ttl` more, once nothing references it (a
    /// departed sharer's stale share, another task's state) and no rebalance is in progress.
    fn remove_finished(&mut self) {
        let now = self.now;
        let (delay, ttl) = (self.opts.removal_delay, self.opts.tombstone_ttl);
        let due = |p: &PartitionState| removal_due(p, delay, ttl).is_some_and(|t| t <= now);
        let candidates: HashSet<&str> = self
            .own
            .data
            .partitions
            .iter()
            .filter(|p| due(p))
            .map(|p| p.token.as_str())
            .collect();
        if candidates.is_empty() {
            return;
        }
        let blockers = self.removal_blockers(&candidates);
        drop(candidates);
        let before = self.own.data.partitions.len();
        let mut changed = false;
        self.own.data.partitions.retain_mut(|p| {
            if !due(p) || !blockers.allow(p) {
                return true;
            }
            if p.state == PartitionStatus::Finished {
                p.state = PartitionStatus::Removed;
                if p.finished_timestamp.is_none() {
                    p.finished_timestamp = Some(now);
                }
                changed = true;
            }
            // a tombstone outlives every stale reference to it: dropping it earlier could
            // resurrect the partition (a removal that is due at once with no delay or ttl drops
            // it in the same pass, so that no deadline is left in the past)
            !(due(p) && blockers.allow(p))
        });
        if changed || self.own.data.partitions.len() != before {
            self.dirty = true;
        }
    }
}

/// When removal work on a done partition falls due: Finished -> Removed after `delay`, Removed
/// -> dropped after `ttl` more (counted from when it finished).
fn removal_due(p: &PartitionState, delay: u64, ttl: u64) -> Option<u64> {
    let f = p.finished_timestamp.unwrap_or(0);
    match p.state {
        PartitionStatus::Finished => Some(f.saturating_add(delay)),
        PartitionStatus::Removed => Some(f.saturating_add(delay).saturating_add(ttl)),
        _ => None,
    }
}

/// What keeps own done partitions from being removed (see `SyncTask::removal_blockers`).
struct RemovalBlockers {
    open_children: HashSet<String>,
    referenced: HashSet<String>,
    rebalancing: bool,
}

impl RemovalBlockers {
    /// Whether the next removal step of `p` may happen (when it is due).
    fn allow(&self, p: &PartitionState) -> bool {
        match p.state {
            PartitionStatus::Finished => !self.open_children.contains(&p.token),
            PartitionStatus::Removed => !self.rebalancing && !self.referenced.contains(&p.token),
            _ => false,
        }
    }
}

/// The kinds of timed work of a task (see `SyncTask::timers`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Timer {
    /// Behind for too long with no epoch it can apply: fence.
    Stuck,
    /// A leader collecting answers publishes its epoch, or re-publishes one not read back.
    Rebalance,
    /// The epoch's leader re-publishes it to members that have not acknowledged it.
    EpochAck,
    /// The epoch's leader publishes a checkpoint of it.
    Refresh,
    /// The owner marks a Finished partition Removed, or drops a tombstone.
    Removal,
}
