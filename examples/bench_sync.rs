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

use std::time::Instant;

use partkit::sync::{
    compute_epoch, MessageType, PartitionState, PartitionStatus, SyncMessage, TaskState,
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
    SyncMessage {
        sync_epoch: "17-connector_task-0_00000000".into(),
        task_id: states[0].task_id.clone(),
        message_timestamp: 1_700_000_000_000,
        kind,
        connector_state: states,
        epoch_generation: 17,
        base_epoch: (kind == MessageType::NewEpoch).then(|| "16-connector_task-3_9e3779b1".into()),
        rebalance_generation: None,
        resend: false,
        epoch_attempt: 0,
        message_seq: None,
        checkpoint: None,
        departed: Vec::new(),
        chunk: None,
        delta: None,
    }
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
        let all = serde_json::to_string(&message(MessageType::NewEpoch, states))
            .unwrap()
            .len();
        sizes.push(json!({"tasks": n, "regularBytes": regular, "newEpochBytes": all, "everyStateEveryMessageBytes": all}));
    }

    let result = json!({
        "partitions": partitions,
        "tasks": tasks,
        "departed": tasks - live,
        "newEpochMs": best,
        "partitionsInEpoch": moved,
        "newEpochMessageBytes": epoch_bytes,
        "sizes": sizes,
    });
    if as_json {
        println!("{result}");
    } else {
        println!("{}", serde_json::to_string_pretty(&result).unwrap());
    }
}
