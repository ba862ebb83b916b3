//! Native baseline for `npm run bench`: assigns N listing keys to 16 partitions with one
//! compiled `ObjectPartitioner` per partition type, the same keys the JS bench generates.
//! Prints nanoseconds per key for each type as JSON: `nsPerKey` one `&str` at a time
//! (`assign_with`), `nsPerKeyBatch` for the whole batch as UTF-16 code units
//! (`assign_utf16`, the path `indexMany` runs in wasm).
use partkit::objects::lines::LineSplitter;
use partkit::objects::{ObjectPartitioner, PartitionConfig};
use partkit::packed::Utf16Batch;
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
    let units: Vec<u16> = keys.iter().flat_map(|k| k.encode_utf16()).collect();
    let lens: Vec<u32> = keys
        .iter()
        .map(|k| k.encode_utf16().count() as u32)
        .collect();
    let mut listing: Vec<u8> = Vec::new();
    for k in &keys {
        listing.extend_from_slice(k.as_bytes());
        listing.push(b'\n');
    }
    let Ok(batch) = Utf16Batch::new(&units, &lens) else {
        return;
    };
    let configs = [
        ("none", PartitionConfig::of_type("none")),
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
        let mut best_batch = f64::MAX;
        let mut best_lines = f64::MAX;
        let mut check_lines = 0u64;
        let mut check = 0u64;
        let mut check_batch = 0u64;
        let mut out = Vec::with_capacity(n);
        for _ in 0..3 {
            let mut scratch = p.scratch();
            let start = Instant::now();
            for k in &keys {
                check += u64::from(p.assign_with(k, false, &mut scratch).index().unwrap_or(0));
            }
            best = best.min(start.elapsed().as_nanos() as f64 / n as f64);

            let mut scratch = p.scratch();
            out.clear();
            let start = Instant::now();
            p.assign_utf16(&batch, &[], &mut scratch, |a| out.push(a));
            best_batch = best_batch.min(start.elapsed().as_nanos() as f64 / n as f64);
            check_batch += out
                .iter()
                .map(|a| u64::from(a.index().unwrap_or(0)))
                .sum::<u64>();

            // The bytes path: the listing as newline-separated UTF-8, 1 MiB chunks, the
            // kept lines' ranges of partition 3 (what `selectLines` does in wasm).
            let mut scratch = p.scratch();
            let mut split = LineSplitter::new();
            let mut ranges: Vec<u32> = Vec::with_capacity(n);
            let start = Instant::now();
            let chunks: Vec<&[u8]> = listing.chunks(1 << 20).collect();
            for (i, chunk) in chunks.iter().enumerate() {
                ranges.clear();
                let _ = split.feed(&p, &mut scratch, chunk, i + 1 == chunks.len(), |s, _| {
                    check_lines += u64::from(s.assignment.index().unwrap_or(0));
                    if s.assignment.selected_by(3) {
                        ranges.push(s.start as u32);
                        ranges.push(s.end as u32);
                    }
                });
            }
            best_lines = best_lines.min(start.elapsed().as_nanos() as f64 / n as f64);
        }
        if check != check_lines {
            eprintln!("bench_objects: {name}: bytes path and per-key results differ");
            std::process::exit(1);
        }
        if check != check_batch {
            eprintln!("bench_objects: {name}: batch and per-key results differ");
            std::process::exit(1);
        }
        parts.push(format!(
            "\"{name}\": {{\"nsPerKey\": {best:.2}, \"nsPerKeyBatch\": {best_batch:.2}, \"nsPerKeyLines\": {best_lines:.2}, \"checksum\": {check}}}"
        ));
    }
    println!("{{{}}}", parts.join(", "));
}
