//! Where the time of the `regex` partition type goes, per key, natively: the bench keys of
//! `bench/objects.mjs` with `user(\d+)` (or the pattern given second), the matcher partkit
//! uses (`objects::gomatch`) against the `regex` crate on the same translated pattern (a
//! dev-dependency). Prints one line per variant (ns per key).
use partkit::objects::goregex;
use std::time::Instant;

fn key(i: usize) -> String {
    let day = 1 + i % 28;
    let user = i % 997;
    let name = if i % 10 == 0 { "données" } else { "events" };
    format!("2024-03-{day:02}/user{user}/{name}-{i}.json")
}

fn time(name: &str, n: usize, mut f: impl FnMut() -> u64) {
    let mut best = f64::MAX;
    let mut sink = 0;
    for _ in 0..3 {
        let t = Instant::now();
        sink += f();
        best = best.min(t.elapsed().as_nanos() as f64 / n as f64);
    }
    println!("{name:<48} {best:>7.1} ns/key  ({sink})");
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let pat = std::env::args()
        .nth(2)
        .unwrap_or_else(|| r"user(\d+)".into());
    let keys: Vec<String> = (0..n).map(key).collect();
    let tr = goregex::translate(&pat).unwrap();
    let m = goregex::compile(&pat).unwrap();
    let re = regex::Regex::new(&tr).unwrap();
    println!("pattern {pat} -> {tr}");
    let mut c = m.cache();
    let last = m.groups() - 1;
    time("gomatch::Matcher::captures", n, || {
        let mut sum = 0;
        for k in &keys {
            if m.captures(&mut c, k) {
                sum += m.group(&c, last).map_or(0, |s| s.1 as u64);
            }
        }
        sum
    });
    let mut locs = re.capture_locations();
    time("regex::Regex::captures_read", n, || {
        keys.iter()
            .filter_map(|k| {
                re.captures_read(&mut locs, k)
                    .map(|_| locs.get(last).map_or(0, |s| s.1 as u64))
            })
            .sum()
    });
    time("regex::Regex::find", n, || {
        keys.iter()
            .filter_map(|k| re.find(k))
            .map(|m| m.end() as u64)
            .sum()
    });
    time("UTF-8 check only", n, || {
        keys.iter()
            .filter(|k| std::str::from_utf8(k.as_bytes()).is_ok())
            .count() as u64
    });
}
