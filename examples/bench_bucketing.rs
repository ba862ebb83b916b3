//! Native baseline for `npm run bench`: buckets N distinct entity ids (the ids the JS bench
//! uses) with one reused `Bucketer`, per id and through the packed batch path that the wasm
//! `bucketMany` runs. Prints nanoseconds per entity as JSON.
use partkit::bucketing::Bucketer;
use std::time::Instant;

fn best_of(n: usize, mut f: impl FnMut() -> u64) -> (f64, u64) {
    let mut best = f64::MAX;
    let mut check = 0;
    for _ in 0..5 {
        let start = Instant::now();
        check = f();
        best = best.min(start.elapsed().as_nanos() as f64 / n as f64);
    }
    (best, check)
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let ids: Vec<String> = (0..n)
        .map(|i| format!("org-{}/repository-{}", i % 5000, i))
        .collect();
    let joined: String = ids.concat();
    let lens: Vec<u32> = ids
        .iter()
        .map(|s| s.encode_utf16().count() as u32)
        .collect();
    let Ok(b) = Bucketer::new("farosai/airbyte-github-source", 16) else {
        return;
    };
    let (per_id, c1) = best_of(n, || ids.iter().map(|id| u64::from(b.bucket(id))).sum());
    let (batch, c2) = best_of(n, || {
        let mut out = Vec::new();
        match b.bucket_packed(&joined, &lens, &mut out) {
            Ok(()) => out.iter().map(|&x| u64::from(x)).sum(),
            Err(_) => 0,
        }
    });
    assert_eq!(c1, c2, "batch and per-id results differ");
    println!("{{\"nsPerEntity\": {per_id:.2}, \"nsPerEntityBatch\": {batch:.2}}}");
}
