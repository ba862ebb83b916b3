//! What a run is given ([`SimConfig`], [`Faults`]) and what it returns ([`SimReport`],
//! [`SimFailure`]).

use crate::sync::{self, SyncOptions};

use super::Rng;

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
    /// Every task of the connector stops cleanly (`close`, as `KafkaTaskSync.close()` does),
    /// and the connector starts again after a stop shorter than the retention.
    pub whole_stop: u64,
    /// A random live task's producer gets a backlog (its records land up to a few hundred
    /// steps after it publishes them, in order), or loses it.
    pub backlog: u64,
    /// Per mille of the records a new task replays after which it ticks (a transport that
    /// feeds the log in batches, its timer firing in between).
    pub replay_ticks: u64,
    /// A random live task's clock steps back or forward (its offset from the simulation's
    /// clock is drawn again, up to half an interval).
    pub clock_step: u64,
    /// A random live task freezes (a GC pause, a suspended VM: no reads, ticks or publishes)
    /// for longer than `rebalanceTimeout` and the group's session; the group expels it and
    /// moves on. On waking, without a session check (the core alone), it acts (reads on in its
    /// stale epoch, ticks, runs and finishes partitions) until it learns it was expelled, up to
    /// `rebalanceTimeout` later; with one (`check_offsets`, as `KafkaTaskSync`), its transport
    /// stops everything at once, the gap being longer than the session.
    pub freeze: u64,
    /// A rolling restart: once the group is stable, every live task, one after another, closes
    /// cleanly (`close`, read on until `closed()`), leaves, and a new task joins in its place;
    /// the next one closes once the group is stable again (the faults pause meanwhile). No
    /// finished partition may run again meanwhile.
    pub rolling: u64,
}

/// When the harness calls a task's `tick`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Driver {
    /// At `pollTimeout()`, as `KafkaTaskSync`'s timer re-armed after every call.
    Timeout,
    /// Every `period` time units, whatever `pollTimeout()` says (a fixed-rate loop): a timer
    /// fires up to a period late, and most ticks find nothing due.
    Periodic(u64),
    /// At `pollTimeout()`, and after every record fed (a loop that ticks after each input).
    EveryInput,
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
    /// [`SimReport::longest_without_usable`]). What the design promises is a usable checkpoint
    /// while some task lives long enough to publish one: once that record is older than the
    /// retention less `stateRefreshInterval + 3 × (rebalanceTimeout + L)` (a task joins, leads,
    /// has its epoch read back and its checkpoint land; `L` the producers' lag), the faults pause until a newer usable
    /// checkpoint lands ([`SimReport::usable_calms`] counts the pauses).
    pub check_usable: bool,
    /// How the tasks are driven.
    pub driver: Driver,
    /// Partitions added at once besides the split/merge tree, with the tree's roots (by the
    /// first task that applies an epoch, while the faults go on), each a long-running root: a
    /// burst (0: none). In a burst run `maxRecordBytes` is the least allowed, what a task
    /// publishes in chunks lands spread over the time a producer may take, so that chunks of
    /// several tasks interleave, and once everything finished the run goes on quietly for
    /// three intervals, in which the log must get no more than about one checkpoint per
    /// interval (a storm of checkpoints that never come out clean fails the run).
    pub burst: usize,
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
                whole_stop: 0,
                backlog: 0,
                replay_ticks: 0,
                clock_step: 0,
                freeze: 0,
                rolling: 0,
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
            driver: Driver::Timeout,
            burst: 0,
        };
        // drawn after the rest, so that older seeds keep their other settings
        // (as in production, several times the rebalance and acknowledgement timeouts)
        cfg.options.state_refresh_interval =
            r.range(2, 6) * (cfg.options.rebalance_timeout + cfg.options.epoch_ack_timeout);
        cfg.retention =
            cfg.options.state_refresh_interval * sync::MIN_RETENTION_REFRESHES + r.range(0, 500);
        cfg.faults.duplicate_record = r.range(0, 30);
        cfg.faults.leave = r.range(0, 8);
        cfg.max_skew = r.range(0, 50);
        if r.chance(400) {
            // small records: epochs, checkpoints and large own states go out in chunks
            cfg.options.max_record_bytes = r.range(sync::MIN_RECORD_BYTES, 3000);
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
            cfg.retention = interval * sync::MIN_RETENTION_REFRESHES;
        }
        // (drawn last too) whole-connector stops in 10% of the runs
        if r.chance(100) {
            cfg.faults.whole_stop = r.range(1, 4);
        }
        // (drawn last too) producers with a backlog in 10% of the runs
        if r.chance(100) {
            cfg.faults.backlog = r.range(5, 40);
        }
        // (drawn last too) a fixed-rate driver in 10% of the runs, one that ticks after every
        // input in another 10%; the period within half of what a producer may lag
        // (`min(epochAckTimeout, stateRefreshInterval / 4)`)
        let o = &cfg.options;
        let most = o.epoch_ack_timeout.min(o.state_refresh_interval / 4) / 2;
        cfg.driver = match r.below(10) {
            0 => Driver::Periodic(r.range(1, most.max(2))),
            1 => Driver::EveryInput,
            _ => Driver::Timeout,
        };
        // (drawn last too) ticks while a new task replays in 20% of the runs, clock steps in 10%
        if r.chance(200) {
            cfg.faults.replay_ticks = r.range(20, 500);
        }
        if r.chance(100) {
            cfg.faults.clock_step = r.range(1, 10);
        }
        // (drawn last too) frozen tasks in 10% of the runs
        if r.chance(100) {
            cfg.faults.freeze = r.range(1, 5);
        }
        // (drawn last too) a burst of hundreds of partitions added at once, in 1% of the runs
        // (a burst run costs some ten ordinary ones)
        if r.chance(10) {
            cfg.burst = r.range(50, 150) as usize;
            cfg.options.max_record_bytes = sync::MIN_RECORD_BYTES;
        }
        // (drawn last too) rolling restarts in 5% of the runs
        if r.chance(50) {
            cfg.faults.rolling = r.range(1, 3);
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
            options.state_refresh_interval * sync::MIN_RETENTION_REFRESHES + r.range(0, 500);
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
                whole_stop: 0,
                backlog: 0,
                replay_ticks: 0,
                clock_step: 0,
                freeze: 0,
                rolling: 0,
            },
            options,
            full_trace: false,
            strict_reruns: false,
            check_offsets: r.chance(500),
            retention,
            max_skew: r.range(0, 50),
            per_task: per_task.max(1),
            check_usable: false,
            driver: Driver::Timeout,
            burst: 0,
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
    /// Partitions added in a burst ([`SimConfig::burst`]; 0: not a burst run).
    pub burst: usize,
    /// Checkpoints published in the quiet tail of a burst run (three intervals).
    pub tail_checkpoints: usize,
    /// Tasks that froze past the session and woke ([`Faults::freeze`]).
    pub frozen: usize,
    /// Of those, the ones that ran a partition while a live member ran it too, after waking.
    pub frozen_overlapping: usize,
    /// The longest time a woken task ran partitions a live member had started (time units).
    pub frozen_overlap_max: u64,
    /// The total of those times.
    pub frozen_overlap_total: u64,
    /// Rolling restarts ([`Faults::rolling`]).
    pub rolling: usize,
    /// The tasks they closed and replaced.
    pub rolling_tasks: usize,
    /// Finished partitions started again during them (none, or the run fails).
    pub rolling_reruns: usize,
    /// Bytes of the records published during them (JSON).
    pub rolling_bytes: usize,
    /// Bytes of every record published (JSON).
    pub bytes: usize,
    /// Times the faults paused because the newest usable checkpoint neared the retention (see
    /// [`SimConfig::check_usable`]).
    pub usable_calms: usize,
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
