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

mod apply;
mod checks;
mod config;
mod deliver;
mod faults;
mod log;
mod rng;
mod steps;
mod world;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::rc::Rc;

use super::{RebalanceEvent, SyncMessage, SyncTask};

pub use config::{Driver, Faults, SimConfig, SimFailure, SimReport};
pub use rng::Rng;

use world::{build_dag, flat_dag};

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
    /// When its pending rebalance event was queued.
    event_at: u64,
    running: BTreeMap<String, Phase>,
    /// The transport skipped a message (offset checking finds it at the next one).
    hole: bool,
    /// How far this task's clock runs ahead of the simulation's.
    skew: u64,
    /// The first record this task read (where its transport started it).
    read_from: usize,
    /// The last record this task missed (a consumer re-delivers what it delivered, never a
    /// record it skipped).
    skipped: Option<usize>,
    /// A producer with a backlog: what this task publishes lands this long later (in the
    /// simulation's time), in order (0: at once).
    lag: u64,
    /// When the latest of its records in flight lands: the later ones land after it.
    landing: u64,
    /// Frozen (not alive meanwhile) until then.
    frozen_until: Option<u64>,
    /// Woken after the group expelled it: it acts until `learns_at`, when it learns it was
    /// expelled and stops everything; not a member, nor a live task for the safety checks.
    expelled: bool,
    learns_at: u64,
}

impl Node {
    /// The task is gone (it crashed, left, or the connector stopped): it runs and reads nothing.
    fn stop(&mut self) {
        self.alive = false;
        self.events.clear();
        self.running.clear();
    }
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
    /// Those of `created` not in `finished` (what the loss check looks at), in the same order.
    open: BTreeMap<String, usize>,
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
    /// Whether the trace is kept (see `run`).
    tracing: bool,
    report: SimReport,
    /// When each log record landed (retention deletes by it).
    log_time: Vec<u64>,
    /// The earliest record retention has not deleted.
    retained_from: usize,
    /// Records of tasks that left the group, landing at a later step.
    delayed: Vec<(usize, SyncMessage)>,
    /// Records of producers with a backlog, landing at a later time, in order.
    in_flight: Vec<(u64, SyncMessage)>,
    /// While set, what a task publishes is delayed to that step (a clean leave racing its records).
    divert: Option<usize>,
    /// Faults are on (the chaos phase).
    chaos: bool,
    /// When the last clean checkpoint landed.
    last_clean: Option<u64>,
    /// When the record named by the latest usable checkpoint landed.
    last_usable: Option<u64>,
    /// How long the woken task ran partitions a live member ran too, in this wake.
    overlap: u64,
    /// When the checks last ran (the overlap grows by the time between).
    checked_at: u64,
    /// Since when the faults pause: a connector started again after a clean stop of nearly
    /// the whole retention, until its first usable checkpoint lands.
    calm: Option<u64>,
    /// A failure found where the harness cannot return it (a new task's replay): the next
    /// check returns it.
    deferred: Option<String>,
}

type Check = Result<(), String>;

/// Runs one simulation; `Err` describes the first violated property.
///
/// The trace is written only where it is printed: a run goes untraced (unless `full_trace`), and
/// one that fails runs again, traced, to the same failure (the trace draws nothing from the
/// PRNG and changes nothing a task sees: a traced run is the same run).
pub fn run(cfg: &SimConfig) -> Result<SimReport, SimFailure> {
    match run_traced(cfg, cfg.full_trace) {
        Err(quiet) if !cfg.full_trace => match run_traced(cfg, true) {
            Err(f) if f.step == quiet.step && f.message == quiet.message => Err(f),
            _ => Err(SimFailure {
                message: format!(
                    "{} (a traced replay did not fail the same way)",
                    quiet.message
                ),
                ..quiet
            }),
        },
        r => r,
    }
}

fn run_traced(cfg: &SimConfig, tracing: bool) -> Result<SimReport, SimFailure> {
    let mut sim = Sim::new(cfg.clone(), tracing);
    match sim.run_all() {
        Ok(()) => {
            sim.report.seed = cfg.seed;
            sim.report.retention = cfg.retention;
            sim.report.burst = cfg.burst;
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
    fn new(cfg: SimConfig, tracing: bool) -> Self {
        let mut rng = Rng::new(cfg.seed);
        let (mut dag, mut roots) = if cfg.per_task > 0 {
            flat_dag(&mut rng, cfg.partitions.max(1))
        } else {
            build_dag(&mut rng, cfg.partitions.max(1))
        };
        if cfg.burst > 0 {
            let (more, tokens) = flat_dag(&mut rng, cfg.burst);
            dag.extend(more);
            roots.extend(tokens);
        }
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
            open: BTreeMap::new(),
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
            in_flight: Vec::new(),
            divert: None,
            chaos: true,
            last_clean: None,
            last_usable: None,
            deferred: None,
            calm: None,
            overlap: 0,
            checked_at: 0,
            tracing,
            cfg,
        };
        let tasks = if sim.scale() {
            sim.cfg.tasks.max(1)
        } else {
            sim.cfg.tasks.clamp(1, 12)
        };
        let o = &sim.cfg.options;
        let line = format!(
            "config: {tasks} tasks, {} partitions, rebalanceTimeout {}, epochAckTimeout {}, stateRefreshInterval {}, retention {}, maxRecordBytes {}, driver {:?}",
            sim.cfg.partitions,
            o.rebalance_timeout,
            o.epoch_ack_timeout,
            o.state_refresh_interval,
            sim.cfg.retention,
            o.max_record_bytes,
            sim.cfg.driver
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
        self.tracing && (!self.scale() || self.cfg.full_trace)
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
        if !self.tracing {
            return;
        }
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
            event_at: 0,
            running: BTreeMap::new(),
            hole: false,
            read_from: 0,
            skipped: None,
            lag: 0,
            landing: 0,
            frozen_until: None,
            expelled: false,
            learns_at: 0,
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
        // (one allocation: collected from a filter, the list grew from 4 by doubling)
        let mut v = Vec::with_capacity(self.nodes.len());
        v.extend((0..self.nodes.len()).filter(|&i| self.nodes[i].alive));
        v
    }

    fn pick(&mut self, v: &[usize]) -> Option<usize> {
        if v.is_empty() {
            None
        } else {
            Some(v[self.rng.below(v.len() as u64) as usize])
        }
    }
}
