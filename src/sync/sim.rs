//! Deterministic simulation of N [`SyncTask`]s (test support; no effect on the library).
//!
//! A seeded PRNG drives a totally-ordered sync log, a group coordinator that hands out
//! generations, and a world of partitions that split and merge. Faults: crashes, restarts with
//! new task ids, slow readers, duplicate delivery, a task missing a NewEpoch, leader death during
//! an epoch, rebalances in quick succession. After every step the harness checks:
//! - **safety**: no partition Scheduled/Running on two live tasks, no partition owned by two live
//!   tasks whose epochs every member has applied (`SyncTask::epoch_confirmed`), no partition
//!   restarted once finished or moved away from a live task that ran it;
//! - **no loss**: whenever every live task has applied the epoch of the current generation, every
//!   created, unfinished partition that every live task has read of is owned by a live task or
//!   shared to one;
//! - **liveness**: after the faults stop (every live task then reads side by side, as Kafka
//!   consumers fetch), every partition finishes;
//! - **balance**: with the group converged and work frozen, new partitions only go to tasks whose
//!   load is within 1 of the least-loaded task.
//!
//! A failure carries its seed number and the trace of every step, so `run(&SimConfig::from_seed(s))`
//! replays it exactly.
//!
//! # Examples
//! ```
//! use partkit::sync::sim::{run, SimConfig};
//! let report = run(&SimConfig::from_seed(7)).unwrap();
//! assert!(report.partitions_finished > 0);
//! ```

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::rc::Rc;

use super::{
    MessageType, PartitionSpec, RebalanceEvent, SyncMessage, SyncOptions, SyncOutput, SyncTask,
};

/// SplitMix64: a tiny seeded PRNG, enough for a simulation.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(seed ^ 0x5DEE_CE66_D1CE_4E5B)
    }
    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (0 if `n == 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }
    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }
    /// True with probability `per_mille / 1000`.
    pub fn chance(&mut self, per_mille: u64) -> bool {
        self.below(1000) < per_mille
    }
}

/// Fault rates, per mille of steps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Faults {
    /// A random live task crashes.
    pub crash: u64,
    /// A new task (new id) starts.
    pub restart: u64,
    /// A spurious rebalance (same members, new generation).
    pub quick_rebalance: u64,
    /// A delivery re-delivers the previous message too.
    pub duplicate: u64,
    /// A NewEpoch is not delivered to the reader.
    pub miss_epoch: u64,
    /// The leader of a rebalance in progress crashes.
    pub leader_death: u64,
    /// A garbage message is fed to a task (it must be rejected without effect).
    pub garbage: u64,
    /// A record lands twice in the log (a producer retry).
    pub duplicate_record: u64,
    /// A task finishes a partition and leaves the group cleanly before its records land (they
    /// land some steps later, possibly after the next epoch).
    pub leave: u64,
    /// A task dies half-way through publishing a message in chunks (the chunks before land),
    /// per mille of such publishes.
    pub chunk_death: u64,
}

/// One simulation run.
#[derive(Debug, Clone)]
pub struct SimConfig {
    /// Seed of everything.
    pub seed: u64,
    /// Tasks at start (1–12; any number in a scale run).
    pub tasks: usize,
    /// Partitions in the split/merge DAG.
    pub partitions: usize,
    /// Steps with faults.
    pub chaos_steps: usize,
    /// Step budget to finish everything after faults stop.
    pub heal_budget: usize,
    /// Partitions added one by one in the balance phase.
    pub balance_partitions: usize,
    /// Fault rates.
    pub faults: Faults,
    /// Options of every task.
    pub options: SyncOptions,
    /// Keep the full trace (otherwise only the last lines).
    pub full_trace: bool,
    /// Fail when a finished partition is started again (otherwise count it in
    /// [`SimReport::reruns`]). Reruns are at-least-once duplicates, not concurrent runs: they
    /// happen when a leader times out on a slow view and the finish is read after the epoch.
    pub strict_reruns: bool,
    /// Model a transport that checks log offsets, as `KafkaTaskSync` does: a task that misses a
    /// message is fenced (`SyncTask::fence`) when it reads the next one, and re-deliveries are
    /// dropped. Off by default: the core then sees holes only through `messageSeq`.
    pub check_offsets: bool,
    /// The sync topic's retention, in time units: records older than this are deleted, a task
    /// that had not read them is fenced (its transport sees the offsets jump), and a new task
    /// starts reading at the latest clean checkpoint (`start_offset`).
    pub retention: u64,
    /// Largest clock skew of a task (each task's clock runs ahead of the simulation's by a
    /// fixed amount drawn up to this).
    pub max_skew: u64,
    /// A scale run ([`SimConfig::scale`]): each task's share of the partitions, all of them
    /// added at once; 0 for an ordinary run.
    pub per_task: usize,
    /// Fail a run in which the record the newest usable checkpoint names gets older than the
    /// retention (on in ordinary runs; a scale run only measures it,
    /// [`SimReport::longest_without_usable`]).
    pub check_usable: bool,
}

impl SimConfig {
    /// A configuration drawn from `seed`.
    pub fn from_seed(seed: u64) -> Self {
        let mut r = Rng::new(seed.wrapping_mul(31).wrapping_add(17));
        let tasks = r.range(1, 12) as usize;
        let mut cfg = SimConfig {
            seed,
            tasks,
            partitions: r.range(3, 40) as usize,
            chaos_steps: r.range(300, 1500) as usize,
            heal_budget: 60_000,
            balance_partitions: r.range(0, 3 * tasks as u64) as usize,
            faults: Faults {
                crash: r.range(0, 8),
                restart: r.range(0, 10),
                quick_rebalance: r.range(0, 8),
                duplicate: r.range(0, 100),
                miss_epoch: r.range(0, 150),
                leader_death: r.range(0, 100),
                garbage: r.range(0, 10),
                duplicate_record: 0,
                leave: 0,
                chunk_death: 0,
            },
            options: SyncOptions {
                rebalance_timeout: r.range(50, 400),
                epoch_ack_timeout: r.range(50, 300),
                removal_delay: r.range(0, 200),
                tombstone_ttl: r.range(30_000, 60_000),
                state_refresh_interval: 1,
                ..SyncOptions::default()
            },
            full_trace: false,
            strict_reruns: false,
            check_offsets: false,
            retention: 0,
            max_skew: 0,
            per_task: 0,
            check_usable: true,
        };
        // drawn after the rest, so that older seeds keep their other settings
        // (as in production, several times the rebalance and acknowledgement timeouts)
        cfg.options.state_refresh_interval =
            r.range(2, 6) * (cfg.options.rebalance_timeout + cfg.options.epoch_ack_timeout);
        cfg.retention =
            cfg.options.state_refresh_interval * super::MIN_RETENTION_REFRESHES + r.range(0, 500);
        cfg.faults.duplicate_record = r.range(0, 30);
        cfg.faults.leave = r.range(0, 8);
        cfg.max_skew = r.range(0, 50);
        if r.chance(400) {
            // small records: epochs, checkpoints and large own states go out in chunks
            cfg.options.max_record_bytes = r.range(super::MIN_RECORD_BYTES, 3000);
        }
        if r.chance(120) {
            cfg.tasks = 1; // a one-task connector
        }
        cfg.faults.chunk_death = cfg.faults.crash * 20;
        // options at the edges of what docs/sync.md allows (drawn last: the seeds before keep
        // everything else): an acknowledgement timeout as long as the interval or longer (the
        // default 30 s beside an interval of 5 s is legal), a retention of exactly the minimum
        let interval = cfg.options.state_refresh_interval;
        if r.chance(150) {
            cfg.options.epoch_ack_timeout = r.range(interval / 2, 3 * interval);
        }
        if r.chance(100) {
            cfg.retention = interval * super::MIN_RETENTION_REFRESHES;
        }
        cfg
    }

    /// A scale run drawn from `seed`: `tasks` tasks (any number) sharing `tasks * per_task`
    /// partitions, every one of them added at once by the first task in an epoch (as a connector
    /// finds its initial partitions), with the default `maxRecordBytes` (900,000 bytes): the
    /// first own state, every NewEpoch and every checkpoint go out in chunks, and a task dies
    /// half-way through a chunked publish (always the first one published while faults are on,
    /// then with a probability of 30–60 %), besides crashes,
    /// leader deaths, missed epochs, duplicates and restarts. A scale run checks safety, no loss
    /// and the record bound as an ordinary run does (safety every few steps, see
    /// [`SimConfig::check_every`]); its liveness is that the group converges with every
    /// partition known and owned by (or shared to) a live task: the partitions are long-running
    /// (a change stream's), only the ones a task happens to work on finish.
    pub fn scale(seed: u64, tasks: usize, per_task: usize) -> Self {
        let mut r = Rng::new(seed.wrapping_mul(31).wrapping_add(0x5CA1E));
        let tasks = tasks.max(1);
        let mut options = SyncOptions {
            rebalance_timeout: r.range(200, 400),
            epoch_ack_timeout: r.range(200, 300),
            removal_delay: r.range(0, 200),
            tombstone_ttl: r.range(30_000, 60_000),
            ..SyncOptions::default()
        };
        options.state_refresh_interval =
            r.range(2, 6) * (options.rebalance_timeout + options.epoch_ack_timeout);
        let retention =
            options.state_refresh_interval * super::MIN_RETENTION_REFRESHES + r.range(0, 500);
        SimConfig {
            seed,
            tasks,
            partitions: tasks * per_task.max(1),
            chaos_steps: r.range(150, 300) as usize,
            heal_budget: 400_000,
            balance_partitions: 0,
            faults: Faults {
                crash: r.range(1, 4),
                restart: r.range(0, 3),
                quick_rebalance: r.range(0, 2),
                duplicate: r.range(0, 50),
                miss_epoch: r.range(0, 50),
                leader_death: r.range(0, 30),
                garbage: 0,
                duplicate_record: r.range(0, 10),
                leave: r.range(0, 2),
                chunk_death: r.range(300, 600),
            },
            options,
            full_trace: false,
            strict_reruns: false,
            check_offsets: r.chance(500),
            retention,
            max_skew: r.range(0, 50),
            per_task: per_task.max(1),
            check_usable: false,
        }
    }

    /// How often the harness checks safety and no loss: every step in an ordinary run, every
    /// 16th step (and at the end of each phase) in a scale run, where one check walks every
    /// partition of every task.
    pub fn check_every(&self) -> usize {
        if self.per_task > 0 {
            16
        } else {
            1
        }
    }
}

/// Outcome of a successful run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SimReport {
    /// The run's seed.
    pub seed: u64,
    /// The sync topic's retention (time units).
    pub retention: u64,
    /// Steps taken.
    pub steps: usize,
    /// Messages appended to the log.
    pub messages: usize,
    /// Epochs applied by at least one task.
    pub epochs: usize,
    /// Generations handed out.
    pub generations: u64,
    /// Partitions finished.
    pub partitions_finished: usize,
    /// Tasks started (initial + restarts).
    pub tasks_started: usize,
    /// Crashes.
    pub crashes: usize,
    /// Largest record published, in JSON bytes (every record is checked against
    /// `maxRecordBytes` as it is published).
    pub max_message_bytes: usize,
    /// Records published that are one chunk of a message.
    pub chunk_records: usize,
    /// Tasks that died half-way through publishing a message in chunks.
    pub chunk_deaths: usize,
    /// Partitions known to the group at the end (every one owned by or shared to a live task,
    /// or finished).
    pub partitions_known: usize,
    /// Finished partitions started again (see [`SimConfig::strict_reruns`]).
    pub reruns: usize,
    /// Tasks that fenced themselves (they read the log with a hole) and were replaced.
    pub fenced: usize,
    /// The longest time the log went without a clean checkpoint (from one to the next, or to
    /// the end of the run), in time units.
    pub longest_without_checkpoint: u64,
    /// The longest time from the record a usable checkpoint names (where a new task would start
    /// reading, all its chunks landed) to the next such record, or the end of the run.
    pub longest_without_usable: u64,
}

/// A violated property, with everything needed to replay it.
#[derive(Debug, Clone)]
pub struct SimFailure {
    /// Seed of the run.
    pub seed: u64,
    /// Step at which the check failed.
    pub step: usize,
    /// What failed.
    pub message: String,
    /// The steps that led there.
    pub trace: Vec<String>,
}

impl std::fmt::Display for SimFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "sync simulation failed: seed {} step {}: {}",
            self.seed, self.step, self.message
        )?;
        writeln!(
            f,
            "replay: cargo run --features sim --example sync_sim -- --seed {} --trace",
            self.seed
        )?;
        for l in &self.trace {
            writeln!(f, "  {l}")?;
        }
        Ok(())
    }
}

#[derive(Debug, Clone)]
struct Part {
    parents: Vec<String>,
    children: Vec<String>,
    work: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Scheduled,
    Running(u32),
}

struct Node {
    id: String,
    task: SyncTask,
    alive: bool,
    cursor: usize,
    slow: bool,
    events: VecDeque<RebalanceEvent>,
    running: BTreeMap<String, Phase>,
    /// The transport skipped a message (offset checking finds it at the next one).
    hole: bool,
    /// How far this task's clock runs ahead of the simulation's.
    skew: u64,
    /// The first record this task read (where its transport started it).
    read_from: usize,
}

struct Sim {
    cfg: SimConfig,
    rng: Rng,
    now: u64,
    step: usize,
    log: Vec<Rc<SyncMessage>>,
    nodes: Vec<Node>,
    dag: BTreeMap<String, Part>,
    roots: Vec<String>,
    roots_added: bool,
    generation: u64,
    members: Vec<usize>,
    change_at: Option<usize>,
    /// Every partition named in a record of the log, with the index of the first such record.
    created: BTreeMap<String, usize>,
    /// Per sender, the partitions named by the chunks of a message not landed whole yet, and
    /// those of them it says are done.
    chunk_tokens: BTreeMap<String, (Vec<String>, Vec<String>)>,
    /// Every partition a record of the log says is done (Finished or Removed), with the index of
    /// the first such record (of a message landed whole): a task that read it never starts the
    /// partition again (ordinary runs).
    finished_at: BTreeMap<String, usize>,
    finished: BTreeSet<String>,
    last_runner: BTreeMap<String, usize>,
    epochs: BTreeSet<String>,
    /// NewEpoch ids delivered or missed once (a miss happens at the first delivery only).
    seen_epochs: BTreeSet<(usize, String)>,
    frozen: bool,
    trace: VecDeque<String>,
    report: SimReport,
    /// When each log record landed (retention deletes by it).
    log_time: Vec<u64>,
    /// The earliest record retention has not deleted.
    retained_from: usize,
    /// Records of tasks that left the group, landing at a later step.
    delayed: Vec<(usize, SyncMessage)>,
    /// While set, what a task publishes is delayed to that step (a clean leave racing its records).
    divert: Option<usize>,
    /// Faults are on (the chaos phase).
    chaos: bool,
    /// When the last clean checkpoint landed.
    last_clean: Option<u64>,
    /// When the record named by the latest usable checkpoint landed.
    last_usable: Option<u64>,
}

type Check = Result<(), String>;

fn build_dag(rng: &mut Rng, n: usize) -> (BTreeMap<String, Part>, Vec<String>) {
    let mut dag: BTreeMap<String, Part> = BTreeMap::new();
    let mut next = 0usize;
    let new_token = |next: &mut usize| {
        *next += 1;
        format!("p{:03}", *next - 1)
    };
    let roots_n = rng.range(1, 3.min(n as u64).max(1)) as usize;
    let mut leaves: Vec<String> = Vec::new();
    let mut roots = Vec::new();
    for _ in 0..roots_n {
        let t = new_token(&mut next);
        dag.insert(
            t.clone(),
            Part {
                parents: vec![],
                children: vec![],
                work: rng.range(1, 6) as u32,
            },
        );
        leaves.push(t.clone());
        roots.push(t);
    }
    while dag.len() < n {
        let merge = leaves.len() >= 2 && rng.chance(300);
        if merge {
            let a = leaves.remove(rng.below(leaves.len() as u64) as usize);
            let b = leaves.remove(rng.below(leaves.len() as u64) as usize);
            let c = new_token(&mut next);
            dag.get_mut(&a).expect("leaf").children.push(c.clone());
            dag.get_mut(&b).expect("leaf").children.push(c.clone());
            dag.insert(
                c.clone(),
                Part {
                    parents: vec![a, b],
                    children: vec![],
                    work: rng.range(1, 6) as u32,
                },
            );
            leaves.push(c);
        } else {
            let a = leaves.remove(rng.below(leaves.len() as u64) as usize);
            for _ in 0..rng.range(2, 3) {
                let c = new_token(&mut next);
                dag.get_mut(&a).expect("leaf").children.push(c.clone());
                dag.insert(
                    c.clone(),
                    Part {
                        parents: vec![a.clone()],
                        children: vec![],
                        work: rng.range(1, 6) as u32,
                    },
                );
                leaves.push(c);
            }
        }
    }
    (dag, roots)
}

/// A scale run's partitions: `n` roots, none split or merged (they are long-running).
fn flat_dag(rng: &mut Rng, n: usize) -> (BTreeMap<String, Part>, Vec<String>) {
    let roots: Vec<String> = (0..n).map(|i| format!("p{i:06}")).collect();
    let dag = roots
        .iter()
        .map(|t| {
            let part = Part {
                parents: vec![],
                children: vec![],
                work: rng.range(1, 6) as u32,
            };
            (t.clone(), part)
        })
        .collect();
    (dag, roots)
}

/// Runs one simulation; `Err` describes the first violated property.
pub fn run(cfg: &SimConfig) -> Result<SimReport, SimFailure> {
    let mut sim = Sim::new(cfg.clone());
    match sim.run_all() {
        Ok(()) => {
            sim.report.seed = cfg.seed;
            sim.report.retention = cfg.retention;
            sim.report.steps = sim.step;
            sim.report.messages = sim.log.len();
            sim.report.epochs = sim.epochs.len();
            sim.report.generations = sim.generation;
            sim.report.partitions_finished = sim.finished.len();
            sim.report.partitions_known = sim.created.len();
            sim.gap_until_now();
            sim.usable_gap_until_now();
            Ok(sim.report)
        }
        Err(message) => Err(SimFailure {
            seed: cfg.seed,
            step: sim.step,
            message,
            trace: sim.trace.into_iter().collect(),
        }),
    }
}

impl Sim {
    fn new(cfg: SimConfig) -> Self {
        let mut rng = Rng::new(cfg.seed);
        let (dag, roots) = if cfg.per_task > 0 {
            flat_dag(&mut rng, cfg.partitions.max(1))
        } else {
            build_dag(&mut rng, cfg.partitions.max(1))
        };
        let mut sim = Sim {
            rng,
            now: 0,
            step: 0,
            log: Vec::new(),
            nodes: Vec::new(),
            dag,
            roots,
            roots_added: false,
            generation: 0,
            members: Vec::new(),
            change_at: Some(0),
            created: BTreeMap::new(),
            chunk_tokens: BTreeMap::new(),
            finished_at: BTreeMap::new(),
            finished: BTreeSet::new(),
            last_runner: BTreeMap::new(),
            epochs: BTreeSet::new(),
            seen_epochs: BTreeSet::new(),
            frozen: false,
            trace: VecDeque::new(),
            report: SimReport::default(),
            log_time: Vec::new(),
            retained_from: 0,
            delayed: Vec::new(),
            divert: None,
            chaos: true,
            last_clean: None,
            last_usable: None,
            cfg,
        };
        let tasks = if sim.scale() {
            sim.cfg.tasks.max(1)
        } else {
            sim.cfg.tasks.clamp(1, 12)
        };
        let o = &sim.cfg.options;
        let line = format!(
            "config: {tasks} tasks, {} partitions, rebalanceTimeout {}, epochAckTimeout {}, stateRefreshInterval {}, retention {}, maxRecordBytes {}",
            sim.cfg.partitions,
            o.rebalance_timeout,
            o.epoch_ack_timeout,
            o.state_refresh_interval,
            sim.cfg.retention,
            o.max_record_bytes
        );
        sim.note(line);
        for _ in 0..tasks {
            sim.spawn();
        }
        sim
    }

    /// A scale run ([`SimConfig::scale`]).
    fn scale(&self) -> bool {
        self.cfg.per_task > 0
    }

    /// Whether each task's owned set is compared before and after every input, for the trace
    /// (not in a scale run, unless the full trace is kept: it copies every owned token twice).
    fn trace_owned(&self) -> bool {
        !self.scale() || self.cfg.full_trace
    }

    /// At most `n` tasks that have ever run (ordinary runs cap restarts; a scale run counts on
    /// top of its tasks).
    fn cap(&self, n: usize) -> usize {
        if self.scale() {
            self.cfg.tasks + n
        } else {
            n
        }
    }

    fn note(&mut self, line: String) {
        self.trace
            .push_back(format!("#{} t={} {line}", self.step, self.now));
        if !self.cfg.full_trace && self.trace.len() > 5000 {
            self.trace.pop_front();
        }
    }

    fn spawn(&mut self) -> usize {
        let id = format!("t{}", self.nodes.len());
        let task = SyncTask::with_options(&id, self.cfg.options.clone()).expect("valid options");
        let skew = self.rng.range(0, self.cfg.max_skew);
        self.nodes.push(Node {
            skew,
            id: id.clone(),
            task,
            alive: true,
            cursor: 0,
            slow: false,
            events: VecDeque::new(),
            running: BTreeMap::new(),
            hole: false,
            read_from: 0,
        });
        self.report.tasks_started += 1;
        self.note(format!("spawn {id}"));
        self.nodes.len() - 1
    }

    /// Task `i`'s clock.
    fn clock(&self, i: usize) -> u64 {
        self.now + self.nodes[i].skew
    }

    fn alive(&self) -> Vec<usize> {
        (0..self.nodes.len())
            .filter(|&i| self.nodes[i].alive)
            .collect()
    }

    fn pick(&mut self, v: &[usize]) -> Option<usize> {
        if v.is_empty() {
            None
        } else {
            Some(v[self.rng.below(v.len() as u64) as usize])
        }
    }

    // --------------------------------------------------------------------------- main loop

    fn run_all(&mut self) -> Check {
        let every = self.cfg.check_every();
        // (a scale run's chaos lasts until a task has died half-way through a chunked publish,
        // up to four times as long)
        let most = if self.scale() {
            self.cfg.chaos_steps * 4
        } else {
            self.cfg.chaos_steps
        };
        for k in 0..most {
            if k >= self.cfg.chaos_steps && self.report.chunk_deaths > 0 {
                break;
            }
            self.chaos_step()?;
            if self.step % every == 0 {
                self.check()?;
            }
        }
        self.check()?;
        self.note("== heal".into());
        self.chaos = false;
        for n in &mut self.nodes {
            n.slow = false;
        }
        if self.scale() {
            // long-running partitions, no more work: the group converges with every partition
            // known (the last check then finds each owned by or shared to a live task)
            self.frozen = true;
            self.heal_until(|s| s.converged() && s.created.len() >= s.dag.len())?;
            return self.check();
        }
        self.heal_until(|s| s.converged())?;
        if self.cfg.balance_partitions > 0 {
            self.balance_phase()?;
        }
        self.heal_until(|s| s.all_done() && s.converged())?;
        Ok(())
    }

    fn heal_until(&mut self, done: impl Fn(&Sim) -> bool) -> Check {
        let mut budget = self.cfg.heal_budget;
        while !done(self) {
            if budget == 0 {
                let missing: Vec<&String> = self
                    .dag
                    .keys()
                    .filter(|t| !self.finished.contains(*t))
                    .take(20)
                    .collect();
                return Err(format!(
                    "liveness: not converged after the heal budget; unfinished: {missing:?}; {}",
                    self.describe()
                ));
            }
            budget -= 1;
            self.heal_step()?;
            if self.step % self.cfg.check_every() == 0 {
                self.check()?;
            }
        }
        self.check()
    }

    fn describe(&self) -> String {
        let mut s = format!("generation {} members {:?};", self.generation, self.members);
        for n in self.nodes.iter().filter(|n| n.alive) {
            s.push_str(&format!(
                " [{} epoch {:?} in {} leader {} waiting {:?} behind {} cursor {}/{} events {} owned {:?} shares {:?}]",
                n.id,
                n.task.epoch(),
                n.task.in_epoch(),
                n.task.is_leader(),
                n.task.waiting_for(),
                n.task.is_behind(),
                n.cursor,
                self.log.len(),
                n.events.len(),
                n.task.owned_partitions().iter().map(|p| format!("{}:{:?}", p.token, p.state)).collect::<Vec<_>>(),
                n.task.shared_partitions().iter().map(|p| format!("{}->{}", p.token, p.assignee)).collect::<Vec<_>>(),
            ));
        }
        s
    }

    fn all_done(&self) -> bool {
        self.dag.keys().all(|t| self.finished.contains(t))
    }

    /// Group stable, every live task a member that applied the current generation's epoch,
    /// everything delivered (late records included).
    fn converged(&self) -> bool {
        let alive = self.alive();
        let epochs: BTreeSet<Option<&str>> =
            alive.iter().map(|&i| self.nodes[i].task.epoch()).collect();
        epochs.len() == 1
            && !alive.is_empty()
            && self.change_at.is_none()
            && self.delayed.is_empty()
            && alive == self.members
            && alive.iter().all(|&i| {
                let n = &self.nodes[i];
                n.events.is_empty()
                    && n.cursor == self.log.len()
                    && n.task.in_epoch()
                    && n.task.epoch_generation() == self.generation
            })
    }

    /// Group stable and every live task applied the same epoch of the current generation (a
    /// leader's later attempt of a generation is another epoch: a reader that has not read it
    /// yet still sees the attempt before).
    fn epoch_stable(&self) -> bool {
        let alive = self.alive();
        let epochs: BTreeSet<Option<&str>> =
            alive.iter().map(|&i| self.nodes[i].task.epoch()).collect();
        epochs.len() == 1
            && self.change_at.is_none()
            && !alive.is_empty()
            && alive == self.members
            && alive.iter().all(|&i| {
                let n = &self.nodes[i];
                n.events.is_empty()
                    && n.task.in_epoch()
                    && n.task.epoch_generation() == self.generation
            })
    }

    fn chaos_step(&mut self) -> Check {
        self.step += 1;
        self.now += self.rng.range(0, 3);
        self.land_delayed();
        self.expire()?;
        // one task at least keeps up with the log (with every task behind by more than the
        // retention, no task could keep a complete state in it): after a crash took the last
        // one, another catches up
        let alive = self.alive();
        if alive.iter().all(|&i| self.nodes[i].slow) {
            if let Some(&i) = alive.first() {
                self.nodes[i].slow = false;
            }
        }
        self.membership()?;
        let f = self.cfg.faults.clone();
        if self.rng.chance(f.leave) {
            return self.leave();
        }
        if self.rng.chance(f.crash) {
            return self.crash(false);
        }
        if self.rng.chance(f.leader_death) {
            // a no-op when no leader is collecting answers
            self.crash(true)?;
        }
        if self.rng.chance(f.restart) || self.alive().is_empty() {
            self.restart();
            return Ok(());
        }
        if self.rng.chance(f.quick_rebalance) && self.generation > 0 {
            self.note("quick rebalance".into());
            self.change_at = Some(self.step);
            return Ok(());
        }
        if self.rng.chance(f.garbage) {
            return self.garbage();
        }
        if self.rng.chance(20) {
            let alive = self.alive();
            let keeping_up = alive.iter().filter(|&&i| !self.nodes[i].slow).count();
            if let Some(i) = self
                .pick(&alive)
                .filter(|&i| self.nodes[i].slow || keeping_up > 1)
            {
                self.nodes[i].slow = !self.nodes[i].slow;
                let l = format!("{} slow={}", self.nodes[i].id, self.nodes[i].slow);
                self.note(l);
            }
        }
        self.ordinary_step(true)
    }

    fn heal_step(&mut self) -> Check {
        self.step += 1;
        self.now += self.rng.range(0, 3);
        self.land_delayed();
        self.expire()?;
        if self.alive().is_empty() {
            self.restart_capped(usize::MAX);
        }
        self.membership()?;
        self.ordinary_step(false)
    }

    fn ordinary_step(&mut self, faults: bool) -> Check {
        match self.rng.below(100) {
            0..=49 => self.deliver(faults),
            50..=61 => self.deliver_event(),
            62..=84 => self.work(),
            _ => self.tick(),
        }
    }

    // --------------------------------------------------------------------------- membership

    fn membership(&mut self) -> Check {
        let Some(at) = self.change_at else {
            return Ok(());
        };
        if self.step < at {
            return Ok(());
        }
        let alive = self.alive();
        if alive.is_empty() {
            return Ok(());
        }
        self.change_at = None;
        self.generation += 1;
        self.members = alive.clone();
        let leader = alive[self.rng.below(alive.len() as u64) as usize];
        let ids: Vec<String> = alive.iter().map(|&i| self.nodes[i].id.clone()).collect();
        self.note(format!(
            "generation {} members {:?} leader {}",
            self.generation, ids, self.nodes[leader].id
        ));
        for &i in &alive {
            let ev = RebalanceEvent {
                generation: self.generation,
                leader: i == leader,
                members: if i == leader { Some(ids.clone()) } else { None },
            };
            // like Kafka, a member only ever learns the group's latest generation
            self.nodes[i].events.clear();
            self.nodes[i].events.push_back(ev);
        }
        Ok(())
    }

    fn crash(&mut self, leader_only: bool) -> Check {
        let alive = self.alive();
        let candidates: Vec<usize> = if leader_only {
            alive
                .into_iter()
                .filter(|&i| self.nodes[i].task.is_leader() && self.nodes[i].task.rebalancing())
                .collect()
        } else {
            alive
        };
        let Some(i) = self.pick(&candidates) else {
            return Ok(());
        };
        let n = &mut self.nodes[i];
        n.alive = false;
        n.events.clear();
        n.running.clear();
        let id = n.id.clone();
        self.report.crashes += 1;
        let delay = self.rng.range(1, 30) as usize;
        let at = self.step + delay;
        self.change_at = Some(self.change_at.map_or(at, |c| c.min(at)));
        self.note(format!(
            "crash {id}{}",
            if leader_only {
                " (leader collecting answers)"
            } else {
                ""
            }
        ));
        Ok(())
    }

    fn restart(&mut self) {
        self.restart_capped(self.cap(64));
    }

    fn restart_capped(&mut self, cap: usize) {
        if self.nodes.len() >= cap {
            return;
        }
        let i = self.spawn();
        // subscription order: read the sync topic up to its end from where the transport starts
        // (the latest clean checkpoint), then join the group
        let (start, first) = self.start_offset();
        self.nodes[i].cursor = start;
        self.nodes[i].read_from = start;
        let l = format!(
            "{} starts reading at #{} (retained from #{}): {}",
            self.nodes[i].id,
            self.nodes[i].cursor,
            self.retained_from,
            self.log
                .get(self.nodes[i].cursor)
                .map_or(String::new(), |m| format!(
                    "{:?} {} from {}#{:?}{}",
                    m.kind,
                    m.sync_epoch,
                    m.task_id,
                    m.message_seq,
                    m.checkpoint.as_ref().map_or(String::new(), |c| format!(
                        " (checkpoint after {}#{})",
                        c.after_task_id, c.after_seq
                    ))
                ))
        );
        self.note(l);
        if let Some(msg) = first {
            self.replay(i, &msg);
        }
        while self.nodes[i].cursor < self.log.len() {
            let msg = Rc::clone(&self.log[self.nodes[i].cursor]);
            self.nodes[i].cursor += 1;
            self.replay(i, &msg);
        }
        let at = self.step + self.rng.range(1, 5) as usize;
        self.change_at = Some(self.change_at.map_or(at, |c| c.min(at)));
    }

    /// One message of a new task's replay (what goes wrong is noted, not a failure).
    fn replay(&mut self, i: usize, msg: &SyncMessage) {
        let now = self.clock(i);
        match self.nodes[i].task.on_message(msg, now) {
            Ok(out) => {
                if let Err(e) = self.apply(i, out) {
                    self.note(format!("restart replay failed: {e}"));
                }
            }
            Err(e) => self.note(format!("restart replay error {e}")),
        }
    }

    // --------------------------------------------------------------------------- actions

    fn apply(&mut self, i: usize, out: SyncOutput) -> Check {
        if !self.nodes[i].alive {
            return Ok(()); // it died half-way through a publish: nothing more of it happens
        }
        for t in &out.stop {
            self.nodes[i].running.remove(t);
        }
        if let Some(why) = &out.fenced {
            // the task stopped everything and falls silent: it leaves the group, and the
            // connector starts a replacement under a new id
            if !self.nodes[i].running.is_empty() {
                return Err(format!(
                    "{} fenced itself but still runs {:?}",
                    self.nodes[i].id, self.nodes[i].running
                ));
            }
            let n = &mut self.nodes[i];
            n.alive = false;
            n.events.clear();
            let l = format!("{} fenced: {why}", n.id);
            self.report.fenced += 1;
            self.note(l);
            let at = self.step + self.rng.range(1, 30) as usize;
            self.change_at = Some(self.change_at.map_or(at, |c| c.min(at)));
            self.restart_capped(self.cap(256));
            return Ok(());
        }
        for t in &out.start {
            if self.finished.contains(t) {
                if self.cfg.strict_reruns {
                    return Err(format!(
                        "rerun: {} told to start {t}, which already finished",
                        self.nodes[i].id
                    ));
                }
                self.report.reruns += 1;
                let l = format!("{} reruns finished {t}", self.nodes[i].id);
                self.note(l);
            }
            // a task that read a record saying the partition is done never starts it again
            // (docs/sync.md, Guarantees: its finish landed before whatever moved it here)
            let n = &self.nodes[i];
            if let Some(&k) = self.finished_at.get(t) {
                if n.read_from <= k && k < n.cursor {
                    return Err(format!(
                        "rerun: {} told to start {t}, having read record #{k} that says it is done",
                        n.id
                    ));
                }
            }
            if let Some(&prev) = self.last_runner.get(t) {
                if prev != i && self.nodes[prev].alive && self.nodes[prev].running.contains_key(t) {
                    return Err(format!(
                        "safety: {} told to start {t} while {} runs it",
                        self.nodes[i].id, self.nodes[prev].id
                    ));
                }
            }
            self.last_runner.insert(t.clone(), i);
            self.nodes[i].running.insert(t.clone(), Phase::Scheduled);
        }
        let mut publish = out.publish;
        // (in a scale run, the first message in chunks published with faults on always dies
        // half-way, so that every scale run has one)
        let forced = self.scale() && self.report.chunk_deaths == 0;
        if self.chaos
            && publish.iter().any(|m| m.chunk.is_some())
            && (forced || self.rng.chance(self.cfg.faults.chunk_death))
        {
            // the task dies half-way through a chunked publish: the chunks before land
            let k = publish
                .iter()
                .position(|m| m.chunk.as_ref().is_some_and(|c| c.index + 1 < c.count))
                .unwrap_or(0);
            let keep = k + 1 + self.rng.below(publish.len().saturating_sub(k + 1) as u64) as usize;
            publish.truncate(keep.min(publish.len() - 1).max(1));
            let l = format!(
                "{} dies after publishing {} of its records",
                self.nodes[i].id,
                publish.len()
            );
            self.note(l);
            self.nodes[i].alive = false;
            self.nodes[i].events.clear();
            self.nodes[i].running.clear();
            self.report.crashes += 1;
            self.report.chunk_deaths += 1;
            let at = self.step + self.rng.range(1, 30) as usize;
            self.change_at = Some(self.change_at.map_or(at, |c| c.min(at)));
        }
        for m in publish {
            let json = serde_json::to_string(&m).map_err(|e| format!("serialize: {e}"))?;
            if json.len() as u64 > self.cfg.options.max_record_bytes {
                return Err(format!(
                    "a record of {} bytes is larger than maxRecordBytes {}",
                    json.len(),
                    self.cfg.options.max_record_bytes
                ));
            }
            let back: SyncMessage =
                serde_json::from_str(&json).map_err(|e| format!("deserialize: {e}"))?;
            if back != m {
                return Err(format!("json round trip changed a message: {json}"));
            }
            self.report.max_message_bytes = self.report.max_message_bytes.max(json.len());
            self.report.chunk_records += usize::from(m.chunk.is_some());
            let scale = self.scale();
            if m.kind == MessageType::NewEpoch {
                let l = format!(
                    "{} publishes NewEpoch {} base {:?}{} {}",
                    m.task_id,
                    m.sync_epoch,
                    m.base_epoch,
                    match (m.resend, &m.checkpoint) {
                        (_, Some(c)) => {
                            // how many records landed after the one it names (0: clean)
                            let named = self.log.iter().rev().position(|r| {
                                r.task_id == c.after_task_id && r.message_seq == Some(c.after_seq)
                            });
                            format!(
                                " (checkpoint after {}#{}, {} later)",
                                c.after_task_id,
                                c.after_seq,
                                named.map_or("?".into(), |k| k.to_string())
                            )
                        }
                        (true, None) => " (resend)".to_string(),
                        _ => String::new(),
                    },
                    m.connector_state
                        .iter()
                        .map(|s| if scale {
                            format!("{}:{}", s.task_id, s.data.partitions.len())
                        } else {
                            format!(
                                "{}:{:?}",
                                s.task_id,
                                s.data
                                    .partitions
                                    .iter()
                                    .map(|p| p.token.as_str())
                                    .collect::<Vec<_>>()
                            )
                        })
                        .collect::<Vec<_>>()
                        .join(" ")
                );
                self.note(l);
            }
            match self.divert {
                Some(due) => self.delayed.push((due, m)),
                None => {
                    let twice = self.chaos && self.rng.chance(self.cfg.faults.duplicate_record);
                    if twice {
                        self.note(format!("record #{} lands twice", self.log.len()));
                        self.append(m.clone());
                    }
                    self.append(m);
                }
            }
        }
        if !out.start.is_empty() || !out.stop.is_empty() {
            let l = format!(
                "{} start {:?} stop {:?}",
                self.nodes[i].id, out.start, out.stop
            );
            self.note(l);
        }
        Ok(())
    }

    fn deliver(&mut self, faults: bool) -> Check {
        if self.scale() {
            return self.deliver_all(faults);
        }
        if !self.chaos {
            return self.deliver_heal();
        }
        let alive: Vec<usize> = self
            .alive()
            .into_iter()
            .filter(|&i| self.nodes[i].cursor < self.log.len())
            .collect();
        let Some(i) = self.pick(&alive) else {
            return self.tick();
        };
        if self.nodes[i].slow && !self.rng.chance(150) {
            return Ok(());
        }
        let burst = self.rng.range(1, 4);
        self.deliver_to(i, burst, faults)
    }

    /// A scale run's delivery: every live task reads a burst of what it has not read yet (as
    /// Kafka consumers fetch continuously; a slow task now and then), so that reading keeps up
    /// with time as the log grows by view-sized records.
    fn deliver_all(&mut self, faults: bool) -> Check {
        let burst = self.rng.range(1, 64);
        for i in self.alive() {
            if !self.nodes[i].alive || self.nodes[i].cursor >= self.log.len() {
                continue;
            }
            if self.nodes[i].slow && !self.rng.chance(150) {
                continue;
            }
            self.deliver_to(i, burst, faults)?;
        }
        Ok(())
    }

    /// Delivery once the faults stop: every live task reads a burst of 0–3 records, in a random
    /// order, as Kafka consumers fetch side by side. (During the chaos one task at a time reads,
    /// each at 1/n of the rate: with 27 tasks that was slower than the log grows by one chunked
    /// checkpoint per interval, and the readers never caught up all at once.)
    fn deliver_heal(&mut self) -> Check {
        let mut order = self.alive();
        for k in (1..order.len()).rev() {
            order.swap(k, self.rng.below(k as u64 + 1) as usize);
        }
        let mut any = false;
        for i in order {
            if !self.nodes[i].alive || self.nodes[i].cursor >= self.log.len() {
                continue;
            }
            any = true;
            let burst = self.rng.range(0, 3);
            self.deliver_to(i, burst, false)?;
        }
        if !any {
            return self.tick();
        }
        Ok(())
    }

    /// Up to `burst` records of the log to task `i`, with the delivery faults when `faults`.
    fn deliver_to(&mut self, i: usize, burst: u64, faults: bool) -> Check {
        for _ in 0..burst {
            let k = self.nodes[i].cursor;
            if k >= self.log.len() {
                break;
            }
            let msg = Rc::clone(&self.log[k]);
            self.nodes[i].cursor += 1;
            // a task misses a NewEpoch (it was not reading when it was published); copies and
            // re-publications of an epoch it missed reach it
            if faults
                && msg.kind == MessageType::NewEpoch
                && !msg.resend
                && !self.seen_epochs.contains(&(i, msg.sync_epoch.clone()))
                && self.rng.chance(self.cfg.faults.miss_epoch)
            {
                self.seen_epochs.insert((i, msg.sync_epoch.clone()));
                let l = format!(
                    "{} misses #{k} NewEpoch {}",
                    self.nodes[i].id, msg.sync_epoch
                );
                self.note(l);
                self.nodes[i].hole = self.cfg.check_offsets;
                continue;
            }
            if self.nodes[i].hole {
                let now = self.clock(i);
                let out = self.nodes[i]
                    .task
                    .fence(&format!("offset {} was never read", k - 1), now);
                self.apply(i, out)?;
                break;
            }
            if msg.kind == MessageType::NewEpoch {
                self.seen_epochs.insert((i, msg.sync_epoch.clone()));
            }
            self.feed(i, k, &msg)?;
            if !self.nodes[i].alive {
                break;
            }
            if faults
                && k > 0
                && !self.cfg.check_offsets
                && self.rng.chance(self.cfg.faults.duplicate)
            {
                let dup = Rc::clone(&self.log[k - 1]);
                self.feed(i, k - 1, &dup)?;
            }
        }
        Ok(())
    }

    fn owned_set(&self, i: usize) -> BTreeSet<String> {
        if !self.trace_owned() {
            return BTreeSet::new();
        }
        let t = &self.nodes[i].task;
        t.owned_partitions()
            .iter()
            .map(|p| p.token.clone())
            .chain(
                t.shared_partitions()
                    .iter()
                    .map(|s| format!("{}->{}", s.token, s.assignee)),
            )
            .collect()
    }

    fn note_owned(&mut self, i: usize, before: &BTreeSet<String>, why: &str) {
        let after = self.owned_set(i);
        if &after != before {
            let added: Vec<&String> = after.difference(before).collect();
            let removed: Vec<&String> = before.difference(&after).collect();
            let l = format!("{} owns +{added:?} -{removed:?} ({why})", self.nodes[i].id);
            self.note(l);
        }
    }

    fn feed(&mut self, i: usize, k: usize, msg: &SyncMessage) -> Check {
        let owned_before = self.owned_set(i);
        let before = self.nodes[i].task.epoch().map(str::to_string);
        let now = self.clock(i);
        let out = self.nodes[i]
            .task
            .on_message(msg, now)
            .map_err(|e| format!("{} rejected log message #{k}: {e}", self.nodes[i].id))?;
        let after = self.nodes[i].task.epoch().map(str::to_string);
        if before != after {
            if let Some(e) = &after {
                self.epochs.insert(e.clone());
            }
            let l = format!("{} applies epoch {:?} (#{k})", self.nodes[i].id, after);
            self.note(l);
        }
        self.note_owned(
            i,
            &owned_before,
            &format!("#{k} {:?} from {}", msg.kind, msg.task_id),
        );
        self.apply(i, out)
    }

    fn deliver_event(&mut self) -> Check {
        let with: Vec<usize> = self
            .alive()
            .into_iter()
            .filter(|&i| !self.nodes[i].events.is_empty())
            .collect();
        let Some(i) = self.pick(&with) else {
            return self.tick();
        };
        let ev = self.nodes[i].events.pop_front().expect("non-empty");
        let now = self.clock(i);
        let out = self.nodes[i]
            .task
            .on_rebalance(&ev, now)
            .map_err(|e| format!("{} rejected rebalance: {e}", self.nodes[i].id))?;
        let l = format!(
            "{} rebalance g{} leader {}",
            self.nodes[i].id, ev.generation, ev.leader
        );
        self.note(l);
        self.apply(i, out)
    }

    fn work(&mut self) -> Check {
        if self.frozen {
            return self.tick();
        }
        let with: Vec<usize> = self
            .alive()
            .into_iter()
            .filter(|&i| !self.nodes[i].running.is_empty())
            .collect();
        let Some(i) = self.pick(&with) else {
            return self.tick();
        };
        let tokens: Vec<String> = self.nodes[i].running.keys().cloned().collect();
        let t = tokens[self.rng.below(tokens.len() as u64) as usize].clone();
        let phase = self.nodes[i].running[&t];
        let now = self.clock(i);
        match phase {
            Phase::Scheduled => {
                let out = self.nodes[i]
                    .task
                    .partition_started(&t, now)
                    .map_err(|e| format!("{} partition_started({t}): {e}", self.nodes[i].id))?;
                self.nodes[i].running.insert(t.clone(), Phase::Running(0));
                self.apply(i, out)
            }
            Phase::Running(p) => {
                let work = self.dag.get(&t).map_or(1, |d| d.work);
                if p + 1 < work {
                    self.nodes[i].running.insert(t, Phase::Running(p + 1));
                    return Ok(());
                }
                self.finish_partition(i, &t)
            }
        }
    }

    /// Task `i` finishes running partition `t`: its children first, then the finish.
    fn finish_partition(&mut self, i: usize, t: &str) -> Check {
        let now = self.clock(i);
        let children: Vec<PartitionSpec> = self
            .dag
            .get(t)
            .map(|d| {
                d.children
                    .iter()
                    .map(|c| PartitionSpec {
                        token: c.clone(),
                        parents: self.dag[c].parents.clone(),
                        start_timestamp: Some(now),
                        end_timestamp: None,
                    })
                    .collect()
            })
            .unwrap_or_default();
        if !children.is_empty() {
            let owned_before = self.owned_set(i);
            let out = self.nodes[i]
                .task
                .add_partitions(&children, now)
                .map_err(|e| format!("{} add_partitions: {e}", self.nodes[i].id))?;
            let l = format!(
                "{} finds children of {t}: {:?}",
                self.nodes[i].id,
                children
                    .iter()
                    .map(|c| c.token.as_str())
                    .collect::<Vec<_>>()
            );
            self.note(l);
            self.note_owned(i, &owned_before, "add_partitions");
            self.apply(i, out)?;
            if !self.nodes[i].alive {
                return Ok(()); // it died publishing
            }
        }
        let out = self.nodes[i]
            .task
            .partition_finished(t, now)
            .map_err(|e| format!("{} partition_finished({t}): {e}", self.nodes[i].id))?;
        self.nodes[i].running.remove(t);
        self.finished.insert(t.to_string());
        let l = format!("{} finishes {t}", self.nodes[i].id);
        self.note(l);
        self.apply(i, out)
    }

    /// Time goes to the next wake-up of a task (`poll_timeout`, as quinn's test `Pair` steps
    /// to the next timeout), or on a little when no task has one; the tasks that are due tick,
    /// and none may have a deadline at or before its `now` afterwards.
    fn tick(&mut self) -> Check {
        let next = self
            .alive()
            .into_iter()
            .filter_map(|i| {
                let n = &self.nodes[i];
                n.task.poll_timeout().map(|t| t.saturating_sub(n.skew))
            })
            .min();
        // (never past what a reader that keeps up could lag by: a quiet stretch of time in which
        // no task reads would fence every reader at once)
        let most = self.now + (self.cfg.retention / 64).max(1);
        match next {
            Some(t) if t > self.now => self.now = t.min(most),
            Some(_) => {}
            None => self.now += self.rng.range(1, 60),
        }
        for i in self.alive() {
            let now = self.clock(i);
            if self.nodes[i].task.poll_timeout().is_none_or(|t| t > now) {
                continue;
            }
            // a task that keeps up has mostly read the log to its end when its timer fires (a
            // Kafka consumer fetches continuously): what it publishes now reflects it
            if !self.nodes[i].slow && self.rng.chance(800) {
                self.deliver_to(i, u64::MAX, self.chaos)?;
                if !self.nodes[i].alive {
                    continue;
                }
            }
            let owned_before = self.owned_set(i);
            let out = self.nodes[i].task.tick(now);
            self.note_owned(i, &owned_before, "tick");
            self.apply(i, out)?;
            if let Some(t) = self.nodes[i].task.poll_timeout().filter(|&t| t <= now) {
                return Err(format!(
                    "timers: {} has pollTimeout {t} <= now {now} after tick",
                    self.nodes[i].id
                ));
            }
        }
        // roots: added once, by the first task that applies an epoch
        if !self.roots_added {
            if let Some(i) = self
                .alive()
                .into_iter()
                .find(|&i| self.nodes[i].task.in_epoch())
            {
                let now = self.clock(i);
                let specs: Vec<PartitionSpec> = self
                    .roots
                    .iter()
                    .map(|r| PartitionSpec::new(r.clone(), &[]))
                    .collect();
                let out = self.nodes[i]
                    .task
                    .add_partitions(&specs, now)
                    .map_err(|e| format!("roots: {e}"))?;
                self.roots_added = true;
                let l = if self.scale() {
                    format!("{} adds {} roots", self.nodes[i].id, self.roots.len())
                } else {
                    format!("{} adds roots {:?}", self.nodes[i].id, self.roots)
                };
                self.note(l);
                self.note_owned(i, &BTreeSet::new(), "roots");
                self.apply(i, out)?;
                if self.scale() && !self.nodes[i].alive {
                    // it died half-way through publishing them: they are known to nobody, and
                    // the connector's next task finds its initial partitions again
                    self.roots_added = false;
                }
            }
        }
        Ok(())
    }

    /// A task finishes a running partition and leaves the group cleanly right away (it stops
    /// everything); its last records land some steps later, possibly after the next epoch.
    fn leave(&mut self) -> Check {
        let with: Vec<usize> = self
            .alive()
            .into_iter()
            .filter(|&i| {
                self.nodes[i]
                    .running
                    .values()
                    .any(|p| matches!(p, Phase::Running(_)))
            })
            .collect();
        let Some(i) = self.pick(&with) else {
            return Ok(());
        };
        let t = self.nodes[i]
            .running
            .iter()
            .find(|(_, p)| matches!(p, Phase::Running(_)))
            .map(|(t, _)| t.clone())
            .unwrap_or_default();
        let due = self.step + self.rng.range(1, 40) as usize;
        self.divert = Some(due);
        let r = self.finish_partition(i, &t);
        self.divert = None;
        r?;
        let n = &mut self.nodes[i];
        n.alive = false;
        n.events.clear();
        n.running.clear();
        let l = format!("{} leaves; its records land at step {due}", n.id);
        self.note(l);
        let at = self.step + self.rng.range(1, 5) as usize;
        self.change_at = Some(self.change_at.map_or(at, |c| c.min(at)));
        Ok(())
    }

    /// A record lands in the log (what it names exists from now on).
    fn append(&mut self, m: SyncMessage) {
        let at = self.log.len();
        // a message in chunks names its partitions once its last chunk lands (a task that died
        // half-way through publishing it made nothing known)
        let (pending, done) = self.chunk_tokens.entry(m.task_id.clone()).or_default();
        if m.chunk.as_ref().is_none_or(|c| c.index == 0) {
            pending.clear();
            done.clear();
        }
        for s in &m.connector_state {
            let tokens = s.data.partitions.iter().map(|p| &p.token);
            pending.extend(
                tokens
                    .chain(s.share.partitions.iter().map(|p| &p.token))
                    .cloned(),
            );
            if self.cfg.per_task == 0 {
                let finished = s.data.partitions.iter().filter(|p| p.state.is_done());
                done.extend(finished.map(|p| p.token.clone()));
            }
        }
        if m.chunk.as_ref().is_none_or(|c| c.index + 1 == c.count) {
            for t in std::mem::take(pending) {
                self.created.entry(t).or_insert(at);
            }
            for t in std::mem::take(done) {
                self.finished_at.entry(t).or_insert(at);
            }
        }
        let (complete, checkpoint) = (
            m.chunk.as_ref().is_none_or(|c| c.index + 1 == c.count),
            m.checkpoint.is_some(),
        );
        self.log.push(Rc::new(m));
        self.log_time.push(self.now);
        if complete && checkpoint {
            self.note_checkpoint(at);
        }
    }

    /// A checkpoint completes at `log[at]`: if it is usable (the record it names is retained
    /// before it) the clock of the longest stretch without a usable checkpoint starts again from
    /// that record; if it is clean (the record before its first chunk is the one it names, its
    /// chunks one after the other) the clock of the longest stretch without a clean one starts
    /// again. Both start at the first such checkpoint: before it, a new task replays the log from
    /// its start (the first interval of a connector).
    fn note_checkpoint(&mut self, at: usize) {
        // (its chunks one after the other; a copy of one of them landing twice in between, a
        // producer retry, is passed over by every reader)
        let last = &self.log[at];
        let count = last.chunk.as_ref().map_or(1, |c| c.count as u64);
        let Some(seq0) = last.message_seq.and_then(|s| s.checked_sub(count - 1)) else {
            return;
        };
        let mut first = at;
        let mut contiguous = true;
        while first > 0 && self.log[first].message_seq != Some(seq0) {
            first -= 1;
            let r = &self.log[first];
            let ours = r.task_id == last.task_id
                && r.message_seq
                    .is_some_and(|s| s >= seq0 && s <= seq0 + count - 1);
            contiguous &= ours;
            if !ours {
                break;
            }
        }
        let first_is_ours =
            self.log[first].task_id == last.task_id && self.log[first].message_seq == Some(seq0);
        contiguous &= first_is_ours;
        // (the first of the copies of the first chunk)
        while contiguous
            && first > 0
            && self.log[first - 1].task_id == last.task_id
            && self.log[first - 1].message_seq == Some(seq0)
        {
            first -= 1;
        }
        let clean = contiguous
            && first > 0
            && self.log[first].checkpoint.as_ref().is_some_and(|c| {
                // (the record it names, or a copy of it landing twice)
                let prev = &self.log[first - 1];
                prev.task_id == c.after_task_id && prev.message_seq == Some(c.after_seq)
            });
        // usable: the record it names retained before its first chunk (wherever that is: other
        // senders' records between its chunks are read normally; every chunk has the header)
        let first_chunk = (self.retained_from..=at).rev().find(|&k| {
            self.log[k].task_id == last.task_id && self.log[k].message_seq == Some(seq0)
        });
        let named = last
            .checkpoint
            .as_ref()
            .zip(first_chunk)
            .and_then(|(c, c0)| {
                (self.retained_from..c0).rev().find(|&j| {
                    self.log[j].task_id == c.after_task_id
                        && self.log[j].message_seq == Some(c.after_seq)
                })
            });
        if let Some(j) = named {
            let t = self.log_time[j];
            if self.last_usable.is_none_or(|u| t > u) {
                let gap = t.saturating_sub(self.last_usable.unwrap_or(t));
                let r = &mut self.report.longest_without_usable;
                *r = (*r).max(gap);
                self.last_usable = Some(t);
            }
        }
        if clean {
            let since = self.last_clean.map_or(0, |t| self.now.saturating_sub(t));
            self.note(format!(
                "#{first} a clean checkpoint lands, {since} after the last one"
            ));
            self.gap_until_now();
            self.last_clean = Some(self.now);
        }
    }

    /// The stretch without a clean checkpoint up to now counts toward the longest.
    fn gap_until_now(&mut self) {
        if let Some(t) = self.last_clean {
            let gap = self.now.saturating_sub(t);
            let r = &mut self.report.longest_without_checkpoint;
            *r = (*r).max(gap);
        }
    }

    /// The stretch without a usable checkpoint up to now counts toward the longest.
    fn usable_gap_until_now(&mut self) {
        if let Some(t) = self.last_usable {
            let gap = self.now.saturating_sub(t);
            let r = &mut self.report.longest_without_usable;
            *r = (*r).max(gap);
        }
    }

    /// The delayed records that are due land in the log.
    fn land_delayed(&mut self) {
        let step = self.step;
        let (due, later): (Vec<_>, Vec<_>) = std::mem::take(&mut self.delayed)
            .into_iter()
            .partition(|(at, _)| *at <= step);
        self.delayed = later;
        for (_, m) in due {
            self.note(format!("delayed record of {} lands", m.task_id));
            self.append(m);
        }
    }

    /// Retention deletes the records older than `retention`; a live task that had not read
    /// them sees its offsets jump (as `KafkaTaskSync` does) and fences itself.
    fn expire(&mut self) -> Check {
        if self.cfg.retention == 0 {
            return Ok(());
        }
        while self.retained_from < self.log.len()
            && self.log_time[self.retained_from].saturating_add(self.cfg.retention) < self.now
        {
            self.retained_from += 1;
        }
        for i in self.alive() {
            let from = self.nodes[i].cursor;
            if from >= self.retained_from || !self.nodes[i].alive {
                continue;
            }
            self.nodes[i].cursor = self.retained_from;
            let now = self.clock(i);
            let why = format!("records #{from}.. were deleted by retention before it read them");
            let out = self.nodes[i].task.fence(&why, now);
            self.apply(i, out)?;
        }
        Ok(())
    }

    /// Where a new task starts reading: the core's start rule (`find_epoch_start`, which the
    /// Kafka transport's `findEpochStart` calls) over the retained log, offsets being log
    /// indexes; with the checkpoint to apply first (`checkpoint_message`) when it is not clean.
    fn start_offset(&self) -> (usize, Option<SyncMessage>) {
        let lo = self.retained_from;
        let records: Vec<super::LogRecord<'_>> = (lo..self.log.len())
            .map(|k| super::LogRecord {
                offset: k as u64,
                header: Some(super::RecordHeader::of(&self.log[k])),
            })
            .collect();
        match super::find_epoch_start(&records, true, lo as u64) {
            Ok(super::EpochStart::At(k)) => (k as usize, None),
            Ok(super::EpochStart::AfterCheckpoint { offset, checkpoint }) => {
                let parts = checkpoint
                    .iter()
                    .map(|&k| SyncMessage::clone(&self.log[k as usize]))
                    .collect();
                let first = super::checkpoint_message(parts).expect("the rule's chunks join");
                (offset as usize, Some(first))
            }
            // (the whole retained log is there: at_low)
            Ok(super::EpochStart::Extend) | Err(_) => unreachable!("records in order, at low"),
        }
    }

    fn garbage(&mut self) -> Check {
        let alive = self.alive();
        let Some(i) = self.pick(&alive) else {
            return Ok(());
        };
        let mut msg = match self.log.last() {
            Some(m) => SyncMessage::clone(m),
            None => return Ok(()),
        };
        match self.rng.below(4) {
            0 => msg.task_id.clear(),
            1 => msg.connector_state.clear(),
            2 => {
                if let Some(s) = msg.connector_state.first_mut() {
                    if let Some(p) = s.data.partitions.first().cloned() {
                        s.data.partitions.push(p);
                    } else {
                        s.task_id.clear();
                    }
                }
            }
            _ => {
                msg.kind = MessageType::NewEpoch;
                msg.sync_epoch.clear();
            }
        }
        if msg.kind == MessageType::NewEpoch && msg.connector_state.is_empty() {
            msg.epoch_generation = 0; // an empty epoch is well-formed: make it malformed
        }
        let before = format!("{:?}", self.nodes[i].task);
        let now = self.clock(i);
        match self.nodes[i].task.on_message(&msg, now) {
            Ok(_) => Err(format!(
                "{} accepted a malformed message: {msg:?}",
                self.nodes[i].id
            )),
            Err(_) => {
                if format!("{:?}", self.nodes[i].task) != before {
                    return Err(format!(
                        "{} changed state on a rejected message",
                        self.nodes[i].id
                    ));
                }
                Ok(())
            }
        }
    }

    // --------------------------------------------------------------------------- balance

    fn balance_phase(&mut self) -> Check {
        self.frozen = true;
        self.note("== balance".into());
        let alive = self.alive();
        let before: BTreeMap<usize, usize> = alive
            .iter()
            .map(|&i| {
                (
                    i,
                    self.nodes[i]
                        .task
                        .owned_partitions()
                        .iter()
                        .filter(|p| !p.state.is_done())
                        .count(),
                )
            })
            .collect();
        for k in 0..self.cfg.balance_partitions {
            let token = format!("b{k:03}");
            self.dag.insert(
                token.clone(),
                Part {
                    parents: vec![],
                    children: vec![],
                    work: 1,
                },
            );
            let alive = self.alive();
            let Some(i) = self.pick(&alive) else { break };
            let now = self.clock(i);
            let out = self.nodes[i]
                .task
                .add_partitions(&[PartitionSpec::new(token.clone(), &[])], now)
                .map_err(|e| format!("balance add: {e}"))?;
            self.apply(i, out)?;
            self.heal_until(|s| {
                s.converged()
                    && s.alive()
                        .iter()
                        .all(|&j| s.nodes[j].task.shared_partitions().is_empty())
            })?;
        }
        let alive = self.alive();
        let load = |s: &Sim, i: usize| {
            s.nodes[i]
                .task
                .owned_partitions()
                .iter()
                .filter(|p| !p.state.is_done())
                .count()
        };
        let min = alive.iter().map(|&i| load(self, i)).min().unwrap_or(0);
        for &i in &alive {
            let l = load(self, i);
            let took = before.get(&i).map_or(l > 0, |&b| l > b);
            if took && l > min + 1 {
                return Err(format!(
                    "balance: {} took new work and has load {l}, least-loaded task has {min}; {}",
                    self.nodes[i].id,
                    self.describe()
                ));
            }
        }
        self.frozen = false;
        Ok(())
    }

    // --------------------------------------------------------------------------- checks

    fn check(&mut self) -> Check {
        self.gap_until_now();
        self.usable_gap_until_now();
        if self.cfg.check_usable && self.report.longest_without_usable > self.cfg.retention {
            return Err(format!(
                "no usable checkpoint in the retained log: the newest names a record of {:?}, now {}, retention {}",
                self.last_usable, self.now, self.cfg.retention
            ));
        }
        let alive = self.alive();
        let mut active: BTreeMap<&str, &str> = BTreeMap::new();
        let mut owned: BTreeMap<&str, &str> = BTreeMap::new();
        let mut claimed: BTreeMap<&str, &str> = BTreeMap::new(); // owned in a confirmed epoch
        for &i in &alive {
            let n = &self.nodes[i];
            // ownership counts once the task may act on it: a task whose epoch some member has
            // not applied yet (e.g. a fork built by a leader that missed a NewEpoch, which the
            // others reject) starts nothing, and gives the claim up when it learns of the fork
            let confirmed = n.task.epoch_confirmed();
            for p in n.task.owned_partitions() {
                owned.insert(p.token.as_str(), n.id.as_str());
                if confirmed {
                    if let Some(other) = claimed.insert(p.token.as_str(), n.id.as_str()) {
                        return Err(format!("safety: {} owned by {other} and {}", p.token, n.id));
                    }
                }
                if p.state.is_active() {
                    if let Some(other) = active.insert(p.token.as_str(), n.id.as_str()) {
                        return Err(format!(
                            "safety: {} active on {other} and {}",
                            p.token, n.id
                        ));
                    }
                }
            }
        }
        if self.epoch_stable() {
            let alive_ids: BTreeSet<&str> =
                alive.iter().map(|&i| self.nodes[i].id.as_str()).collect();
            let mut shared: BTreeSet<&str> = BTreeSet::new();
            for &i in &alive {
                for s in self.nodes[i].task.shared_partitions() {
                    if alive_ids.contains(s.assignee.as_str()) {
                        shared.insert(s.token.as_str());
                    }
                }
            }
            // (a partition counts once every live task has read the record that names it: the
            // late record of a departed task names partitions nobody knew before)
            let read = alive
                .iter()
                .map(|&i| self.nodes[i].cursor)
                .min()
                .unwrap_or(0);
            for (t, _) in self.created.iter().filter(|(_, &at)| at < read) {
                if !self.finished.contains(t)
                    && !owned.contains_key(t.as_str())
                    && !shared.contains(t.as_str())
                {
                    return Err(format!(
                        "loss: {t} is neither owned by nor shared to a live task; {}",
                        self.describe()
                    ));
                }
            }
        }
        Ok(())
    }
}
