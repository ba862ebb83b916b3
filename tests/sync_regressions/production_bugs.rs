//! One named regression test per production bug of the Java connector (reference page
//! `task-sync.md`).

use partkit::sync::{
    MessageType, PartitionSpec, PartitionState, PartitionStatus, RebalanceEvent, SyncMessage,
    SyncTask, TaskState,
};

use crate::net::*;

#[test]
fn dbz_6544_6685_single_task_leader_ignores_its_own_stale_answer_after_new_epoch() {
    let mut n = epoch_one(&["t1"], &["p0", "p1"]);
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
        n.act("t1", out);
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
    n.announce(2, "t1", &["t1", "t2"]);
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
    n.announce(3, "t2", &["t1", "t2"]);
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
    n.announce(2, "t2", &["t1", "t2"]);
    n.settle();
    // the share went to its live assignee (not re-shared elsewhere); the dead task's finished
    // partition is kept by one member as it is, done (no work, no load: so that a stale share or
    // late record naming it is no new work), and goes like the member's own: removed after
    // `removalDelay` once its children finished, dropped `tombstoneTtl` later
    assert!(n.owned("t1").contains(&"c2".to_string()));
    let keepers = |n: &World| -> Vec<(String, PartitionStatus)> {
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
        SyncMessage::new(MessageType::Regular, "", "t2", 42, vec![s])
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
    n.spawn("t4", opts());
    n.drain("t4");
    n.announce(2, "t1", &["t1", "t2", "t3", "t4"]);
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
        let mut n = net(&["t1", "t2", "t3"]);
        n.announce(1, "t2", &["t1", "t2", "t3"]);
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
    let mut n = net(&["t1", "t2"]);
    n.strip_seq = true;
    n.announce(1, "t1", &["t1", "t2"]);
    n.drain("t2"); // t2's view: its own answer
    n.drain("t1"); // t1 publishes E1
    t2_misses_the_first_epoch(&mut n);
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

/// t2 reads up to t1's first NewEpoch and passes over it; t1 then shares `a` and `b`.
fn t2_misses_the_first_epoch(n: &mut World) {
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
}

/// With sender counters a task sees the hole at the next message of the leader: it cannot know
/// what it missed (an epoch that moved its partitions, or one a later leader will fork from), so
/// it stops everything and fences itself instead of waiting, blocked or wrong, for the next
/// rebalance; its replacement joins under a new id.
#[test]
fn task_missing_a_new_epoch_fences_itself_at_the_next_message_of_the_leader() {
    let mut n = net(&["t1", "t2"]);
    n.announce(1, "t1", &["t1", "t2"]);
    n.drain("t1"); // t1 publishes E1
    t2_misses_the_first_epoch(&mut n);
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
    n.spawn("t3", opts());
    n.announce(2, "t1", &["t1", "t3"]);
    n.settle();
    n.tick(2_000);
    n.settle();
    assert_eq!(n.task("t3").epoch(), Some("2-t1"));
    n.assert_unique(&["t1", "t3"]);
}

/// A task fenced while it runs partitions stops them in the same output.
#[test]
fn a_task_that_reads_a_hole_stops_what_it_runs() {
    let mut n = epoch_one(&["t1", "t2"], &["a", "b"]);
    assert_eq!(n.owned("t2"), vec!["b"]);
    assert_eq!(n.started["t2"], vec!["b"]);
    // t1 publishes twice; t2 reads only the second
    n.announce(2, "t1", &["t1", "t2"]);
    let from = n.log.len();
    n.drain("t1");
    assert!(n.log.len() >= from + 2);
    n.tasks.get_mut("t2").unwrap().1 = n.log.len() - 1;
    n.step("t2");
    assert!(n.task("t2").fenced().is_some());
    assert_eq!(n.stopped["t2"], vec!["b"]);
}
