//! Regression tests for task coordination across the sync topic's retention: the scenarios of
//! the standalone reproductions of an independent fault-injecting simulation (a fresh leader that
//! dropped a dead task's partitions, a lone replacement that fenced itself in a loop, a
//! `pollTimeout` left in the past) and of a finish lost in a clean leave, driven on `SyncTask`
//! alone. Where a scenario spans a quiet day, the tasks are driven as a transport drives them:
//! time goes to the next `poll_timeout()` of the live tasks, which tick and read what they
//! published; retention deletes the records older than a day, and a new task starts reading at
//! the latest usable checkpoint, by the core's start rule (`find_epoch_start`, which
//! `findEpochStart` calls).

use std::collections::BTreeSet;

use partkit::sync::{
    MessageType, PartitionSpec, PartitionStatus, RebalanceEvent, SyncOptions, SyncTask,
    MIN_RETENTION_REFRESHES,
};

#[path = "support/sync_world.rs"]
mod world;
use world::{specs, timeouts, World};

const DAY: u64 = 86_400_000;

fn opts() -> SyncOptions {
    timeouts(5_000, 1_000)
}

/// One sync topic (with retention) and no task yet, each input 1 ms after the one before it.
fn world() -> World {
    let mut w = World::new(&[], opts());
    w.now = 1_000;
    w.input_gap = 1;
    w
}

/// `a` and `b`, reading from the log's start, in epoch 1 led by `a`.
fn pair() -> World {
    let mut w = world();
    for id in ["a", "b"] {
        w.join(id, 0);
    }
    w.rebalance(1, "a", &["a", "b"]);
    w
}

/// The standalone reproduction exactly: retention has deleted every record, x (owning p, q, r)
/// dies, a fresh task n joins and leads. n has read the survivors' answers of epoch 2-a and
/// then their re-publication of it: a task that has applied no epoch takes the re-publication
/// of the epoch whose messages it read, so it builds on 2-a and gives x's partitions to live
/// members (before, it waited out the timeout and published an epoch without them).
#[test]
fn a_fresh_leader_after_retention_keeps_a_dead_tasks_partitions() {
    let mut w = world();
    for id in ["a", "b", "x"] {
        w.join(id, 0);
    }
    let now = w.now;
    w.call("x", |t, now| {
        t.add_partitions(&specs(&["p", "q", "r"]), now).unwrap()
    });
    for t in ["p", "q", "r"] {
        let out = w.task_mut("x").partition_started(t, now).unwrap();
        w.act("x", out);
    }
    w.rebalance(1, "a", &["a", "b", "x"]);
    w.rebalance(2, "a", &["a", "b", "x"]);
    assert_eq!(w.task("x").epoch(), Some("2-a"));
    // a day later, retention has deleted every record; x dies; n joins and leads
    w.now += DAY;
    w.first = w.log.len();
    for id in ["a", "b"] {
        w.tasks.get_mut(id).unwrap().1 = w.log.len();
    }
    w.leave("x");
    let end = w.log.len();
    w.join("n", end);
    w.rebalance(3, "n", &["n", "a", "b"]);
    let until = w.now + 20_000;
    w.run_until(until, None);
    let owners = w.owners(&["p", "q", "r"]);
    for (t, (id, state)) in &owners {
        assert!(state.is_active(), "{t} on {id} is {state:?}");
        assert!(
            w.running[id].contains(t),
            "{id} was never told to start {t}"
        );
    }
    assert_eq!(w.task("n").epoch(), Some("3-n"));
}

/// The same with the periodic checkpoints of a quiet day: the new task starts reading at the
/// latest clean checkpoint, leads, and the dead task's partitions go to live members.
#[test]
fn a_new_task_starts_from_a_checkpoint_after_a_quiet_day() {
    let mut w = world();
    for id in ["a", "b", "x"] {
        w.join(id, 0);
    }
    w.rebalance(1, "a", &["a", "b", "x"]);
    let now = w.now;
    w.call("x", |t, now| {
        t.add_partitions(&specs(&["p", "q", "r"]), now).unwrap()
    });
    w.settle();
    w.start_running(now);
    w.settle();
    let until = w.now + DAY + 3_600_000;
    w.run_until(until, Some(DAY));
    assert!(
        w.log[w.first..]
            .iter()
            .all(|m| m.kind != partkit::sync::MessageType::NewEpoch || m.resend),
        "retention deleted the NewEpoch"
    );
    let owner_of_q = w.owners(&["q"])["q"].0.clone();
    w.leave(&owner_of_q);
    let from = w.start_offset();
    w.join("n", from);
    let members: Vec<&str> = ["a", "b", "x", "n"]
        .into_iter()
        .filter(|m| *m != owner_of_q)
        .collect();
    w.rebalance(2, "n", &members);
    let until = w.now + 60_000;
    w.run_until(until, Some(DAY));
    for (t, (id, state)) in w.owners(&["p", "q", "r"]) {
        assert!(state.is_active(), "{t} on {id} is {state:?}");
    }
}

/// The standalone reproduction's one-task connector, with the checkpoints of its quiet day:
/// each replacement starts at the latest clean checkpoint, leads alone, and takes p (and its
/// child c) over, instead of fencing itself in a loop until everything was lost.
#[test]
fn a_lone_replacement_takes_the_state_over_instead_of_fencing() {
    let mut w = world();
    w.join("x", 0);
    w.rebalance(1, "x", &["x"]);
    w.rebalance(2, "x", &["x"]);
    let now = w.now;
    w.call("x", |t, now| t.add_partitions(&specs(&["p"]), now).unwrap());
    let out = w.task_mut("x").partition_started("p", now).unwrap();
    w.act("x", out);
    let out = w
        .task_mut("x")
        .add_partitions(&[PartitionSpec::new("c", &["p"])], now)
        .unwrap();
    w.act("x", out);
    w.settle();
    let until = w.now + DAY + 3_600_000;
    w.run_until(until, Some(DAY));
    w.leave("x");
    for (g, id) in [(3, "n1"), (4, "n2")] {
        let from = w.start_offset();
        w.join(id, from);
        w.rebalance(g, id, &[id]);
        let until = w.now + 60_000;
        w.run_until(until, Some(DAY));
        assert!(w.task(id).fenced().is_none());
        let owners = w.owners(&["p", "c"]);
        assert_eq!(owners["p"], (id.to_string(), PartitionStatus::Scheduled));
        assert_eq!(owners["c"], (id.to_string(), PartitionStatus::Created));
        w.leave(id);
    }
}

/// The standalone reproduction: a finished parent waits for its running child before it may
/// be Removed; `pollTimeout()` no longer names that past deadline (nothing can happen before an
/// input), so a driver that sleeps until it does not spin.
#[test]
fn poll_timeout_is_never_in_the_past_after_a_tick() {
    let o = SyncOptions {
        removal_delay: 1_000,
        ..SyncOptions::default()
    };
    let mut a = SyncTask::with_options("a", o).unwrap();
    a.add_partitions(&specs(&["p"]), 0).unwrap();
    a.partition_started("p", 1).unwrap();
    a.add_partitions(&[PartitionSpec::new("c", &["p"])], 2)
        .unwrap();
    a.partition_finished("p", 3).unwrap();
    a.partition_started("c", 4).unwrap();
    for t in [500, 1_003, 1_004, 5_000, 100_000] {
        a.tick(t);
        let next = a.poll_timeout();
        assert!(
            next.is_none_or(|x| x > t),
            "tick({t}) left pollTimeout {next:?}"
        );
    }
    // the child finishes: the parent's removal is due again, and is done by the next tick
    a.partition_finished("c", 100_001).unwrap();
    assert!(
        a.poll_timeout().is_some_and(|x| x <= 100_001),
        "removal due at once"
    );
    a.tick(100_001);
    let p = a
        .owned_partitions()
        .iter()
        .find(|p| p.token == "p")
        .unwrap();
    assert_eq!(p.state, PartitionStatus::Removed);
    assert!(a.poll_timeout().is_none_or(|x| x > 100_001));
}

/// A task finishes p and leaves the group before its finish record lands; the next epoch,
/// computed before the record, restarts p on another task; when the record lands, that task
/// stops p and counts it finished (work done twice, never at the same time, and not for ever).
#[test]
fn a_finish_that_lands_after_the_next_epoch_stops_the_rerun() {
    let mut w = pair();
    let now = w.now;
    w.call("b", |t, now| {
        t.add_partitions(&specs(&["p", "q"]), now).unwrap()
    });
    w.settle();
    let holder = w.owners(&["p"])["p"].0.clone();
    assert_eq!(holder, "b", "p stays with its finder when loads tie");
    let out = w.task_mut("b").partition_started("p", now).unwrap();
    w.act("b", out);
    w.settle();
    // b finishes p and leaves; its record is held back until after the next epoch
    let held = w.task_mut("b").partition_finished("p", now + 1).unwrap();
    w.leave("b");
    w.rebalance(2, "a", &["a"]);
    let until = w.now + 10_000;
    w.run_until(until, None);
    assert!(
        w.running["a"].contains("p"),
        "the epoch gave p to a, which started it"
    );
    assert!(held.fenced.is_none());
    w.append(held.publish);
    w.settle();
    assert!(
        !w.running["a"].contains("p"),
        "a stopped p once b's finish landed"
    );
    let p = w.partition("a", "p");
    assert_eq!(p.map(|p| p.state), Some(PartitionStatus::Finished));
    // q, which b had not finished, goes on on a
    assert!(w.owners(&["q"])["q"].0 == "a");
}

/// The retention rule: at least this many refresh intervals.
#[test]
fn retention_rule_constant() {
    assert_eq!(MIN_RETENTION_REFRESHES, 4);
    assert!(DAY >= MIN_RETENTION_REFRESHES * SyncOptions::default().state_refresh_interval);
}

/// A checkpoint that another record overtook (b published while a computed it): retention
/// has deleted everything before the record it names, so no clean checkpoint is left. A new
/// task applies it first and reads from the record after the one it names, so it learns of q,
/// which only b's overtaking record holds; when b dies, q goes to a live task.
#[test]
fn a_new_task_starts_from_an_overtaken_checkpoint() {
    let mut w = pair();
    w.rebalance(2, "a", &["a", "b"]);
    w.call("b", |t, now| t.add_partitions(&specs(&["p"]), now).unwrap());
    w.settle();
    // a's next checkpoint, held back while b's record lands first
    let held = loop {
        let next = w.task("a").poll_timeout().expect("a has a timer");
        w.now = w.now.max(next);
        let now = w.now;
        let out = w.task_mut("a").tick(now);
        if out.publish.iter().any(|m| m.checkpoint.is_some()) {
            break out;
        }
        w.act("a", out);
        w.settle();
    };
    w.call("b", |t, now| t.add_partitions(&specs(&["q"]), now).unwrap());
    let overtaking = w.log.len() - 1;
    w.act("a", held);
    let k = (overtaking + 1..w.log.len())
        .find(|&k| w.log[k].checkpoint.is_some())
        .unwrap();
    let c = w.log[k].checkpoint.clone().unwrap();
    let named = (0..k)
        .rev()
        .find(|&j| w.log[j].task_id == c.after_task_id && w.log[j].message_seq == Some(c.after_seq))
        .unwrap();
    assert!(named < overtaking, "the checkpoint is not overtaken");
    assert!(
        w.log[k]
            .connector_state
            .iter()
            .all(|st| st.data.partitions.iter().all(|p| p.token != "q")),
        "the checkpoint already holds q"
    );
    w.settle();
    // retention deleted everything before the named record
    w.first = named;
    w.leave("b");
    let start = w.start();
    assert_eq!(start.0, named + 1);
    assert!(start.1.is_some());
    w.join_at("n", start);
    w.rebalance(3, "n", &["a", "n"]);
    let until = w.now + 20_000;
    w.run_until(until, None);
    for (t, (id, state)) in w.owners(&["p", "q"]) {
        assert!(state.is_active(), "{t} on {id} is {state:?}");
    }
}

/// The turns of the members of a group of `n` after its leader's (`t00`) next checkpoint
/// falls due, in place order, once the group runs steadily; and the authors of its checkpoints.
fn turns(o: SyncOptions, n: usize) -> (Vec<u64>, BTreeSet<String>) {
    let ids: Vec<String> = (0..n).map(|i| format!("t{i:02}")).collect();
    let mut w = world();
    for id in &ids {
        w.join_with(id, 0, o.clone());
    }
    let members: Vec<&str> = ids.iter().map(String::as_str).collect();
    w.rebalance(1, "t00", &members);
    let until = w.now + 2 * o.state_refresh_interval + 5_000;
    w.run_until(until, None);
    let due = w.tasks["t00"].0.poll_timeout().unwrap();
    let turns = ids[1..]
        .iter()
        .map(|id| w.tasks[id].0.poll_timeout().unwrap() - due)
        .collect();
    let authors = w
        .log
        .iter()
        .filter(|m| m.checkpoint.is_some())
        .map(|m| m.task_id.clone())
        .collect();
    (turns, authors)
}

/// In a large group, members step in with a checkpoint of their own one slot apart after the
/// leader's turn, a slot being `1 / n` of the interval but never shorter than twice
/// `min(epochAckTimeout, stateRefreshInterval / 4)`, the time a checkpoint takes to land and be
/// read by a member that keeps up: such a member reads the leader's checkpoint before its turn
/// comes. The successors whose slot would end after the interval share what is left of it,
/// each a turn of its own, the last within one interval of the leader. (With slots of `1 / n`
/// interval, here 500 ms, a member lagging by more than its slot published a checkpoint of its
/// own, which could not be clean; with every successor past the interval stepping in at the
/// interval, their checkpoints' chunks interleaved and none was clean.)
#[test]
fn members_step_in_a_slot_apart_never_sooner_than_a_checkpoint_lands_and_is_read() {
    let o = SyncOptions {
        state_refresh_interval: 10_000,
        ..timeouts(5_000, 1_000)
    };
    let (turns, authors) = turns(o, 20);
    // slots of 2,000 ms: the first 4 fit before the interval ends, the other 15 share the
    // last 2,000 ms
    for (k, &turn) in turns.iter().enumerate() {
        let r = k as u64 + 1;
        let want = if r <= 4 {
            r * 2_000
        } else {
            8_000 + 2_000 * (r - 4) / 16
        };
        assert_eq!(turn, want, "member {r}");
        assert!(turn < 10_000, "member {r}");
    }
    let distinct: BTreeSet<u64> = turns.iter().copied().collect();
    assert_eq!(
        distinct.len(),
        turns.len(),
        "every member a turn of its own"
    );
    assert_eq!(authors, BTreeSet::from(["t00".to_string()]));
}

/// An `epochAckTimeout` longer than the interval (the docs allow any) does not squeeze the
/// successors into `1 / n` interval: the first steps in no sooner than the leader's checkpoint
/// in chunks lands (within `min(epochAckTimeout, stateRefreshInterval / 4)` of its publication)
/// and is read (within as much of its landing). (With a floor of `epochAckTimeout` alone, which
/// did not fit, five members shared the interval evenly: the first successor's turn came a
/// fifth of the interval after the leader's, before the leader's checkpoint of tens of chunks
/// had landed, and it published one of its own over it every interval, found by the
/// simulation's bursts.)
#[test]
fn an_ack_timeout_longer_than_the_interval_leaves_the_first_successor_time_to_read_the_leader() {
    let o = SyncOptions {
        state_refresh_interval: 2_000,
        ..timeouts(500, 3_000)
    };
    let (turns, _) = turns(o, 5);
    // a wait of min(3,000, 2,000 / 4) = 500 ms: slots of 1,000 ms, of which one fits; the
    // other three successors share the last 1,000 ms
    assert_eq!(turns, vec![1_000, 1_250, 1_500, 1_750]);
}

/// A whole connector stopped for less than the retention after its tasks closed cleanly (each
/// told to `close`, fed what it read until `closed()`, then gone): the last of them left a
/// checkpoint as new as the stop, so a task starting almost a retention later finds it and goes on
/// where they stopped, a finished partition staying finished. Without it, the newest checkpoint
/// is the last periodic one, published up to about two intervals before the stop: a stop
/// shorter than the retention can outlast it, and the restart finds nothing to start from.
#[test]
fn a_stop_shorter_than_the_retention_after_a_clean_close_loses_nothing() {
    let interval = opts().state_refresh_interval;
    let retention = MIN_RETENTION_REFRESHES * interval;
    let mut w = pair();
    w.call("a", |t, now| {
        t.add_partitions(&specs(&["p", "q", "r"]), now).unwrap()
    });
    let until = w.now + 20_000;
    w.run_until(until, Some(retention));
    let now = w.now;
    w.start_running(now);
    w.settle();
    let (p_owner, _) = w.owners(&["p"])["p"].clone();
    let now = w.now;
    let out = w.task_mut(&p_owner).partition_finished("p", now).unwrap();
    w.act(&p_owner, out);
    w.settle();
    // the connector runs on for an interval and a half (periodic checkpoints), then stops
    let until = w.now + interval * 3 / 2;
    w.run_until(until, Some(retention));
    let periodic = (0..w.log.len())
        .rev()
        .find(|&k| w.log[k].checkpoint.is_some());
    let periodic = periodic
        .map(|k| w.log_at[k])
        .expect("a periodic checkpoint");
    let closing = w.now;
    for id in ["a", "b"] {
        let now = w.now;
        let out = w.task_mut(id).close(now);
        w.act(id, out);
    }
    w.settle();
    let until = w.now + 10_000;
    w.run_until(until, Some(retention));
    for id in ["a", "b"] {
        assert!(w.task(id).closed(), "{id} did not close");
        w.leave(id);
    }
    // the connector restarts just after the last periodic checkpoint expired, the stop being
    // shorter than the retention: only the final checkpoints can be where a task starts
    let stop = w.now;
    w.now = periodic + retention + 1;
    assert!(w.now - stop < retention, "stopped {} ms", w.now - stop);
    w.expire(retention);
    let start = w.start();
    // the final checkpoints name the records their authors published as they closed
    let named = start.0 - 1;
    assert!(
        w.log_at[named] >= closing,
        "starts after #{named}, {start:?}"
    );
    w.join_at("n", start);
    w.rebalance(2, "n", &["n"]);
    let until = w.now + 20_000;
    w.run_until(until, Some(retention));
    for (t, (id, state)) in w.owners(&["q", "r"]) {
        assert_eq!(id, "n");
        assert!(state.is_active(), "{t} on {id} is {state:?}");
    }
    assert!(
        !w.running["n"].contains("p"),
        "n started the finished p again"
    );
    let p = w.tasks["n"].0.known_tasks();
    let finished = p
        .iter()
        .flat_map(|s| s.data.partitions.iter())
        .any(|q| q.token == "p" && q.state == PartitionStatus::Finished);
    let own = w.tasks["n"]
        .0
        .owned_partitions()
        .iter()
        .any(|q| q.token == "p");
    assert!(finished || own, "n does not know p");
}

/// A task that holds the epoch without being its member steps in with a checkpoint an interval
/// after the members' turns: they may still be there. Once it leads a generation that none of the
/// epoch's members is in, they are all gone and nobody else will: its checkpoint falls due at the
/// leader's turn. (With the extra interval, a replacement of a connector whose tasks all died
/// waited two intervals after the last checkpoint, and a chain of replacements dying after it
/// let the newest usable checkpoint age past the retention.)
#[test]
fn a_new_leader_of_a_group_without_the_epochs_members_checkpoints_at_the_leaders_turn() {
    let interval = opts().state_refresh_interval;
    // the deadline of `n`'s next checkpoint before and after it is told of generation 2
    let deadlines = |members: &[&str]| {
        let mut w = world();
        w.join("a", 0);
        w.join("b", 0);
        w.rebalance(1, "a", &["a", "b"]);
        let until = w.now + interval / 2;
        w.run_until(until, None);
        w.leave("a");
        w.leave("b");
        let start = w.start();
        w.join_at("n", start);
        let before = w.task("n").poll_timeout().expect("a checkpoint deadline");
        let ev = RebalanceEvent {
            generation: 2,
            leader: true,
            members: Some(members.iter().map(|m| m.to_string()).collect()),
        };
        let now = w.now + 1;
        w.task_mut("n").on_rebalance(&ev, now).unwrap();
        let after = w.task("n").poll_timeout().expect("a checkpoint deadline");
        (before, after)
    };
    let (before, after) = deadlines(&["n"]);
    assert_eq!(
        before - after,
        interval,
        "the leader's turn, an interval sooner"
    );
    // with a member of the epoch in the group, it keeps its turn after theirs
    let (before, after) = deadlines(&["b", "n"]);
    assert_eq!(after, before);
}

/// A connector restarted after a long stop: its first task starts at a checkpoint older than an
/// interval and leads alone, so its checkpoint falls due once its epoch is read back. Its
/// producer lags by more than `rebalanceTimeout` (within `epochAckTimeout`, as the retention
/// rule allows), so it publishes its epoch again before the first copy comes back: the
/// checkpoint goes out once the epoch is applied, not after every copy is read back. (Waiting
/// for every copy, such a leader, re-publishing twice, let the final checkpoint of a clean stop
/// of most of the retention age past it before its own landed.)
#[test]
fn a_lagging_leader_checkpoints_without_waiting_for_copies_of_its_epoch() {
    let o = timeouts(1_000, 2_000);
    let interval = o.state_refresh_interval;
    let mut w = World::new(&[], o);
    w.now = 1_000;
    w.input_gap = 1;
    w.join("a", 0);
    w.rebalance(1, "a", &["a"]);
    w.call("a", |t, now| {
        t.add_partitions(&specs(&["p", "q"]), now).unwrap()
    });
    w.settle();
    let until = w.now + 5_000;
    w.run_until(until, None);
    let now = w.now;
    let out = w.task_mut("a").close(now);
    w.act("a", out);
    w.settle();
    assert!(w.task("a").closed());
    w.leave("a");
    // stopped for nearly an interval: the checkpoint `n` starts at falls due after `n` has
    // published its epoch, before its first copy is read back
    let last = w.log.iter().rev().find(|m| m.checkpoint.is_some()).unwrap();
    w.now = last.message_timestamp + interval - 2_000;
    let start = w.start();
    w.join_at("n", start);
    w.slow("n", 1_500);
    let from = w.log.len();
    w.rebalance(2, "n", &["n"]);
    // (time goes in steps of 100 ms, every task ticking and reading what landed)
    w.ticks(100, 100);
    let own = |k: &usize| w.log[*k].task_id == "n";
    let epochs: Vec<usize> = (from..w.log.len())
        .filter(own)
        .filter(|&k| w.log[k].kind == MessageType::NewEpoch && w.log[k].checkpoint.is_none())
        .collect();
    let checkpoint = (from..w.log.len())
        .filter(own)
        .find(|&k| w.log[k].checkpoint.is_some())
        .expect("n checkpoints");
    assert!(epochs.len() >= 2, "n published its epoch again: {epochs:?}");
    let last_copy = *epochs.last().unwrap();
    assert!(
        w.log[checkpoint].message_timestamp < w.log_at[last_copy],
        "n's checkpoint went out at {} after the last copy of its epoch landed at {}",
        w.log[checkpoint].message_timestamp,
        w.log_at[last_copy]
    );
    assert_eq!(w.owned("n").len(), 2);
}
