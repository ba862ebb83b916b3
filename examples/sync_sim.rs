//! Long simulation runs of the sync protocol (`npm run sim -- --seeds 100000`).
//!
//! ```text
//! cargo run --release --features sim --example sync_sim -- [--seeds N] [--from S] [--seed S] [--trace] [--jobs J] [--strict-reruns] [--no-miss] [--offsets]
//! cargo run --release --features sim --example sync_sim -- --scale [--shape TxP] [--seeds N] [--from S] [--seed S] [--jobs J]
//! ```
//!
//! `--seeds N` (default 1000) seeds from `--from S` (default 0), spread over `--jobs` threads
//! (default: the machine's cores); `--seed S` runs one seed; `--trace` prints the full trace of a
//! failing seed (replay one with `--seed S --trace`); `--strict-reruns` fails a run in which a
//! finished partition is started again; `--no-miss` turns off the "task misses a NewEpoch"
//! fault (message loss, which a Kafka consumer does not see); `--offsets` models a transport that
//! checks log offsets as `KafkaTaskSync` does (a missed message fences the task at the next one).
//!
//! `--scale` runs the scale mode (`SimConfig::scale`) instead: every seed in both of the shapes
//! 100 tasks × 1,000 partitions each and 1,000 tasks × 100 partitions each (`--shape 100x1000`
//! runs one shape, any `TxP`), with the default `maxRecordBytes` (900,000 bytes), so that the
//! first own state, every NewEpoch and every checkpoint go out in chunks, tasks that die half-way
//! through a chunked publish, and the largest record checked against the bound; `--seeds`
//! defaults to 2 there. Scale runs are heavy, as every simulated task reads every record and
//! holds the whole view: one seed of 100 × 1,000 takes about 75 s and 5 GB on a 2-core machine
//! (CI runs it, 2 seeds), and 1,000 × 100 holds a thousand views of 100,000 partitions, about
//! ten times that memory. `tests/sync_scale.rs` runs the same mode scaled down.
//!
//! The last line is `N passed, M failed`.

// (a faster allocator: allocation is about a quarter of a simulation's time)
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use partkit::sync::sim::{run, SimConfig, SimFailure, SimReport};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut seeds: u64 = 1000;
    let mut from: u64 = 0;
    let mut full_trace = false;
    let mut strict = false;
    let mut no_miss = false;
    let mut offsets = false;
    let mut scale = false;
    let mut seeds_given = false;
    let mut shapes: Vec<(usize, usize)> = vec![(100, 1_000), (1_000, 100)];
    let mut jobs: usize = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let mut i = 0;
    while i < args.len() {
        let val = |i: usize| -> u64 {
            args.get(i + 1)
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| {
                    eprintln!("{} needs a number", args[i]);
                    std::process::exit(2)
                })
        };
        match args[i].as_str() {
            "--seeds" => {
                seeds = val(i);
                seeds_given = true;
                i += 1;
            }
            "--from" => {
                from = val(i);
                i += 1;
            }
            "--seed" => {
                from = val(i);
                seeds = 1;
                seeds_given = true;
                i += 1;
            }
            "--scale" => scale = true,
            "--shape" => {
                let shape = args.get(i + 1).and_then(|v| {
                    let (t, p) = v.split_once('x')?;
                    Some((t.parse().ok()?, p.parse().ok()?))
                });
                let Some(shape) = shape else {
                    eprintln!("--shape needs TASKSxPARTITIONS, e.g. 100x1000");
                    std::process::exit(2)
                };
                shapes = vec![shape];
                scale = true;
                i += 1;
            }
            "--jobs" => {
                jobs = val(i).max(1) as usize;
                i += 1;
            }
            "--trace" => full_trace = true,
            "--strict-reruns" => strict = true,
            "--no-miss" => no_miss = true,
            "--offsets" => offsets = true,
            "--" => {}
            other => {
                eprintln!("unknown argument {other}");
                std::process::exit(2)
            }
        }
        i += 1;
    }
    if scale && !seeds_given {
        seeds = 2;
    }
    if !scale {
        shapes = vec![(0, 0)];
    }
    let started = std::time::Instant::now();
    let next = Arc::new(AtomicU64::new(0));
    let results: Arc<Mutex<(Vec<SimReport>, Vec<SimFailure>)>> =
        Arc::new(Mutex::new((Vec::new(), Vec::new())));
    let end = from + seeds;
    let runs = seeds * shapes.len() as u64;
    let shapes = Arc::new(shapes);
    let threads: Vec<_> = (0..jobs)
        .map(|_| {
            let (next, results, shapes) = (next.clone(), results.clone(), shapes.clone());
            std::thread::spawn(move || loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                if k >= runs {
                    break;
                }
                let seed = from + k / shapes.len() as u64;
                let mut cfg = if scale {
                    let (tasks, per_task) = shapes[(k % shapes.len() as u64) as usize];
                    let mut cfg = SimConfig::scale(seed, tasks, per_task);
                    if offsets {
                        cfg.check_offsets = true;
                    }
                    cfg
                } else {
                    let mut cfg = SimConfig::from_seed(seed);
                    cfg.check_offsets = offsets;
                    cfg
                };
                cfg.full_trace = full_trace;
                cfg.strict_reruns = strict;
                if no_miss {
                    cfg.faults.miss_epoch = 0;
                }
                let one = std::time::Instant::now();
                let r = run(&cfg);
                if scale {
                    eprintln!(
                        "scale seed {seed}, {} tasks × {} partitions: {}, {:.1?}",
                        cfg.tasks,
                        cfg.per_task,
                        match &r {
                            Ok(rep) => format!(
                                "ok, {} steps, {} records ({} chunks), largest {} B, {} partitions known, {} crashes ({} half-way through a chunked publish)",
                                rep.steps, rep.messages, rep.chunk_records, rep.max_message_bytes, rep.partitions_known, rep.crashes, rep.chunk_deaths
                            ),
                            Err(_) => "FAILED".into(),
                        },
                        one.elapsed()
                    );
                }
                let mut g = results.lock().expect("lock");
                match r {
                    Ok(rep) => g.0.push(rep),
                    Err(f) => {
                        eprintln!(
                            "seed {} failed: {}",
                            f.seed,
                            f.message.chars().take(300).collect::<String>()
                        );
                        g.1.push(f);
                    }
                }
                let done = (g.0.len() + g.1.len()) as u64;
                let seeds = runs;
                if seeds >= 10_000 && done % 10_000 == 0 {
                    eprintln!(
                        "... {done} seeds, {} failed, {:.0?}",
                        g.1.len(),
                        started.elapsed()
                    );
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("simulation thread");
    }
    let (ok, mut failed) = std::mem::take(&mut *results.lock().expect("lock"));
    failed.sort_by_key(|f| f.seed);
    if let Some(f) = failed.first() {
        eprintln!("\nfirst failing seed, replay with: cargo run --release --features sim --example sync_sim -- {}--seed {} --trace\n{f}", if scale { "--scale " } else { "" }, f.seed);
    }
    let sum = |f: fn(&SimReport) -> usize| ok.iter().map(f).sum::<usize>();
    println!(
        "sync simulation{}: seeds {from}..{end}, {} steps, {} messages, {} partitions finished, {} crashes, {} reruns of finished partitions, {} tasks fenced, largest record {} B, {:.1?}",
        if scale {
            format!(
                " (scale: {})",
                shapes
                    .iter()
                    .map(|(t, p)| format!("{t} tasks × {p} partitions"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        } else {
            String::new()
        },
        sum(|r| r.steps),
        sum(|r| r.messages),
        sum(|r| r.partitions_finished),
        sum(|r| r.crashes),
        sum(|r| r.reruns),
        sum(|r| r.fenced),
        ok.iter().map(|r| r.max_message_bytes).max().unwrap_or(0),
        started.elapsed()
    );
    let bursts: Vec<&SimReport> = ok.iter().filter(|r| r.burst > 0).collect();
    if !bursts.is_empty() {
        println!(
            "bursts: {} runs, {} partitions added at once, quiet tails of three intervals with {} checkpoints at most ({} in all)",
            bursts.len(),
            bursts.iter().map(|r| r.burst).sum::<usize>(),
            bursts.iter().map(|r| r.tail_checkpoints).max().unwrap_or(0),
            bursts.iter().map(|r| r.tail_checkpoints).sum::<usize>()
        );
    }
    let frozen = sum(|r| r.frozen);
    if frozen > 0 {
        let overlapping = sum(|r| r.frozen_overlapping);
        let total: u64 = ok.iter().map(|r| r.frozen_overlap_total).sum();
        println!(
            "frozen tasks: {frozen} woke past their session; {overlapping} ran partitions a live member ran too, for {} on average, {} at most (time units)",
            if overlapping > 0 { total / overlapping as u64 } else { 0 },
            ok.iter().map(|r| r.frozen_overlap_max).max().unwrap_or(0)
        );
    }
    let rolling = sum(|r| r.rolling);
    if rolling > 0 {
        let tasks = sum(|r| r.rolling_tasks).max(1);
        println!(
            "rolling restarts: {rolling} ({tasks} tasks closed and replaced one after another); {} finished partitions started again; {} bytes written per task restarted",
            sum(|r| r.rolling_reruns),
            sum(|r| r.rolling_bytes) / tasks
        );
    }
    let calms = sum(|r| r.usable_calms);
    if calms > 0 {
        println!(
            "usable checkpoint near the retention: faults paused {calms} times in {} runs until a newer one landed",
            ok.iter().filter(|r| r.usable_calms > 0).count()
        );
    }
    if std::env::var_os("SIM_CHECKPOINT_GAPS").is_some() {
        // the longest stretches without a clean / usable checkpoint, against the retention
        let report = |what: &str, f: fn(&SimReport) -> u64| {
            let mut gaps: Vec<(u64, u64, u64)> =
                ok.iter().map(|r| (f(r), r.retention, r.seed)).collect();
            gaps.sort_by_key(|(g, ret, _)| std::cmp::Reverse(g * 1000 / (*ret).max(1)));
            let over = gaps.iter().filter(|(g, ret, _)| g > ret).count();
            let worst: Vec<String> = gaps
                .iter()
                .take(8)
                .map(|(g, ret, s)| format!("seed {s}: {g}/{ret}"))
                .collect();
            println!("longest without a {what} checkpoint: {over} seeds over the retention; worst {worst:?}");
        };
        report("clean", |r| r.longest_without_checkpoint);
        report("usable", |r| r.longest_without_usable);
    }
    if !failed.is_empty() {
        println!(
            "failing seeds: {:?}",
            failed.iter().map(|f| f.seed).collect::<Vec<_>>()
        );
    }
    println!("{} passed, {} failed", ok.len(), failed.len());
    if !failed.is_empty() {
        std::process::exit(1);
    }
}
