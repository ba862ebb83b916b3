//! Checkpoints converge at any size: thousands of partitions added at once with a small
//! `maxRecordBytes` make every checkpoint hundreds of chunks, whose landing takes a while and
//! interleaves with what other tasks publish meanwhile (producers land their records side by
//! side, as Kafka producers of several processes do). After a leader change, the log still gets
//! about one checkpoint per `stateRefreshInterval`, not a retry from every member every few
//! seconds for as long as the connector runs. (The shared world, its producers queued and paced.)

use partkit::sync::{PartitionSpec, SyncOptions};

#[path = "support/sync_world.rs"]
mod world;
use world::{timeouts, World};

const INTERVAL: u64 = 10_000;
/// A time step of the world.
const STEP: u64 = 10;
/// Records each producer lands per step: a checkpoint of 251 chunks takes 1.25 s to land, longer
/// than `epochAckTimeout`, the wait of a retry before.
const LAND: usize = 2;
/// Records each task reads per step.
const READ: usize = 60;

fn opts() -> SyncOptions {
    SyncOptions {
        state_refresh_interval: INTERVAL,
        max_record_bytes: 1_024,
        ..timeouts(5_000, 1_000)
    }
}

/// The checkpoints (first chunks) that landed in `[from, to)`, with their chunk counts.
fn checkpoints(w: &World, from: u64, to: u64) -> Vec<(String, u32)> {
    w.log
        .iter()
        .zip(&w.log_at)
        .filter(|(m, at)| **at >= from && **at < to && m.checkpoint.is_some())
        .filter(|(m, _)| m.chunk.as_ref().is_none_or(|c| c.index == 0))
        .map(|(m, _)| (m.task_id.clone(), m.chunk.as_ref().map_or(1, |c| c.count)))
        .collect()
}

#[test]
fn checkpoints_in_hundreds_of_chunks_converge_after_a_leader_change() {
    let mut w = World::new(&["a", "b", "c"], opts());
    w.now = 1_000;
    w.queue();
    w.announce(1, "a", &["a", "b", "c"]);
    w.pace_for(2_000, STEP, LAND, READ);
    assert!(["a", "b", "c"]
        .iter()
        .all(|id| w.task(id).epoch_confirmed()));
    let specs: Vec<PartitionSpec> = (0..2_500)
        .map(|i| PartitionSpec::new(format!("partition-{i:05}"), &[]))
        .collect();
    w.add_partitions("a", &specs);
    w.pace_for(3 * INTERVAL, STEP, LAND, READ);
    // the leader changes (the same members)
    w.announce(2, "b", &["a", "b", "c"]);
    w.pace_for(4 * INTERVAL, STEP, LAND, READ);
    let from = w.now;
    w.pace_for(10 * INTERVAL, STEP, LAND, READ);
    let cps = checkpoints(&w, from, w.now);
    let chunks = cps.first().map_or(0, |c| c.1);
    assert!(
        chunks > 100,
        "a checkpoint is hundreds of chunks ({chunks})"
    );
    // about one per interval (a retry now and then), not every member every few seconds
    assert!(
        cps.len() <= 12,
        "{} checkpoints in 10 intervals: {:?}",
        cps.len(),
        cps.iter().map(|c| &c.0).collect::<Vec<_>>()
    );
    assert!(w.violations.is_empty(), "{:?}", w.violations);
}

/// A live sender's message in chunks lands within `min(epochAckTimeout, stateRefreshInterval /
/// 4)` of its publication, spread over that time as a producer may land it, and a member that
/// keeps up reads each record within as much of its landing: its last chunk can be read up to
/// twice that after its first. A checkpoint that falls due meanwhile waits for the message (one
/// naming a record between its chunks is never clean, and a task starting after that record
/// would miss the message). Before, it waited once that time from the reading of the first
/// chunk and then took the message for abandoned: in a quiet log, a leader reading a
/// successor's clean checkpoint as it landed published a retry of its own over it, naming a
/// record in the middle of it, and so did the members whose turn came, seven checkpoints in
/// three intervals (the simulation, seed 90448).
#[test]
fn a_checkpoint_due_while_a_live_senders_chunks_still_land_waits_for_them() {
    let wait = 1_000; // min(epochAckTimeout, stateRefreshInterval / 4)
    let opts = SyncOptions {
        state_refresh_interval: 4 * wait,
        max_record_bytes: 1_024,
        ..timeouts(2_000, wait)
    };
    let mut w = World::new(&["a", "b"], opts);
    w.now = 1_000;
    w.input_gap = 10;
    w.rebalance(1, "a", &["a", "b"]);
    w.ticks(3, 500);
    // a's next checkpoint falls due 1.5 waits after b publishes a message in chunks
    let due = w
        .task("a")
        .poll_timeout()
        .expect("a checkpoint is scheduled");
    w.now = due - wait - wait / 2 - 10;
    w.hold("b");
    let specs: Vec<PartitionSpec> = (0..40)
        .map(|i| PartitionSpec::new(format!("partition-with-a-long-token-{i:03}"), &[]))
        .collect();
    w.add_partitions("b", &specs);
    w.input_gap = 0;
    let published = w.now;
    let mut chunks = w.held.remove("b").unwrap();
    assert!(
        chunks.len() > 2 && chunks[0].chunk.is_some(),
        "{} records",
        chunks.len()
    );
    let rest = chunks.split_off(1);
    let count = rest.len() + 1;
    // its first chunk lands at once and a reads it; the others land 0.9 of the wait later, and
    // a reads them 0.9 of the wait after that (within the wait of their landing)
    w.append(chunks);
    w.drain("a");
    let mut at = published;
    while at < published + 2 * wait {
        at += 100;
        w.now = at;
        if at == published + 900 {
            w.append(rest.clone());
        }
        if at == published + 1_800 {
            w.drain("a");
        }
        w.call("a", |t, now| t.tick(now));
    }
    w.settle();
    // no checkpoint names a record between the chunks of b's message
    let inside: Vec<String> = w
        .log
        .iter()
        .filter_map(|m| m.checkpoint.as_ref().map(|c| (m, c)))
        .filter(|(_, c)| {
            w.log.iter().any(|r| {
                r.task_id == c.after_task_id
                    && r.message_seq == Some(c.after_seq)
                    && r.chunk.as_ref().is_some_and(|k| k.index + 1 < k.count)
            })
        })
        .map(|(m, c)| format!("{} after {}#{}", m.task_id, c.after_task_id, c.after_seq))
        .collect();
    assert!(
        inside.is_empty(),
        "checkpoints inside a message of {count} chunks: {inside:?}"
    );
    // a's checkpoint went out once the message was read whole, clean
    let after: Vec<(u64, String)> = w
        .checkpoints()
        .into_iter()
        .filter(|(t, _)| *t > published)
        .collect();
    assert_eq!(after.len(), 1, "{after:?}");
    assert_eq!(after[0].1, "a");
    assert!(w.clean_checkpoints().contains(&after[0].0), "{after:?}");
    assert!(w.violations.is_empty(), "{:?}", w.violations);
}
