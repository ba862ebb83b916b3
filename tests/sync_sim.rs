//! The deterministic simulation over a few hundred seeds (`npm run sim -- --seeds N` for more).

use partkit::sync::sim::{run, SimConfig};

#[test]
fn simulation_seeds() {
    let seeds: u64 = std::env::var("SYNC_SIM_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(300);
    let mut failures = Vec::new();
    for seed in 0..seeds {
        if let Err(f) = run(&SimConfig::from_seed(seed)) {
            failures.push(f);
        }
    }
    if let Some(f) = failures.first() {
        panic!("{} of {seeds} seeds failed; first:\n{f}", failures.len());
    }
}
