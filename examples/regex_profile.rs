//! Where the time of the `regex` partition type goes, per key, natively: the bench keys of
//! `bench/objects.mjs` with `user(\d+)`. Prints one line per variant (ns per key).
use partkit::objects::goregex;
use regex_automata::{dfa::onepass, meta, Anchored, Input};
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
    let re = goregex::compile(&pat).unwrap();
    println!("pattern {pat} -> {tr}");
    time("regex::Regex::is_match", n, || {
        keys.iter().filter(|k| re.is_match(k)).count() as u64
    });
    time("regex::Regex::find", n, || {
        keys.iter()
            .filter_map(|k| re.find(k))
            .map(|m| m.end() as u64)
            .sum()
    });
    let mut locs = re.capture_locations();
    time("regex::Regex::captures_read (today)", n, || {
        keys.iter()
            .filter_map(|k| {
                re.captures_read(&mut locs, k)
                    .map(|_| locs.get(1).map_or(0, |s| s.1 as u64))
            })
            .sum()
    });
    let m = meta::Regex::new(&tr).unwrap();
    let mut cache = m.create_cache();
    let mut caps = m.create_captures();
    time("meta::Regex::search_captures, own Cache", n, || {
        keys.iter()
            .map(|k| {
                m.search_captures_with(&mut cache, &Input::new(k), &mut caps);
                caps.get_group(1).map_or(0, |s| s.end as u64)
            })
            .sum()
    });
    let mut slots = vec![None; m.group_info().implicit_slot_len()];
    time(
        "meta::Regex::search_slots (whole match), own Cache",
        n,
        || {
            keys.iter()
                .filter_map(|k| m.search_slots_with(&mut cache, &Input::new(k), &mut slots))
                .map(|p| p.as_u32() as u64)
                .sum()
        },
    );
    let nfa = regex_automata::nfa::thompson::NFA::new(&tr).unwrap();
    match onepass::DFA::new_from_nfa(nfa) {
        Ok(dfa) => {
            let mut oc = dfa.create_cache();
            let mut oslots = vec![None; dfa.get_nfa().group_info().slot_len()];
            time("find, then one-pass DFA anchored at the start", n, || {
                keys.iter()
                    .map(|k| {
                        let Some(mm) = m.search_with(&mut cache, &Input::new(k)) else {
                            return 0;
                        };
                        let inp = Input::new(k).range(mm.start()..).anchored(Anchored::Yes);
                        dfa.try_search_slots(&mut oc, &inp, &mut oslots).ok();
                        oslots[3].map_or(0, |s| s.get() as u64)
                    })
                    .sum()
            });
        }
        Err(e) => println!("one-pass: not one-pass ({e})"),
    }
    time("UTF-8 check only", n, || {
        keys.iter()
            .filter(|k| std::str::from_utf8(k.as_bytes()).is_ok())
            .count() as u64
    });
}
