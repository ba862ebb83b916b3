//! A new task starts where the start rule says (`find_epoch_start`): at a clean checkpoint, or
//! applying an unclean one first and replaying from the record after the one it names. A
//! transport that feeds that checkpoint as its records (its `messageSeq` included) instead of
//! joined without it (`checkpoint_message`) gets the same task: the first message a task reads,
//! if it is a checkpoint, stands where the record it names is. A checkpoint that names a record
//! between the chunks of a message completed after it starts the replay at its first chunk.

use partkit::sync::{checkpoint_message, EpochStart, SyncMessage, SyncOptions, SyncTask};

#[path = "support/sync_world.rs"]
mod world;
use world::{timeouts, World};

const INTERVAL: u64 = 10_000;

fn opts() -> SyncOptions {
    SyncOptions {
        state_refresh_interval: INTERVAL,
        ..timeouts(5_000, 1_000)
    }
}

/// `a` leads [a, b]; `b` runs `p` and finishes it just as `a`'s checkpoint falls due: `a`
/// computes it before reading the finish, so it names the record before the finish and lands
/// after it (not clean). Both are gone.
fn log_with_an_unclean_checkpoint() -> World {
    let mut w = World::new(&["a", "b"], opts());
    w.now = 1_000;
    w.input_gap = 1;
    w.rebalance(1, "a", &["a", "b"]);
    w.add("b", "p", &[]);
    assert_eq!(w.started["b"], ["p"]);
    w.run("b", "p");
    w.settle();
    w.input_gap = 0;
    w.now = w.task("a").poll_timeout().expect("a checkpoint falls due");
    w.finish("b", "p");
    w.call("a", |t, now| t.tick(now));
    assert!(w.log.last().unwrap().checkpoint.is_some());
    assert!(w.violations.is_empty(), "{:?}", w.violations);
    w
}

/// Where the start rule puts a new task: after the unclean checkpoint's named record.
fn start(w: &World) -> (u64, Vec<u64>) {
    match w.epoch_start() {
        EpochStart::AfterCheckpoint { offset, checkpoint } => (offset, checkpoint),
        other => panic!("expected an unclean checkpoint to start after: {other:?}"),
    }
}

/// Fed as the rule says (joined, no `messageSeq`) or as its record, the checkpoint gives the same
/// task: a tick before the replay publishes no checkpoint naming a record the task has not read
/// (before, fed as its record, the task named the checkpoint itself: a clean checkpoint lacking
/// the finish between, from which the next task restarted the finished partition), and the
/// replay reads the finish.
#[test]
fn a_checkpoint_fed_as_its_record_starts_a_task_as_the_joined_one_does() {
    let mut w = log_with_an_unclean_checkpoint();
    let (offset, at) = start(&w);
    let parts: Vec<SyncMessage> = at.iter().map(|&k| w.log[k as usize].clone()).collect();
    let joined = checkpoint_message(parts.clone()).unwrap();
    let now = w.now + 2 * INTERVAL + 500;
    let mut outputs = Vec::new();
    let mut views = Vec::new();
    for as_records in [false, true] {
        let mut n = SyncTask::with_options("n", opts()).unwrap();
        if as_records {
            for m in &parts {
                n.on_message(m, now).unwrap();
            }
        } else {
            n.on_message(&joined, now).unwrap();
        }
        let out = n.tick(now);
        for m in &out.publish {
            if let Some(c) = &m.checkpoint {
                let named = w
                    .log
                    .iter()
                    .position(|r| {
                        r.task_id == c.after_task_id && r.message_seq == Some(c.after_seq)
                    })
                    .unwrap();
                assert!(
                    (named as u64) < offset,
                    "fed as records: {as_records}: its checkpoint names #{named}, read nothing after #{}",
                    offset - 1
                );
            }
        }
        outputs.push(out.publish.len());
        for m in w.log[offset as usize..].to_vec() {
            let out = n.on_message(&m, now + 1).unwrap();
            assert!(out.start.is_empty(), "{:?}", out.start);
            w.append(out.publish);
        }
        let p = n
            .known_tasks()
            .into_iter()
            .flat_map(|s| s.data.partitions)
            .find(|p| p.token == "p")
            .unwrap();
        assert!(p.state.is_done(), "fed as records: {as_records}: {p:?}");
        views.push(n.known_tasks());
    }
    assert_eq!(outputs[0], outputs[1]);
    assert_eq!(views[0], views[1]);
}

/// `a` leads [a, b] and lags behind the log: it has read only the first chunk of `b`'s message
/// (partitions added, in chunks of `maxRecordBytes`) when its checkpoint falls due, the chunk
/// wait over, so its checkpoint names that chunk; the other chunks had landed. A task that
/// starts where the rule says replays from the message's first chunk (started after the named
/// record, it never reads the message whole: here the others' later records still tell it the
/// partitions, but when the tasks that took them die first nothing else does) and knows `b`'s
/// partitions.
#[test]
fn a_task_started_after_a_checkpoint_named_between_a_messages_chunks_reads_the_message() {
    let opts = SyncOptions {
        max_record_bytes: 1_024,
        ..opts()
    };
    let mut w = World::new(&["a", "b"], opts.clone());
    w.max_record = Some(1_024);
    w.now = 1_000;
    w.rebalance(1, "a", &["a", "b"]);
    w.settle();
    w.stalled.insert("a".into());
    let tokens: Vec<String> = (0..40).map(|i| format!("part-{i:03}")).collect();
    let refs: Vec<&str> = tokens.iter().map(String::as_str).collect();
    let from = w.log.len();
    w.add_partitions("b", &world::specs(&refs));
    let chunks = w.log[from..].iter().filter(|m| m.chunk.is_some()).count();
    assert!(chunks > 2, "b's message goes out in chunks ({chunks})");
    w.settle();
    // `a` reads up to the first chunk of `b`'s message
    while w.tasks["a"].1 <= from {
        w.step("a");
    }
    assert_eq!(w.log[from].chunk.as_ref().map(|c| c.index), Some(0));
    // (its deadlines one after another: the checkpoint's, then the end of the chunk wait)
    let before = w.log.len();
    let mut checkpoint = None;
    for _ in 0..10 {
        let due = w.task("a").poll_timeout().expect("a checkpoint falls due");
        w.now = due.max(w.now + 1);
        w.call("a", |t, now| t.tick(now));
        checkpoint = w.log[before..].iter().find_map(|m| m.checkpoint.clone());
        if checkpoint.is_some() {
            break;
        }
    }
    let checkpoint = checkpoint.expect("a checkpoints once the chunk wait is over");
    assert_eq!(
        (
            checkpoint.after_task_id.as_str(),
            Some(checkpoint.after_seq)
        ),
        ("b", w.log[from].message_seq),
        "it names the first chunk of b's message"
    );
    w.stalled.remove("a");
    w.settle();
    let start = w.start();
    let at = start.0;
    w.join_at("n", start);
    let known: std::collections::BTreeSet<String> = w
        .task("n")
        .known_tasks()
        .into_iter()
        .flat_map(|s| {
            s.data
                .partitions
                .into_iter()
                .map(|p| p.token)
                .chain(s.share.partitions.into_iter().map(|p| p.token))
        })
        .collect();
    let missing: Vec<&String> = tokens.iter().filter(|t| !known.contains(*t)).collect();
    assert!(missing.is_empty(), "n knows nothing of {missing:?}");
    assert!(at <= from, "the replay starts at #{at}, after #{from}");
    assert!(w.violations.is_empty(), "{:?}", w.violations);
}
