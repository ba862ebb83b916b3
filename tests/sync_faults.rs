//! Fault sequences that broke a documented promise of task coordination, each as a regression
//! test driving `SyncTask`s alone over a hand-made log: stale shares, late records of a task that
//! closed cleanly, and the checkpoint timing under partial messages and large groups.

use std::collections::{BTreeMap, BTreeSet};

use partkit::sync::{
    PartitionSpec, PartitionStatus, RebalanceEvent, SyncMessage, SyncOptions, SyncOutput, SyncTask,
};

/// One totally ordered log and a group of tasks reading it, with the faults these tests need:
/// readers that stall, producers whose records are held back (in flight) and land later.
struct World {
    log: Vec<SyncMessage>,
    /// When each record of the log was appended.
    log_at: Vec<u64>,
    tasks: BTreeMap<String, SyncTask>,
    pos: BTreeMap<String, usize>,
    live: BTreeSet<String>,
    stalled: BTreeSet<String>,
    held: BTreeMap<String, Vec<SyncMessage>>,
    running: BTreeMap<String, BTreeSet<String>>,
    /// Per task: the tokens it read a record saying they are finished (any state in it).
    finishes_read: BTreeMap<String, BTreeSet<String>>,
    members: Vec<String>,
    now: u64,
    violations: Vec<String>,
}

impl World {
    fn new(ids: &[&str], opts: SyncOptions) -> Self {
        let mut w = World {
            log: Vec::new(),
            log_at: Vec::new(),
            tasks: BTreeMap::new(),
            pos: BTreeMap::new(),
            live: BTreeSet::new(),
            stalled: BTreeSet::new(),
            held: BTreeMap::new(),
            running: BTreeMap::new(),
            finishes_read: BTreeMap::new(),
            members: Vec::new(),
            now: 1_000,
            violations: Vec::new(),
        };
        for id in ids {
            w.spawn(id, opts.clone());
        }
        w
    }

    /// A task that starts reading the log from its start.
    fn spawn(&mut self, id: &str, opts: SyncOptions) {
        self.tasks
            .insert(id.to_string(), SyncTask::with_options(id, opts).unwrap());
        self.pos.insert(id.to_string(), 0);
        self.live.insert(id.to_string());
        self.running.insert(id.to_string(), BTreeSet::new());
    }

    fn task(&self, id: &str) -> &SyncTask {
        &self.tasks[id]
    }

    /// Carries out an output: appends (or holds) what it publishes; checks every start against
    /// the two promises (no partition on two live members at once; a partition whose finish the
    /// task read is not started again).
    fn act(&mut self, id: &str, out: SyncOutput, what: &str) {
        assert!(out.fenced.is_none(), "{id} fenced: {:?}", out.fenced);
        match self.held.get_mut(id) {
            Some(h) => h.extend(out.publish),
            None => self.append(out.publish),
        }
        for t in &out.stop {
            self.running.get_mut(id).unwrap().remove(t);
        }
        for t in out.start {
            for other in &self.members {
                if other != id && self.running[other].contains(&t) {
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

    fn append(&mut self, records: Vec<SyncMessage>) {
        self.log_at.extend(records.iter().map(|_| self.now));
        self.log.extend(records);
    }

    /// The clean checkpoints in the log, by when they were appended: directly preceded by the
    /// record they name, their chunks consecutive.
    fn clean_checkpoints(&self) -> Vec<u64> {
        let mut v = Vec::new();
        for (i, m) in self.log.iter().enumerate() {
            let Some(named) = &m.checkpoint else { continue };
            if m.chunk.as_ref().is_some_and(|c| c.index > 0) || i == 0 {
                continue;
            }
            let prev = &self.log[i - 1];
            let count = m.chunk.as_ref().map_or(1, |c| c.count) as usize;
            let whole = (0..count).all(|k| {
                self.log.get(i + k).is_some_and(|r| {
                    r.task_id == m.task_id && r.chunk.as_ref().map_or(0, |c| c.index) as usize == k
                })
            });
            if whole
                && prev.task_id == named.after_task_id
                && prev.message_seq == Some(named.after_seq)
            {
                v.push(self.log_at[i]);
            }
        }
        v
    }

    fn input(&mut self, id: &str, f: impl FnOnce(&mut SyncTask, u64) -> SyncOutput, what: &str) {
        self.now += 10;
        let now = self.now;
        let out = f(self.tasks.get_mut(id).unwrap(), now);
        self.act(id, out, what);
    }

    fn add(&mut self, id: &str, token: &str, parents: &[&str]) {
        let spec = [PartitionSpec::new(token, parents)];
        self.input(
            id,
            |t, now| t.add_partitions(&spec, now).unwrap(),
            "addPartitions",
        );
    }

    fn run(&mut self, id: &str, token: &str) {
        self.input(
            id,
            |t, now| t.partition_started(token, now).unwrap(),
            "partitionStarted",
        );
    }

    fn finish(&mut self, id: &str, token: &str) {
        self.running.get_mut(id).unwrap().remove(token);
        self.input(
            id,
            |t, now| t.partition_finished(token, now).unwrap(),
            "partitionFinished",
        );
    }

    /// Every live task whose reader is not stalled reads the log to its end, round-robin.
    fn settle(&mut self) {
        loop {
            let mut moved = false;
            let ids: Vec<String> = self.live.iter().cloned().collect();
            for id in ids {
                let at = self.pos[&id];
                if self.stalled.contains(&id) || at >= self.log.len() {
                    continue;
                }
                *self.pos.get_mut(&id).unwrap() += 1;
                let msg = self.log[at].clone();
                self.input(&id, |t, now| t.on_message(&msg, now).unwrap(), "onMessage");
                for st in &msg.connector_state {
                    for p in &st.data.partitions {
                        if p.state == PartitionStatus::Finished {
                            self.finishes_read
                                .entry(id.clone())
                                .or_default()
                                .insert(p.token.clone());
                        }
                    }
                }
                moved = true;
            }
            if !moved {
                break;
            }
        }
    }

    fn rebalance(&mut self, generation: u64, leader: &str, members: &[&str]) {
        self.members = members.iter().map(|m| m.to_string()).collect();
        for m in members {
            let ev = RebalanceEvent {
                generation,
                leader: *m == leader,
                members: (*m == leader).then(|| self.members.clone()),
            };
            self.input(m, |t, now| t.on_rebalance(&ev, now).unwrap(), "onRebalance");
        }
        self.settle();
    }

    fn ticks(&mut self, n: usize, dt: u64) {
        for _ in 0..n {
            self.now += dt;
            let ids: Vec<String> = self.live.iter().cloned().collect();
            for id in ids {
                let now = self.now;
                let out = self.tasks.get_mut(&id).unwrap().tick(now);
                self.act(&id, out, "tick");
            }
            self.settle();
        }
    }

    /// `id` publishes into a buffer from now on (a slow producer, or a transport that leaves
    /// the group before it flushes).
    fn hold(&mut self, id: &str) {
        self.held.insert(id.to_string(), Vec::new());
    }

    /// What `id` published since `hold` lands now.
    fn land(&mut self, id: &str) {
        let held = self.held.remove(id).unwrap_or_default();
        self.append(held);
    }

    fn leave(&mut self, id: &str) {
        self.live.remove(id);
        self.running.get_mut(id).unwrap().clear();
    }
}

/// A task whose reader stalls keeps answering rebalances from its old epoch with a share of a
/// partition to a task that since ran it, finished it and left. Before: the epoch after the
/// finisher left dropped the finished partition, the stale answer put the share back, and once
/// the stale sharer left too, the next epoch resolved its share to the departed assignee as new
/// work: `b` started `p` again, although it had read `p`'s finish before any of those epochs.
/// Now the epoch keeps a departed task's finished partitions (with a member, as tombstones):
/// a share of a token the view knows done is no new work.
#[test]
fn a_stale_share_does_not_bring_a_finished_partition_back() {
    let opts = SyncOptions {
        rebalance_timeout: 5_000,
        epoch_ack_timeout: 1_000,
        ..SyncOptions::default()
    };
    let mut w = World::new(&["a", "b", "s"], opts);
    w.rebalance(1, "b", &["a", "b", "s"]);
    w.ticks(2, 1_500);
    // s finds x (kept: ties go to the finder) and then p, which it shares to the least loaded a
    w.add("s", "x", &[]);
    w.settle();
    w.stalled.insert("s".into());
    w.add("s", "p", &[]);
    w.settle();
    w.ticks(2, 1_500);
    assert!(w
        .task("a")
        .owned_partitions()
        .iter()
        .any(|p| p.token == "p"));
    assert!(w
        .task("s")
        .shared_partitions()
        .iter()
        .any(|p| p.token == "p"));
    // a runs and finishes p; b reads the finish
    w.run("a", "p");
    w.finish("a", "p");
    w.settle();
    w.leave("a");
    w.rebalance(2, "b", &["b", "s"]);
    w.ticks(6, 1_500);
    // s, still stalled, answers again from epoch 1-b with the share p>a
    w.rebalance(3, "b", &["b", "s"]);
    w.ticks(6, 1_500);
    w.leave("s");
    w.rebalance(4, "b", &["b"]);
    w.ticks(6, 1_500);
    assert_eq!(w.task("b").epoch(), Some("4-b"));
    assert!(w.violations.is_empty(), "{:?}", w.violations);
    // p is still known to be done (a tombstone with a member), not new work
    let p = w
        .task("b")
        .owned_partitions()
        .iter()
        .find(|p| p.token == "p")
        .cloned();
    assert!(p.as_ref().is_none_or(|p| p.state.is_done()), "{p:?}");
}

/// `id`, running `lhe`, finds its child `oui`, finishes `lhe`, runs `oui`, finds its child `uso`,
/// finishes `oui` and runs `uso`.
fn finds_oui_and_uso(w: &mut World, id: &str) {
    w.add(id, "oui", &["lhe"]);
    w.finish(id, "lhe");
    w.run(id, "oui");
    w.add(id, "uso", &["oui"]);
    w.finish(id, "oui");
    w.run(id, "uso");
}

/// A task finds children while finishing their parents and closes cleanly, but its records land
/// after the next epoch, which gives its unfinished (as the log says) parent to another member
/// that reruns it and finds the same children. Before: a third member read the late records with
/// the rerun child known only as a share to the rerunning member, so rendezvous hashing gave it
/// the grandchild, which it started on reading the rerun's finish of the child, while the
/// rerunning member ran it. Now a parent known as a share to a member is that member's: the late
/// grandchild goes to it.
#[test]
fn late_records_of_a_closed_task_start_nothing_twice() {
    let mut w = World::new(&["wh4", "ub7", "xt2"], SyncOptions::default());
    w.rebalance(1, "wh4", &["wh4", "ub7", "xt2"]);
    for (id, token) in [
        ("xt2", "nr4"),
        ("ub7", "klb"),
        ("wh4", "lhe"),
        ("xt2", "xq6"),
    ] {
        w.add(id, token, &[]);
        w.settle();
        w.run(id, token);
        w.settle();
    }
    assert!(w
        .task("wh4")
        .owned_partitions()
        .iter()
        .any(|p| p.token == "lhe"));
    // wh4 works on with its records in flight, then closes
    w.hold("wh4");
    finds_oui_and_uso(&mut w, "wh4");
    w.leave("wh4");
    // generation 2 without wh4: lhe (running, as the log says) goes to ub7, which reruns it
    w.rebalance(2, "ub7", &["ub7", "xt2"]);
    assert_eq!(w.task("xt2").epoch(), Some("2-ub7"));
    w.hold("ub7");
    w.run("ub7", "lhe");
    finds_oui_and_uso(&mut w, "ub7");
    // wh4's late records land, then ub7's
    w.land("wh4");
    w.settle();
    w.land("ub7");
    w.settle();
    w.ticks(4, 1_000);
    assert!(w.violations.is_empty(), "{:?}", w.violations);
    let owners: Vec<&str> = ["ub7", "xt2"]
        .into_iter()
        .filter(|id| {
            w.task(id)
                .owned_partitions()
                .iter()
                .any(|p| p.token == "uso")
        })
        .collect();
    assert_eq!(owners, vec!["ub7"]);
}

/// A task that dies half-way through publishing a message in chunks leaves a partial message in
/// every reader. Before, no reader published a checkpoint for `epochAckTimeout` after it opened
/// one (30 s by default, legal beside an interval of 5 s and a retention of 20 s), and a task
/// that read the partial later (one starting at an older checkpoint) was held back as long
/// again. Now a partial holds checkpoints back for `epochAckTimeout` but at most a quarter of
/// the interval, counted from its publication: the next clean checkpoint comes at most that
/// much late.
#[test]
fn a_sender_dying_half_way_through_chunks_delays_checkpoints_by_at_most_a_quarter_interval() {
    let interval = 5_000;
    let opts = SyncOptions {
        rebalance_timeout: 5_000,
        epoch_ack_timeout: 30_000,
        state_refresh_interval: interval,
        max_record_bytes: 1_024,
        ..SyncOptions::default()
    };
    let mut w = World::new(&["l", "d"], opts);
    w.rebalance(1, "l", &["d", "l"]);
    w.ticks(4, 500);
    // d finds 40 partitions in one call: its change goes out in chunks, of which only the
    // first lands before it dies
    let specs: Vec<PartitionSpec> = (0..40)
        .map(|i| PartitionSpec::new(&format!("partition-with-a-long-token-{i:03}"), &[]))
        .collect();
    w.now += 10;
    let now = w.now;
    let mut out = w
        .tasks
        .get_mut("d")
        .unwrap()
        .add_partitions(&specs, now)
        .unwrap();
    assert!(out.publish.len() > 2, "{} records", out.publish.len());
    out.publish.truncate(1);
    assert!(out.publish[0].chunk.is_some());
    let died_at = w.now;
    w.act("d", out, "addPartitions (dies half-way)");
    w.leave("d");
    w.settle();
    w.ticks(40, 250);
    let after: Vec<u64> = w
        .clean_checkpoints()
        .into_iter()
        .filter(|t| *t > died_at)
        .collect();
    let first = after.first().copied();
    assert!(
        first.is_some_and(|t| t - died_at <= interval + interval / 4 + 250),
        "first clean checkpoint after the partial at {first:?}, the partial at {died_at}"
    );
}

/// A finish that a reader learned from a departed task's late record stays a finish when the
/// record of the partition's new owner that lands after it still says it runs (the owner wrote it
/// before it read the finish). Before, that older word undid the finish in every reader's view,
/// and the next leader handed the partition on as new work: a chain of one-task replacements
/// (found by the simulation, seed 69) started a partition again after reading its finish.
#[test]
fn an_owners_older_word_does_not_undo_a_finish_read_before_it() {
    let opts = SyncOptions::default();
    let mut w = World::new(&["t6"], opts.clone());
    w.rebalance(1, "t6", &["t6"]);
    w.add("t6", "p", &[]);
    w.settle();
    w.run("t6", "p");
    w.settle();
    // t6 finishes p and leaves; its finish lands only after the next epoch
    w.hold("t6");
    w.finish("t6", "p");
    w.leave("t6");
    w.spawn("t7", opts.clone());
    w.settle();
    w.rebalance(2, "t7", &["t7"]);
    w.ticks(2, 1_000);
    // the epoch gave p (running, as the log said) to t7, which reruns it: at-least-once
    assert!(w.running["t7"].contains("p"));
    // t7's records from now on land late, after t6's finish
    w.hold("t7");
    w.run("t7", "p");
    w.land("t6");
    w.land("t7");
    w.hold("t7");
    w.settle();
    w.leave("t7");
    // a new task reads all of it, then leads alone
    w.spawn("t8", opts);
    w.settle();
    w.rebalance(3, "t8", &["t8"]);
    w.ticks(2, 1_000);
    assert_eq!(w.task("t8").epoch(), Some("3-t8"));
    assert!(w.violations.is_empty(), "{:?}", w.violations);
}

/// A record read again (a consumer re-delivering what it read, or a producer retry landing twice)
/// is not where the reader is. Before, a re-delivered record became the one a checkpoint names,
/// so the next checkpoint its author published named a record one before the last and was not
/// clean; with a consumer that re-delivers often, none was (in the simulation, 41 of 10,000
/// seeds went longer than the retention without a clean checkpoint).
#[test]
fn a_record_read_again_does_not_move_what_a_checkpoint_names() {
    let interval = 2_000;
    let opts = SyncOptions {
        state_refresh_interval: interval,
        ..SyncOptions::default()
    };
    let mut w = World::new(&["l"], opts);
    w.rebalance(1, "l", &["l"]);
    w.add("l", "p", &[]);
    w.settle();
    w.run("l", "p");
    w.settle();
    // the consumer delivers the record before the last again
    let msg = w.log[w.log.len() - 2].clone();
    w.input(
        "l",
        |t, now| t.on_message(&msg, now).unwrap(),
        "onMessage (again)",
    );
    let before = w.log.len();
    w.ticks(6, interval / 2);
    // the first checkpoint after it is clean
    let first = w.log[before..]
        .iter()
        .position(|m| m.checkpoint.is_some())
        .map(|k| w.log_at[before + k])
        .expect("a checkpoint");
    let clean = w.clean_checkpoints();
    assert!(clean.contains(&first), "{first} not among {clean:?}");
}

/// A task adds a partition, runs and finishes it and leaves, its records landing late; the
/// leader of the next generation publishes the epoch without them, and dies. A new task
/// replaying the log reads the epoch, then the departed task's late add, which it leaves as a
/// share to the member the partition falls to (the leader, gone too), then its late finish. Before, that finish marked the partition done in the entries' data only: the share
/// stayed new work, and the new task's own epoch handed it to itself, which started it after
/// reading its finish (found by the simulation with producers that lag). Now the finish marks
/// the share too, and an epoch keeps a done share between departed tasks as done, with a member.
#[test]
fn a_departed_tasks_late_finish_of_what_it_left_as_a_share_is_no_new_work() {
    let mut w = World::new(&["a", "b"], SyncOptions::default());
    w.rebalance(1, "a", &["a", "b"]);
    let token = (0..50)
        .map(|i| format!("q{i}"))
        .find(|t| {
            let mut probe = World::new(&["a", "b"], SyncOptions::default());
            probe.rebalance(1, "a", &["a", "b"]);
            probe.add("b", t, &[]);
            probe
                .task("b")
                .owned_partitions()
                .iter()
                .any(|p| &p.token == t)
        })
        .expect("a token b keeps");
    // b's records land late from here on
    w.hold("b");
    w.add("b", &token, &[]);
    assert!(w
        .task("b")
        .owned_partitions()
        .iter()
        .any(|p| p.token == token));
    w.run("b", &token);
    w.finish("b", &token);
    w.leave("b");
    w.rebalance(2, "a", &["a"]);
    assert!(
        w.log.iter().any(|m| m.sync_epoch == "2-a"),
        "a published no epoch"
    );
    w.leave("a");
    w.land("b");
    // a new task replays the whole log and leads the next generation alone
    w.spawn("n", SyncOptions::default());
    w.settle();
    assert!(w.finishes_read["n"].contains(&token));
    w.rebalance(3, "n", &["n"]);
    w.ticks(4, 1_000);
    assert!(w.violations.is_empty(), "{:?}", w.violations);
    let p = w
        .task("n")
        .owned_partitions()
        .into_iter()
        .find(|p| p.token == token);
    assert!(
        p.as_ref()
            .is_none_or(|p| p.state == PartitionStatus::Finished),
        "{p:?}"
    );
}
