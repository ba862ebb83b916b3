//! Native benchmark of the lifecycle core, and the generator of the synthetic log that
//! `bench/lifecycle.mjs` replays in wasm for comparison.
//!
//! ```text
//! cargo run --release --example bench_lifecycle -- [--events N] [--refs R] [--emit FILE] [--json]
//! ```
//!
//! The log: wants over R refs (default 100 000), job runs with heartbeats, successes,
//! failures, dep misses answered by derivative wants and retries, taints and cancels — all
//! valid, generated deterministically (fixed seed). The log is applied in chunks of 1,000
//! events, twice, keeping the best time of each chunk: once from JSON text (`apply_json_log`,
//! what the wasm build runs) and once from parsed events (`apply` alone). For each prefix of
//! 10k, 100k and 1M events it prints the time per event and the time per event of the
//! prefix's last tenth (flat cost = about the same number at every size), and the heap bytes
//! the whole state holds per partition instance. `--emit` writes the log as NDJSON (one event
//! per line); `--json` prints the results as one JSON object.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};
use std::time::Instant;

use partkit::lifecycle::{BuildEvent, BuildState, PartitionStatus};
use serde_json::json;

struct Counting;
static LIVE_BYTES: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE_BYTES.fetch_add(layout.size() as isize, Ordering::Relaxed);
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE_BYTES.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE_BYTES.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

fn live_bytes() -> isize {
    LIVE_BYTES.load(Ordering::Relaxed)
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Generates `n` valid events. Uses a `BuildState` to know which refs are Live (for taints)
/// and which partitions wait (for retries); every event is applied as it is generated. Returns
/// the events and that state.
pub fn generate(n: usize, refs: u64) -> (Vec<BuildEvent>, BuildState) {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut state = BuildState::new();
    let mut out: Vec<BuildEvent> = Vec::with_capacity(n + 16);
    let mut ts: u64 = 1_700_000_000_000;
    let (mut wants, mut jobs, mut taints) = (0u64, 0u64, 0u64);
    let name = |i: u64| format!("data/p{i}");
    let push =
        |state: &mut BuildState, out: &mut Vec<BuildEvent>, ts: &mut u64, v: serde_json::Value| {
            *ts += 1000; // one event a second: 1M events span 11.6 days, wants have a 1-day TTL
            let mut v = v;
            v["timestamp"] = json!(*ts);
            let e = BuildEvent::from_value(v).expect("generator builds valid JSON");
            if let Err(err) = state.apply(&e) {
                panic!("generator produced a refused event: {err}");
            }
            out.push(e);
        };
    while out.len() < n {
        let x = rng.below(refs);
        let leased = state
            .canonical_partition(&name(x))
            .is_some_and(|p| p.state.status().is_lease());
        if leased {
            continue;
        }
        let roll = rng.below(100);
        wants += 1;
        let w = format!("w{wants}");
        if roll < 8 {
            // A want that is canceled before anything builds it (or a taint of a Live ref).
            let is_live = state
                .canonical_partition(&name(x))
                .is_some_and(|p| p.state.status() == PartitionStatus::Live);
            if is_live {
                taints += 1;
                push(
                    &mut state,
                    &mut out,
                    &mut ts,
                    json!({"type": "TaintCreate", "taintId": format!("t{taints}"), "partitions": [name(x)]}),
                );
            } else {
                push(
                    &mut state,
                    &mut out,
                    &mut ts,
                    json!({"type": "WantCreate", "wantId": w, "partitions": [name(x)], "ttlSeconds": 86400}),
                );
                if state.want(&w).is_some_and(|s| s.state.is_active()) {
                    push(
                        &mut state,
                        &mut out,
                        &mut ts,
                        json!({"type": "WantCancel", "wantId": w}),
                    );
                }
            }
            continue;
        }
        // Most wants name one ref, some two (x and a neighbour).
        let y = (x + 1) % refs;
        let y_free = !state
            .canonical_partition(&name(y))
            .is_some_and(|p| p.state.status().is_lease());
        let parts: Vec<String> = if roll % 5 == 0 && y_free {
            vec![name(x), name(y)]
        } else {
            vec![name(x)]
        };
        push(
            &mut state,
            &mut out,
            &mut ts,
            json!({"type": "WantCreate", "wantId": w, "partitions": parts, "ttlSeconds": 86400, "slaSeconds": 3600}),
        );
        jobs += 1;
        let j = format!("j{jobs}");
        push(
            &mut state,
            &mut out,
            &mut ts,
            json!({"type": "JobRunBuffer", "jobRunId": j, "jobLabel": "//jobs:daily", "buildingPartitions": parts}),
        );
        push(
            &mut state,
            &mut out,
            &mut ts,
            json!({"type": "JobRunHeartbeat", "jobRunId": j}),
        );
        if roll < 14 {
            push(
                &mut state,
                &mut out,
                &mut ts,
                json!({"type": "JobRunFailure", "jobRunId": j, "reason": "exit 1"}),
            );
        } else if roll < 30 {
            // Dep miss on an upstream ref from a separate namespace (no cycles), answered by a
            // derivative want, the upstream build, and a retry of the downstream.
            let u = format!("raw/u{}", rng.below(refs));
            let u_leased = state
                .canonical_partition(&u)
                .is_some_and(|p| p.state.status().is_lease());
            push(
                &mut state,
                &mut out,
                &mut ts,
                json!({"type": "JobRunDepMiss", "jobRunId": j, "missingDeps": [{"impacted": [parts[0]], "missing": [u]}]}),
            );
            wants += 1;
            push(
                &mut state,
                &mut out,
                &mut ts,
                json!({"type": "WantCreate", "wantId": format!("w{wants}"), "partitions": [u], "sourceJobRunId": j}),
            );
            if !u_leased
                && state
                    .canonical_partition(&u)
                    .is_none_or(|p| p.state.status() != PartitionStatus::Live)
            {
                jobs += 1;
                let ju = format!("j{jobs}");
                push(
                    &mut state,
                    &mut out,
                    &mut ts,
                    json!({"type": "JobRunBuffer", "jobRunId": ju, "buildingPartitions": [u]}),
                );
                push(
                    &mut state,
                    &mut out,
                    &mut ts,
                    json!({"type": "JobRunSuccess", "jobRunId": ju}),
                );
            }
            if state
                .canonical_partition(&parts[0])
                .is_some_and(|p| p.state.status() == PartitionStatus::UpForRetry)
            {
                jobs += 1;
                let jr = format!("j{jobs}");
                push(
                    &mut state,
                    &mut out,
                    &mut ts,
                    json!({"type": "JobRunBuffer", "jobRunId": jr, "buildingPartitions": [parts[0]]}),
                );
                push(
                    &mut state,
                    &mut out,
                    &mut ts,
                    json!({"type": "JobRunSuccess", "jobRunId": jr}),
                );
            }
        } else if roll < 33 {
            push(
                &mut state,
                &mut out,
                &mut ts,
                json!({"type": "JobRunCancel", "jobRunId": j}),
            );
        } else {
            push(
                &mut state,
                &mut out,
                &mut ts,
                json!({"type": "JobRunSuccess", "jobRunId": j}),
            );
        }
    }
    out.truncate(n);
    (out, state)
}

struct Args {
    events: usize,
    refs: u64,
    emit: Option<String>,
    json: bool,
}

fn args() -> Args {
    let mut a = Args {
        events: 1_000_000,
        refs: 100_000,
        emit: None,
        json: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--events" => a.events = it.next().and_then(|v| v.parse().ok()).expect("--events N"),
            "--refs" => a.refs = it.next().and_then(|v| v.parse().ok()).expect("--refs R"),
            "--emit" => a.emit = it.next(),
            "--json" => a.json = true,
            other => panic!("unknown argument {other}"),
        }
    }
    a
}

fn main() {
    let a = args();
    let t0 = Instant::now();
    let (log, generator_state) = generate(a.events, a.refs);
    let generate_ms = t0.elapsed().as_secs_f64() * 1e3;
    if let Some(path) = &a.emit {
        use std::io::Write;
        let mut f = std::io::BufWriter::new(std::fs::File::create(path).expect("create emit file"));
        for e in &log {
            serde_json::to_writer(&mut f, e).expect("write event");
            f.write_all(b"\n").expect("write newline");
        }
    }
    // The log in chunks of 1,000 events, as JSON text (what the wasm replay receives).
    const CHUNK: usize = 1000;
    let texts: Vec<String> = log
        .chunks(CHUNK)
        .map(|c| serde_json::to_string(c).expect("serialize chunk"))
        .collect();
    let mut sizes: Vec<usize> = [10_000, 100_000, 1_000_000]
        .into_iter()
        .filter(|&s| s <= log.len())
        .collect();
    if sizes.is_empty() {
        sizes.push(log.len());
    }
    // Two passes of each kind over the whole log, keeping the best time of every chunk (the
    // machine is shared): JSON text → state (`apply_json_log`, the code wasm runs), and
    // pre-parsed events → state (`apply` alone). Counts are recorded at the prefix ends.
    let mut best_json = vec![f64::INFINITY; texts.len()];
    let mut best_parsed = vec![f64::INFINITY; texts.len()];
    let mut transitions = vec![0usize; texts.len()];
    let mut counts = Vec::new();
    let mut heap_bytes = 0isize;
    let mut full_partitions = 0usize;
    let mut keep = vec![generator_state];
    for pass in 0..2 {
        let before = live_bytes();
        let mut state = BuildState::new();
        for (c, text) in texts.iter().enumerate() {
            let start = Instant::now();
            state.apply_json_log(text).expect("valid log");
            best_json[c] = best_json[c].min(start.elapsed().as_secs_f64() * 1e9);
            if pass == 0 && sizes.contains(&((c + 1) * CHUNK).min(log.len())) {
                counts.push(json!({
                    "partitions": state.partition_count(),
                    "wants": state.want_count(),
                    "jobRuns": state.job_run_count(),
                    "refs": state.ref_count(),
                }));
            }
        }
        if pass == 0 {
            heap_bytes = live_bytes() - before;
            full_partitions = state.partition_count();
        }
        // States are kept until the end: freeing a few hundred MB between passes makes the
        // allocator hand memory back to the OS, and the next pass starts with page faults.
        keep.push(state);
        let mut state = BuildState::new();
        for (c, chunk) in log.chunks(CHUNK).enumerate() {
            let start = Instant::now();
            let mut n = 0;
            for e in chunk {
                n += state.apply(e).expect("valid log").len();
            }
            best_parsed[c] = best_parsed[c].min(start.elapsed().as_secs_f64() * 1e9);
            transitions[c] = n;
        }
        keep.push(state);
    }
    let sum = |v: &[f64], from: usize, to: usize| -> f64 {
        v[from / CHUNK..to.div_ceil(CHUNK)].iter().sum()
    };
    let mut rows = Vec::new();
    for (k, &size) in sizes.iter().enumerate() {
        let tail_from = size - size / 10;
        let tail = (size - tail_from).max(1) as f64;
        let mut row = json!({
            "events": size,
            "ms": sum(&best_json, 0, size) / 1e6,
            "nsPerEvent": sum(&best_json, 0, size) / size as f64,
            "tailNsPerEvent": sum(&best_json, tail_from, size) / tail,
            "parsedNsPerEvent": sum(&best_parsed, 0, size) / size as f64,
            "parsedTailNsPerEvent": sum(&best_parsed, tail_from, size) / tail,
            "tailTransitionsPerEvent": transitions[tail_from / CHUNK..size.div_ceil(CHUNK)].iter().sum::<usize>() as f64 / tail,
        });
        if let (Some(obj), Some(c)) = (
            row.as_object_mut(),
            counts.get(k).and_then(|c| c.as_object()),
        ) {
            obj.extend(c.clone());
        }
        rows.push(row);
    }
    let memory = json!({
        "events": log.len(),
        "heapBytes": heap_bytes,
        "partitions": full_partitions,
        "bytesPerPartition": heap_bytes as f64 / full_partitions.max(1) as f64,
    });
    // Memory of the partition instances alone: a state holding only buffer+success pairs.
    let instances_only = {
        let n = 100_000u64;
        let before = live_bytes();
        let mut state = BuildState::new();
        for i in 0..n {
            let j = format!("j{i}");
            let r = format!("data/p{}", i % 50_000);
            for v in [
                json!({"type": "JobRunBuffer", "timestamp": i, "jobRunId": j, "buildingPartitions": [r]}),
                json!({"type": "JobRunSuccess", "timestamp": i, "jobRunId": j}),
            ] {
                state.apply(&BuildEvent::from_value(v).unwrap()).unwrap();
            }
        }
        let bytes = live_bytes() - before;
        json!({"partitions": n, "refs": 50_000, "heapBytes": bytes, "bytesPerPartition": bytes as f64 / n as f64})
    };
    let result = json!({"generateMs": generate_ms, "logEvents": log.len(), "chunk": CHUNK, "replay": rows, "memory": memory, "instancesOnly": instances_only});
    if a.json {
        println!("{result}");
        return;
    }
    println!(
        "native lifecycle replay ({} events generated in {:.0} ms)",
        log.len(),
        generate_ms
    );
    println!(
        "{:>9} {:>11} {:>16} {:>16} {:>14} {:>14} {:>13}",
        "events",
        "partitions",
        "json ns/event",
        "json tail ns/ev",
        "apply ns/ev",
        "apply tail",
        "tail trans/ev"
    );
    for r in result["replay"].as_array().unwrap() {
        println!(
            "{:>9} {:>11} {:>16.0} {:>16.0} {:>14.0} {:>14.0} {:>13.2}",
            r["events"].as_u64().unwrap(),
            r["partitions"].as_u64().unwrap_or(0),
            r["nsPerEvent"].as_f64().unwrap(),
            r["tailNsPerEvent"].as_f64().unwrap(),
            r["parsedNsPerEvent"].as_f64().unwrap(),
            r["parsedTailNsPerEvent"].as_f64().unwrap(),
            r["tailTransitionsPerEvent"].as_f64().unwrap(),
        );
    }
    println!(
        "whole state after {} events: {} heap bytes, {:.0} per partition instance",
        memory["events"],
        memory["heapBytes"],
        memory["bytesPerPartition"].as_f64().unwrap()
    );
    println!(
        "instances only: {} partitions over {} refs, {:.0} heap bytes per partition (state total / partitions)",
        instances_only["partitions"], instances_only["refs"], instances_only["bytesPerPartition"].as_f64().unwrap()
    );
}
