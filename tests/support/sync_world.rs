//! The one world the sync scenario tests drive `SyncTask`s in: one totally ordered log (the sync
//! topic) with when each record was appended, and tasks reading it in order, each at its own
//! cursor. Every scenario file (`sync_regressions`, `sync_faults`, `sync_records`,
//! `sync_retention`, `sync_start`, `sync_checkpoint_storm`) includes it as a module and scripts its faults with it:
//!
//! - time: `now`, moved by `input_gap` before each input a task gets through the world (a
//!   message, a rebalance, a partition call), by `tick`/`ticks`, and by `run_until`, which
//!   drives the tasks as a transport does (each ticks at its `poll_timeout()`);
//! - readers: `settle` (every live task that is not `stalled` reads the log to its end, one
//!   record each in turn), `step`/`skip`/`drain` one task, cursors set by hand;
//! - producers: `hold`/`land` (records held back, then appended at once), `slow` (records land
//!   a lag after they are published), `interleave` (the records of one round of ticks land one
//!   of each task in turn, as concurrent producers' do), `strip_seq` (no `messageSeq`, as a
//!   transport that drops unknown fields), `queue` with `pace` (producers that land a few
//!   records each per step, side by side, and readers that read a few per step: a checkpoint
//!   of hundreds of chunks takes a while to land and interleaves with other tasks' records);
//! - retention: `first`, `expire`; a new task starts where the core's start rule says
//!   (`start`, `join_at`);
//! - what it checks on every output: no task fences itself (unless `allow_fenced`); no
//!   partition starts on one member while another runs it, nor on a task that read its finish
//!   (`violations`); every record fits `max_record` once serialized (`largest`, `bytes`).
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use partkit::sync::{
    checkpoint_message, find_epoch_start, EpochStart, LogRecord, MessageType, PartitionSpec,
    PartitionState, PartitionStatus, RebalanceEvent, RecordHeader, SyncMessage, SyncOptions,
    SyncOutput, SyncTask, TaskState,
};

/// The log, the tasks reading it, and what the scenario's faults and checks keep.
pub struct World {
    pub log: Vec<SyncMessage>,
    /// When each record of the log was appended.
    pub log_at: Vec<u64>,
    /// The first record retention has not deleted.
    pub first: usize,
    /// Every task, with its cursor: the next record it reads.
    pub tasks: BTreeMap<String, (SyncTask, usize)>,
    /// The tasks that read and tick (a task that died or left is not).
    pub live: BTreeSet<String>,
    pub now: u64,
    /// How far the clock moves before each input a task gets through the world (0: only ticks
    /// move it).
    pub input_gap: u64,
    /// The options of the tasks the world makes.
    pub opts: SyncOptions,
    /// The members of the latest rebalance.
    pub members: Vec<String>,
    /// What each task was told to start and not yet to stop.
    pub running: BTreeMap<String, BTreeSet<String>>,
    /// Every start and every stop each task was told, in order.
    pub started: BTreeMap<String, Vec<String>>,
    pub stopped: BTreeMap<String, Vec<String>>,
    /// Per task: the tokens it read a record saying they are finished.
    pub finishes_read: BTreeMap<String, BTreeSet<String>>,
    /// Broken promises: a start while another member runs the partition, or after its finish
    /// was read.
    pub violations: Vec<String>,
    /// Tasks whose reader stalls: `settle` passes them over.
    pub stalled: BTreeSet<String>,
    /// Records of held producers, appended at `land`.
    pub held: BTreeMap<String, Vec<SyncMessage>>,
    /// Per slow task: how long its records take to land.
    pub lag: BTreeMap<String, u64>,
    /// Records of slow tasks in flight: when each lands.
    pub flight: Vec<(u64, SyncMessage)>,
    /// Whether the records of one round of `tick` land one of each task in turn.
    pub interleave: bool,
    /// Producers' queues (after `queue`): what each task published and `pace` has not landed.
    pub queued: Option<BTreeMap<String, VecDeque<SyncMessage>>>,
    /// Whether an output may fence its task (else it fails the test).
    pub allow_fenced: bool,
    /// Publish without `messageSeq`.
    pub strip_seq: bool,
    /// The bound every record must fit, serialized as the transport publishes it.
    pub max_record: Option<u64>,
    /// The largest record appended, and the bytes of all of them (with `max_record`).
    pub largest: usize,
    pub bytes: usize,
}

impl World {
    /// Tasks `ids` with `opts`, reading the log from its start; the clock at 0.
    pub fn new(ids: &[&str], opts: SyncOptions) -> Self {
        let mut w = World {
            log: Vec::new(),
            log_at: Vec::new(),
            first: 0,
            tasks: BTreeMap::new(),
            live: BTreeSet::new(),
            now: 0,
            input_gap: 0,
            opts: opts.clone(),
            members: Vec::new(),
            running: BTreeMap::new(),
            started: BTreeMap::new(),
            stopped: BTreeMap::new(),
            finishes_read: BTreeMap::new(),
            violations: Vec::new(),
            stalled: BTreeSet::new(),
            held: BTreeMap::new(),
            lag: BTreeMap::new(),
            flight: Vec::new(),
            interleave: false,
            queued: None,
            allow_fenced: false,
            strip_seq: false,
            max_record: None,
            largest: 0,
            bytes: 0,
        };
        for id in ids {
            w.spawn(id, opts.clone());
        }
        w
    }

    // ---- tasks ----

    /// A task that reads the log from its start.
    pub fn spawn(&mut self, id: &str, opts: SyncOptions) {
        let task = SyncTask::with_options(id, opts).unwrap();
        self.add_task(id, task, 0);
    }

    fn add_task(&mut self, id: &str, task: SyncTask, from: usize) {
        self.tasks.insert(id.to_string(), (task, from));
        self.live.insert(id.to_string());
        self.running.entry(id.to_string()).or_default();
    }

    /// A task with the world's options that reads from `from`, and everyone reads what it
    /// published.
    pub fn join(&mut self, id: &str, from: usize) {
        self.join_with(id, from, self.opts.clone());
    }

    /// [`World::join`] with other options.
    pub fn join_with(&mut self, id: &str, from: usize, opts: SyncOptions) {
        let task = SyncTask::with_options(id, opts).unwrap();
        self.add_task(id, task, from);
        self.settle();
    }

    /// A task that starts where [`World::start`] says: the checkpoint it names (if any) is
    /// applied first, without its counter, then the log is read from `from`.
    pub fn join_at(&mut self, id: &str, (from, first): (usize, Option<SyncMessage>)) {
        let mut task = SyncTask::with_options(id, self.opts.clone()).unwrap();
        if let Some(msg) = first {
            self.now += 1;
            let out = task.on_message(&msg, self.now).unwrap();
            assert!(out.publish.is_empty() && out.start.is_empty());
        }
        self.add_task(id, task, from);
        self.settle();
    }

    /// `id` stops: it reads and ticks no more, and runs nothing (a task that died, or left).
    pub fn leave(&mut self, id: &str) {
        self.live.remove(id);
        if let Some(run) = self.running.get_mut(id) {
            run.clear();
        }
    }

    pub fn task(&self, id: &str) -> &SyncTask {
        &self.tasks[id].0
    }

    pub fn task_mut(&mut self, id: &str) -> &mut SyncTask {
        &mut self.tasks.get_mut(id).unwrap().0
    }

    /// The ids of the live tasks, in order.
    fn live_ids(&self) -> Vec<String> {
        self.tasks
            .keys()
            .filter(|id| self.live.contains(*id))
            .cloned()
            .collect()
    }

    // ---- outputs ----

    /// Carries out an output of `id`.
    pub fn act(&mut self, id: &str, out: SyncOutput) {
        self.act_as(id, out, "");
    }

    /// Carries out an output of `id` (`what` input made it, for messages): appends (or holds)
    /// what it publishes; checks every start against the two promises (no partition on two
    /// members at once; a partition whose finish the task read is not started again).
    pub fn act_as(&mut self, id: &str, out: SyncOutput, what: &str) {
        assert!(
            self.allow_fenced || out.fenced.is_none(),
            "{id} fenced itself: {:?}",
            out.fenced
        );
        self.started
            .entry(id.to_string())
            .or_default()
            .extend(out.start.iter().cloned());
        self.stopped
            .entry(id.to_string())
            .or_default()
            .extend(out.stop.iter().cloned());
        if let Some(h) = self.held.get_mut(id) {
            h.extend(out.publish);
        } else if let Some(q) = self.queued.as_mut() {
            q.entry(id.to_string()).or_default().extend(out.publish);
        } else if let Some(lag) = self.lag.get(id) {
            let at = self.now + lag;
            self.flight.extend(out.publish.into_iter().map(|m| (at, m)));
        } else {
            self.append(out.publish);
        }
        let run = self.running.entry(id.to_string()).or_default();
        for t in &out.stop {
            run.remove(t);
        }
        for t in out.start {
            for other in &self.members {
                if other != id && self.running.get(other).is_some_and(|r| r.contains(&t)) {
                    self.violations
                        .push(format!("{id} starts {t} ({what}) while {other} runs it"));
                }
            }
            if self.finishes_read.get(id).is_some_and(|f| f.contains(&t)) {
                self.violations.push(format!(
                    "{id} starts {t} ({what}) after reading a record that says it finished"
                ));
            }
            self.running.get_mut(id).unwrap().insert(t);
        }
    }

    /// Appends records to the log now, each checked against `max_record`.
    pub fn append(&mut self, records: Vec<SyncMessage>) {
        for mut m in records {
            if self.strip_seq {
                m.message_seq = None;
            }
            if let Some(max) = self.max_record {
                let len = serde_json::to_string(&m).unwrap().len();
                assert!(
                    len as u64 <= max,
                    "a record of {len} bytes is larger than maxRecordBytes {max}"
                );
                self.largest = self.largest.max(len);
                self.bytes += len;
            }
            self.log.push(m);
            self.log_at.push(self.now);
        }
    }

    // ---- inputs ----

    /// An input of `id` made by `f(task, now)`, the clock moved by `input_gap` first.
    pub fn input(
        &mut self,
        id: &str,
        f: impl FnOnce(&mut SyncTask, u64) -> SyncOutput,
        what: &str,
    ) {
        self.now += self.input_gap;
        self.call_as(id, f, what);
    }

    /// An input of `id` made by `f(task, now)` at the current time (the clock not moved).
    pub fn call(&mut self, id: &str, f: impl FnOnce(&mut SyncTask, u64) -> SyncOutput) {
        self.call_as(id, f, "");
    }

    fn call_as(&mut self, id: &str, f: impl FnOnce(&mut SyncTask, u64) -> SyncOutput, what: &str) {
        let now = self.now;
        let out = f(self.task_mut(id), now);
        self.act_as(id, out, what);
    }

    /// `id` finds `token` (children of `parents`).
    pub fn add(&mut self, id: &str, token: &str, parents: &[&str]) {
        self.add_partitions(id, &[PartitionSpec::new(token, parents)]);
    }

    pub fn add_partitions(&mut self, id: &str, specs: &[PartitionSpec]) {
        self.input(
            id,
            |t, now| t.add_partitions(specs, now).unwrap(),
            "addPartitions",
        );
    }

    /// `id` reports started `token`.
    pub fn run(&mut self, id: &str, token: &str) {
        self.input(
            id,
            |t, now| t.partition_started(token, now).unwrap(),
            "partitionStarted",
        );
    }

    /// `id` reports started every partition it owns that is scheduled.
    pub fn start_all(&mut self, id: &str) {
        let tokens: Vec<String> = self
            .task(id)
            .owned_partitions()
            .iter()
            .filter(|p| p.state == PartitionStatus::Scheduled)
            .map(|p| p.token.clone())
            .collect();
        for t in tokens {
            self.run(id, &t);
        }
    }

    /// Every task reports started, at `now`, each partition it was told to start.
    pub fn start_running(&mut self, now: u64) {
        for (id, tokens) in self.running.clone() {
            for t in tokens {
                let out = self.task_mut(&id).partition_started(&t, now).unwrap();
                self.act(&id, out);
            }
        }
    }

    /// `id` reports finished `token`.
    pub fn finish(&mut self, id: &str, token: &str) {
        if let Some(run) = self.running.get_mut(id) {
            run.remove(token);
        }
        self.input(
            id,
            |t, now| t.partition_finished(token, now).unwrap(),
            "partitionFinished",
        );
    }

    /// A rebalance of generation `generation` told to each of `members` (no one reads yet).
    pub fn announce(&mut self, generation: u64, leader: &str, members: &[&str]) {
        self.members = members.iter().map(|m| m.to_string()).collect();
        for m in members {
            self.rebalance_one(generation, leader, members, m);
        }
    }

    /// The rebalance told to `who` alone.
    pub fn rebalance_one(&mut self, generation: u64, leader: &str, members: &[&str], who: &str) {
        let ev = RebalanceEvent {
            generation,
            leader: who == leader,
            members: (who == leader).then(|| members.iter().map(|s| s.to_string()).collect()),
        };
        self.input(
            who,
            |t, now| t.on_rebalance(&ev, now).unwrap(),
            "onRebalance",
        );
    }

    /// [`World::announce`], then everyone reads.
    pub fn rebalance(&mut self, generation: u64, leader: &str, members: &[&str]) {
        self.announce(generation, leader, members);
        self.settle();
    }

    // ---- reading ----

    /// Delivers the next record to `id`; false when it has read everything.
    pub fn step(&mut self, id: &str) -> bool {
        let at = self.tasks[id].1;
        if at >= self.log.len() {
            return false;
        }
        assert!(at >= self.first, "{id} is behind retention");
        self.tasks.get_mut(id).unwrap().1 += 1;
        let msg = self.log[at].clone();
        self.input(id, |t, now| t.on_message(&msg, now).unwrap(), "onMessage");
        for st in &msg.connector_state {
            for p in &st.data.partitions {
                if p.state == PartitionStatus::Finished {
                    self.finishes_read
                        .entry(id.to_string())
                        .or_default()
                        .insert(p.token.clone());
                }
            }
        }
        true
    }

    /// `id` passes over its next record (a hole in what it reads).
    pub fn skip(&mut self, id: &str) {
        self.tasks.get_mut(id).unwrap().1 += 1;
    }

    /// `id` reads the log to its end.
    pub fn drain(&mut self, id: &str) {
        while self.step(id) {}
    }

    /// The records in flight that are due land; then every live task whose reader is not
    /// stalled reads the log to its end, one record each in turn.
    pub fn settle(&mut self) {
        let now = self.now;
        let (due, later): (Vec<_>, Vec<_>) = std::mem::take(&mut self.flight)
            .into_iter()
            .partition(|(at, _)| *at <= now);
        self.flight = later;
        self.append(due.into_iter().map(|(_, m)| m).collect());
        loop {
            let mut moved = false;
            for id in self.live_ids() {
                if !self.stalled.contains(&id) {
                    moved |= self.step(&id);
                }
            }
            if !moved {
                break;
            }
        }
    }

    // ---- time ----

    /// `dt` passes; every live task ticks (nobody reads yet).
    pub fn tick(&mut self, dt: u64) {
        self.now += dt;
        let mut outputs = Vec::new();
        for id in self.live_ids() {
            let now = self.now;
            let mut out = self.task_mut(&id).tick(now);
            if self.interleave {
                outputs.push(std::mem::take(&mut out.publish));
            }
            self.act_as(&id, out, "tick");
        }
        // concurrent producers: one record of each in turn
        let longest = outputs.iter().map(Vec::len).max().unwrap_or(0);
        let mut turns = Vec::new();
        for k in 0..longest {
            turns.extend(outputs.iter().filter_map(|o| o.get(k).cloned()));
        }
        self.append(turns);
    }

    /// `n` times: `dt` passes, every live task ticks, everyone reads.
    pub fn ticks(&mut self, n: usize, dt: u64) {
        for _ in 0..n {
            self.tick(dt);
            self.settle();
        }
    }

    /// Time passes until `until`, each live task ticking at its `poll_timeout()` (never in
    /// the past after a tick) and everyone reading what was published; retention (`retention`
    /// ms, if any) deletes old records as time goes.
    pub fn run_until(&mut self, until: u64, retention: Option<u64>) {
        loop {
            let next = self
                .live_ids()
                .iter()
                .filter_map(|id| self.task(id).poll_timeout())
                .min();
            let Some(next) = next.filter(|&t| t <= until) else {
                self.now = self.now.max(until);
                break;
            };
            self.now = self.now.max(next);
            for id in self.live_ids() {
                let now = self.now;
                if self.task(&id).poll_timeout().is_some_and(|t| t <= now) {
                    let out = self.task_mut(&id).tick(now);
                    self.act(&id, out);
                    let after = self.task(&id).poll_timeout();
                    assert!(
                        after.is_none_or(|t| t > now),
                        "{id}: pollTimeout {after:?} <= now {now} after tick"
                    );
                }
            }
            self.settle();
            if let Some(r) = retention {
                self.expire(r);
            }
        }
    }

    // ---- producers ----

    /// `id` publishes into a buffer from now on (a slow producer, or a transport that leaves
    /// the group before it flushes).
    pub fn hold(&mut self, id: &str) {
        self.held.insert(id.to_string(), Vec::new());
    }

    /// What `id` published since `hold` lands now.
    pub fn land(&mut self, id: &str) {
        let held = self.held.remove(id).unwrap_or_default();
        self.append(held);
    }

    /// Every task's records go to its producer's queue from now on, landed by `pace`.
    pub fn queue(&mut self) {
        self.queued.get_or_insert_with(BTreeMap::new);
    }

    /// One step of a paced world: `dt` passes; the producers' queues land up to `land` records
    /// each, one of each task in turn; then each live task in turn reads up to `read` records
    /// and ticks if its timer is due.
    pub fn pace(&mut self, dt: u64, land: usize, read: usize) {
        self.now += dt;
        for _ in 0..land {
            let mut turn = Vec::new();
            for q in self.queued.iter_mut().flat_map(|q| q.values_mut()) {
                turn.extend(q.pop_front());
            }
            self.append(turn);
        }
        for id in self.live_ids() {
            for _ in 0..read {
                if !self.step(&id) {
                    break;
                }
            }
            let now = self.now;
            if self.task(&id).poll_timeout().is_some_and(|at| at <= now) {
                self.call(&id, |t, now| t.tick(now));
            }
        }
    }

    /// `pace` until `time` has passed.
    pub fn pace_for(&mut self, time: u64, dt: u64, land: usize, read: usize) {
        let until = self.now + time;
        while self.now < until {
            self.pace(dt, land, read);
        }
    }

    /// `id`'s records land `lag` after it publishes them, in order.
    pub fn slow(&mut self, id: &str, lag: u64) {
        self.lag.insert(id.to_string(), lag);
    }

    // ---- retention and where a new task starts ----

    /// Retention deletes the records older than `retention`.
    pub fn expire(&mut self, retention: u64) {
        while self.first < self.log.len() && self.log_at[self.first] + retention < self.now {
            self.first += 1;
        }
    }

    /// Where a new task starts: the core's start rule (`find_epoch_start`, which
    /// `findEpochStart` calls) over the retained records, offsets being log indexes; these
    /// scenarios expect it at a checkpoint: clean, or (not clean) right after the named record,
    /// with the checkpoint applied first.
    pub fn start(&self) -> (usize, Option<SyncMessage>) {
        match self.epoch_start() {
            EpochStart::At(k) if self.log[k as usize].checkpoint.is_some() => (k as usize, None),
            EpochStart::AfterCheckpoint { offset, checkpoint } => {
                let parts = checkpoint
                    .iter()
                    .map(|&k| self.log[k as usize].clone())
                    .collect();
                (offset as usize, Some(checkpoint_message(parts).unwrap()))
            }
            other => panic!("no usable checkpoint is retained: {other:?}"),
        }
    }

    /// What the core's start rule says of the retained records (offsets being log indexes).
    pub fn epoch_start(&self) -> EpochStart {
        let records: Vec<LogRecord<'_>> = (self.first..self.log.len())
            .map(|k| LogRecord {
                offset: k as u64,
                header: Some(RecordHeader::of(&self.log[k])),
            })
            .collect();
        find_epoch_start(&records, true, self.first as u64).unwrap()
    }

    /// The latest retained clean checkpoint (the record before it is the one it names).
    pub fn start_offset(&self) -> usize {
        (self.first + 1..self.log.len())
            .rev()
            .find(|&k| self.names_previous(k))
            .expect("a clean checkpoint is retained")
    }

    /// Whether record `k` is a checkpoint that names the record before it.
    fn names_previous(&self, k: usize) -> bool {
        let (m, prev) = (&self.log[k], &self.log[k - 1]);
        m.checkpoint.as_ref().is_some_and(|c| {
            prev.task_id == c.after_task_id && prev.message_seq == Some(c.after_seq)
        })
    }

    /// When each checkpoint (its first record) was appended, and by whom.
    pub fn checkpoints(&self) -> Vec<(u64, String)> {
        let first = |m: &SyncMessage| m.chunk.as_ref().is_none_or(|c| c.index == 0);
        self.log
            .iter()
            .zip(&self.log_at)
            .filter(|(m, _)| m.checkpoint.is_some() && first(m))
            .map(|(m, at)| (*at, m.task_id.clone()))
            .collect()
    }

    /// The clean checkpoints in the log, by when they were appended: directly preceded by the
    /// record they name, their chunks consecutive.
    pub fn clean_checkpoints(&self) -> Vec<u64> {
        let mut v = Vec::new();
        for (i, m) in self.log.iter().enumerate() {
            if m.checkpoint.is_none() || m.chunk.as_ref().is_some_and(|c| c.index > 0) || i == 0 {
                continue;
            }
            let count = m.chunk.as_ref().map_or(1, |c| c.count) as usize;
            let whole = (0..count).all(|k| {
                self.log.get(i + k).is_some_and(|r| {
                    r.task_id == m.task_id && r.chunk.as_ref().map_or(0, |c| c.index) as usize == k
                })
            });
            if whole && self.names_previous(i) {
                v.push(self.log_at[i]);
            }
        }
        v
    }

    /// The checkpoints in the log a task can start at, clean or not (it applies one first and
    /// reads on from the record after the one it names), by when they were appended: the
    /// record they name is in the log before them, and so are their chunks, in order.
    pub fn usable_checkpoints(&self) -> Vec<u64> {
        let mut v = Vec::new();
        for (i, m) in self.log.iter().enumerate() {
            let Some(named) = &m.checkpoint else { continue };
            let count = m.chunk.as_ref().map_or(1, |c| c.count);
            if m.chunk.as_ref().is_some_and(|c| c.index + 1 < c.count) {
                continue; // stands complete at its last chunk
            }
            let chunks = self.log[..=i]
                .iter()
                .filter(|r| r.task_id == m.task_id && r.checkpoint.as_ref() == Some(named))
                .count() as u64;
            let names = self.log[..i].iter().any(|r| {
                r.task_id == named.after_task_id && r.message_seq == Some(named.after_seq)
            });
            if names && chunks >= u64::from(count) {
                v.push(self.log_at[i]);
            }
        }
        v
    }

    // ---- views ----

    /// Partition `token` as `id` owns it, if it does.
    pub fn partition(&self, id: &str, token: &str) -> Option<PartitionState> {
        self.task(id)
            .owned_partitions()
            .iter()
            .find(|p| p.token == token)
            .cloned()
    }

    /// The unfinished tokens `id` owns, sorted.
    pub fn owned(&self, id: &str) -> Vec<String> {
        let mut v: Vec<String> = self
            .task(id)
            .owned_partitions()
            .iter()
            .filter(|p| !p.state.is_done())
            .map(|p| p.token.clone())
            .collect();
        v.sort();
        v
    }

    /// Every token owned by at most one of `ids`.
    pub fn assert_unique(&self, ids: &[&str]) {
        let mut seen: BTreeMap<String, String> = BTreeMap::new();
        for id in ids {
            for p in self.task(id).owned_partitions() {
                if let Some(other) = seen.insert(p.token.clone(), id.to_string()) {
                    panic!("{} owned by {other} and {id}", p.token);
                }
            }
        }
    }

    /// The live owner of every partition in `tokens`, which must be exactly one each.
    pub fn owners(&self, tokens: &[&str]) -> BTreeMap<String, (String, PartitionStatus)> {
        let mut found = BTreeMap::new();
        for id in self.live_ids() {
            for p in self.task(&id).owned_partitions() {
                if tokens.contains(&p.token.as_str()) {
                    let prev = found.insert(p.token.clone(), (id.clone(), p.state));
                    assert!(prev.is_none(), "{} owned twice: {prev:?} and {id}", p.token);
                }
            }
        }
        for t in tokens {
            assert!(found.contains_key(*t), "{t} is owned by no live task");
        }
        found
    }

    /// How many epochs were published (re-publications aside).
    pub fn epoch_count(&self) -> usize {
        self.log
            .iter()
            .filter(|m| m.kind == MessageType::NewEpoch && !m.resend)
            .count()
    }

    /// `id`'s view (its own state included), without the per-task clocks.
    pub fn view(&self, id: &str) -> Vec<TaskState> {
        let mut v = self.task(id).known_tasks();
        for s in &mut v {
            s.state_timestamp = 0;
        }
        v
    }
}

/// The default options with these two timeouts (the scenarios' usual group: short rebalances).
pub fn timeouts(rebalance_timeout: u64, epoch_ack_timeout: u64) -> SyncOptions {
    SyncOptions {
        rebalance_timeout,
        epoch_ack_timeout,
        ..SyncOptions::default()
    }
}

/// Partitions `tokens`, none with parents.
pub fn specs(tokens: &[&str]) -> Vec<PartitionSpec> {
    tokens.iter().map(|t| PartitionSpec::new(*t, &[])).collect()
}
