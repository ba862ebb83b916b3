//! Protocol tests: one named regression test per production bug of the Java connector
//! (reference page `task-sync.md`), plus rule-by-rule tests of `SyncTask`.

use std::collections::BTreeMap;

use partkit::sync::{
    compute_epoch, MessageType, PartitionSpec, PartitionState, PartitionStatus, RebalanceEvent,
    SyncMessage, SyncOptions, SyncOutput, SyncTask, TaskState,
};

fn opts() -> SyncOptions {
    SyncOptions {
        rebalance_timeout: 1_000,
        epoch_ack_timeout: 500,
        removal_delay: 100,
        tombstone_ttl: 10_000,
        state_refresh_interval: 50_000,
        ..SyncOptions::default()
    }
}

/// A tiny deterministic network: one totally ordered log, a read cursor per task.
struct Net {
    log: Vec<SyncMessage>,
    tasks: BTreeMap<String, (SyncTask, usize)>,
    now: u64,
    started: BTreeMap<String, Vec<String>>,
    stopped: BTreeMap<String, Vec<String>>,
    /// Publish without `messageSeq` (as a transport that drops unknown fields would).
    strip_seq: bool,
}

impl Net {
    fn new(ids: &[&str]) -> Self {
        let mut n = Net {
            log: vec![],
            tasks: BTreeMap::new(),
            now: 0,
            started: BTreeMap::new(),
            stopped: BTreeMap::new(),
            strip_seq: false,
        };
        for id in ids {
            n.add(id);
        }
        n
    }
    fn add(&mut self, id: &str) {
        self.tasks.insert(
            id.to_string(),
            (SyncTask::with_options(id, opts()).unwrap(), 0),
        );
    }
    fn task(&self, id: &str) -> &SyncTask {
        &self.tasks[id].0
    }
    fn push(&mut self, id: &str, out: SyncOutput) {
        self.started
            .entry(id.to_string())
            .or_default()
            .extend(out.start);
        self.stopped
            .entry(id.to_string())
            .or_default()
            .extend(out.stop);
        let strip = self.strip_seq;
        self.log.extend(out.publish.into_iter().map(|mut m| {
            if strip {
                m.message_seq = None;
            }
            m
        }));
    }
    fn rebalance(&mut self, generation: u64, leader: &str, members: &[&str]) {
        for m in members {
            self.rebalance_one(generation, leader, members, m);
        }
    }
    fn rebalance_one(&mut self, generation: u64, leader: &str, members: &[&str], who: &str) {
        let ev = RebalanceEvent {
            generation,
            leader: who == leader,
            members: (who == leader).then(|| members.iter().map(|s| s.to_string()).collect()),
        };
        let now = self.now;
        let out = self
            .tasks
            .get_mut(who)
            .unwrap()
            .0
            .on_rebalance(&ev, now)
            .unwrap();
        self.push(who, out);
    }
    /// Deliver one message to `id`; false if it has read everything.
    fn step(&mut self, id: &str) -> bool {
        let (task, cursor) = self.tasks.get_mut(id).unwrap();
        if *cursor >= self.log.len() {
            return false;
        }
        let msg = self.log[*cursor].clone();
        *cursor += 1;
        let out = task.on_message(&msg, self.now).unwrap();
        self.push(id, out);
        true
    }
    fn skip(&mut self, id: &str) {
        self.tasks.get_mut(id).unwrap().1 += 1;
    }
    fn drain(&mut self, id: &str) {
        while self.step(id) {}
    }
    fn settle(&mut self) {
        loop {
            let ids: Vec<String> = self.tasks.keys().cloned().collect();
            let mut any = false;
            for id in ids {
                any |= self.step(&id);
            }
            if !any {
                break;
            }
        }
    }
    fn tick(&mut self, dt: u64) {
        self.now += dt;
        let ids: Vec<String> = self.tasks.keys().cloned().collect();
        for id in ids {
            let now = self.now;
            let out = self.tasks.get_mut(&id).unwrap().0.tick(now);
            self.push(&id, out);
        }
    }
    fn add_partitions(&mut self, id: &str, specs: &[PartitionSpec]) {
        let now = self.now;
        let out = self
            .tasks
            .get_mut(id)
            .unwrap()
            .0
            .add_partitions(specs, now)
            .unwrap();
        self.push(id, out);
    }
    fn start_all(&mut self, id: &str) {
        let tokens: Vec<String> = self
            .task(id)
            .owned_partitions()
            .iter()
            .filter(|p| p.state == PartitionStatus::Scheduled)
            .map(|p| p.token.clone())
            .collect();
        for t in tokens {
            let now = self.now;
            let out = self
                .tasks
                .get_mut(id)
                .unwrap()
                .0
                .partition_started(&t, now)
                .unwrap();
            self.push(id, out);
        }
    }
    fn finish(&mut self, id: &str, token: &str) {
        let now = self.now;
        let out = self
            .tasks
            .get_mut(id)
            .unwrap()
            .0
            .partition_finished(token, now)
            .unwrap();
        self.push(id, out);
    }
    fn owned(&self, id: &str) -> Vec<String> {
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
    /// Every unfinished token owned by exactly one of `live`.
    fn assert_unique(&self, live: &[&str]) {
        let mut seen: BTreeMap<String, String> = BTreeMap::new();
        for id in live {
            for p in self.task(id).owned_partitions() {
                if let Some(other) = seen.insert(p.token.clone(), id.to_string()) {
                    panic!("{} owned by {other} and {id}", p.token);
                }
            }
        }
    }
    fn epoch_count(&self) -> usize {
        self.log
            .iter()
            .filter(|m| m.kind == MessageType::NewEpoch && !m.resend)
            .count()
    }
}

fn specs(tokens: &[&str]) -> Vec<PartitionSpec> {
    tokens.iter().map(|t| PartitionSpec::new(*t, &[])).collect()
}

/// Three tasks in epoch 1 with p0..p5 spread over them.
fn three_tasks() -> Net {
    let mut n = Net::new(&["t1", "t2", "t3"]);
    n.rebalance(1, "t1", &["t1", "t2", "t3"]);
    n.settle();
    assert_eq!(n.task("t1").epoch(), Some("1-t1"));
    n.add_partitions("t1", &specs(&["p0", "p1", "p2", "p3", "p4", "p5"]));
    n.settle();
    n
}

// ------------------------------------------------------------------------- production bugs

#[test]
fn dbz_6544_6685_single_task_leader_ignores_its_own_stale_answer_after_new_epoch() {
    let mut n = Net::new(&["t1"]);
    n.rebalance(1, "t1", &["t1"]);
    n.settle();
    n.add_partitions("t1", &specs(&["p0", "p1"]));
    n.settle();
    let before = n.task("t1").owned_partitions().to_vec();
    // the stale answer and the epoch are read again (duplicate delivery, replay after restart)
    let stale: Vec<SyncMessage> = n
        .log
        .iter()
        .filter(|m| m.kind != MessageType::Regular)
        .cloned()
        .collect();
    for m in stale {
        let out = n.tasks.get_mut("t1").unwrap().0.on_message(&m, 10).unwrap();
        assert!(out.start.is_empty() && out.stop.is_empty());
        n.push("t1", out);
    }
    n.settle();
    assert_eq!(n.task("t1").owned_partitions(), &before[..]);
    assert!(n.task("t1").shared_partitions().is_empty());
}

#[test]
fn dbz_6870_quick_successive_rebalances_neither_skip_the_epoch_nor_move_partitions_twice() {
    let mut n = three_tasks();
    // t3 dies; generation 2 (leader t1) publishes its epoch, and generation 3 (leader t2)
    // starts before t2 has read it
    n.tasks.remove("t3");
    n.rebalance(2, "t1", &["t1", "t2"]);
    n.drain("t1");
    let e2 = n
        .log
        .iter()
        .find(|m| m.kind == MessageType::NewEpoch && m.epoch_generation == 2)
        .cloned();
    let e2 = e2.expect("the leader of generation 2 published its epoch");
    let given = |who: &str| {
        let mut v: Vec<String> = e2
            .connector_state
            .iter()
            .find(|s| s.task_id == who)
            .unwrap()
            .data
            .partitions
            .iter()
            .filter(|p| !p.state.is_done())
            .map(|p| p.token.clone())
            .collect();
        v.sort();
        v
    };
    n.rebalance(3, "t2", &["t1", "t2"]);
    n.settle();
    // nobody skipped E2 (t2 applied it, then re-answered generation 3) ...
    assert_eq!(n.task("t1").epoch(), Some("3-t2"));
    assert_eq!(n.task("t2").epoch(), Some("3-t2"));
    // ... and E3 kept E2's assignment: t3's partitions moved once
    assert_eq!(n.owned("t1"), given("t1"));
    assert_eq!(n.owned("t2"), given("t2"));
    n.assert_unique(&["t1", "t2"]);
    let mut all: Vec<String> = n.owned("t1").into_iter().chain(n.owned("t2")).collect();
    all.sort();
    assert_eq!(all, vec!["p0", "p1", "p2", "p3", "p4", "p5"]);
}

#[test]
fn dbz_6870_leader_keeps_shares_to_live_tasks_and_finished_partitions_of_dead_tasks_only_as_tombstones(
) {
    let mut n = three_tasks();
    // t3 finds two children of a partition it runs (it keeps one, shares the other to the
    // least-loaded task), finishes the parent and dies before the assignee reads the share
    n.start_all("t3");
    let p = n.owned("t3")[0].clone();
    n.add_partitions(
        "t3",
        &[
            PartitionSpec::new("c1", &[p.as_str()]),
            PartitionSpec::new("c2", &[p.as_str()]),
        ],
    );
    n.finish("t3", &p);
    let shares: Vec<(String, String)> = n
        .task("t3")
        .shared_partitions()
        .iter()
        .map(|s| (s.token.clone(), s.assignee.clone()))
        .collect();
    assert_eq!(shares, vec![("c2".to_string(), "t1".to_string())]);
    n.tasks.remove("t3");
    n.rebalance(2, "t2", &["t1", "t2"]);
    n.settle();
    // the share went to its live assignee (not re-shared elsewhere); the dead task's finished
    // partition is kept by one member as it is, done (no work, no load: so that a stale share or
    // late record naming it is no new work), and goes like the member's own: removed after
    // `removalDelay` once its children finished, dropped `tombstoneTtl` later
    assert!(n.owned("t1").contains(&"c2".to_string()));
    let keepers = |n: &Net| -> Vec<(String, PartitionStatus)> {
        ["t1", "t2"]
            .iter()
            .flat_map(|t| {
                n.task(t)
                    .owned_partitions()
                    .iter()
                    .filter(|q| q.token == p)
                    .map(|q| (t.to_string(), q.state))
            })
            .collect()
    };
    let kept = keepers(&n);
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert!(kept[0].1.is_done(), "{kept:?}");
    n.assert_unique(&["t1", "t2"]);
    let mut all: Vec<String> = n.owned("t1").into_iter().chain(n.owned("t2")).collect();
    all.sort();
    assert_eq!(all.len(), 7, "6 - 1 finished + 2 children: {all:?}");
    for t in ["t1", "t2"] {
        let mine = n.owned(t);
        n.start_all(t);
        for c in mine {
            n.finish(t, &c);
        }
    }
    n.settle();
    for _ in 0..4 {
        n.tick(5_000);
        n.settle();
    }
    assert_eq!(
        keepers(&n),
        vec![],
        "the tombstone is dropped tombstoneTtl after the finish"
    );
}

#[test]
fn dbz_6974_leader_elected_late_uses_answers_it_read_before() {
    let mut n = three_tasks();
    n.tasks.remove("t3");
    // t2 answers first; the leader t1 reads that answer before it learns it leads
    n.rebalance_one(2, "t1", &["t1", "t2"], "t2");
    n.drain("t1");
    assert_eq!(n.epoch_count(), 1);
    n.rebalance_one(2, "t1", &["t1", "t2"], "t1");
    n.drain("t1"); // its own answer: every member has answered
    assert_eq!(
        n.epoch_count(),
        2,
        "the late leader publishes at once, no timeout, no new rebalance"
    );
    n.settle();
    assert_eq!(n.task("t2").epoch(), Some("2-t1"));
}

#[test]
fn dbz_7001_leader_does_not_hang_on_a_silent_member() {
    let mut n = three_tasks();
    let t3_owned = n.owned("t3");
    // t3 lost the sync topic: it is still in the group but never answers
    n.rebalance_one(2, "t1", &["t1", "t2", "t3"], "t1");
    n.rebalance_one(2, "t1", &["t1", "t2", "t3"], "t2");
    n.drain("t2");
    n.drain("t1");
    assert_eq!(n.task("t1").waiting_for(), vec!["t3".to_string()]);
    assert_eq!(n.epoch_count(), 1);
    n.tick(1_000);
    assert_eq!(n.epoch_count(), 2, "published after rebalanceTimeout");
    n.drain("t1");
    n.drain("t2");
    assert_eq!(n.task("t1").epoch(), Some("2-t1"));
    // the silent member is alive: it keeps its partitions
    let e2 = n
        .log
        .iter()
        .rev()
        .find(|m| m.kind == MessageType::NewEpoch)
        .unwrap();
    let t3 = e2
        .connector_state
        .iter()
        .find(|s| s.task_id == "t3")
        .unwrap();
    let mut kept: Vec<String> = t3.data.partitions.iter().map(|p| p.token.clone()).collect();
    kept.sort();
    assert_eq!(kept, t3_owned);
    // when it comes back it catches up and applies the epoch
    n.drain("t3");
    assert_eq!(n.task("t3").epoch(), Some("2-t1"));
    n.assert_unique(&["t1", "t2", "t3"]);
}

#[test]
fn states_stamped_in_the_same_millisecond_are_both_applied() {
    let mut t = SyncTask::new("t1").unwrap();
    let mk = |version: u64, tokens: &[&str]| {
        let mut s = TaskState::empty("t2");
        s.state_timestamp = 42;
        s.state_version = version;
        s.data.partitions = tokens
            .iter()
            .map(|x| PartitionState::created(*x, vec![]))
            .collect();
        SyncMessage {
            sync_epoch: String::new(),
            task_id: "t2".into(),
            message_timestamp: 42,
            kind: MessageType::Regular,
            connector_state: vec![s],
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
    };
    t.on_message(&mk(1, &["a"]), 42).unwrap();
    t.on_message(&mk(2, &["a", "b"]), 42).unwrap();
    let t2 = t
        .known_tasks()
        .into_iter()
        .find(|s| s.task_id == "t2")
        .unwrap();
    assert_eq!(
        t2.data.partitions.len(),
        2,
        "the second state of the same millisecond is kept"
    );
    // an older version arriving late does not win
    t.on_message(&mk(1, &["a"]), 43).unwrap();
    let t2 = t
        .known_tasks()
        .into_iter()
        .find(|s| s.task_id == "t2")
        .unwrap();
    assert_eq!(t2.state_version, 2);
}

#[test]
fn regular_message_from_a_task_not_yet_known_is_accepted() {
    let mut n = three_tasks();
    // t4 joins: before any new epoch, its own states are merged by everybody
    n.add("t4");
    n.drain("t4");
    n.rebalance(2, "t1", &["t1", "t2", "t3", "t4"]);
    n.drain("t4");
    assert!(n.task("t2").known_tasks().iter().all(|s| s.task_id != "t4"));
    n.drain("t2");
    assert!(
        n.task("t2").known_tasks().iter().any(|s| s.task_id == "t4"),
        "t4's answer is in t2's view at once"
    );
}

#[test]
fn tie_breaking_is_deterministic_lowest_load_then_finder_then_smallest_id() {
    let run = || {
        let mut n = Net::new(&["t1", "t2", "t3"]);
        n.rebalance(1, "t2", &["t1", "t2", "t3"]);
        n.settle();
        // all loads 0: the finder keeps the first one, then t1, then t3 (smallest id first)
        n.add_partitions("t2", &specs(&["a", "b", "c", "d"]));
        n.settle();
        (
            n.owned("t1"),
            n.owned("t2"),
            n.owned("t3"),
            serde_json::to_string(&n.log).unwrap(),
        )
    };
    let (t1, t2, t3, log) = run();
    assert_eq!(t2, vec!["a", "d"]);
    assert_eq!(t1, vec!["b"]);
    assert_eq!(t3, vec!["c"]);
    assert_eq!(run().3, log, "same inputs, same messages");
}

/// Without sender counters (`messageSeq`) a task cannot see the hole it read; the leader's
/// re-publication brings it into the epoch.
#[test]
fn task_missing_a_new_epoch_is_not_blocked_until_the_next_rebalance() {
    let mut n = Net::new(&["t1", "t2"]);
    n.strip_seq = true;
    n.rebalance(1, "t1", &["t1", "t2"]);
    n.drain("t2"); // t2's view: its own answer
    n.drain("t1"); // t1 publishes E1
    let e1 = n
        .log
        .iter()
        .position(|m| m.kind == MessageType::NewEpoch)
        .unwrap();
    while n.tasks["t2"].1 < e1 {
        n.step("t2");
    }
    n.skip("t2"); // t2 misses E1
    n.drain("t1");
    n.add_partitions("t1", &specs(&["a", "b"]));
    n.settle();
    assert_eq!(n.task("t2").epoch(), None);
    assert!(n.task("t2").is_behind());
    n.tick(500); // the leader re-publishes the epoch to the member that did not acknowledge it
    n.settle();
    assert_eq!(n.task("t2").epoch(), Some("1-t1"));
    assert_eq!(
        n.owned("t2"),
        vec!["b"],
        "t2 picked up the share made while it was behind"
    );
    n.assert_unique(&["t1", "t2"]);
}

/// With sender counters a task sees the hole at the next message of the leader: it cannot know
/// what it missed (an epoch that moved its partitions, or one a later leader will fork from), so
/// it stops everything and fences itself instead of waiting, blocked or wrong, for the next
/// rebalance; its replacement joins under a new id.
#[test]
fn task_missing_a_new_epoch_fences_itself_at_the_next_message_of_the_leader() {
    let mut n = Net::new(&["t1", "t2"]);
    n.rebalance(1, "t1", &["t1", "t2"]);
    n.drain("t1"); // t1 publishes E1
    let e1 = n
        .log
        .iter()
        .position(|m| m.kind == MessageType::NewEpoch)
        .unwrap();
    while n.tasks["t2"].1 < e1 {
        n.step("t2");
    }
    n.skip("t2"); // t2 misses E1
    n.drain("t1");
    n.add_partitions("t1", &specs(&["a", "b"]));
    n.settle();
    let why = n.task("t2").fenced().expect("t2 fenced itself").to_string();
    assert!(why.contains("of t1"), "{why}");
    let log_len = n.log.len();
    // a fenced task does nothing more
    let out = n.tasks.get_mut("t2").unwrap().0.tick(10_000);
    assert!(out.is_empty());
    let ev = RebalanceEvent {
        generation: 2,
        leader: true,
        members: Some(vec!["t2".into()]),
    };
    assert!(n
        .tasks
        .get_mut("t2")
        .unwrap()
        .0
        .on_rebalance(&ev, 10_000)
        .unwrap()
        .is_empty());
    assert_eq!(n.log.len(), log_len);
    // the replacement
    n.add("t3");
    n.rebalance(2, "t1", &["t1", "t3"]);
    n.settle();
    n.tick(2_000);
    n.settle();
    assert_eq!(n.task("t3").epoch(), Some("2-t1"));
    n.assert_unique(&["t1", "t3"]);
}

/// A task fenced while it runs partitions stops them in the same output.
#[test]
fn a_task_that_reads_a_hole_stops_what_it_runs() {
    let mut n = Net::new(&["t1", "t2"]);
    n.rebalance(1, "t1", &["t1", "t2"]);
    n.settle();
    n.add_partitions("t1", &specs(&["a", "b"]));
    n.settle();
    assert_eq!(n.owned("t2"), vec!["b"]);
    assert_eq!(n.started["t2"], vec!["b"]);
    // t1 publishes twice; t2 reads only the second
    n.rebalance(2, "t1", &["t1", "t2"]);
    let from = n.log.len();
    n.drain("t1");
    assert!(n.log.len() >= from + 2);
    n.tasks.get_mut("t2").unwrap().1 = n.log.len() - 1;
    n.step("t2");
    assert!(n.task("t2").fenced().is_some());
    assert_eq!(n.stopped["t2"], vec!["b"]);
}

// ------------------------------------------------------------------------- rules

#[test]
fn sharing_is_disabled_between_a_rebalance_and_the_new_epoch() {
    let mut n = three_tasks();
    n.rebalance_one(2, "t1", &["t1", "t2", "t3"], "t2");
    assert!(!n.task("t2").sharing_enabled());
    n.add_partitions("t2", &specs(&["x", "y"]));
    assert!(
        n.task("t2").shared_partitions().is_empty(),
        "children stay with the finder"
    );
    assert!(n.owned("t2").contains(&"x".to_string()));
    n.rebalance_one(2, "t1", &["t1", "t2", "t3"], "t1");
    n.rebalance_one(2, "t1", &["t1", "t2", "t3"], "t3");
    n.settle();
    assert!(n.task("t2").sharing_enabled());
}

#[test]
fn messages_of_older_epochs_cannot_take_partitions_away() {
    let mut n = three_tasks();
    let old: Vec<SyncMessage> = n
        .log
        .iter()
        .filter(|m| m.kind == MessageType::Regular)
        .cloned()
        .collect();
    n.tasks.remove("t3");
    n.rebalance(2, "t1", &["t1", "t2"]);
    n.settle();
    let view = n.task("t1").known_tasks();
    for m in old {
        n.tasks.get_mut("t1").unwrap().0.on_message(&m, 99).unwrap();
    }
    let after = n.task("t1").known_tasks();
    for (a, b) in view.iter().zip(after.iter()) {
        assert_eq!(a.data.partitions.len(), b.data.partitions.len());
    }
}

#[test]
fn ready_for_streaming_only_when_every_parent_is_done_and_merge_child_by_smallest_parent_owner() {
    let mut n = Net::new(&["t1"]);
    n.rebalance(1, "t1", &["t1"]);
    n.settle();
    n.add_partitions("t1", &specs(&["a", "b"]));
    n.start_all("t1");
    // merge child of a and b; found twice, created once
    n.add_partitions("t1", &[PartitionSpec::new("m", &["b", "a"])]);
    n.add_partitions("t1", &[PartitionSpec::new("m", &["a", "b"])]);
    let m = |n: &Net| {
        n.task("t1")
            .owned_partitions()
            .iter()
            .filter(|p| p.token == "m")
            .map(|p| p.state)
            .collect::<Vec<_>>()
    };
    assert_eq!(m(&n), vec![PartitionStatus::Created]);
    n.finish("t1", "a");
    assert_eq!(m(&n), vec![PartitionStatus::Created], "b still running");
    n.finish("t1", "b");
    assert_eq!(m(&n), vec![PartitionStatus::Scheduled]);
    assert!(n.started["t1"].contains(&"m".to_string()));
    // another task that does not own the smallest parent does not create it
    let mut other = SyncTask::new("t9").unwrap();
    other
        .add_partitions(&[PartitionSpec::new("a2", &[])], 0)
        .unwrap();
    other
        .add_partitions(&[PartitionSpec::new("z", &["a1", "a2"])], 0)
        .unwrap();
    assert!(other.owned_partitions().iter().all(|p| p.token != "z"));
}

#[test]
fn finished_partition_is_removed_after_the_delay_once_its_children_are_done() {
    let mut n = Net::new(&["t1"]);
    n.rebalance(1, "t1", &["t1"]);
    n.settle();
    n.add_partitions("t1", &specs(&["a"]));
    n.start_all("t1");
    n.add_partitions("t1", &[PartitionSpec::new("c", &["a"])]);
    n.finish("t1", "a");
    let state = |n: &Net, t: &str| {
        n.task("t1")
            .owned_partitions()
            .iter()
            .find(|p| p.token == t)
            .map(|p| p.state)
    };
    n.tick(200);
    assert_eq!(
        state(&n, "a"),
        Some(PartitionStatus::Finished),
        "child c not finished yet"
    );
    n.start_all("t1");
    n.finish("t1", "c");
    n.tick(50);
    assert_eq!(state(&n, "a"), Some(PartitionStatus::Removed));
    assert_eq!(
        state(&n, "c"),
        Some(PartitionStatus::Finished),
        "delay not over for c"
    );
    n.tick(100);
    assert_eq!(state(&n, "c"), Some(PartitionStatus::Removed));
    assert_eq!(
        n.task("t1").poll_timeout(),
        Some(
            n.task("t1")
                .owned_partitions()
                .iter()
                .map(|p| p.finished_timestamp.unwrap())
                .min()
                .unwrap()
                + 100
                + 10_000
        )
    );
    n.tick(20_000);
    assert!(
        n.task("t1").owned_partitions().is_empty(),
        "tombstones dropped after the ttl"
    );
}

#[test]
fn load_counts_unfinished_owned_partitions_and_shares_addressed() {
    let mut n = three_tasks();
    let t1 = n.task("t1").load_of("t1");
    assert_eq!(t1, 2);
    n.start_all("t1");
    let p = n.owned("t1")[0].clone();
    n.finish("t1", &p);
    assert_eq!(n.task("t1").load_of("t1"), 1);
    // t1 shares a child to t2: it counts for t2 before t2 picks it up
    n.add_partitions("t1", &specs(&["x", "y", "z"]));
    assert_eq!(n.task("t1").load_of("t2"), 3);
}

#[test]
fn departed_tasks_partitions_go_to_least_loaded_members() {
    let mut dead = TaskState::empty("dead");
    for i in 0..6 {
        dead.data
            .partitions
            .push(PartitionState::created(format!("d{i}"), vec![]));
    }
    let mut a = TaskState::empty("a");
    for i in 0..3 {
        a.data
            .partitions
            .push(PartitionState::created(format!("a{i}"), vec![]));
    }
    let b = TaskState::empty("b");
    let c = TaskState::empty("c");
    let out = compute_epoch(&[&dead, &a, &b, &c], &["a".into(), "b".into(), "c".into()]);
    let loads: Vec<usize> = out.iter().map(|s| s.owned_load()).collect();
    assert_eq!(loads, vec![3, 3, 3]);
    assert!(out.iter().all(|s| s.share.partitions.is_empty()));
}

#[test]
fn bad_input_is_rejected_with_a_code_and_changes_nothing() {
    let mut n = three_tasks();
    let t = &mut n.tasks.get_mut("t2").unwrap().0;
    let before = format!("{t:?}");
    let mut msg = n.log.last().unwrap().clone();
    msg.task_id.clear();
    assert_eq!(
        t.on_message(&msg, 5).unwrap_err().code(),
        "SYNC_MALFORMED_MESSAGE"
    );
    let mut msg = n.log.last().unwrap().clone();
    msg.connector_state.clear();
    assert_eq!(
        t.on_message(&msg, 5).unwrap_err().code(),
        "SYNC_MALFORMED_MESSAGE"
    );
    assert_eq!(
        t.partition_started("nope", 5).unwrap_err().code(),
        "SYNC_UNKNOWN_PARTITION"
    );
    assert_eq!(
        t.partition_finished("nope", 5).unwrap_err().code(),
        "SYNC_UNKNOWN_PARTITION"
    );
    let ev = RebalanceEvent {
        generation: 9,
        leader: true,
        members: None,
    };
    assert_eq!(
        t.on_rebalance(&ev, 5).unwrap_err().code(),
        "SYNC_INVALID_REBALANCE"
    );
    assert_eq!(
        t.add_partitions(&[PartitionSpec::new("", &[])], 5)
            .unwrap_err()
            .code(),
        "SYNC_INVALID_PARTITION"
    );
    assert_eq!(
        t.add_partitions(&[PartitionSpec::new("q", &["q"])], 5)
            .unwrap_err()
            .code(),
        "SYNC_INVALID_PARTITION"
    );
    assert_eq!(format!("{t:?}"), before);
}

#[test]
fn wire_format_uses_the_spanner_design_field_names() {
    let mut n = three_tasks();
    n.settle();
    let json = serde_json::to_value(&n.log).unwrap();
    let epoch = json
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["type"] == "NewEpoch")
        .unwrap();
    for k in [
        "syncEpoch",
        "taskID",
        "messageTimestamp",
        "type",
        "connectorState",
        "epochGeneration",
        "baseEpoch",
    ] {
        assert!(epoch.get(k).is_some(), "{k}");
    }
    let st = &epoch["connectorState"][0];
    for k in ["taskID", "stateTimestamp", "stateVersion", "data", "share"] {
        assert!(st.get(k).is_some(), "{k}");
    }
    assert!(st["data"]["partitions"].is_array() && st["share"]["partitions"].is_array());
    let regular = json
        .as_array()
        .unwrap()
        .iter()
        .find(|m| {
            m["type"] == "Regular"
                && !m["connectorState"][0]["share"]["partitions"]
                    .as_array()
                    .unwrap()
                    .is_empty()
        })
        .unwrap();
    let sh = &regular["connectorState"][0]["share"]["partitions"][0];
    for k in ["token", "parents", "state", "assignee"] {
        assert!(sh.get(k).is_some(), "{k}");
    }
    // a message in the Spanner connector's format (no additions) parses
    let spanner = r#"{"syncEpoch":"e","taskID":"x","messageTimestamp":1,"type":"Regular",
        "connectorState":[{"taskID":"x","stateTimestamp":1,"data":{"partitions":[]},"share":{}}]}"#;
    let m: SyncMessage = serde_json::from_str(spanner).unwrap();
    assert_eq!(m.connector_state[0].state_version, 0);
}

/// What an epoch gives a task starts only once every member of the epoch is known to have
/// applied it: a task that silently missed a NewEpoch and applied a fork built on the same base
/// learns of it from the others before it runs anything the fork gave it.
#[test]
fn what_an_epoch_gives_starts_once_every_member_applied_it() {
    let mut n = three_tasks();
    for t in ["t1", "t2", "t3"] {
        n.start_all(t);
    }
    n.settle();
    let before: BTreeMap<String, Vec<String>> = ["t1", "t2"]
        .iter()
        .map(|t| (t.to_string(), n.owned(t)))
        .collect();
    n.tasks.remove("t3");
    n.rebalance(2, "t1", &["t1", "t2"]);
    // t2 answers and the leader publishes the epoch and applies it; nobody has read t2's
    // acknowledgement yet
    let mut leader_applied = false;
    while !leader_applied {
        n.step("t2");
        n.step("t1");
        leader_applied = n.task("t1").epoch() == Some("2-t1");
        if !leader_applied && n.log.len() > 200 {
            panic!("no epoch 2");
        }
    }
    let started = |n: &Net, t: &str| n.started.get(t).cloned().unwrap_or_default();
    let gained = |n: &Net, t: &str| -> Vec<String> {
        n.owned(t)
            .into_iter()
            .filter(|p| !before[t].contains(p))
            .collect()
    };
    let held_by_leader = gained(&n, "t1");
    assert!(
        !held_by_leader.is_empty(),
        "the leader took some of t3's partitions"
    );
    assert!(
        held_by_leader
            .iter()
            .all(|p| !started(&n, "t1").contains(p)),
        "the leader starts nothing new before t2 applied its epoch"
    );
    // t2 applies the epoch: the leader's acknowledgement may not be read yet either
    while n.task("t2").epoch() != Some("2-t1") {
        assert!(n.step("t2"));
    }
    n.settle();
    let all_gained: Vec<String> = gained(&n, "t1")
        .into_iter()
        .chain(gained(&n, "t2"))
        .collect();
    assert!(!all_gained.is_empty(), "t3's partitions went to t1 and t2");
    for t in ["t1", "t2"] {
        for p in gained(&n, t) {
            assert!(
                started(&n, t).contains(&p),
                "{t} starts {p} once both applied the epoch"
            );
        }
    }
    n.assert_unique(&["t1", "t2"]);
}

/// A leader alone in its generation that was told of the generation before as a member and read
/// no NewEpoch of it cannot tell a leader that died before publishing from a NewEpoch it missed
/// (a transport without the offset check drops nothing it can see), and nobody else is left to
/// re-publish it: it fences itself rather than build on an epoch that may have moved its
/// partitions. Its replacement replays the log and keeps every partition.
#[test]
fn a_lone_leader_that_never_read_the_epoch_of_a_generation_it_joined_fences_itself() {
    let mut n = Net::new(&["t1", "t2"]);
    n.rebalance(1, "t1", &["t1", "t2"]);
    n.settle();
    n.add_partitions("t1", &specs(&["a", "b", "c"]));
    n.settle();
    n.tick(1);
    n.settle();
    assert_eq!(n.task("t2").epoch(), Some("1-t1"));
    // generation 2: t2 is told it is a member; the leader t1 dies before it publishes
    n.rebalance_one(2, "t1", &["t1", "t2"], "t2");
    n.tasks.remove("t1");
    n.settle();
    // generation 3: t2 leads alone
    n.rebalance_one(3, "t2", &["t2"], "t2");
    n.settle();
    n.tick(2_000);
    let why = n.task("t2").fenced().expect("t2 fenced itself").to_string();
    assert!(
        why.contains("never read the NewEpoch of generation 2"),
        "{why}"
    );
    // its replacement replays the log, leads alone and keeps every partition
    n.tasks.remove("t2");
    n.add("t3");
    n.settle();
    n.rebalance_one(4, "t3", &["t3"], "t3");
    n.settle();
    n.tick(2_000);
    n.settle();
    assert_eq!(n.task("t3").epoch(), Some("4-t3"));
    assert_eq!(n.owned("t3"), vec!["a", "b", "c"]);
}

/// A task that answers from an older epoch (it missed the one in force) is shown the epoch once:
/// the epoch's leader re-publishes it at once; another member only schedules a re-publication
/// (member `r` after the leader waits `min(r, 4) / 4` of `epochAckTimeout`) and drops it when it
/// reads the leader's copy first, so one miss costs the log one copy, not one per member. When
/// the leader's copy does not come, the member's does.
#[test]
fn a_task_answering_from_an_older_epoch_is_shown_the_epoch_once() {
    fn stale_answer(n: &Net) -> SyncMessage {
        // t2's answer of generation 1, before any epoch, as if published again now (a task
        // that missed the epoch answers from the one before it)
        let mut m = n
            .log
            .iter()
            .find(|m| m.kind == MessageType::RebalanceAnswer && m.task_id == "t2")
            .expect("t2 answered generation 1")
            .clone();
        assert!(m.epoch_generation < 1);
        m.message_seq = None;
        m
    }
    fn resends(out: &SyncOutput) -> usize {
        out.publish
            .iter()
            .filter(|m| m.kind == MessageType::NewEpoch && m.resend)
            .count()
    }
    for leader_alive in [true, false] {
        let mut n = three_tasks();
        n.tick(1);
        n.settle();
        let stale = stale_answer(&n);
        let now = n.now;
        let t3 = &mut n.tasks.get_mut("t3").unwrap().0;
        let out = t3.on_message(&stale, now).unwrap();
        assert_eq!(resends(&out), 0, "a member does not re-publish at once");
        let due = t3.poll_timeout().expect("a re-publication is scheduled");
        assert!(
            due > now && due <= now + 250,
            "t3 is 2nd after the leader: {due}"
        );
        if leader_alive {
            let t1 = &mut n.tasks.get_mut("t1").unwrap().0;
            let out = t1.on_message(&stale, now).unwrap();
            assert_eq!(resends(&out), 1, "the leader re-publishes at once");
            let copy = out.publish.into_iter().find(|m| m.resend).unwrap();
            let t3 = &mut n.tasks.get_mut("t3").unwrap().0;
            assert!(t3.on_message(&copy, now).unwrap().publish.is_empty());
            let out = t3.tick(due);
            assert_eq!(resends(&out), 0, "t3 read the leader's copy: it holds back");
            assert!(t3.poll_timeout().is_none_or(|t| t > due));
        } else {
            let out = t3.tick(due);
            assert_eq!(resends(&out), 1, "no copy read: t3 re-publishes the epoch");
            let out = t3.tick(due + 500);
            assert_eq!(resends(&out), 0, "once");
        }
    }
}
