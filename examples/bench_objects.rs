//! Native baseline for `npm run bench`: assigns N listing keys to 16 partitions with one
//! compiled `ObjectPartitioner` per partition type, the same keys the JS bench generates.
//! Prints nanoseconds per key for each type as JSON.
use partkit::objects::{ObjectPartitioner, PartitionConfig};
use std::time::Instant;

/// The bench keys (keep in sync with `bench/objects.mjs`).
fn key(i: usize) -> String {
    let day = 1 + i % 28;
    let user = i % 997;
    let name = if i % 10 == 0 { "données" } else { "events" };
    format!("logs/2024-03-{day:02}/user{user}/{name}-{i}.json")
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let keys: Vec<String> = (0..n).map(key).collect();
    let configs = [
        ("object", PartitionConfig::of_type("object")),
        ("regex", PartitionConfig::regex(r"user(\d+)")),
        ("substring", PartitionConfig::substring(0, 10)),
        ("date", PartitionConfig::date("2006-01-02")),
    ];
    let mut parts = Vec::new();
    for (name, cfg) in configs {
        let Ok(p) = ObjectPartitioner::new(16, "logs/*", &cfg) else {
            return;
        };
        let mut best = f64::MAX;
        let mut check = 0u64;
        let mut scratch = p.scratch();
        for _ in 0..3 {
            let start = Instant::now();
            for k in &keys {
                check += u64::from(p.assign_with(k, false, &mut scratch).index().unwrap_or(0));
            }
            best = best.min(start.elapsed().as_nanos() as f64 / n as f64);
        }
        parts.push(format!(
            "\"{name}\": {{\"nsPerKey\": {best:.2}, \"checksum\": {check}}}"
        ));
    }
    println!("{{{}}}", parts.join(", "));
}
