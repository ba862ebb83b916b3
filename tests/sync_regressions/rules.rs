//! Rule-by-rule tests of `SyncTask`.

use std::collections::BTreeMap;

use partkit::sync::{
    compute_epoch, MessageType, PartitionSpec, PartitionState, PartitionStatus, RebalanceEvent,
    SyncMessage, SyncOutput, SyncTask, TaskState,
};

use crate::net::*;

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
    n.announce(2, "t1", &["t1", "t2"]);
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
    let mut n = net(&["t1"]);
    n.announce(1, "t1", &["t1"]);
    n.settle();
    n.add_partitions("t1", &specs(&["a", "b"]));
    n.start_all("t1");
    // merge child of a and b; found twice, created once
    n.add_partitions("t1", &[PartitionSpec::new("m", &["b", "a"])]);
    n.add_partitions("t1", &[PartitionSpec::new("m", &["a", "b"])]);
    let m = |n: &World| {
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
    let mut n = net(&["t1"]);
    n.announce(1, "t1", &["t1"]);
    n.settle();
    n.add_partitions("t1", &specs(&["a"]));
    n.start_all("t1");
    n.add_partitions("t1", &[PartitionSpec::new("c", &["a"])]);
    n.finish("t1", "a");
    let state = |n: &World, t: &str| {
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
    n.announce(2, "t1", &["t1", "t2"]);
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
    let started = |n: &World, t: &str| n.started.get(t).cloned().unwrap_or_default();
    let gained = |n: &World, t: &str| -> Vec<String> {
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
    let mut n = epoch_one(&["t1", "t2"], &["a", "b", "c"]);
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
    n.spawn("t3", opts());
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
    fn stale_answer(n: &World) -> SyncMessage {
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

/// Repeated and out-of-order calls, each decided (docs/sync.md, "Calls out of order"): a finish
/// twice (also once removed) is a repeat; a known token given again with its parents (in any
/// order) is a repeat, with other parents refused; a Scheduled partition may be finished without
/// `partitionStarted`, one never told to start may not; a `now` earlier than one seen before
/// counts as the latest (no time passes).
#[test]
fn repeated_and_out_of_order_calls_are_repeats_or_refused_with_a_code() {
    let mut t = SyncTask::new("t").unwrap();
    let lead = RebalanceEvent {
        generation: 1,
        leader: true,
        members: Some(vec!["t".into()]),
    };
    let mut log = t.on_rebalance(&lead, 1).unwrap().publish;
    let mut i = 0;
    while i < log.len() {
        let out = t.on_message(&log[i].clone(), 2).unwrap();
        log.extend(out.publish);
        i += 1;
    }
    let out = t
        .add_partitions(&[PartitionSpec::new("p", &[]), PartitionSpec::new("q", &[])], 10)
        .unwrap();
    assert_eq!(out.start, vec!["p".to_string(), "q".to_string()]);
    // the child of p and q, found twice (parents in another order): one partition
    t.add_partitions(&[PartitionSpec::new("c", &["q", "p"])], 11)
        .unwrap();
    let before = format!("{t:?}");
    let out = t
        .add_partitions(&[PartitionSpec::new("c", &["p", "q"])], 11)
        .unwrap();
    assert!(out.publish.is_empty() && out.start.is_empty());
    assert_eq!(format!("{t:?}"), before);
    // the same token with other parents: the caller's tree and the task's disagree
    let e = t
        .add_partitions(&[PartitionSpec::new("c", &["p"])], 12)
        .unwrap_err();
    assert_eq!(e.code(), "SYNC_INVALID_PARTITION");
    assert!(e.message().contains("c is known with parents [p, q]"), "{e}");
    assert_eq!(format!("{t:?}"), before);
    // a Created partition (never told to start) cannot be finished
    let e = t.partition_finished("c", 12).unwrap_err();
    assert_eq!(e.code(), "SYNC_INVALID_TRANSITION");
    // p is Scheduled: finished without partitionStarted; a second finish changes nothing
    t.partition_finished("p", 20).unwrap();
    let before = format!("{t:?}");
    let out = t.partition_finished("p", 21).unwrap();
    assert_eq!(out, SyncOutput::default());
    assert_eq!(format!("{t:?}"), before);
    // the clock stepped back: no time passes (a finish is stamped with the latest now)
    t.partition_started("q", 30).unwrap();
    t.partition_finished("q", 6).unwrap();
    let q = t.owned_partitions().iter().find(|p| p.token == "q").unwrap();
    assert_eq!(q.finished_timestamp, Some(30));
    t.tick(30);
    let at = t.poll_timeout();
    assert!(at.is_some_and(|at| at > 30));
    let before = format!("{t:?}");
    assert_eq!(t.tick(0), SyncOutput::default());
    assert_eq!(t.poll_timeout(), at);
    assert_eq!(format!("{t:?}"), before);
    // once removed (after removalDelay), a finish is still a repeat
    let c = t.owned_partitions().iter().find(|p| p.token == "c").unwrap();
    assert_eq!(c.state, PartitionStatus::Scheduled);
    t.partition_finished("c", 30).unwrap();
    let delay = t.options().removal_delay;
    t.tick(30 + delay);
    assert!(t
        .owned_partitions()
        .iter()
        .any(|p| p.token == "p" && p.state == PartitionStatus::Removed));
    assert_eq!(
        t.partition_finished("p", 31 + delay).unwrap(),
        SyncOutput::default()
    );
}

/// The last task of a connector closes; before it has left the group it is told of a new
/// generation, which it would lead alone. Before, it published that generation's epoch and its
/// acknowledgement after its final checkpoint, so the newest checkpoint named a record older
/// than the stop. Now a closed task ignores rebalances and time: its final checkpoint is its last
/// record; a partition its caller still adds is published, and a final checkpoint follows it.
#[test]
fn a_closed_task_publishes_nothing_after_its_final_checkpoint() {
    let mut t = SyncTask::new("t").unwrap();
    let lead = |g| RebalanceEvent {
        generation: g,
        leader: true,
        members: Some(vec!["t".into()]),
    };
    let mut log = t.on_rebalance(&lead(1), 1).unwrap().publish;
    let read = |t: &mut SyncTask, log: &mut Vec<SyncMessage>, from: usize, now: u64| {
        let mut i = from;
        while i < log.len() {
            let out = t.on_message(&log[i].clone(), now).unwrap();
            log.extend(out.publish);
            i += 1;
        }
        i
    };
    let at = read(&mut t, &mut log, 0, 2);
    log.extend(t.add_partitions(&[PartitionSpec::new("p", &[])], 3).unwrap().publish);
    log.extend(t.close(4).publish);
    read(&mut t, &mut log, at, 5);
    assert!(t.closed());
    let last = log.last().unwrap();
    assert!(
        last.checkpoint.is_some(),
        "the final checkpoint is the last record: {last:?}"
    );
    assert_eq!(t.on_rebalance(&lead(2), 6).unwrap(), SyncOutput::default());
    assert_eq!(t.tick(1_000_000), SyncOutput::default());
    assert_eq!(t.poll_timeout(), None);
    // a partition the caller still adds is not lost: published, then a final checkpoint again
    let at = log.len();
    log.extend(t.add_partitions(&[PartitionSpec::new("q", &[])], 7).unwrap().publish);
    assert_eq!(log.len(), at + 1);
    assert!(!t.closed());
    read(&mut t, &mut log, at, 8);
    assert!(t.closed());
    assert!(log.last().unwrap().checkpoint.is_some());
}
