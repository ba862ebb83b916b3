//! Native baseline for `npm run bench`: assigns buckets to N bucketless items over 10 datasets
//! (the items the JS bench uses) with the packed core, random and derived. Prints nanoseconds
//! per item as JSON.
use partkit::imports::{
    assign_packed, BucketCount, BucketRef, DatasetRef, ImportOptions, OsRandom, PackedItem,
    PackedItems,
};
use std::time::Instant;

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let names: Vec<String> = (0..10).map(|d| format!("dataset-{d}")).collect();
    let batch = PackedItems {
        datasets: names.iter().map(String::as_str).collect(),
        buckets: Vec::new(),
        items: (0..n)
            .map(|i| PackedItem {
                dataset: DatasetRef::Index((i % 10) as u32),
                bucket: BucketRef::Absent,
            })
            .collect(),
    };
    let Ok(buckets) = BucketCount::new(5) else {
        return;
    };
    let mut result = Vec::new();
    for import_id in [None, Some("bench-import")] {
        let options = ImportOptions {
            buckets,
            import_id,
            ..Default::default()
        };
        let mut best = f64::MAX;
        for _ in 0..3 {
            let start = Instant::now();
            let Ok(a) = assign_packed(&batch, &options, &mut OsRandom) else {
                return;
            };
            best = best.min(start.elapsed().as_nanos() as f64 / n as f64);
            assert_eq!(a.item_buckets.len(), n);
        }
        result.push(best);
    }
    println!(
        "{{\"nsPerItemRandom\": {:.2}, \"nsPerItemDerived\": {:.2}}}",
        result[0], result[1]
    );
}
