//! Checkpoints converge at any size: thousands of partitions added at once with a small
//! `maxRecordBytes` make every checkpoint hundreds of chunks, whose landing takes a while and
//! interleaves with what other tasks publish meanwhile (producers land their records side by
//! side, as Kafka producers of several processes do). After a leader change, the log still gets
//! about one checkpoint per `stateRefreshInterval`, not a retry from every member every few
//! seconds for as long as the connector runs.

use std::collections::VecDeque;

use partkit::sync::{PartitionSpec, RebalanceEvent, SyncMessage, SyncOptions, SyncTask};

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
        epoch_ack_timeout: 1_000,
        rebalance_timeout: 5_000,
        max_record_bytes: 1_024,
        ..SyncOptions::default()
    }
}

struct Node {
    task: SyncTask,
    /// The next record of the log it reads.
    pos: usize,
    /// What it published that has not landed yet (its producer's queue).
    outbox: VecDeque<SyncMessage>,
}

struct World {
    nodes: Vec<Node>,
    /// The log, with when each record landed.
    log: Vec<(SyncMessage, u64)>,
    now: u64,
}

impl World {
    fn new(ids: &[&str]) -> Self {
        let nodes = ids
            .iter()
            .map(|id| Node {
                task: SyncTask::with_options(id, opts()).unwrap(),
                pos: 0,
                outbox: VecDeque::new(),
            })
            .collect();
        World {
            nodes,
            log: Vec::new(),
            now: 1_000,
        }
    }

    fn rebalance(&mut self, generation: u64, leader: &str) {
        let members: Vec<String> = self
            .nodes
            .iter()
            .map(|n| n.task.task_id().to_string())
            .collect();
        for n in &mut self.nodes {
            let lead = n.task.task_id() == leader;
            let ev = RebalanceEvent {
                generation,
                leader: lead,
                members: lead.then(|| members.clone()),
            };
            let out = n.task.on_rebalance(&ev, self.now).unwrap();
            assert!(out.fenced.is_none(), "{:?}", out.fenced);
            n.outbox.extend(out.publish);
        }
    }

    /// One step: producers land records side by side (one record of each in turn), every task
    /// reads what landed, and ticks when its timer is due.
    fn step(&mut self) {
        self.now += STEP;
        for _ in 0..LAND {
            for n in &mut self.nodes {
                if let Some(m) = n.outbox.pop_front() {
                    self.log.push((m, self.now));
                }
            }
        }
        for n in &mut self.nodes {
            for _ in 0..READ {
                let Some((m, _)) = self.log.get(n.pos) else {
                    break;
                };
                n.pos += 1;
                let out = n.task.on_message(m, self.now).unwrap();
                assert!(
                    out.fenced.is_none(),
                    "{}: {:?}",
                    n.task.task_id(),
                    out.fenced
                );
                n.outbox.extend(out.publish);
            }
            if n.task.poll_timeout().is_some_and(|at| at <= self.now) {
                let out = n.task.tick(self.now);
                assert!(out.fenced.is_none(), "{:?}", out.fenced);
                n.outbox.extend(out.publish);
            }
        }
    }

    fn run_for(&mut self, time: u64) {
        let until = self.now + time;
        while self.now < until {
            self.step();
        }
    }

    /// The checkpoints (first chunks) that landed in `[from, to)`, with their chunk counts.
    fn checkpoints(&self, from: u64, to: u64) -> Vec<(String, u32)> {
        self.log
            .iter()
            .filter(|(m, at)| *at >= from && *at < to && m.checkpoint.is_some())
            .filter(|(m, _)| m.chunk.as_ref().is_none_or(|c| c.index == 0))
            .map(|(m, _)| (m.task_id.clone(), m.chunk.as_ref().map_or(1, |c| c.count)))
            .collect()
    }
}

#[test]
fn checkpoints_in_hundreds_of_chunks_converge_after_a_leader_change() {
    let mut w = World::new(&["a", "b", "c"]);
    w.rebalance(1, "a");
    w.run_for(2_000);
    assert!(w.nodes.iter().all(|n| n.task.epoch_confirmed()));
    let specs: Vec<PartitionSpec> = (0..2_500)
        .map(|i| PartitionSpec::new(format!("partition-{i:05}"), &[]))
        .collect();
    let now = w.now;
    let out = w.nodes[0].task.add_partitions(&specs, now).unwrap();
    w.nodes[0].outbox.extend(out.publish);
    w.run_for(3 * INTERVAL);
    // the leader changes (the same members)
    w.rebalance(2, "b");
    w.run_for(4 * INTERVAL);
    let from = w.now;
    w.run_for(10 * INTERVAL);
    let cps = w.checkpoints(from, w.now);
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
}
