//! A new task starts where the start rule says (`find_epoch_start`): at a clean checkpoint, or
//! applying an unclean one first and replaying from the record after the one it names. A
//! transport that feeds that checkpoint as its records (its `messageSeq` included) instead of
//! joined without it (`checkpoint_message`) gets the same task: the first message a task reads,
//! if it is a checkpoint, stands where the record it names is.

use partkit::sync::{
    checkpoint_message, find_epoch_start, EpochStart, LogRecord, PartitionSpec, RebalanceEvent,
    RecordHeader, SyncMessage, SyncOptions, SyncOutput, SyncTask,
};

const INTERVAL: u64 = 10_000;

fn opts() -> SyncOptions {
    SyncOptions {
        state_refresh_interval: INTERVAL,
        epoch_ack_timeout: 1_000,
        rebalance_timeout: 5_000,
        ..SyncOptions::default()
    }
}

struct Log {
    records: Vec<SyncMessage>,
    now: u64,
}

impl Log {
    fn put(&mut self, out: SyncOutput) -> Vec<String> {
        assert!(out.fenced.is_none(), "{:?}", out.fenced);
        self.records.extend(out.publish);
        out.start
    }

    /// Every task reads the log to its end (`pos`: where each is).
    fn settle(&mut self, tasks: &mut [(&mut SyncTask, usize)]) {
        loop {
            let mut moved = false;
            for (t, pos) in tasks.iter_mut() {
                while *pos < self.records.len() {
                    let m = self.records[*pos].clone();
                    *pos += 1;
                    self.now += 1;
                    let out = t.on_message(&m, self.now).unwrap();
                    self.put(out);
                    moved = true;
                }
            }
            if !moved {
                break;
            }
        }
    }
}

/// `a` leads [a, b]; `b` runs `p` and finishes it just as `a`'s checkpoint falls due: `a`
/// computes it before reading the finish, so it names the record before the finish and lands
/// after it (not clean). Both are gone. Returns the log and the time.
fn log_with_an_unclean_checkpoint() -> Log {
    let mut log = Log {
        records: Vec::new(),
        now: 1_000,
    };
    let mut a = SyncTask::with_options("a", opts()).unwrap();
    let mut b = SyncTask::with_options("b", opts()).unwrap();
    let lead = RebalanceEvent {
        generation: 1,
        leader: true,
        members: Some(vec!["a".into(), "b".into()]),
    };
    let member = RebalanceEvent {
        generation: 1,
        leader: false,
        members: None,
    };
    log.now += 1;
    let out = a.on_rebalance(&lead, log.now).unwrap();
    log.put(out);
    let out = b.on_rebalance(&member, log.now).unwrap();
    log.put(out);
    let (mut pa, mut pb) = (0, 0);
    log.settle(&mut [(&mut a, pa), (&mut b, pb)]);
    pa = log.records.len();
    pb = pa;
    let out = b.add_partitions(&[PartitionSpec::new("p", &[])], log.now).unwrap();
    assert_eq!(log.put(out), vec!["p".to_string()]);
    let out = b.partition_started("p", log.now).unwrap();
    log.put(out);
    let mut tasks = [(&mut a, pa), (&mut b, pb)];
    log.settle(&mut tasks);
    log.now = tasks[0].0.poll_timeout().expect("a checkpoint falls due");
    let out = tasks[1].0.partition_finished("p", log.now).unwrap();
    log.put(out);
    let out = tasks[0].0.tick(log.now);
    log.put(out);
    assert!(log.records.last().unwrap().checkpoint.is_some());
    log
}

fn start(log: &Log) -> (u64, Vec<u64>) {
    let records: Vec<LogRecord<'_>> = log
        .records
        .iter()
        .enumerate()
        .map(|(k, m)| LogRecord {
            offset: k as u64,
            header: Some(RecordHeader::of(m)),
        })
        .collect();
    match find_epoch_start(&records, true, 0).unwrap() {
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
    let mut log = log_with_an_unclean_checkpoint();
    let (offset, at) = start(&log);
    let parts: Vec<SyncMessage> = at.iter().map(|&k| log.records[k as usize].clone()).collect();
    let joined = checkpoint_message(parts.clone()).unwrap();
    let now = log.now + 2 * INTERVAL + 500;
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
                let named = log
                    .records
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
        for m in log.records[offset as usize..].to_vec() {
            let out = n.on_message(&m, now + 1).unwrap();
            assert!(out.start.is_empty(), "{:?}", out.start);
            log.records.extend(out.publish);
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
