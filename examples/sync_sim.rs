//! Long simulation runs: `cargo run --release --example sync_sim -- --seeds 100000`.
//!
//! Flags: `--seeds N` (default 1000), `--from S` (first seed, default 0), `--seed S` (one seed),
//! `--trace` (print the full trace of a failing seed).

use partkit::sync::sim::{run, SimConfig};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut seeds: u64 = 1000;
    let mut from: u64 = 0;
    let mut full_trace = false;
    let mut i = 0;
    while i < args.len() {
        let val = |i: usize| -> u64 {
            args.get(i + 1).and_then(|v| v.parse().ok()).unwrap_or_else(|| {
                eprintln!("{} needs a number", args[i]);
                std::process::exit(2)
            })
        };
        match args[i].as_str() {
            "--seeds" => { seeds = val(i); i += 1; }
            "--from" => { from = val(i); i += 1; }
            "--seed" => { from = val(i); seeds = 1; i += 1; }
            "--trace" => full_trace = true,
            "--" => {}
            other => { eprintln!("unknown argument {other}"); std::process::exit(2) }
        }
        i += 1;
    }
    let started = std::time::Instant::now();
    let (mut ok, mut failed) = (0u64, 0u64);
    let (mut steps, mut messages, mut max_bytes) = (0usize, 0usize, 0usize);
    for seed in from..from + seeds {
        let mut cfg = SimConfig::from_seed(seed);
        cfg.full_trace = full_trace;
        match run(&cfg) {
            Ok(r) => {
                ok += 1;
                steps += r.steps;
                messages += r.messages;
                max_bytes = max_bytes.max(r.max_message_bytes);
            }
            Err(f) => {
                failed += 1;
                if failed <= 3 {
                    eprintln!("{f}");
                } else {
                    eprintln!("seed {} failed: {}", f.seed, f.message);
                }
            }
        }
        if seeds >= 1000 && (seed - from + 1) % 10_000 == 0 {
            eprintln!("... {} seeds, {failed} failed, {:.0?}", seed - from + 1, started.elapsed());
        }
    }
    println!(
        "sync simulation: seeds {from}..{} steps {steps} messages {messages} largest message {max_bytes} B in {:.1?}",
        from + seeds,
        started.elapsed()
    );
    println!("{ok} passed, {failed} failed");
    if failed > 0 {
        std::process::exit(1);
    }
}
