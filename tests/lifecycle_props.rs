//! Property tests: random sequences of valid and invalid events, with every invariant checked
//! after every step; refused events leave the state identical; replay of the accepted log
//! equals the live state (state and transitions); snapshots round-trip, also mid-log; mutated
//! snapshots are refused or accepted consistently, never panic.

use partkit::lifecycle::{AppliedTransition, BuildEvent, BuildState, JobRunStatus};
use proptest::prelude::*;
use serde_json::{json, Value};

const REFS: u8 = 6;

/// One random choice; turned into an event against the current state by [`Driver::event`],
/// so that most events are plausible but many are wrong in some way.
#[derive(Debug, Clone)]
struct Op {
    kind: u8,
    a: u8,
    b: u8,
    flag: u8,
    refs: Vec<u8>,
    refs2: Vec<u8>,
}

fn op() -> impl Strategy<Value = Op> {
    (
        0u8..13,
        any::<u8>(),
        any::<u8>(),
        any::<u8>(),
        prop::collection::vec(0..REFS, 0..4),
        prop::collection::vec(0..REFS + 2, 0..3),
    )
        .prop_map(|(kind, a, b, flag, refs, refs2)| Op {
            kind,
            a,
            b,
            flag,
            refs,
            refs2,
        })
}

struct Driver {
    state: BuildState,
    wants: Vec<String>,
    jobs: Vec<String>,
    taints: usize,
    counter: usize,
    now: u64,
}

fn r(x: u8) -> String {
    format!("r{x}")
}

fn refs_of(list: &[u8], keep_dups: bool) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for &x in list {
        let name = r(x);
        if keep_dups || !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

impl Driver {
    fn new() -> Self {
        Driver {
            state: BuildState::new(),
            wants: vec![],
            jobs: vec![],
            taints: 0,
            counter: 0,
            now: 0,
        }
    }

    fn pick<'a>(list: &'a [String], k: u8, fallback: &'a str) -> String {
        if list.is_empty() {
            fallback.to_string()
        } else {
            list[k as usize % list.len()].clone()
        }
    }

    fn pick_job(&self, o: &Op) -> String {
        if o.flag % 4 != 0 {
            let active: Vec<String> = self
                .jobs
                .iter()
                .filter(|j| {
                    self.state
                        .job_run(j)
                        .is_some_and(|x| x.state.status().is_active())
                })
                .cloned()
                .collect();
            if !active.is_empty() {
                return Self::pick(&active, o.a, "");
            }
        }
        if o.flag % 16 == 1 {
            return "no-such-job".into();
        }
        Self::pick(&self.jobs, o.a, "no-such-job")
    }

    fn event(&mut self, o: &Op) -> Value {
        self.counter += 1;
        // Timestamps never decrease (often repeat, sometimes jump) except for the invalid
        // case: an event stamped before the last applied one, which must be refused.
        let ts = match o.flag % 23 {
            0 => match self.state.last_event_at() {
                Some(last) if last > 0 => last - 1 - (o.b as u64 % last.min(5)),
                _ => self.now,
            },
            1 => {
                self.now += 200_000;
                self.now
            }
            _ => {
                self.now += o.b as u64 % 3;
                self.now
            }
        };
        let fresh = |p: &str, n: usize| format!("{p}{n}");
        match o.kind {
            0 | 1 => {
                let id = if o.flag % 9 == 0 {
                    Self::pick(&self.wants, o.a, "w-x")
                } else {
                    fresh("w", self.counter)
                };
                let mut parts = refs_of(&o.refs, o.flag % 11 == 0);
                let mut v = json!({"type": "WantCreate", "timestamp": ts, "wantId": id});
                if o.flag % 3 == 0 && !self.jobs.is_empty() {
                    let job = Self::pick(&self.jobs, o.b, "");
                    if o.flag % 2 == 0 {
                        // Ask for (some of) its missing deps, as the orchestrator would.
                        if let Some(jr) = self.state.job_run(&job) {
                            if let partkit::lifecycle::JobRunState::DepMissed { missing_deps } =
                                jr.state
                            {
                                let all: Vec<String> =
                                    missing_deps.into_iter().flat_map(|m| m.missing).collect();
                                parts = refs_of(&[], false);
                                for (k, m) in all.iter().enumerate() {
                                    if (k == 0 || o.a & (1 << (k % 8)) != 0) && !parts.contains(m) {
                                        parts.push(m.clone());
                                    }
                                }
                            }
                        }
                    }
                    v["sourceJobRunId"] = json!(job);
                }
                v["partitions"] = json!(parts);
                if o.flag % 5 == 0 {
                    v["ttlSeconds"] = json!(o.b as u64 * 60);
                    v["comment"] = json!("c");
                }
                if o.flag % 7 == 0 {
                    v["slaSeconds"] = json!(o.a as u64 % 5 * 100);
                }
                v
            }
            2 => {
                let id = if o.flag % 8 == 0 {
                    "no-such-want".into()
                } else {
                    Self::pick(&self.wants, o.a, "w-x")
                };
                json!({"type": "WantCancel", "timestamp": ts, "wantId": id})
            }
            3 | 4 => {
                let id = if o.flag % 10 == 0 {
                    Self::pick(&self.jobs, o.a, "j-x")
                } else {
                    fresh("j", self.counter)
                };
                let mut parts = refs_of(&o.refs, o.flag % 7 == 0);
                if parts.is_empty() && o.flag % 2 == 0 {
                    parts.push(r(o.b % REFS));
                }
                json!({"type": "JobRunBuffer", "timestamp": ts, "jobRunId": id, "buildingPartitions": parts})
            }
            5 => json!({"type": "JobRunHeartbeat", "timestamp": ts, "jobRunId": self.pick_job(o)}),
            6 => json!({"type": "JobRunSuccess", "timestamp": ts, "jobRunId": self.pick_job(o)}),
            7 => {
                json!({"type": "JobRunFailure", "timestamp": ts, "jobRunId": self.pick_job(o), "reason": "boom"})
            }
            8 | 9 => {
                let job = self.pick_job(o);
                let job_refs = self
                    .state
                    .job_run(&job)
                    .map(|j| j.partition_refs)
                    .unwrap_or_default();
                let mut impacted: Vec<String> = job_refs
                    .iter()
                    .enumerate()
                    .filter(|(k, _)| o.b & (1 << (k % 8)) != 0)
                    .map(|(_, x)| x.clone())
                    .collect();
                if impacted.is_empty() {
                    impacted = job_refs.iter().take(1).cloned().collect();
                }
                if o.flag % 17 == 0 {
                    impacted.push(r(o.a % REFS));
                }
                let mut missing = refs_of(&o.refs2, o.flag % 19 == 0);
                if o.flag % 3 == 0 {
                    // Wait for a ref that is itself being built or waiting: builds chains.
                    let leased: Vec<String> = (0..REFS)
                        .map(r)
                        .filter(|x| !job_refs.contains(x) && !missing.contains(x))
                        .filter(|x| {
                            self.state
                                .canonical_partition(x)
                                .is_some_and(|p| p.state.status().is_lease())
                        })
                        .collect();
                    if !leased.is_empty() {
                        missing.push(leased[o.a as usize % leased.len()].clone());
                    }
                }
                let mut entries = vec![json!({"impacted": impacted, "missing": missing})];
                if o.flag % 6 == 0 {
                    entries.push(
                        json!({"impacted": impacted, "missing": [r((o.a / 3) % (REFS + 2))]}),
                    );
                }
                json!({"type": "JobRunDepMiss", "timestamp": ts, "jobRunId": job, "missingDeps": entries})
            }
            10 => json!({"type": "JobRunCancel", "timestamp": ts, "jobRunId": self.pick_job(o)}),
            11 => {
                let id = if o.flag % 6 == 0 && self.taints > 0 {
                    "t0".to_string()
                } else {
                    fresh("t", self.taints)
                };
                json!({"type": "TaintCreate", "timestamp": ts, "taintId": id, "partitions": refs_of(&o.refs, false)})
            }
            _ => match o.flag % 6 {
                0 => json!({"type": "Bogus", "timestamp": ts}),
                1 => json!({"type": "WantCancel", "timestamp": -1, "wantId": "w"}),
                2 => json!({"type": "JobRunSuccess", "timestamp": ts}),
                3 => {
                    json!({"type": "WantCreate", "timestamp": ts, "wantId": "", "partitions": ["r1"]})
                }
                4 => json!({"type": "WantCancel", "timestamp": ts, "wantId": "w", "unknown": 1}),
                _ => json!([ts, "WantCreate"]),
            },
        }
    }

    fn note_accepted(&mut self, e: &BuildEvent) {
        match e {
            BuildEvent::WantCreate(w) => self.wants.push(w.want_id.clone()),
            BuildEvent::JobRunBuffer(j) => self.jobs.push(j.job_run_id.clone()),
            BuildEvent::TaintCreate(_) => self.taints += 1,
            _ => {}
        }
    }
}

struct Outcome {
    log: Vec<BuildEvent>,
    transitions: Vec<Vec<AppliedTransition>>,
    mid_snapshot: Option<(usize, String)>,
    final_state: BuildState,
    refused: usize,
    /// Refused as TIMESTAMP_NOT_MONOTONIC.
    backwards: usize,
}

fn run(ops: &[Op]) -> Result<Outcome, TestCaseError> {
    let mut d = Driver::new();
    let mut log = Vec::new();
    let mut transitions = Vec::new();
    let mut refused = 0;
    let mut backwards_refused = 0;
    let mut mid_snapshot = None;
    for (k, o) in ops.iter().enumerate() {
        if k == ops.len() / 2 {
            mid_snapshot = Some((
                log.len(),
                serde_json::to_string(&d.state.snapshot()).unwrap(),
            ));
        }
        let value = d.event(o);
        let event = match BuildEvent::from_value(value.clone()) {
            Ok(e) => e,
            Err(err) => {
                prop_assert_eq!(err.code(), "INVALID_EVENT");
                refused += 1;
                continue;
            }
        };
        let before = d.state.snapshot();
        let last = d.state.last_event_at();
        let backwards = last.is_some_and(|last| event.timestamp() < last);
        match d.state.apply(&event) {
            Ok(t) => {
                prop_assert!(
                    !backwards,
                    "accepted {} although the last event was at {:?}",
                    value,
                    last
                );
                prop_assert_eq!(d.state.last_event_at(), Some(event.timestamp()));
                if let Err(e) = d.state.check_invariants() {
                    return Err(TestCaseError::fail(format!("after {value}: {e}")));
                }
                d.note_accepted(&event);
                log.push(event);
                transitions.push(t);
            }
            Err(err) => {
                refused += 1;
                prop_assert_eq!(
                    d.state.snapshot(),
                    before,
                    "refused {} ({}) changed the state",
                    value,
                    err
                );
                prop_assert!(!err.code().is_empty() && !err.to_string().is_empty());
                prop_assert_eq!(d.state.last_event_at(), last);
                // Only the shape is checked before the timestamp.
                if backwards {
                    backwards_refused += usize::from(err.code() == "TIMESTAMP_NOT_MONOTONIC");
                    prop_assert!(
                        matches!(err.code(), "TIMESTAMP_NOT_MONOTONIC" | "INVALID_EVENT"),
                        "{} refused with {}",
                        value,
                        err
                    );
                } else {
                    prop_assert_ne!(err.code(), "TIMESTAMP_NOT_MONOTONIC");
                }
            }
        }
    }
    Ok(Outcome {
        log,
        transitions,
        mid_snapshot,
        final_state: d.state,
        refused,
        backwards: backwards_refused,
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn random_event_sequences_keep_every_invariant(ops in prop::collection::vec(op(), 1..80)) {
        let out = run(&ops)?;
        let live = out.final_state.snapshot();

        // Replay of the accepted log gives the same state and the same transitions.
        let mut replayed = BuildState::new();
        for (e, t) in out.log.iter().zip(&out.transitions) {
            prop_assert_eq!(&replayed.apply(e).unwrap(), t);
        }
        prop_assert_eq!(&replayed.snapshot(), &live);
        prop_assert_eq!(&BuildState::replay(&out.log).unwrap().snapshot(), &live);

        // The events survive JSON, and so does the snapshot.
        let as_json: Vec<Value> = out.log.iter().map(BuildEvent::to_value).collect();
        prop_assert_eq!(&BuildState::replay_values(&as_json).unwrap().snapshot(), &live);
        let text = serde_json::to_string(&live).unwrap();
        let restored = BuildState::from_snapshot_json(&text).unwrap();
        prop_assert_eq!(&restored.snapshot(), &live);
        prop_assert_eq!(restored.schedulable_wants(), out.final_state.schedulable_wants());

        // TTL and SLA queries agree with a brute-force reading of the want views, also on the
        // restored state.
        let last = out.final_state.last_event_at().unwrap_or(0);
        for now in [0, last / 2, last, last + 100_000, last + 10_000_000, u64::MAX] {
            let within_ttl = |w: &partkit::lifecycle::Want| {
                w.ttl_seconds.is_none_or(|ttl| now < w.created_at + ttl * 1000)
            };
            let expected: Vec<_> = out.final_state.schedulable_wants().into_iter().filter(within_ttl).collect();
            prop_assert_eq!(&out.final_state.schedulable_wants_at(now), &expected);
            prop_assert_eq!(&restored.schedulable_wants_at(now), &expected);
            let past_sla: Vec<_> = live
                .wants
                .iter()
                .filter(|w| w.state.is_active() && w.sla_seconds.is_some_and(|sla| w.created_at + sla * 1000 <= now))
                .cloned()
                .collect();
            prop_assert_eq!(&out.final_state.wants_past_sla(now), &past_sla);
            prop_assert_eq!(&restored.wants_past_sla(now), &past_sla);
        }

        // Restoring a snapshot taken mid-log and applying the rest gives the same result.
        if let Some((at, snap)) = &out.mid_snapshot {
            let mut resumed = BuildState::from_snapshot_json(snap).unwrap();
            for (e, t) in out.log[*at..].iter().zip(&out.transitions[*at..]) {
                prop_assert_eq!(&resumed.apply(e).unwrap(), t);
            }
            prop_assert_eq!(&resumed.snapshot(), &live);
        }

        // A log with a bad event appended at a random place stops there.
        let at = ops.len() % (out.log.len() + 1);
        let on_time = at.checked_sub(1).map_or(0, |k| out.log[k].timestamp());
        let bad = BuildEvent::from_value(json!({"type": "JobRunSuccess", "timestamp": on_time, "jobRunId": "never-buffered"})).unwrap();
        let mut broken = out.log.clone();
        broken.insert(at, bad);
        let err = BuildState::replay(&broken).unwrap_err();
        prop_assert_eq!(err.event_index(), Some(at));
        prop_assert_eq!(err.code(), "UNKNOWN_JOB_RUN");
        // An event stamped before its predecessor stops the replay there too.
        if let Some(k) = (1..out.log.len()).find(|&k| out.log[k - 1].timestamp() > 0) {
            let early = out.log[k - 1].timestamp() - 1;
            let mut broken = out.log.clone();
            broken.insert(k, BuildEvent::from_value(json!({"type": "WantCreate", "timestamp": early, "wantId": "late-want", "partitions": ["r0"]})).unwrap());
            let err = BuildState::replay(&broken).unwrap_err();
            prop_assert_eq!((err.code(), err.event_index()), ("TIMESTAMP_NOT_MONOTONIC", Some(k)));
        }
        let _ = (out.refused, out.backwards);
    }

    #[test]
    fn mutated_snapshots_never_panic(
        ops in prop::collection::vec(op(), 1..50),
        edits in prop::collection::vec((any::<u16>(), 0u8..12), 1..4),
    ) {
        let out = run(&ops)?;
        let mut snap = out.final_state.snapshot_value();
        for (pick, what) in edits {
            let mut leaves = Vec::new();
            collect_leaves(&snap, String::new(), &mut leaves);
            if leaves.is_empty() {
                break;
            }
            let path = leaves[pick as usize % leaves.len()].clone();
            let replacement = match what {
                0 => json!("r1"),
                1 => json!("Building"),
                2 => json!("UpstreamBuilding"),
                3 => json!("Live"),
                4 => json!(0),
                5 => json!(null),
                6 => json!([]),
                7 => json!("j3"),
                8 => json!("Idle"),
                9 => json!(["r0", "r1"]),
                10 => json!("Tainted"),
                _ => json!(9_007_199_254_740_993u64),
            };
            if let Some(slot) = snap.pointer_mut(&path) {
                *slot = replacement;
            }
        }
        // Either refused with INVALID_SNAPSHOT, or accepted as a state that keeps every
        // invariant, round-trips, and accepts further events without panicking.
        match BuildState::from_snapshot_json(&snap.to_string()) {
            Err(e) => prop_assert_eq!(e.code(), "INVALID_SNAPSHOT"),
            Ok(mut st) => {
                prop_assert!(st.check_invariants().is_ok());
                prop_assert_eq!(BuildState::from_snapshot(&st.snapshot()).unwrap().snapshot(), st.snapshot());
                let mut d = Driver::new();
                d.now = st.last_event_at().unwrap_or(0);
                for o in &ops {
                    let v = d.event(o);
                    if let Ok(e) = BuildEvent::from_value(v) {
                        if st.apply(&e).is_ok() {
                            prop_assert!(st.check_invariants().is_ok());
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn arbitrary_json_is_never_an_accepted_event_by_accident(v in arb_json()) {
        // Random JSON either fails to parse or parses into an event that apply judges;
        // neither panics, and a refusal leaves an empty state empty.
        if let Ok(e) = BuildEvent::from_value(v) {
            let mut st = BuildState::new();
            if st.apply(&e).is_err() {
                prop_assert_eq!(st.snapshot(), BuildState::new().snapshot());
            } else {
                prop_assert!(st.check_invariants().is_ok());
            }
        }
    }
}

fn collect_leaves(v: &Value, path: String, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                collect_leaves(x, format!("{path}/{k}"), out);
            }
        }
        Value::Array(a) => {
            for (k, x) in a.iter().enumerate() {
                collect_leaves(x, format!("{path}/{k}"), out);
            }
            out.push(path);
        }
        _ => out.push(path),
    }
}

fn arb_json() -> impl Strategy<Value = Value> {
    let types = prop_oneof![
        Just("WantCreate"),
        Just("WantCancel"),
        Just("JobRunBuffer"),
        Just("JobRunHeartbeat"),
        Just("JobRunSuccess"),
        Just("JobRunFailure"),
        Just("JobRunDepMiss"),
        Just("JobRunCancel"),
        Just("TaintCreate"),
        Just("Other"),
    ];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| serde_json::Number::from_f64(f)
            .map(Value::Number)
            .unwrap_or(Value::Null)),
        "[a-z0-9/]{0,4}".prop_map(Value::from),
    ];
    let value = leaf.prop_recursive(2, 12, 4, |inner| {
        prop_oneof![prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),]
    });
    let keys = prop_oneof![
        Just("timestamp"),
        Just("wantId"),
        Just("partitions"),
        Just("jobRunId"),
        Just("buildingPartitions"),
        Just("missingDeps"),
        Just("taintId"),
        Just("reason"),
        Just("sourceJobRunId"),
        Just("ttlSeconds"),
    ];
    (types, prop::collection::vec((keys, value), 0..6)).prop_map(|(t, fields)| {
        let mut m = serde_json::Map::new();
        m.insert("type".into(), json!(t));
        for (k, v) in fields {
            m.insert(k.into(), v);
        }
        Value::Object(m)
    })
}

#[test]
fn the_random_driver_reaches_every_state() {
    // Guard against a generator that only produces refusals: over a fixed set of runs the
    // accepted events must drive partitions, wants and job runs through every state.
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let mut partition_states = std::collections::HashSet::new();
    let mut want_states = std::collections::HashSet::new();
    let mut job_states = std::collections::HashSet::new();
    let (mut accepted, mut refused, mut backwards) = (0, 0, 0);
    let (mut deep_failures, mut wakeups) = (0, 0);
    for _ in 0..200 {
        let ops = prop::collection::vec(op(), 60)
            .new_tree(&mut runner)
            .unwrap()
            .current();
        let out = run(&ops).unwrap();
        accepted += out.log.len();
        refused += out.refused;
        backwards += out.backwards;
        for ts in &out.transitions {
            let cascaded = ts
                .iter()
                .filter(|t| {
                    matches!(
                        t,
                        AppliedTransition::Partition {
                            from: Some(partkit::lifecycle::PartitionStatus::UpstreamBuilding),
                            to: partkit::lifecycle::PartitionStatus::UpstreamFailed,
                            ..
                        }
                    )
                })
                .count();
            if cascaded >= 2 {
                deep_failures += 1;
            }
            let woken = ts
                .iter()
                .filter(|t| {
                    matches!(
                        t,
                        AppliedTransition::Partition {
                            from: Some(partkit::lifecycle::PartitionStatus::UpstreamBuilding),
                            to: partkit::lifecycle::PartitionStatus::UpForRetry,
                            ..
                        }
                    )
                })
                .count();
            if woken >= 1
                && matches!(
                    ts.first(),
                    Some(AppliedTransition::JobRun {
                        to: JobRunStatus::Succeeded,
                        ..
                    })
                )
            {
                wakeups += 1;
            }
        }
        for t in out.transitions.iter().flatten() {
            match t {
                AppliedTransition::Partition { to, .. } => partition_states.insert(to.as_str()),
                AppliedTransition::Want { to, .. } => want_states.insert(to.as_str()),
                AppliedTransition::JobRun { to, .. } => job_states.insert(to.as_str()),
            };
        }
    }
    assert_eq!(partition_states.len(), 7, "{partition_states:?}");
    assert_eq!(want_states.len(), 7, "{want_states:?}");
    assert_eq!(job_states.len(), 6, "{job_states:?}");
    eprintln!(
        "accepted {accepted}, refused {refused} ({backwards} going back in time), cascades {deep_failures}, wake-ups {wakeups}"
    );
    assert!(backwards > 50, "only {backwards} events went back in time");
    assert!(
        deep_failures > 0 && wakeups > 0,
        "cascades {deep_failures}, wake-ups {wakeups}"
    );
    assert!(
        accepted > 2000 && refused > 1000,
        "accepted {accepted}, refused {refused}"
    );
}
