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
