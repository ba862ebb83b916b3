//! The options and the tiny deterministic network the protocol tests run on.

use std::collections::BTreeMap;

use partkit::sync::{
    MessageType, PartitionSpec, PartitionStatus, RebalanceEvent, SyncMessage, SyncOptions,
    SyncOutput, SyncTask,
};

pub fn opts() -> SyncOptions {
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
pub struct Net {
    pub log: Vec<SyncMessage>,
    pub tasks: BTreeMap<String, (SyncTask, usize)>,
    pub now: u64,
    pub started: BTreeMap<String, Vec<String>>,
    pub stopped: BTreeMap<String, Vec<String>>,
    /// Publish without `messageSeq` (as a transport that drops unknown fields would).
    pub strip_seq: bool,
}

impl Net {
    pub fn new(ids: &[&str]) -> Self {
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
    pub fn add(&mut self, id: &str) {
        self.tasks.insert(
            id.to_string(),
            (SyncTask::with_options(id, opts()).unwrap(), 0),
        );
    }
    pub fn task(&self, id: &str) -> &SyncTask {
        &self.tasks[id].0
    }
    pub fn push(&mut self, id: &str, out: SyncOutput) {
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
    pub fn rebalance(&mut self, generation: u64, leader: &str, members: &[&str]) {
        for m in members {
            self.rebalance_one(generation, leader, members, m);
        }
    }
    pub fn rebalance_one(&mut self, generation: u64, leader: &str, members: &[&str], who: &str) {
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
    pub fn step(&mut self, id: &str) -> bool {
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
    pub fn skip(&mut self, id: &str) {
        self.tasks.get_mut(id).unwrap().1 += 1;
    }
    pub fn drain(&mut self, id: &str) {
        while self.step(id) {}
    }
    pub fn settle(&mut self) {
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
    pub fn tick(&mut self, dt: u64) {
        self.now += dt;
        let ids: Vec<String> = self.tasks.keys().cloned().collect();
        for id in ids {
            let now = self.now;
            let out = self.tasks.get_mut(&id).unwrap().0.tick(now);
            self.push(&id, out);
        }
    }
    pub fn add_partitions(&mut self, id: &str, specs: &[PartitionSpec]) {
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
    pub fn start_all(&mut self, id: &str) {
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
    pub fn finish(&mut self, id: &str, token: &str) {
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
    pub fn owned(&self, id: &str) -> Vec<String> {
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
    pub fn assert_unique(&self, live: &[&str]) {
        let mut seen: BTreeMap<String, String> = BTreeMap::new();
        for id in live {
            for p in self.task(id).owned_partitions() {
                if let Some(other) = seen.insert(p.token.clone(), id.to_string()) {
                    panic!("{} owned by {other} and {id}", p.token);
                }
            }
        }
    }
    pub fn epoch_count(&self) -> usize {
        self.log
            .iter()
            .filter(|m| m.kind == MessageType::NewEpoch && !m.resend)
            .count()
    }
}

pub fn specs(tokens: &[&str]) -> Vec<PartitionSpec> {
    tokens.iter().map(|t| PartitionSpec::new(*t, &[])).collect()
}

/// Three tasks in epoch 1 with p0..p5 spread over them.
pub fn three_tasks() -> Net {
    let mut n = Net::new(&["t1", "t2", "t3"]);
    n.rebalance(1, "t1", &["t1", "t2", "t3"]);
    n.settle();
    assert_eq!(n.task("t1").epoch(), Some("1-t1"));
    n.add_partitions("t1", &specs(&["p0", "p1", "p2", "p3", "p4", "p5"]));
    n.settle();
    n
}
