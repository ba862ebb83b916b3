//! Native baseline for `npm run bench`: buckets N distinct entity ids with one reused
//! `Bucketer`, the same ids the JS bench uses. Prints nanoseconds per entity as JSON.
use partkit::bucketing::Bucketer;
use std::time::Instant;

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let ids: Vec<String> = (0..n)
        .map(|i| format!("org-{}/repository-{}", i % 5000, i))
        .collect();
    let Ok(b) = Bucketer::new("farosai/airbyte-github-source", 16) else {
        return;
    };
    let mut best = f64::MAX;
    let mut check = 0u64;
    for _ in 0..3 {
        let start = Instant::now();
        for id in &ids {
            check += u64::from(b.bucket(id));
        }
        best = best.min(start.elapsed().as_nanos() as f64 / n as f64);
    }
    println!("{{\"nsPerEntity\": {best:.2}, \"checksum\": {check}}}");
}
