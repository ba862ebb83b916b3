//! Fault sequences that broke a documented promise of task coordination, each as a regression
//! test driving `SyncTask`s alone over a hand-made log: stale shares, late records of a task that
//! closed cleanly, and the checkpoint timing under partial messages and large groups.

use std::collections::BTreeSet;

use partkit::sync::{
    MessageType, PartitionSpec, PartitionStatus, RebalanceEvent, SyncOptions, SyncTask,
};

#[path = "support/sync_world.rs"]
mod world;
use world::{timeouts, World};

/// Tasks `ids` on an empty log, each input 10 ms after the one before it: the world of
/// tests/support with the faults these tests need (stalled readers, producers whose records are
/// held back and land later).
fn world(ids: &[&str], opts: SyncOptions) -> World {
    let mut w = World::new(ids, opts);
    w.now = 1_000;
    w.input_gap = 10;
    w
}

/// `l` alone, leading epoch 1, checkpointing every `interval`.
fn lone_leader(interval: u64) -> World {
    let opts = SyncOptions {
        state_refresh_interval: interval,
        ..SyncOptions::default()
    };
    let mut w = world(&["l"], opts);
    w.rebalance(1, "l", &["l"]);
    w
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
    let opts = timeouts(5_000, 1_000);
    let mut w = world(&["a", "b", "s"], opts);
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
    let p = w.partition("b", "p");
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
    let mut w = world(&["wh4", "ub7", "xt2"], SyncOptions::default());
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
/// again. Now a partial holds checkpoints back for twice `min(epochAckTimeout, interval / 4)`
/// (the time a live sender's message takes to land and be read whole), at most half the
/// interval, and not again for a message published longer ago: the next clean checkpoint comes
/// at most that much late.
#[test]
fn a_sender_dying_half_way_through_chunks_delays_checkpoints_by_at_most_half_an_interval() {
    let interval = 5_000;
    let opts = SyncOptions {
        rebalance_timeout: 5_000,
        epoch_ack_timeout: 30_000,
        state_refresh_interval: interval,
        max_record_bytes: 1_024,
        ..SyncOptions::default()
    };
    let mut w = world(&["l", "d"], opts);
    w.rebalance(1, "l", &["d", "l"]);
    w.ticks(4, 500);
    // d finds 40 partitions in one call: its change goes out in chunks, of which only the
    // first lands before it dies
    let specs: Vec<PartitionSpec> = (0..40)
        .map(|i| PartitionSpec::new(&format!("partition-with-a-long-token-{i:03}"), &[]))
        .collect();
    w.now += 10;
    let now = w.now;
    let mut out = w.task_mut("d").add_partitions(&specs, now).unwrap();
    assert!(out.publish.len() > 2, "{} records", out.publish.len());
    out.publish.truncate(1);
    assert!(out.publish[0].chunk.is_some());
    let died_at = w.now;
    w.act_as("d", out, "addPartitions (dies half-way)");
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
    let mut w = world(&["t6"], opts.clone());
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
    let mut w = lone_leader(interval);
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
    let mut w = world(&["a", "b"], SyncOptions::default());
    w.rebalance(1, "a", &["a", "b"]);
    let token = (0..50)
        .map(|i| format!("q{i}"))
        .find(|t| {
            let mut probe = world(&["a", "b"], SyncOptions::default());
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

/// A task frozen past its session (a GC pause) wakes, still on the epoch it holds: it finds a
/// child of the partition it runs, shares it to a member, finishes the parent, and only then
/// reads the epoch that left it out, after which it publishes its (empty) state of that epoch.
/// Its late records land after that epoch: every reader keeps the child as a share, in the
/// departed task's entry, to the member owning the parent (`adopt_departed`). Before, the
/// departed task's empty word replaced its entry, and the share with it, while the parent's
/// finish counted: once the parent's new owner died before reading those records, the next
/// epoch knew the parent finished and the child nowhere (found by the simulation with frozen
/// tasks). Now a departed task's newer word keeps what its entry holds for members.
#[test]
fn a_departed_tasks_word_after_the_epoch_keeps_the_child_it_shared() {
    let opts = timeouts(5_000, 1_000);
    let mut w = world(&["f", "m", "o"], opts);
    w.rebalance(1, "o", &["f", "m", "o"]);
    w.ticks(2, 1_500);
    // m and o find and run x and y; f finds and runs p and q (ties go to the finder)
    for (id, token) in [("m", "x"), ("o", "y"), ("f", "p"), ("f", "q")] {
        w.add(id, token, &[]);
        w.settle();
    }
    w.ticks(2, 1_500);
    for id in ["f", "m", "o"] {
        w.start_all(id);
    }
    w.settle();
    assert!(
        w.running["f"].contains("p") && w.running["f"].contains("q"),
        "{:?}",
        w.running
    );
    // f freezes: it reads and ticks nothing, and what it publishes on waking lands late
    w.live.remove("f");
    w.hold("f");
    // generation 2 without f: p goes to a member
    w.rebalance(2, "o", &["m", "o"]);
    w.ticks(2, 1_500);
    let owns_p = |w: &World, id: &str| w.task(id).owned_partitions().iter().any(|p| p.token == "p");
    let parent_owner = if owns_p(&w, "m") { "m" } else { "o" };
    let other = if parent_owner == "m" { "o" } else { "m" };
    assert!(owns_p(&w, parent_owner) && !owns_p(&w, other));
    // the parent's new owner stops reading (it dies before reading f's late records)
    w.stalled.insert(parent_owner.into());
    // f wakes on epoch 1: it finds c, a child of p, shares it to a member, and finishes p
    w.add("f", "c", &["p"]);
    assert!(
        w.task("f")
            .shared_partitions()
            .iter()
            .any(|s| s.token == "c"),
        "f keeps c: {:?}",
        w.task("f").owned_partitions()
    );
    w.finish("f", "p");
    w.land("f");
    // f reads the epoch that left it out, stops q, and publishes its state of that epoch
    w.live.insert("f".into());
    w.settle();
    assert!(w.stopped["f"].iter().any(|t| t == "q"), "{:?}", w.stopped);
    assert_eq!(w.task("f").epoch(), Some("2-o"));
    assert!(w.task("f").owned_partitions().is_empty());
    w.leave("f");
    w.leave(parent_owner);
    // the other member leads generation 3 alone: c is its own
    w.rebalance(3, other, &[other]);
    w.ticks(4, 1_500);
    assert!(w.violations.is_empty(), "{:?}", w.violations);
    let c = w
        .task(other)
        .owned_partitions()
        .iter()
        .find(|p| p.token == "c")
        .cloned();
    assert!(
        c.is_some(),
        "c is lost: {other} owns {:?}",
        w.task(other).owned_partitions()
    );
    assert!(w.running[other].contains("c"), "{:?}", w.running);
}

/// The longest time from `from` to `until` without a clean checkpoint in `clean`.
fn longest_gap(clean: &[u64], from: u64, until: u64) -> u64 {
    let mut at = from;
    let mut longest = 0;
    for &t in clean.iter().filter(|t| **t > from && **t <= until) {
        longest = longest.max(t - at);
        at = t;
    }
    longest.max(until - at)
}

/// A leader whose producer has a backlog (its records land 300 ms after it publishes them) and
/// that changes its own state every few milliseconds always has records of its own not read
/// back. Before, its checkpoint waited for those and never went out: a lone busy task left the
/// log without a checkpoint for as long as it stayed busy. Now a due checkpoint waits for the
/// own records published before it fell due (and for own epochs, answers and checkpoints), not
/// for the own `Regular` records published while it waits: it goes out over those (not clean,
/// as they land before it, but a task can start at it: they are older than what it holds),
/// one per interval.
#[test]
fn a_busy_leader_with_a_backlog_still_checkpoints() {
    let interval = 2_000;
    let mut w = lone_leader(interval);
    let specs: Vec<PartitionSpec> = (0..400)
        .map(|i| PartitionSpec::new(&format!("p{i:03}"), &[]))
        .collect();
    w.input(
        "l",
        |t, now| t.add_partitions(&specs, now).unwrap(),
        "addPartitions",
    );
    w.settle();
    w.slow("l", 300);
    let begin = w.now;
    for i in 0..400 {
        let token = format!("p{i:03}");
        w.run("l", &token);
        w.input("l", |t, now| t.tick(now), "tick");
        w.settle();
        w.finish("l", &token);
        w.input("l", |t, now| t.tick(now), "tick");
        w.settle();
    }
    let end = w.now;
    assert!(end - begin >= 8 * interval, "busy for {} ms", end - begin);
    let usable = w.usable_checkpoints();
    let gap = longest_gap(&usable, begin, end);
    assert!(
        gap <= 2 * interval,
        "{gap} ms without a usable checkpoint while busy (interval {interval})"
    );
    // one per interval, not one per retry
    let published = w.checkpoints().iter().filter(|(t, _)| *t > begin).count() as u64;
    assert!(
        published <= (end - begin) / interval + 1,
        "{published} checkpoints"
    );
    // a task starting at the last one, once the records in flight landed, holds the state of
    // the busy task
    w.ticks(1, 1_000);
    let last = w.log.iter().rposition(|m| m.checkpoint.is_some()).unwrap();
    let named = w.log[last].checkpoint.clone().unwrap();
    let from = 1 + w.log[..last]
        .iter()
        .position(|r| r.task_id == named.after_task_id && r.message_seq == Some(named.after_seq))
        .unwrap();
    let mut n = SyncTask::with_options("n", w.task("l").options().clone()).unwrap();
    let mut cp = w.log[last].clone();
    cp.message_seq = None;
    n.on_message(&cp, w.now).unwrap();
    for m in w.log[from..].to_vec() {
        n.on_message(&m, w.now).unwrap();
    }
    let view = |t: &SyncTask| -> Vec<(String, PartitionStatus)> {
        let st = t
            .known_tasks()
            .into_iter()
            .find(|s| s.task_id == "l")
            .unwrap();
        st.data
            .partitions
            .iter()
            .map(|p| (p.token.clone(), p.state))
            .collect()
    };
    let own: Vec<_> = w
        .task("l")
        .owned_partitions()
        .iter()
        .map(|p| (p.token.clone(), p.state))
        .collect();
    assert!(
        view(&n) == own,
        "the view of a task starting at the checkpoint differs"
    );
    assert!(w.violations.is_empty(), "{:?}", w.violations);
}

/// The members step in with a checkpoint when the leader publishes none (it lags, or died), one
/// after another. Before, with `epochAckTimeout` at least `stateRefreshInterval / n`... every
/// successor's slot was capped at one interval: with the leader's reader stuck, the three others
/// published their checkpoints at the same moment, their chunks interleaved in the log, and
/// none was clean, every interval. Now the successors' turns are distinct (the ones the
/// `epochAckTimeout` spacing does not fit in the interval share what is left of it): the first
/// successor's checkpoint is read before the next one's turn.
#[test]
fn successors_step_in_one_at_a_time_when_the_leader_lags() {
    let interval = 4_000;
    let opts = SyncOptions {
        rebalance_timeout: 2_000,
        epoch_ack_timeout: 2 * interval,
        state_refresh_interval: interval,
        max_record_bytes: 1_024,
        ..SyncOptions::default()
    };
    let mut w = world(&["a", "b", "c", "d"], opts);
    w.interleave = true;
    w.rebalance(1, "a", &["a", "b", "c", "d"]);
    for id in ["a", "b", "c", "d"] {
        let specs: Vec<PartitionSpec> = (0..10)
            .map(|i| PartitionSpec::new(&format!("{id}-partition-with-a-long-token-{i:03}"), &[]))
            .collect();
        w.input(
            id,
            |t, now| t.add_partitions(&specs, now).unwrap(),
            "addPartitions",
        );
    }
    w.ticks(8, interval / 8);
    // the leader's reader gets stuck (it stays in the group)
    w.stalled.insert("a".to_string());
    let begin = w.now;
    w.ticks(64, interval / 8);
    let end = w.now;
    let published: Vec<_> = w
        .checkpoints()
        .into_iter()
        .filter(|(t, _)| *t > begin)
        .collect();
    let gap = longest_gap(&w.clean_checkpoints(), begin, end);
    assert!(
        gap <= 2 * interval,
        "{gap} ms without a clean checkpoint (interval {interval}); published: {published:?}"
    );
    // about one per interval, not one per member
    let intervals = (end - begin) / interval;
    assert!(
        published.len() as u64 <= intervals + 2,
        "{} checkpoints in {intervals} intervals: {published:?}",
        published.len()
    );
    assert!(w.violations.is_empty(), "{:?}", w.violations);
}

/// Two generations race: `a`, told only of generation 2 (itself alone), leads it; `b`, told of
/// generation 3 (both), leads it and publishes first. `a` misses `b`'s NewEpoch and applies its
/// own; `b`'s epoch, built on the same base, gave `b` partitions `a`'s gives `a`. When `b`
/// reads `a`'s re-publication, it learns that everyone else applied `a`'s epoch, rolls back to
/// it and computes generation 3 again on top. Before, what its fork gave it (never started:
/// nobody acknowledged the fork) stayed `b`'s own word through the rollback, and once both
/// applied the recomputed epoch, `b` and `a` owned the same partitions. Now a rolled-back
/// leader gives up what its fork gave it where the epoch everyone applied gives it to another.
#[test]
fn a_leader_rolling_back_its_fork_gives_up_what_the_fork_gave_it() {
    let o = timeouts(500, 200);
    // `c` runs the connector alone, then is gone; `a` and `b` start
    let mut w = world(&["c"], o.clone());
    w.rebalance(1, "c", &["c"]);
    w.ticks(2, 300);
    for k in 0..8 {
        let t = format!("q{k}");
        w.add("c", &t, &[]);
        w.run("c", &t);
        w.finish("c", &t);
    }
    w.add("c", "live", &[]);
    w.settle();
    w.leave("c");
    w.spawn("a", o.clone());
    w.spawn("b", o.clone());
    w.settle();
    // generation 2: `a` alone (a is told of it, b is not); generation 3: both, `b` leads (b is
    // told of it, a is not yet); `a` reads nothing meanwhile
    w.stalled.insert("a".into());
    let ev = |g, members: &[&str]| RebalanceEvent {
        generation: g,
        leader: true,
        members: Some(members.iter().map(|m| m.to_string()).collect()),
    };
    let g2 = ev(2, &["a"]);
    w.input(
        "a",
        |t, now| t.on_rebalance(&g2, now).unwrap(),
        "onRebalance",
    );
    let g3 = ev(3, &["a", "b"]);
    w.members = vec!["a".into(), "b".into()];
    w.input(
        "b",
        |t, now| t.on_rebalance(&g3, now).unwrap(),
        "onRebalance",
    );
    w.settle();
    w.ticks(3, 400);
    let fork = w
        .log
        .iter()
        .position(|m| m.sync_epoch == "3-b" && m.kind == MessageType::NewEpoch)
        .expect("b published its epoch");
    assert_eq!(w.task("b").epoch(), Some("3-b"));
    // `a` misses b's NewEpoch (and b's answer before it: it has heard nothing of b, so no
    // counter of b's tells it)
    assert!(w.tasks["a"].1 < fork);
    while w.task("a").epoch() != Some("2-a") {
        let at = w.tasks["a"].1;
        assert!(at < w.log.len(), "a published no epoch");
        w.tasks.get_mut("a").unwrap().1 += 1;
        let msg = w.log[at].clone();
        if msg.task_id == "a" {
            w.input("a", |t, now| t.on_message(&msg, now).unwrap(), "onMessage");
        }
    }
    w.stalled.remove("a");
    // now `a` is told of generation 3 too, and answers from its epoch
    let g3a = RebalanceEvent {
        generation: 3,
        leader: false,
        members: None,
    };
    w.input(
        "a",
        |t, now| t.on_rebalance(&g3a, now).unwrap(),
        "onRebalance",
    );
    for _ in 0..20 {
        w.ticks(1, 300);
        let confirmed: Vec<&str> = ["a", "b"]
            .into_iter()
            .filter(|id| w.task(id).epoch_confirmed())
            .collect();
        if confirmed.len() == 2 && w.task("a").epoch() == w.task("b").epoch() {
            let mine = |id: &str| -> BTreeSet<String> {
                w.task(id)
                    .owned_partitions()
                    .iter()
                    .map(|p| p.token.clone())
                    .collect()
            };
            let both: Vec<String> = mine("a").intersection(&mine("b")).cloned().collect();
            assert!(
                both.is_empty(),
                "owned by a and b in {:?}: {both:?}",
                w.task("a").epoch()
            );
        }
    }
    let epochs: Vec<&str> = w
        .log
        .iter()
        .filter(|m| m.kind == MessageType::NewEpoch)
        .map(|m| m.sync_epoch.as_str())
        .collect();
    assert!(
        epochs.contains(&"3-b-1"),
        "b rolled back and led again: {epochs:?}"
    );
    assert!(w.violations.is_empty(), "{:?}", w.violations);
}

/// Four tasks. `s` shares its new partition `p` to `a`, which runs and finishes it, but its
/// records are still in its producer when its transport leaves the group (or it froze and wakes
/// before it learns it was expelled). The next epoch, without `a`, keeps `s`'s share `p>a`;
/// `s` answered that generation and its reader stalls. `a`'s records land after the epoch: the
/// leader `l` reads `p`'s finish. When `s`'s reader resumes, `s` applies the epoch and
/// re-addresses its share to the departed `a` to a member, `l`, as new work. Before, `l` took
/// it and was told to start `p`, though it had applied `p`'s finish. Now every finish a task
/// reads is in its ledger of finishes, which the one step that starts partitions consults:
/// `l` takes `p` as finished.
#[test]
fn a_share_readdressed_from_a_departed_task_does_not_restart_a_finish_read() {
    let opts = timeouts(5_000, 1_000);
    let mut w = world(&["a", "l", "n", "s"], opts);
    w.rebalance(1, "l", &["a", "l", "n", "s"]);
    w.ticks(2, 1_500);
    // s finds x (kept: ties go to the finder) and runs it, then finds p: shared to a
    w.add("s", "x", &[]);
    w.settle();
    w.run("s", "x");
    w.settle();
    w.hold("a");
    w.add("s", "p", &[]);
    w.settle();
    assert!(w.task("a").owned_partitions().iter().any(|p| p.token == "p"));
    assert!(w.task("s").shared_partitions().iter().any(|p| p.token == "p"));
    // a runs and finishes p; its transport leaves the group before its records land
    w.run("a", "p");
    w.finish("a", "p");
    w.leave("a");
    w.members = vec!["l".into(), "n".into(), "s".into()];
    for m in ["l", "n", "s"] {
        let ev = RebalanceEvent {
            generation: 2,
            leader: m == "l",
            members: (m == "l").then(|| w.members.clone()),
        };
        w.input(m, |t, now| t.on_rebalance(&ev, now).unwrap(), "onRebalance");
    }
    // s answered generation 2; its reader stalls before it applies the epoch
    w.stalled.insert("s".into());
    w.settle();
    w.ticks(3, 1_500);
    assert_eq!(w.task("l").epoch(), Some("2-l"));
    // a's records land after 2-l: l and n read p's finish
    w.land("a");
    w.settle();
    w.ticks(2, 1_500);
    assert!(w.finishes_read["l"].contains("p"));
    // s's reader resumes: it applies 2-l and re-addresses its share to the departed a
    w.stalled.remove("s");
    w.settle();
    w.ticks(4, 1_500);
    assert!(w.violations.is_empty(), "{:?}", w.violations);
    for id in ["l", "n", "s"] {
        let p = w
            .task(id)
            .owned_partitions()
            .iter()
            .find(|p| p.token == "p")
            .cloned();
        assert!(p.as_ref().is_none_or(|p| p.state.is_done()), "{id}: {p:?}");
    }
}
