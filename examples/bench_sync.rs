//! Native benchmark of the sync core, run by `bench/sync.mjs` for comparison with wasm.
//!
//! ```text
//! cargo run --release --example bench_sync -- [--partitions P] [--tasks T] [--json]
//! ```
//!
//! - **New epoch**: the leader's computation (`compute_epoch`) for P partitions (default 100k)
//!   over T tasks (default 1,000), of which a tenth departed (their partitions and shares go to
//!   the least-loaded survivors); best of 5.
//! - **Message sizes**: JSON bytes of a `Regular` message (the sender's own state: what partkit
//!   sends on every change), of a `NewEpoch` (every member's state: once per rebalance), and so
//!   of the format of the Debezium Spanner connector's design, which sends every state in every
//!   message, for N tasks of 100
//!   partitions each (Spanner-like 40-character tokens, one share per task).
//! - **Epochs at scale** (`epochs`): for T tasks × P partitions per task (10/100/1,000 ×
//!   100/1,000; `--epoch-shapes 10x100,100x1000` picks others), a leader and a member that have
//!   read every task's state and answer: the time of the leader's `on_message` that reads the
//!   last answer, computes the epoch and returns its records (chunks of at most the default
//!   `maxRecordBytes`, 900,000 bytes), the time of the member's `on_message` calls that apply
//!   them, the largest record and all of them, in JSON bytes.
//! - **One task** (`oneTask`): `add_partitions` of N partitions, then `partition_started` for
//!   each (100 / 1,000 / 3,000 / 10,000): records published, their JSON bytes, the largest one,
//!   and the CPU time of those calls.
//! - **A member reads them** (`memberReads`): two tasks; the leader adds 2N partitions (N fall to
//!   the member), then starts each of its N, one call at a time; the time of the member's
//!   `on_message` calls that read those N changes (before a reader applied changes in place, it
//!   copied the sender's whole state twice per change: quadratic in N).
//! - **A member reads one small record** (`memberReadsOne`): two tasks; the leader adds V
//!   partitions (1,000 / 50,000; `--view-sizes 1000,50000` picks others), half of which fall to
//!   the member, then starts 1,000 of its own one by one; each of the member's `on_message`
//!   calls that reads one of those changes is timed alone: the median and the 90th percentile.
//!   `--only-reads-one` prints these rows alone.

use std::time::Instant;

use partkit::sync::{
    compute_epoch, MessageType, PartitionSpec, PartitionState, PartitionStatus, RebalanceEvent,
    SyncMessage, SyncOptions, SyncTask, TaskState,
};
use serde_json::json;

fn token(i: usize) -> String {
    // Spanner partition tokens are long opaque strings
    format!(
        "{:040x}",
        (i as u128).wrapping_mul(0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C835)
    )
}

fn state(task: usize, first: usize, count: usize, departed_share_to: Option<String>) -> TaskState {
    let mut s = TaskState::empty(format!(
        "connector_task-{task}_{:08x}",
        task * 2_654_435_761 % 4_294_967_296
    ));
    s.state_version = 42;
    s.state_timestamp = 1_700_000_000_000;
    for i in first..first + count {
        let mut p = PartitionState::created(token(i), vec![token(i / 2)]);
        p.state = match i % 4 {
            0 => PartitionStatus::Running,
            1 => PartitionStatus::Finished,
            2 => PartitionStatus::Scheduled,
            _ => PartitionStatus::Created,
        };
        p.start_timestamp = Some(1_700_000_000_000);
        if p.state == PartitionStatus::Finished {
            p.finished_timestamp = Some(1_700_000_100_000);
        }
        s.data.partitions.push(p);
    }
    if let Some(a) = departed_share_to {
        s.share
            .partitions
            .push(PartitionState::created(token(10_000_000 + task), vec![]).shared_to(a));
    }
    s
}

fn message(kind: MessageType, states: Vec<TaskState>) -> SyncMessage {
    let task_id = states[0].task_id.clone();
    SyncMessage {
        epoch_generation: 17,
        base_epoch: (kind == MessageType::NewEpoch).then(|| "16-connector_task-3_9e3779b1".into()),
        ..SyncMessage::new(
            kind,
            "17-connector_task-0_00000000",
            task_id,
            1_700_000_000_000,
            states,
        )
    }
}

/// JSON bytes of each record.
fn record_bytes(records: &[SyncMessage]) -> Vec<usize> {
    records
        .iter()
        .map(|m| serde_json::to_string(m).map_or(0, |s| s.len()))
        .collect()
}

/// A leader and a member of `tasks` tasks of `per` partitions each: the new epoch's
/// computation and publication, and its application by the member.
fn epoch_at_scale(tasks: usize, per: usize) -> serde_json::Value {
    let ids: Vec<String> = (0..tasks)
        .map(|t| format!("connector_task-{t:04}"))
        .collect();
    let opts = SyncOptions {
        rebalance_timeout: 3_600_000,
        epoch_ack_timeout: 3_600_000,
        ..SyncOptions::default()
    };
    let mut leader = SyncTask::with_options(&ids[0], opts.clone()).expect("options");
    let mut member = SyncTask::with_options(&ids[1], opts).expect("options");
    let mut now = 1_700_000_000_000u64;
    let mut log: Vec<SyncMessage> = Vec::new();
    // the two tasks' own partitions, then every other task's state as read from the topic
    for (k, t) in [&mut leader, &mut member].into_iter().enumerate() {
        let specs: Vec<PartitionSpec> = (0..per)
            .map(|i| PartitionSpec::new(token(k * per + i), &[]))
            .collect();
        log.extend(t.add_partitions(&specs, now).expect("add").publish);
    }
    let states: Vec<TaskState> = (0..tasks)
        .map(|t| {
            let mut s = TaskState::empty(ids[t].clone());
            s.state_version = 1;
            s.state_timestamp = now;
            for i in t * per..(t + 1) * per {
                let mut p = PartitionState::created(token(i), vec![]);
                p.state = PartitionStatus::Running;
                p.start_timestamp = Some(now);
                s.data.partitions.push(p);
            }
            s
        })
        .collect();
    let regular = |s: &TaskState, kind: MessageType, now: u64| SyncMessage {
        rebalance_generation: (kind == MessageType::RebalanceAnswer).then_some(1),
        ..SyncMessage::new(kind, "", s.task_id.clone(), now, vec![s.clone()])
    };
    for s in &states[2..] {
        log.push(regular(s, MessageType::Regular, now));
    }
    now += 1;
    let ev = RebalanceEvent {
        generation: 1,
        leader: true,
        members: Some(ids.clone()),
    };
    log.extend(leader.on_rebalance(&ev, now).expect("rebalance").publish);
    let ev = RebalanceEvent {
        generation: 1,
        leader: false,
        members: None,
    };
    log.extend(member.on_rebalance(&ev, now).expect("rebalance").publish);
    for s in &states[2..tasks - 1] {
        let mut s = s.clone();
        s.state_version = 2;
        log.push(regular(&s, MessageType::RebalanceAnswer, now));
    }
    // both read the log so far (their own records included)
    let mut k = 0;
    while k < log.len() {
        let m = log[k].clone();
        for t in [&mut leader, &mut member] {
            let out = t.on_message(&m, now).expect("message");
            log.extend(out.publish);
        }
        k += 1;
    }
    let mut last = states[tasks - 1].clone();
    last.state_version = 2;
    let last = regular(&last, MessageType::RebalanceAnswer, now);
    let mut mine = member.on_message(&last, now).expect("message").publish;
    let mut k = 0;
    while k < mine.len() {
        let m = mine[k].clone();
        mine.extend(member.on_message(&m, now).expect("message").publish);
        k += 1;
    }
    let start = Instant::now();
    let out = leader.on_message(&last, now).expect("the last answer");
    let leader_ms = start.elapsed().as_secs_f64() * 1e3;
    let epoch: Vec<SyncMessage> = out
        .publish
        .iter()
        .filter(|m| m.kind == MessageType::NewEpoch)
        .cloned()
        .collect();
    assert!(
        !epoch.is_empty(),
        "the last answer did not produce the epoch"
    );
    let start = Instant::now();
    for m in &out.publish {
        member.on_message(m, now).expect("epoch");
    }
    let member_ms = start.elapsed().as_secs_f64() * 1e3;
    assert_eq!(
        member.epoch(),
        Some(epoch[0].sync_epoch.as_str()),
        "the member applied the epoch"
    );
    let bytes = record_bytes(&epoch);
    json!({
        "tasks": tasks,
        "perTask": per,
        "leaderMs": leader_ms,
        "memberMs": member_ms,
        "records": epoch.len(),
        "largestRecordBytes": bytes.iter().max(),
        "epochBytes": bytes.iter().sum::<usize>(),
    })
}

/// One task: `add_partitions` of `n` partitions, then `partition_started` for each.
fn one_task(n: usize) -> serde_json::Value {
    let start = Instant::now();
    let mut t = SyncTask::new("connector_task-0").expect("task");
    let mut log: Vec<SyncMessage> = Vec::new();
    let mut now = 1_700_000_000_000u64;
    let ev = RebalanceEvent {
        generation: 1,
        leader: true,
        members: Some(vec!["connector_task-0".into()]),
    };
    log.extend(t.on_rebalance(&ev, now).expect("rebalance").publish);
    let mut k = 0;
    while k < log.len() {
        let m = log[k].clone();
        log.extend(t.on_message(&m, now).expect("message").publish);
        k += 1;
    }
    let setup = log.len();
    let specs: Vec<PartitionSpec> = (0..n).map(|i| PartitionSpec::new(token(i), &[])).collect();
    now += 1;
    let out = t.add_partitions(&specs, now).expect("add");
    log.extend(out.publish);
    for tok in out.start {
        now += 1;
        log.extend(t.partition_started(&tok, now).expect("started").publish);
        // its own records read back, as a transport does
        while k < log.len() {
            let m = log[k].clone();
            log.extend(t.on_message(&m, now).expect("message").publish);
            k += 1;
        }
    }
    let cpu_ms = start.elapsed().as_secs_f64() * 1e3;
    let bytes = record_bytes(&log[setup..]);
    json!({
        "partitions": n,
        "records": bytes.len(),
        "bytes": bytes.iter().sum::<usize>(),
        "largestRecordBytes": bytes.iter().max(),
        "cpuMs": cpu_ms,
    })
}

/// Two tasks; the leader adds `added` partitions (about half fall to the member) and starts up
/// to `starts` of its own one by one: the leader, the member, the changes the member has not
/// read yet (one Regular record per start) and the time.
fn member_scenario(added: usize, starts: usize) -> (SyncTask, SyncTask, Vec<SyncMessage>, u64) {
    let ids = [
        "connector_task-0".to_string(),
        "connector_task-1".to_string(),
    ];
    let mut a = SyncTask::new(&ids[0]).expect("task");
    let mut b = SyncTask::new(&ids[1]).expect("task");
    let mut log: Vec<SyncMessage> = Vec::new();
    let mut now = 1_700_000_000_000u64;
    let ev = |leader: bool| RebalanceEvent {
        generation: 1,
        leader,
        members: leader.then(|| ids.to_vec()),
    };
    log.extend(a.on_rebalance(&ev(true), now).expect("rebalance").publish);
    log.extend(b.on_rebalance(&ev(false), now).expect("rebalance").publish);
    let mut read = [0usize; 2];
    let pump = |t: &mut SyncTask, k: &mut usize, log: &mut Vec<SyncMessage>, now: u64| {
        while *k < log.len() {
            let m = log[*k].clone();
            log.extend(t.on_message(&m, now).expect("message").publish);
            *k += 1;
        }
    };
    for _ in 0..3 {
        pump(&mut a, &mut read[0], &mut log, now);
        pump(&mut b, &mut read[1], &mut log, now);
    }
    let specs: Vec<PartitionSpec> = (0..added)
        .map(|i| PartitionSpec::new(token(i), &[]))
        .collect();
    now += 1;
    let out = a.add_partitions(&specs, now).expect("add");
    log.extend(out.publish);
    for _ in 0..3 {
        pump(&mut a, &mut read[0], &mut log, now);
        pump(&mut b, &mut read[1], &mut log, now);
    }
    for tok in out.start.iter().take(starts) {
        now += 1;
        log.extend(a.partition_started(tok, now).expect("started").publish);
        pump(&mut a, &mut read[0], &mut log, now);
    }
    let changes = log.split_off(read[1]);
    (a, b, changes, now)
}

/// Two tasks; the leader adds `2n` partitions (`n` fall to the member) and starts its `n` one
/// by one; the member's time to read those changes.
fn member_reads(n: usize) -> serde_json::Value {
    let (a, mut b, changes, now) = member_scenario(2 * n, usize::MAX);
    let start = Instant::now();
    for m in &changes {
        std::hint::black_box(b.on_message(m, now).expect("message"));
    }
    json!({
        "partitions": a.owned_partitions().len(),
        "records": changes.len(),
        "cpuMs": start.elapsed().as_secs_f64() * 1e3,
    })
}

/// A member's cost to read one small record as the view grows: two tasks; the leader adds
/// `view` partitions (half fall to the member), then starts `reads` of its own one by one; each
/// of the member's `on_message` calls that reads one of those changes (a Regular record naming
/// one partition) is timed alone: the median and the 90th percentile, in µs.
fn member_reads_one(view: usize, reads: usize) -> serde_json::Value {
    let (_, mut b, changes, now) = member_scenario(view, reads);
    let mut times: Vec<f64> = changes
        .iter()
        .map(|m| {
            let start = Instant::now();
            std::hint::black_box(b.on_message(m, now).expect("message"));
            start.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    times.sort_by(f64::total_cmp);
    let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
    json!({
        "view": b.known_tasks().iter().map(|s| s.data.partitions.len()).sum::<usize>(),
        "records": changes.len(),
        "medianUs": at(0.5),
        "p90Us": at(0.9),
    })
}

/// The one-task rows; a size is skipped when the previous one, scaled quadratically (as the
/// cost grows while every change publishes the whole own state), predicts more than a minute.
fn one_task_rows(sizes: &[usize]) -> Vec<serde_json::Value> {
    let mut prev: Option<(usize, f64)> = None;
    sizes
        .iter()
        .map(|&n| {
            if let Some((m, ms)) = prev {
                let ratio = n as f64 / m.max(1) as f64;
                if ms * ratio * ratio > 60_000.0 {
                    return json!({"partitions": n, "skipped": true});
                }
            }
            let row = one_task(n);
            prev = Some((n, row["cpuMs"].as_f64().unwrap_or(0.0)));
            row
        })
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str, default: usize| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let partitions = arg("--partitions", 100_000);
    let tasks = arg("--tasks", 1_000).max(2);
    let as_json = args.iter().any(|a| a == "--json");
    let shapes: Vec<(usize, usize)> = args
        .iter()
        .position(|a| a == "--epoch-shapes")
        .and_then(|i| args.get(i + 1))
        .map_or("10x100,10x1000,100x100,100x1000,1000x100".into(), |s| {
            s.clone()
        })
        .split(',')
        .filter_map(|s| {
            let (t, p) = s.split_once('x')?;
            Some((t.parse::<usize>().ok()?.max(2), p.parse().ok()?))
        })
        .collect();
    let view_sizes: Vec<usize> = args
        .iter()
        .position(|a| a == "--view-sizes")
        .and_then(|i| args.get(i + 1))
        .map_or("1000,50000".into(), |s| s.clone())
        .split(',')
        .filter_map(|s| s.parse().ok())
        .collect();
    if args.iter().any(|a| a == "--only-reads-one") {
        let rows: Vec<_> = view_sizes
            .iter()
            .map(|&v| member_reads_one(v, 1_000))
            .collect();
        println!("{}", serde_json::Value::from(rows));
        return;
    }
    let one_task_sizes: Vec<usize> = args
        .iter()
        .position(|a| a == "--one-task")
        .and_then(|i| args.get(i + 1))
        .map_or("100,1000,3000,10000".into(), |s| s.clone())
        .split(',')
        .filter_map(|s| s.parse().ok())
        .collect();

    // the leader's view: every task's state; the last tenth departed
    let per = partitions / tasks;
    let states: Vec<TaskState> = (0..tasks)
        .map(|t| {
            state(
                t,
                t * per,
                per + if t == tasks - 1 {
                    partitions % tasks
                } else {
                    0
                },
                None,
            )
        })
        .collect();
    let live = tasks - tasks / 10;
    let members: Vec<String> = {
        let mut m: Vec<String> = states[..live].iter().map(|s| s.task_id.clone()).collect();
        m.sort();
        m
    };
    let view: Vec<&TaskState> = states.iter().collect();
    let mut best = f64::INFINITY;
    let mut moved = 0;
    for _ in 0..5 {
        let start = Instant::now();
        let out = compute_epoch(&view, &members);
        best = best.min(start.elapsed().as_secs_f64() * 1e3);
        moved = out.iter().map(|s| s.data.partitions.len()).sum::<usize>();
        std::hint::black_box(&out);
    }
    let epoch_bytes = serde_json::to_string(&message(
        MessageType::NewEpoch,
        compute_epoch(&view, &members),
    ))
    .map(|s| s.len())
    .unwrap_or(0);

    // message sizes as the number of tasks grows
    let mut sizes = Vec::new();
    for n in [1usize, 10, 100, 1_000] {
        let states: Vec<TaskState> = (0..n)
            .map(|t| {
                state(
                    t,
                    t * 100,
                    100,
                    Some(format!("connector_task-{}", (t + 1) % n)),
                )
            })
            .collect();
        let regular =
            serde_json::to_string(&message(MessageType::Regular, vec![states[0].clone()]))
                .unwrap()
                .len();
        // a change: one partition started
        let mut one = states[0].clone();
        one.data.partitions.truncate(1);
        let mut change = message(MessageType::Regular, vec![one]);
        change.delta = Some(partkit::sync::Delta::default());
        let change = serde_json::to_string(&change).unwrap().len();
        let all = serde_json::to_string(&message(MessageType::NewEpoch, states))
            .unwrap()
            .len();
        sizes.push(json!({"tasks": n, "changeBytes": change, "regularBytes": regular, "newEpochBytes": all, "everyStateEveryMessageBytes": all}));
    }

    let result = json!({
        "partitions": partitions,
        "tasks": tasks,
        "departed": tasks - live,
        "newEpochMs": best,
        "partitionsInEpoch": moved,
        "newEpochMessageBytes": epoch_bytes,
        "sizes": sizes,
        "epochs": shapes.iter().map(|&(t, p)| epoch_at_scale(t, p)).collect::<Vec<_>>(),
        "oneTask": one_task_rows(&one_task_sizes),
        "memberReads": one_task_sizes.iter().map(|&n| member_reads(n)).collect::<Vec<_>>(),
        "memberReadsOne": view_sizes.iter().map(|&v| member_reads_one(v, 1_000)).collect::<Vec<_>>(),
    });
    if as_json {
        println!("{result}");
    } else {
        println!("{}", serde_json::to_string_pretty(&result).unwrap());
    }
}
