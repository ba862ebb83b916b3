//! Proptest at scale over the parsers that take caller text: Go time layouts, Go regex syntax,
//! bucket ranges, lifecycle events and sync messages. Each property is "no panic, and a refused
//! input changes nothing"; inputs mix arbitrary strings with grammar-shaped ones, so that the
//! deep paths are reached.
//!
//! `cargo test --test parsers_fuzz` runs a short pass (a few thousand cases per parser). A long
//! run: `PARTKIT_FUZZ_SECONDS=600 cargo test --release --test parsers_fuzz -- --nocapture
//! --test-threads 1 <name>` keeps generating cases for that many seconds per parser and prints
//! how many ran (docs/robustness.md records the runs).

use std::time::{Duration, Instant};

use partkit::bucketing::{BucketSet, RangesInput};
use partkit::lifecycle::{BuildEvent, BuildState};
use partkit::objects::{goregex, gotime, ObjectPartitioner, PartitionConfig};
use partkit::sync::{PartitionSpec, RebalanceEvent, SyncMessage, SyncTask};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

/// Runs `test` over `strategy`: a fixed number of cases, or for `PARTKIT_FUZZ_SECONDS`.
fn fuzz<S: Strategy>(name: &str, strategy: S, test: impl Fn(S::Value))
where
    S::Value: std::fmt::Debug,
{
    let seconds: Option<u64> = std::env::var("PARTKIT_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok());
    let batch = 2_000;
    let deadline = seconds.map(|s| Instant::now() + Duration::from_secs(s));
    let mut cases = 0u64;
    loop {
        let mut runner = TestRunner::new(Config {
            cases: batch,
            failure_persistence: None,
            ..Config::default()
        });
        let result = runner.run(&strategy, |v| {
            test(v);
            Ok(())
        });
        if let Err(e) = result {
            panic!("{name}: {e}");
        }
        cases += u64::from(batch);
        match deadline {
            Some(d) if Instant::now() < d => continue,
            _ => break,
        }
    }
    if let Some(s) = seconds {
        println!("{name}: {cases} cases in {s} s, no failure");
    }
}

/// Text built from `atoms`, plus arbitrary strings.
fn shaped(atoms: &'static [&'static str], max: usize) -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::collection::vec(prop::sample::select(atoms), 0..max).prop_map(|v| v.concat()),
        1 => any::<String>(),
        1 => prop::collection::vec(any::<char>(), 0..64).prop_map(|v| v.into_iter().collect()),
    ]
}

#[rustfmt::skip]
const LAYOUT_ATOMS: &[&str] = &[
    "2006", "06", "01", "1", "Jan", "January", "02", "2", "_2", "002", "__2", "15", "3", "03",
    "4", "04", "5", "05", "PM", "pm", "MST", "Z0700", "Z07:00", "-0700", "-07:00", "-07",
    "Z07", ".000", ".999", ",000", ".9", "Mon", "Monday", "-", "/", ":", " ", "T", "x", "0",
    "9", "\u{1F600}", "é", "\\", ".", ",",
];

#[rustfmt::skip]
const VALUE_ATOMS: &[&str] = &[
    "2024", "24", "12", "1", "31", "Dec", "December", "Mon", "-", "/", ":", " ", "T", "Z",
    "+05:30", "-0800", ".123", ",5", "PM", "am", "UTC", "9999", "0", "00", "\u{1F600}", "x",
];

#[test]
fn go_time_layouts() {
    let s = (shaped(LAYOUT_ATOMS, 12), shaped(VALUE_ATOMS, 12));
    fuzz("go time layouts", s, |(layout, value)| {
        let _ = gotime::validate_layout(&layout);
        let _ = gotime::parse(&layout, value.as_bytes());
        let cfg = PartitionConfig::date(&layout);
        if let Ok(p) = ObjectPartitioner::new(7, "", &cfg) {
            let _ = p.assign(&value, false);
            let _ = p.assign(&format!("{value}/{layout}"), false);
        }
    });
}

#[rustfmt::skip]
const REGEX_ATOMS: &[&str] = &[
    "(", ")", "(?:", "(?P<n>", "(?i)", "(?s)", "(?m)", "(?U)", "(?-i)", "[", "]", "[^", "[:alpha:]",
    "[[:^digit:]]", "a", "b", "\\d", "\\D", "\\w", "\\s", "\\b", "\\B", "\\pL", "\\p{Greek}",
    "\\PN", "\\x{10FFFF}", "\\x41", "\\Q", "\\E", "\\", ".", "*", "+", "?", "*?", "{2}", "{1,3}",
    "{,}", "{1000}", "|", "^", "$", "\\A", "\\z", "-", "é", "\u{1F600}", "\\C", "\\1",
];

#[test]
fn go_regex_syntax() {
    let s = (shaped(REGEX_ATOMS, 24), any::<String>());
    fuzz("go regex syntax", s, |(pattern, key)| {
        if let Ok(rust) = goregex::translate(&pattern) {
            // What translate accepts, compile must accept or call too large; never panic.
            let _ = goregex::compile(&pattern);
            let _ = rust.len();
        }
        let cfg = PartitionConfig::regex(&pattern);
        if let Ok(p) = ObjectPartitioner::new(5, "", &cfg) {
            let _ = p.assign(&key, false);
            let _ = p.assign(&pattern, false);
        }
    });
}

#[rustfmt::skip]
const RANGE_ATOMS: &[&str] = &[
    "1", "2", "3", "10", "0", "-", ",", " ", "4294967295", "4294967296", "99999999999999999999",
    "+", "1e3", "0x10", "\t", "\u{A0}", "\u{FEFF}", "x", "", "-1", "07",
];

#[test]
fn bucket_ranges() {
    let s = (
        1u32..=u32::MAX,
        shaped(RANGE_ATOMS, 16),
        prop::collection::vec(shaped(RANGE_ATOMS, 6), 0..8),
    );
    fuzz("bucket ranges", s, |(total, text, list)| {
        for total in [total, total % 20 + 1] {
            if let Ok(set) = BucketSet::parse(total, &RangesInput::Text(&text)) {
                assert!(!set.is_empty() && set.len() <= u64::from(total));
                let n = set.next(0);
                assert!(set.contains(n));
            }
            let items: Vec<&str> = list.iter().map(String::as_str).collect();
            let _ = BucketSet::parse(total, &RangesInput::List(items));
        }
    });
}

#[rustfmt::skip]
const EVENT_ATOMS: &[&str] = &[
    r#"{"type":"WantCreate","timestamp":1,"wantId":"w1","partitions":["a"]}"#,
    r#"{"type":"JobRunBuffer","timestamp":2,"jobRunId":"j1","buildingPartitions":["a"]}"#,
    r#"{"type":"JobRunSuccess","timestamp":3,"jobRunId":"j1"}"#,
    r#"{"type":"JobRunFailure","timestamp":3,"jobRunId":"j1"}"#,
    r#"{"type":"PartitionTaint","timestamp":4,"taintId":"t","partitions":["a"]}"#,
    "{", "}", "[", "]", ",", ":", "\"type\"", "\"WantCreate\"", "\"timestamp\"", "1", "-1",
    "1e400", "9007199254740993", "null", "true", "\"\\ud800\"", "\"partitions\"", "\"wantId\"",
    "\"w1\"", "\"a\"", "\"ttlSeconds\"", "\"slaSeconds\"", "\"upstreams\"",
];

#[test]
fn lifecycle_events() {
    let s = prop::collection::vec(shaped(EVENT_ATOMS, 10), 1..6);
    fuzz("lifecycle events", s, |texts| {
        let mut state = BuildState::new();
        for text in &texts {
            let before = serde_json::to_string(&state.snapshot()).unwrap_or_default();
            let applied = BuildEvent::from_json(text).map(|e| state.apply(&e));
            if !matches!(applied, Ok(Ok(_))) {
                let after = serde_json::to_string(&state.snapshot()).unwrap_or_default();
                assert_eq!(before, after, "a refused event changed the state: {text}");
            }
            assert!(state.check_invariants().is_ok());
        }
        let log = format!("[{}]", texts.join(","));
        let _ = BuildState::new().apply_json_log(&log);
    });
}

#[rustfmt::skip]
const MESSAGE_ATOMS: &[&str] = &[
    "{", "}", "[", "]", ",", ":", "\"type\"", "\"taskState\"", "\"epoch\"", "\"taskId\"",
    "\"t1\"", "\"t2\"", "\"partitions\"", "\"token\"", "\"status\"", "\"Running\"", "\"Finished\"",
    "\"generation\"", "\"leader\"", "\"members\"", "1", "0", "-1", "1e400", "null", "true",
    "\"\\ud800\"", "\"epochId\"", "\"shares\"", "\"assignee\"",
];

#[test]
fn sync_messages() {
    let s = prop::collection::vec(shaped(MESSAGE_ATOMS, 16), 1..6);
    fuzz("sync messages", s, |texts| {
        let mut task = match SyncTask::with_options("t1", Default::default()) {
            Ok(t) => t,
            Err(_) => return,
        };
        let views = |t: &SyncTask| {
            format!(
                "{:?}|{:?}|{:?}",
                t.owned_partitions(),
                t.shared_partitions(),
                t.known_tasks()
            )
        };
        let rebalance: Result<RebalanceEvent, _> =
            serde_json::from_str(r#"{"generation":1,"leader":true,"members":["t1","t2"]}"#);
        if let Ok(event) = rebalance {
            let _ = task.on_rebalance(&event, 1);
        }
        for (i, text) in texts.iter().enumerate() {
            let now = 10 + i as u64;
            let before = views(&task);
            if let Ok(msg) = serde_json::from_str::<SyncMessage>(text) {
                if task.on_message(&msg, now).is_err() {
                    assert_eq!(before, views(&task), "a refused message changed the task");
                }
            }
            if let Ok(specs) = serde_json::from_str::<Vec<PartitionSpec>>(text) {
                if task.add_partitions(&specs, now).is_err() {
                    assert_eq!(before, views(&task), "refused partitions changed the task");
                }
            }
            let _ = task.tick(now);
        }
    });
}
