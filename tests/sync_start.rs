//! A new task starts where the start rule says (`find_epoch_start`): at a clean checkpoint, or
//! applying an unclean one first and replaying from the record after the one it names. A
//! transport that feeds that checkpoint as its records (its `messageSeq` included) instead of
//! joined without it (`checkpoint_message`) gets the same task: the first message a task reads,
//! if it is a checkpoint, stands where the record it names is.

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
