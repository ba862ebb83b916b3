//! The scale mode of the sync simulation (`SimConfig::scale`): many tasks sharing many
//! partitions, whose first own state, epochs and checkpoints go out in chunks, tasks that die
//! half-way through a chunked publish; 0 safety, 0 no-loss and 0 liveness failures, and every
//! record at most `maxRecordBytes`.
//!
//! The issue's shapes (100 tasks × 1,000 partitions each, 1,000 tasks × 100 partitions each, at
//! the default `maxRecordBytes` of 900,000 bytes) take a minute or more and gigabytes even in a
//! release build, as every simulated task reads every record and holds the whole view (one seed
//! of 100 × 1,000: 72 s and 4.8 GB; 1,000 × 100 holds a thousand views of 100,000 partitions):
//! they run with `npm run sim -- --scale [--shape 100x1000]` (CI runs one seed of 100 × 1,000), or
//! `cargo test --release --features sim --test sync_scale -- --ignored`. Here the same runs are
//! scaled down, tasks and partitions alike, with `maxRecordBytes` scaled down with them (20,000
//! bytes) so that the same records go out in chunks.
//! `SYNC_SCALE_SEEDS=N` changes the number of seeds per shape (default 3).

use partkit::sync::sim::{run, SimConfig, SimReport};

fn seeds() -> u64 {
    std::env::var("SYNC_SCALE_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3)
}

/// Runs `seeds` seeds of the shape; panics on the first failure; checks every report's
/// largest record against the bound and returns the reports.
fn run_shape(tasks: usize, per_task: usize, max_record_bytes: Option<u64>) -> Vec<SimReport> {
    let mut reports = Vec::new();
    for seed in 0..seeds() {
        let mut cfg = SimConfig::scale(seed, tasks, per_task);
        if let Some(max) = max_record_bytes {
            cfg.options.max_record_bytes = max;
        }
        let bound = cfg.options.max_record_bytes as usize;
        match run(&cfg) {
            Ok(r) => {
                assert!(
                    r.max_message_bytes <= bound,
                    "seed {seed}: a record of {} bytes, above maxRecordBytes {bound}",
                    r.max_message_bytes
                );
                assert_eq!(r.partitions_known, tasks * per_task, "seed {seed}");
                assert!(r.chunk_deaths > 0, "seed {seed}: no task died mid-publish");
                reports.push(r);
            }
            Err(f) => panic!("scale run {tasks} tasks × {per_task} partitions failed:\n{f}"),
        }
    }
    let chunks: usize = reports.iter().map(|r| r.chunk_records).sum();
    eprintln!(
        "{tasks} tasks × {per_task} partitions, {} seeds: {} records ({chunks} chunks), largest {} B, {} tasks died half-way through a chunked publish",
        reports.len(),
        reports.iter().map(|r| r.messages).sum::<usize>(),
        reports.iter().map(|r| r.max_message_bytes).max().unwrap_or(0),
        reports.iter().map(|r| r.chunk_deaths).sum::<usize>(),
    );
    assert!(
        chunks > 0,
        "{tasks} × {per_task}: no record went out in chunks"
    );
    reports
}

/// Many partitions on few tasks (the shape of 100 tasks × 1,000 partitions, scaled down).
#[test]
fn scale_few_tasks_many_partitions() {
    let r = run_shape(10, 100, Some(20_000));
    assert!(r.iter().map(|r| r.chunk_deaths).sum::<usize>() > 0);
}

/// Many tasks with few partitions each (the shape of 1,000 tasks × 100 partitions, scaled down).
#[test]
fn scale_many_tasks_few_partitions() {
    let r = run_shape(40, 25, Some(20_000));
    assert!(r.iter().map(|r| r.chunk_deaths).sum::<usize>() > 0);
}

/// The issue's shapes at the default `maxRecordBytes` (900,000 bytes): minutes and gigabytes,
/// so only on request, in a release build.
#[test]
#[ignore = "minutes in a release build: cargo test --release --features sim --test sync_scale -- --ignored"]
fn scale_the_issues_shapes() {
    for (tasks, per_task) in [(100, 1_000), (1_000, 100)] {
        let r = run_shape(tasks, per_task, None);
        assert!(r.iter().all(|r| r.max_message_bytes <= 900_000));
    }
}
