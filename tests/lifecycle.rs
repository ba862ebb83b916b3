//! Scenario tests of the lifecycle core: every scenario of the testing strategy of DataBuild's
//! partition-identity design, the derivative-want link, every refusal code (with the state
//! unchanged), replay and snapshots.

use partkit::lifecycle::{
    derive_partition_uuid, AppliedTransition, BuildEvent, BuildState, JobRunStatus, LifecycleError,
    PartitionState, PartitionStatus, WantState,
};
use serde_json::{json, Value};

struct Harness {
    state: BuildState,
    log: Vec<BuildEvent>,
    now: u64,
}

impl Harness {
    fn new() -> Self {
        Harness {
            state: BuildState::new(),
            log: Vec::new(),
            now: 1_700_000_000_000,
        }
    }

    /// Stamps the event 1 s after the previous one, unless it carries its own `timestamp`
    /// (then the clock moves to it if that is later).
    fn event(&mut self, mut v: Value) -> BuildEvent {
        match v["timestamp"].as_u64() {
            Some(ts) => self.now = self.now.max(ts),
            None => {
                self.now += 1000;
                v.as_object_mut()
                    .unwrap()
                    .insert("timestamp".into(), json!(self.now));
            }
        }
        BuildEvent::from_value(v).unwrap()
    }

    /// `v` with this `timestamp`.
    fn at(ts: u64, mut v: Value) -> Value {
        v["timestamp"] = json!(ts);
        v
    }

    /// Applies an event that must be accepted; checks the invariants after it.
    fn ok(&mut self, v: Value) -> Vec<AppliedTransition> {
        let e = self.event(v);
        let t = self
            .state
            .apply(&e)
            .unwrap_or_else(|err| panic!("{} refused: {err}", e.type_name()));
        self.state.check_invariants().unwrap();
        self.log.push(e);
        t
    }

    /// Applies an event that must be refused with `code`; checks the state did not change.
    fn refused(&mut self, v: Value, code: &str) -> LifecycleError {
        let e = self.event(v);
        let before = self.state.snapshot();
        let err = self.state.apply(&e).expect_err("event should be refused");
        assert_eq!(err.code(), code, "{err}");
        assert_eq!(
            self.state.snapshot(),
            before,
            "refused event changed the state"
        );
        self.state.check_invariants().unwrap();
        err
    }

    fn want(&self, id: &str) -> WantState {
        self.state
            .want(id)
            .unwrap_or_else(|| panic!("no want {id}"))
            .state
    }

    fn canonical(&self, r: &str) -> PartitionStatus {
        self.state
            .canonical_partition(r)
            .unwrap_or_else(|| panic!("no partition {r}"))
            .state
            .status()
    }

    fn schedulable(&self) -> Vec<String> {
        self.state
            .schedulable_wants()
            .into_iter()
            .map(|w| w.want_id)
            .collect()
    }

    /// Replay of the accepted log gives the same state; snapshot survives JSON.
    fn check_replay_and_snapshot(&self) {
        let replayed = BuildState::replay(&self.log).unwrap();
        assert_eq!(replayed.snapshot(), self.state.snapshot());
        let json = serde_json::to_string(&self.state.snapshot()).unwrap();
        let restored = BuildState::from_snapshot_json(&json).unwrap();
        assert_eq!(restored.snapshot(), self.state.snapshot());
    }
}

fn want_create(id: &str, parts: &[&str]) -> Value {
    json!({"type": "WantCreate", "wantId": id, "partitions": parts})
}
fn derivative(id: &str, parts: &[&str], source: &str) -> Value {
    json!({"type": "WantCreate", "wantId": id, "partitions": parts, "sourceJobRunId": source})
}
fn buffer(job: &str, parts: &[&str]) -> Value {
    json!({"type": "JobRunBuffer", "jobRunId": job, "buildingPartitions": parts})
}
fn job_event(kind: &str, job: &str) -> Value {
    json!({"type": kind, "jobRunId": job})
}
fn dep_miss(job: &str, impacted: &[&str], missing: &[&str]) -> Value {
    json!({"type": "JobRunDepMiss", "jobRunId": job, "missingDeps": [{"impacted": impacted, "missing": missing}]})
}
fn taint(id: &str, parts: &[&str]) -> Value {
    json!({"type": "TaintCreate", "taintId": id, "partitions": parts})
}

fn want_t(id: &str, from: Option<WantState>, to: WantState) -> AppliedTransition {
    AppliedTransition::Want {
        want_id: id.into(),
        from,
        to,
    }
}
fn part_t(
    job: &str,
    r: &str,
    from: Option<PartitionStatus>,
    to: PartitionStatus,
) -> AppliedTransition {
    AppliedTransition::Partition {
        uuid: derive_partition_uuid(job, r),
        partition_ref: r.into(),
        from,
        to,
    }
}
fn job_t(job: &str, from: Option<JobRunStatus>, to: JobRunStatus) -> AppliedTransition {
    AppliedTransition::JobRun {
        job_run_id: job.into(),
        from,
        to,
    }
}

use JobRunStatus as J;
use PartitionStatus as P;
use WantState as W;

/// The bug that motivated DataBuild's partition-identity design: several wants for a partition that is already building,
/// then a dep miss. With canonical-partition sensing every want is in the same state.
#[test]
fn multi_want_bug_reproduction() {
    let mut h = Harness::new();
    assert_eq!(
        h.ok(want_create("w1", &["data/beta"])),
        vec![want_t("w1", None, W::Idle)]
    );
    assert_eq!(h.schedulable(), vec!["w1"]);
    let t = h.ok(buffer("j1", &["data/beta"]));
    assert_eq!(
        t,
        vec![
            job_t("j1", None, J::Queued),
            part_t("j1", "data/beta", None, P::Building),
            want_t("w1", Some(W::Idle), W::Building),
        ]
    );
    for w in ["w2", "w3", "w4"] {
        assert_eq!(
            h.ok(want_create(w, &["data/beta"])),
            vec![want_t(w, None, W::Building)]
        );
    }
    let uuid1 = derive_partition_uuid("j1", "data/beta");
    assert_eq!(
        h.state.canonical_partition("data/beta").unwrap().uuid,
        uuid1
    );
    assert_eq!(
        h.state.wants_for_partition("data/beta"),
        vec!["w1", "w2", "w3", "w4"]
    );
    assert!(h.schedulable().is_empty(), "Building is a lease");

    let t = h.ok(dep_miss("j1", &["data/beta"], &["data/alpha"]));
    assert_eq!(t[0], job_t("j1", Some(J::Queued), J::DepMissed));
    assert_eq!(
        t[1],
        part_t("j1", "data/beta", Some(P::Building), P::UpstreamBuilding)
    );
    for (k, w) in ["w1", "w2", "w3", "w4"].iter().enumerate() {
        assert_eq!(t[2 + k], want_t(w, Some(W::Building), W::UpstreamBuilding));
        assert_eq!(h.want(w), W::UpstreamBuilding);
    }
    let p = h.state.canonical_partition("data/beta").unwrap();
    assert_eq!(
        p.uuid, uuid1,
        "the dep-missed instance stays canonical (lease)"
    );
    assert_eq!(
        p.state,
        PartitionState::UpstreamBuilding {
            missing_deps: vec!["data/alpha".into()]
        }
    );

    // The orchestrator creates the derivative want; nothing panics, nothing is Idle wrongly.
    assert_eq!(
        h.ok(derivative("d1", &["data/alpha"], "j1")),
        vec![want_t("d1", None, W::Idle)]
    );
    assert_eq!(h.schedulable(), vec!["d1"]);
    h.refused(buffer("j2", &["data/beta"]), "PARTITION_LEASED");
    h.check_replay_and_snapshot();
}

/// Rebuild after taint: the tainted instance stays canonical until a new build replaces it;
/// the old instance stays queryable.
#[test]
fn rebuild_after_taint() {
    let mut h = Harness::new();
    h.ok(want_create("w1", &["data/beta"]));
    h.ok(buffer("j1", &["data/beta"]));
    h.ok(job_event("JobRunSuccess", "j1"));
    assert_eq!(h.want("w1"), W::Successful);
    let uuid1 = derive_partition_uuid("j1", "data/beta");

    let t = h.ok(taint("t1", &["data/beta", "data/never-built"]));
    assert_eq!(
        t,
        vec![
            part_t("j1", "data/beta", Some(P::Live), P::Tainted),
            want_t("w1", Some(W::Successful), W::Idle)
        ]
    );
    let c = h.state.canonical_partition("data/beta").unwrap();
    assert_eq!(
        (c.uuid, c.state),
        (
            uuid1,
            PartitionState::Tainted {
                taint_id: "t1".into()
            }
        )
    );
    assert_eq!(h.state.taint("t1").unwrap().tainted_uuids, vec![uuid1]);
    assert_eq!(
        h.schedulable(),
        vec!["w1"],
        "a want within its TTL can trigger the rebuild"
    );

    assert_eq!(
        h.ok(want_create("w2", &["data/beta"])),
        vec![want_t("w2", None, W::Idle)]
    );
    h.ok(buffer("j2", &["data/beta"]));
    let uuid2 = derive_partition_uuid("j2", "data/beta");
    assert_ne!(uuid1, uuid2);
    let c = h.state.canonical_partition("data/beta").unwrap();
    assert_eq!((c.uuid, c.previous_uuid), (uuid2, Some(uuid1)));
    assert_eq!((h.want("w1"), h.want("w2")), (W::Building, W::Building));
    h.ok(job_event("JobRunSuccess", "j2"));
    assert_eq!((h.want("w1"), h.want("w2")), (W::Successful, W::Successful));

    // New wants see the new instance; the old one is history.
    assert_eq!(
        h.ok(want_create("w3", &["data/beta"])),
        vec![want_t("w3", None, W::Successful)]
    );
    let history = h.state.partition_history("data/beta");
    assert_eq!(
        history
            .iter()
            .map(|p| (p.uuid, p.state.status()))
            .collect::<Vec<_>>(),
        vec![(uuid1, P::Tainted), (uuid2, P::Live)]
    );
    assert_eq!(h.state.partition(&uuid1).unwrap().job_run_id, "j1");
    assert_eq!(
        h.state
            .partition_by_str(&uuid1.to_string().to_uppercase())
            .unwrap()
            .uuid,
        uuid1
    );
    h.check_replay_and_snapshot();
}

/// A want through its whole life, with the exact transitions and the job-run view.
#[test]
fn full_lifecycle() {
    let mut h = Harness::new();
    h.ok(json!({"type": "WantCreate", "wantId": "w1", "partitions": ["a", "b"], "dataTimestamp": 1_699_999_000_000u64, "ttlSeconds": 86400, "slaSeconds": 3600, "comment": "daily"}));
    let w = h.state.want("w1").unwrap();
    assert_eq!(
        (w.ttl_seconds, w.sla_seconds, w.comment.as_deref()),
        (Some(86400), Some(3600), Some("daily"))
    );
    h.ok(json!({"type": "JobRunBuffer", "jobRunId": "j1", "jobLabel": "//jobs:ab", "buildingPartitions": ["a"]}));
    assert_eq!(h.want("w1"), W::Building);
    assert_eq!(
        h.ok(job_event("JobRunHeartbeat", "j1")),
        vec![job_t("j1", Some(J::Queued), J::Running)]
    );
    assert_eq!(
        h.ok(job_event("JobRunHeartbeat", "j1")),
        vec![],
        "a second heartbeat changes no state"
    );
    let t = h.ok(job_event("JobRunSuccess", "j1"));
    assert_eq!(
        t,
        vec![
            job_t("j1", Some(J::Running), J::Succeeded),
            part_t("j1", "a", Some(P::Building), P::Live),
            want_t("w1", Some(W::Building), W::Idle),
        ],
        "b was never built: the want is schedulable again"
    );
    assert_eq!(h.schedulable(), vec!["w1"]);
    h.ok(buffer("j2", &["b"]));
    h.ok(job_event("JobRunSuccess", "j2"));
    assert_eq!(h.want("w1"), W::Successful);
    let job = h.state.job_run("j1").unwrap();
    assert_eq!(job.state.status(), J::Succeeded);
    assert_eq!(job.job_label.as_deref(), Some("//jobs:ab"));
    assert_eq!(job.partition_uuids, vec![derive_partition_uuid("j1", "a")]);
    assert!(job.last_heartbeat_at.is_some());
    // The partition expires (tainted), is rebuilt with a fresh UUID, the want completes again.
    h.ok(taint("expire-a", &["a"]));
    assert_eq!(h.want("w1"), W::Idle);
    h.ok(buffer("j3", &["a"]));
    h.ok(job_event("JobRunSuccess", "j3"));
    assert_eq!(h.want("w1"), W::Successful);
    assert_eq!(h.state.partition_history("a").len(), 2);
    h.check_replay_and_snapshot();
}

/// C needs B needs A: a chain of dep misses, derivative wants, retries with fresh UUIDs.
#[test]
fn dep_miss_chain_with_retry_and_fresh_uuids() {
    let mut h = Harness::new();
    h.ok(want_create("wC", &["C"]));
    h.ok(buffer("jC1", &["C"]));
    h.ok(dep_miss("jC1", &["C"], &["B"]));
    assert_eq!(h.want("wC"), W::UpstreamBuilding);
    h.ok(derivative("wB", &["B"], "jC1"));
    h.ok(buffer("jB1", &["B"]));
    h.ok(dep_miss("jB1", &["B"], &["A"]));
    assert_eq!(h.want("wB"), W::UpstreamBuilding);
    h.ok(derivative("wA", &["A"], "jB1"));
    assert_eq!(h.schedulable(), vec!["wA"]);
    h.ok(buffer("jA1", &["A"]));
    let t = h.ok(job_event("JobRunSuccess", "jA1"));
    assert_eq!(
        t,
        vec![
            job_t("jA1", Some(J::Queued), J::Succeeded),
            part_t("jA1", "A", Some(P::Building), P::Live),
            part_t("jB1", "B", Some(P::UpstreamBuilding), P::UpForRetry),
            want_t("wB", Some(W::UpstreamBuilding), W::Idle),
            want_t("wA", Some(W::Building), W::Successful),
        ]
    );
    assert_eq!(
        h.canonical("C"),
        P::UpstreamBuilding,
        "C waits for B, which is only UpForRetry"
    );
    assert_eq!(h.schedulable(), vec!["wB"]);
    // A want arriving now for B is schedulable; one for C waits.
    assert_eq!(
        h.ok(want_create("wB2", &["B"])),
        vec![want_t("wB2", None, W::Idle)]
    );
    assert_eq!(
        h.ok(want_create("wC2", &["C"])),
        vec![want_t("wC2", None, W::UpstreamBuilding)]
    );

    h.ok(buffer("jB2", &["B"]));
    let b2 = h.state.canonical_partition("B").unwrap();
    assert_eq!(b2.uuid, derive_partition_uuid("jB2", "B"));
    assert_eq!(b2.previous_uuid, Some(derive_partition_uuid("jB1", "B")));
    assert_eq!(
        h.state
            .partition(&derive_partition_uuid("jB1", "B"))
            .unwrap()
            .state
            .status(),
        P::UpForRetry
    );
    h.ok(job_event("JobRunSuccess", "jB2"));
    assert_eq!(h.canonical("C"), P::UpForRetry);
    assert_eq!(
        (h.want("wB"), h.want("wB2")),
        (W::Successful, W::Successful)
    );
    assert_eq!((h.want("wC"), h.want("wC2")), (W::Idle, W::Idle));
    h.ok(buffer("jC2", &["C"]));
    h.ok(job_event("JobRunSuccess", "jC2"));
    assert_eq!(
        (h.want("wC"), h.want("wC2")),
        (W::Successful, W::Successful)
    );
    let uuids: Vec<_> = h
        .state
        .partition_history("C")
        .iter()
        .map(|p| p.uuid)
        .collect();
    assert_eq!(
        uuids,
        vec![
            derive_partition_uuid("jC1", "C"),
            derive_partition_uuid("jC2", "C")
        ]
    );
    assert_eq!(
        h.state.job_run("jC1").unwrap().derivative_want_ids,
        vec!["wB"]
    );
    h.check_replay_and_snapshot();
}

/// A hard failure at the bottom of a four-level chain reaches every level.
#[test]
fn upstream_failure_propagates_over_several_levels() {
    let mut h = Harness::new();
    h.ok(want_create("wD", &["D"]));
    h.ok(buffer("jD", &["D"]));
    h.ok(dep_miss("jD", &["D"], &["C"]));
    h.ok(derivative("wC", &["C"], "jD"));
    h.ok(buffer("jC", &["C"]));
    h.ok(dep_miss("jC", &["C"], &["B"]));
    h.ok(derivative("wB", &["B"], "jC"));
    h.ok(buffer("jB", &["B"]));
    h.ok(dep_miss("jB", &["B"], &["A"]));
    h.ok(derivative("wA", &["A"], "jB"));
    h.ok(buffer("jA", &["A"]));
    let t = h.ok(json!({"type": "JobRunFailure", "jobRunId": "jA", "reason": "exit 1"}));
    assert_eq!(
        t,
        vec![
            job_t("jA", Some(J::Queued), J::Failed),
            part_t("jA", "A", Some(P::Building), P::Failed),
            part_t("jB", "B", Some(P::UpstreamBuilding), P::UpstreamFailed),
            part_t("jC", "C", Some(P::UpstreamBuilding), P::UpstreamFailed),
            part_t("jD", "D", Some(P::UpstreamBuilding), P::UpstreamFailed),
            want_t("wD", Some(W::UpstreamBuilding), W::UpstreamFailed),
            want_t("wC", Some(W::UpstreamBuilding), W::UpstreamFailed),
            want_t("wB", Some(W::UpstreamBuilding), W::UpstreamFailed),
            want_t("wA", Some(W::Building), W::Failed),
        ]
    );
    assert_eq!(
        h.state.canonical_partition("D").unwrap().state,
        PartitionState::UpstreamFailed {
            failed_upstream: "C".into()
        }
    );
    // New wants see the failures; nothing is schedulable.
    assert_eq!(
        h.ok(want_create("wA2", &["A"])),
        vec![want_t("wA2", None, W::Failed)]
    );
    assert_eq!(
        h.ok(want_create("wD2", &["D", "E"])),
        vec![want_t("wD2", None, W::UpstreamFailed)]
    );
    assert!(h.schedulable().is_empty());
    match h.state.job_run("jA").unwrap().state {
        partkit::lifecycle::JobRunState::Failed { reason } => {
            assert_eq!(reason.as_deref(), Some("exit 1"))
        }
        other => panic!("{other:?}"),
    }
    h.check_replay_and_snapshot();
}

/// The FAQ of DataBuild's partition-identity design: A already Failed, B dep-misses on A → B is UpstreamFailed at once, and so
/// is what already waited for B.
#[test]
fn dep_miss_on_an_already_failed_upstream() {
    let mut h = Harness::new();
    h.ok(buffer("jA", &["A"]));
    h.ok(job_event("JobRunFailure", "jA"));
    h.ok(want_create("wC", &["C"]));
    h.ok(buffer("jC", &["C"]));
    h.ok(dep_miss("jC", &["C"], &["B"]));
    h.ok(want_create("wB", &["B"]));
    h.ok(buffer("jB", &["B"]));
    let t = h.ok(dep_miss("jB", &["B"], &["A"]));
    assert_eq!(
        t,
        vec![
            job_t("jB", Some(J::Queued), J::DepMissed),
            part_t("jB", "B", Some(P::Building), P::UpstreamBuilding),
            part_t("jB", "B", Some(P::UpstreamBuilding), P::UpstreamFailed),
            part_t("jC", "C", Some(P::UpstreamBuilding), P::UpstreamFailed),
            want_t("wC", Some(W::UpstreamBuilding), W::UpstreamFailed),
            want_t("wB", Some(W::Building), W::UpstreamFailed),
        ]
    );
    // A derivative want for the failed upstream fails at once.
    assert_eq!(
        h.ok(derivative("dA", &["A"], "jB")),
        vec![want_t("dA", None, W::Failed)]
    );
    h.check_replay_and_snapshot();
}

/// Wants that arrive while a partition is UpstreamBuilding wait; while UpForRetry they are
/// schedulable.
#[test]
fn wants_arriving_during_upstream_building_and_up_for_retry() {
    let mut h = Harness::new();
    h.ok(buffer("j1", &["down"]));
    h.ok(dep_miss("j1", &["down"], &["up"]));
    assert_eq!(
        h.ok(want_create("w1", &["down"])),
        vec![want_t("w1", None, W::UpstreamBuilding)]
    );
    assert!(h.schedulable().is_empty());
    h.ok(buffer("j2", &["up"]));
    h.ok(job_event("JobRunSuccess", "j2"));
    assert_eq!(h.canonical("down"), P::UpForRetry);
    assert_eq!(h.want("w1"), W::Idle);
    assert_eq!(
        h.ok(want_create("w2", &["down"])),
        vec![want_t("w2", None, W::Idle)]
    );
    assert_eq!(h.schedulable(), vec!["w1", "w2"]);
    h.check_replay_and_snapshot();
}

/// Upstreams that are already Live when the dep miss arrives: straight to UpForRetry. Job
/// partitions the dep miss does not name are released (UpForRetry).
#[test]
fn dep_miss_with_live_upstreams_and_unimpacted_partitions() {
    let mut h = Harness::new();
    h.ok(buffer("jU", &["up"]));
    h.ok(job_event("JobRunSuccess", "jU"));
    h.ok(want_create("w", &["x", "y"]));
    h.ok(buffer("j1", &["x", "y"]));
    let t = h.ok(dep_miss("j1", &["x"], &["up"]));
    assert_eq!(
        t,
        vec![
            job_t("j1", Some(J::Queued), J::DepMissed),
            part_t("j1", "x", Some(P::Building), P::UpstreamBuilding),
            part_t("j1", "x", Some(P::UpstreamBuilding), P::UpForRetry),
            part_t("j1", "y", Some(P::Building), P::UpForRetry),
            want_t("w", Some(W::Building), W::Idle),
        ]
    );
    h.check_replay_and_snapshot();
}

/// Several missingDeps entries for one partition merge; a partition waits until every
/// upstream is Live, and a taint of one upstream keeps it waiting until that one is rebuilt.
#[test]
fn waiting_on_several_upstreams() {
    let mut h = Harness::new();
    h.ok(buffer("jA", &["A"]));
    h.ok(job_event("JobRunSuccess", "jA"));
    h.ok(buffer("j1", &["D"]));
    h.ok(
        json!({"type": "JobRunDepMiss", "jobRunId": "j1", "missingDeps": [
            {"impacted": ["D"], "missing": ["A", "B"]},
            {"impacted": ["D"], "missing": ["B", "C"]}
        ]}),
    );
    assert_eq!(
        h.state.canonical_partition("D").unwrap().state,
        PartitionState::UpstreamBuilding {
            missing_deps: vec!["A".into(), "B".into(), "C".into()]
        }
    );
    h.ok(buffer("jB", &["B"]));
    h.ok(job_event("JobRunSuccess", "jB"));
    assert_eq!(h.canonical("D"), P::UpstreamBuilding);
    h.ok(taint("t", &["A"]));
    h.ok(buffer("jC", &["C"]));
    h.ok(job_event("JobRunSuccess", "jC"));
    assert_eq!(
        h.canonical("D"),
        P::UpstreamBuilding,
        "A is tainted, not Live"
    );
    h.ok(buffer("jA2", &["A"]));
    h.ok(job_event("JobRunSuccess", "jA2"));
    assert_eq!(h.canonical("D"), P::UpForRetry);
    h.check_replay_and_snapshot();
}

/// The derivative-want link: `sourceJobRunId` on WantCreate, checked against the dep miss.
#[test]
fn derivative_want_linkage() {
    let mut h = Harness::new();
    h.ok(want_create("w", &["out"]));
    h.ok(buffer("j", &["out"]));
    h.refused(derivative("d0", &["in1"], "j"), "JOB_RUN_WRONG_STATE");
    h.ok(json!({"type": "JobRunDepMiss", "jobRunId": "j", "missingDeps": [{"impacted": ["out"], "missing": ["in1", "in2"]}]}));
    h.refused(derivative("d0", &["in1"], "nope"), "UNKNOWN_JOB_RUN");
    h.refused(derivative("d0", &["other"], "j"), "INVALID_EVENT");
    h.ok(derivative("d1", &["in1"], "j"));
    h.ok(derivative("d2", &["in1", "in2"], "j"));
    assert_eq!(
        h.state.want("d1").unwrap().source_job_run_id.as_deref(),
        Some("j")
    );
    assert_eq!(
        h.state.job_run("j").unwrap().derivative_want_ids,
        vec!["d1", "d2"]
    );
    assert_eq!(h.state.want("w").unwrap().source_job_run_id, None);
    // From the original want to its derivative wants: ref → canonical instance → job run.
    let p = h
        .state
        .canonical_partition(&h.state.want("w").unwrap().partitions[0])
        .unwrap();
    assert_eq!(
        h.state.job_run(&p.job_run_id).unwrap().derivative_want_ids,
        vec!["d1", "d2"]
    );
    h.check_replay_and_snapshot();
}

/// Every refusal code, each leaving the state exactly as it was.
#[test]
fn refused_events_leave_the_state_unchanged() {
    let mut h = Harness::new();
    h.ok(want_create("w1", &["a"]));
    h.ok(buffer("j1", &["a", "b"]));
    h.refused(want_create("w1", &["z"]), "DUPLICATE_WANT");
    h.refused(
        json!({"type": "WantCancel", "wantId": "nope"}),
        "UNKNOWN_WANT",
    );
    h.refused(job_event("JobRunSuccess", "nope"), "UNKNOWN_JOB_RUN");
    h.refused(buffer("j1", &["c"]), "DUPLICATE_JOB_RUN");
    h.refused(buffer("j2", &["c", "d", "c"]), "DUPLICATE_REF_IN_JOB");
    h.refused(buffer("j2", &["c", "b"]), "PARTITION_LEASED");
    h.refused(dep_miss("j1", &["a"], &["b"]), "DEPENDENCY_CYCLE");
    h.refused(dep_miss("j1", &["zz"], &["c"]), "INVALID_EVENT");
    h.refused(want_create("w2", &[]), "INVALID_EVENT");
    h.refused(json!({"type": "WantCreate", "wantId": "w2", "partitions": ["a"], "ttlSeconds": 9_007_199_254_740_992u64}), "INVALID_EVENT");
    h.ok(dep_miss("j1", &["a"], &["c"]));
    h.refused(dep_miss("j1", &["a"], &["c"]), "JOB_RUN_WRONG_STATE");
    h.refused(job_event("JobRunHeartbeat", "j1"), "JOB_RUN_WRONG_STATE");
    h.refused(job_event("JobRunCancel", "j1"), "JOB_RUN_WRONG_STATE");
    // c's job dep-misses on a, which waits for c: a cycle.
    h.ok(buffer("jc", &["c"]));
    let err = h.refused(dep_miss("jc", &["c"], &["a"]), "DEPENDENCY_CYCLE");
    assert!(err.to_string().starts_with("dependency cycle: "), "{err}");
    // ... also when the cycle closes through a later missing dep.
    h.refused(json!({"type": "JobRunDepMiss", "jobRunId": "jc", "missingDeps": [{"impacted": ["c"], "missing": ["q", "a"]}]}), "DEPENDENCY_CYCLE");
    h.ok(json!({"type": "WantCancel", "wantId": "w1"}));
    h.refused(
        json!({"type": "WantCancel", "wantId": "w1"}),
        "WANT_WRONG_STATE",
    );
    h.ok(taint("t1", &["a"]));
    h.refused(taint("t1", &["b"]), "DUPLICATE_TAINT");
    let err = h.refused(want_create("w9", &["a", "a"]), "INVALID_EVENT");
    assert_eq!(
        err.to_string(),
        "invalid event: partitions lists 'a' more than once"
    );
    h.check_replay_and_snapshot();
}

/// A taint reopens the Successful wants still within their TTL at the taint's timestamp;
/// older ones stay Successful (the harness clock advances 1 s per event).
#[test]
fn taint_reopens_only_wants_within_ttl() {
    let mut h = Harness::new();
    h.ok(json!({"type": "WantCreate", "wantId": "short", "partitions": ["a"], "ttlSeconds": 3}));
    h.ok(json!({"type": "WantCreate", "wantId": "long", "partitions": ["a"], "ttlSeconds": 3600}));
    h.ok(json!({"type": "WantCreate", "wantId": "forever", "partitions": ["a"]}));
    h.ok(buffer("j1", &["a"]));
    h.ok(job_event("JobRunSuccess", "j1"));
    assert_eq!(h.state.want("short").unwrap().state, W::Successful);
    let t = h.ok(taint("t1", &["a"]));
    assert_eq!(
        t,
        vec![
            part_t("j1", "a", Some(P::Live), P::Tainted),
            want_t("long", Some(W::Successful), W::Idle),
            want_t("forever", Some(W::Successful), W::Idle),
        ]
    );
    assert_eq!(
        h.want("short"),
        W::Successful,
        "its TTL ended before the taint"
    );
    assert_eq!(h.schedulable(), vec!["long", "forever"]);
    h.check_replay_and_snapshot();
}

fn ids(wants: Vec<partkit::lifecycle::Want>) -> Vec<String> {
    wants.into_iter().map(|w| w.want_id).collect()
}

/// `schedulable_wants_at(now)` leaves out wants whose TTL has ended
/// (`createdAt + ttlSeconds * 1000 <= now`); no TTL never expires; without `now` nothing is
/// left out. Expiry changes no state.
#[test]
fn schedulable_wants_respect_ttl() {
    let mut h = Harness::new();
    let t0 = h.now;
    h.ok(Harness::at(
        t0,
        json!({"type": "WantCreate", "wantId": "ten", "partitions": ["a"], "ttlSeconds": 10}),
    ));
    h.ok(Harness::at(
        t0,
        json!({"type": "WantCreate", "wantId": "zero", "partitions": ["b"], "ttlSeconds": 0}),
    ));
    h.ok(Harness::at(t0, want_create("forever", &["c"])));
    h.ok(Harness::at(
        t0 + 2000,
        json!({"type": "WantCreate", "wantId": "later", "partitions": ["a"], "ttlSeconds": 10}),
    ));
    assert_eq!(h.schedulable(), vec!["ten", "zero", "forever", "later"]);
    let at = |now: u64| ids(h.state.schedulable_wants_at(now));
    assert_eq!(at(t0 - 1), vec!["ten", "zero", "forever", "later"]);
    assert_eq!(
        at(t0),
        vec!["ten", "forever", "later"],
        "a TTL of 0 ends at creation"
    );
    assert_eq!(at(t0 + 9_999), vec!["ten", "forever", "later"]);
    assert_eq!(
        at(t0 + 10_000),
        vec!["forever", "later"],
        "ends exactly at createdAt + ttl"
    );
    assert_eq!(at(t0 + 12_000), vec!["forever"]);
    assert_eq!(at(u64::MAX), vec!["forever"]);
    // Expired wants keep their state: still Idle, still following their partitions.
    assert_eq!(h.want("ten"), W::Idle);
    h.ok(Harness::at(t0 + 20_000, buffer("j1", &["a"])));
    assert_eq!((h.want("ten"), h.want("later")), (W::Building, W::Building));
    h.ok(job_event("JobRunSuccess", "j1"));
    assert_eq!(h.want("ten"), W::Successful);
    h.check_replay_and_snapshot();
    let restored = BuildState::from_snapshot(&h.state.snapshot()).unwrap();
    assert_eq!(
        ids(restored.schedulable_wants_at(t0 + 12_000)),
        ids(h.state.schedulable_wants_at(t0 + 12_000))
    );
}

/// After a taint, wants come back to the orchestrator only while within their TTL: a
/// Successful want past its TTL at the taint is not reopened, and a reopened (Idle) want is no
/// longer offered once its TTL ends.
#[test]
fn rescheduling_after_a_taint_only_within_ttl() {
    let mut h = Harness::new();
    let t0 = h.now;
    h.ok(Harness::at(
        t0,
        json!({"type": "WantCreate", "wantId": "minute", "partitions": ["a"], "ttlSeconds": 60}),
    ));
    h.ok(Harness::at(
        t0,
        json!({"type": "WantCreate", "wantId": "brief", "partitions": ["a"], "ttlSeconds": 5}),
    ));
    h.ok(Harness::at(t0, want_create("forever", &["a"])));
    h.ok(Harness::at(t0 + 1000, buffer("j1", &["a"])));
    h.ok(Harness::at(t0 + 2000, job_event("JobRunSuccess", "j1")));
    assert_eq!(h.want("brief"), W::Successful);
    let t = h.ok(Harness::at(t0 + 30_000, taint("t1", &["a"])));
    assert_eq!(
        t,
        vec![
            part_t("j1", "a", Some(P::Live), P::Tainted),
            want_t("minute", Some(W::Successful), W::Idle),
            want_t("forever", Some(W::Successful), W::Idle),
        ]
    );
    let at = |now: u64| ids(h.state.schedulable_wants_at(now));
    assert_eq!(at(t0 + 30_000), vec!["minute", "forever"]);
    assert_eq!(at(t0 + 59_999), vec!["minute", "forever"]);
    assert_eq!(at(t0 + 60_000), vec!["forever"]);
    assert_eq!(h.want("minute"), W::Idle, "expiry is not a state");
    // The rebuild (for "forever") completes the expired want too.
    h.ok(Harness::at(t0 + 70_000, buffer("j2", &["a"])));
    h.ok(job_event("JobRunSuccess", "j2"));
    assert_eq!(
        (h.want("minute"), h.want("brief"), h.want("forever")),
        (W::Successful, W::Successful, W::Successful)
    );
    // A taint after every TTL but one reopens only the want without TTL.
    h.ok(taint("t2", &["a"]));
    assert_eq!(h.schedulable(), vec!["forever"]);
    assert_eq!(h.want("minute"), W::Successful);
    h.check_replay_and_snapshot();
}

/// `wants_past_sla(now)`: wants still Idle, Building or UpstreamBuilding at or after
/// `createdAt + slaSeconds * 1000`, in creation order; an alarm, not a state.
#[test]
fn wants_past_sla() {
    let mut h = Harness::new();
    let t0 = h.now;
    h.ok(Harness::at(
        t0,
        json!({"type": "WantCreate", "wantId": "s60", "partitions": ["a"], "slaSeconds": 60}),
    ));
    h.ok(Harness::at(
        t0,
        json!({"type": "WantCreate", "wantId": "s10", "partitions": ["b"], "slaSeconds": 10}),
    ));
    h.ok(Harness::at(t0, want_create("no-sla", &["a"])));
    h.ok(Harness::at(
        t0,
        json!({"type": "WantCreate", "wantId": "canceled", "partitions": ["c"], "slaSeconds": 1}),
    ));
    h.ok(Harness::at(
        t0,
        json!({"type": "WantCancel", "wantId": "canceled"}),
    ));
    let past = |h: &Harness, now: u64| ids(h.state.wants_past_sla(now));
    assert!(past(&h, t0 + 9_999).is_empty());
    assert_eq!(past(&h, t0 + 10_000), vec!["s10"]);
    assert_eq!(past(&h, t0 + 60_000), vec!["s60", "s10"], "creation order");
    assert_eq!(past(&h, u64::MAX), vec!["s60", "s10"]);
    // Building and UpstreamBuilding wants are still past their SLA; ended ones are not.
    h.ok(Harness::at(t0 + 1000, buffer("ja", &["a"])));
    h.ok(dep_miss("ja", &["a"], &["up"]));
    assert_eq!(h.want("s60"), W::UpstreamBuilding);
    h.ok(buffer("jb", &["b"]));
    assert_eq!(past(&h, t0 + 60_000), vec!["s60", "s10"]);
    h.ok(job_event("JobRunSuccess", "jb"));
    assert_eq!(past(&h, t0 + 60_000), vec!["s60"]);
    assert_eq!(
        h.want("s60"),
        W::UpstreamBuilding,
        "the SLA changes no state"
    );
    // A taint reopens a Successful want: it is open, and past its SLA, again.
    h.ok(taint("t", &["b"]));
    assert_eq!(h.want("s10"), W::Idle);
    assert_eq!(past(&h, t0 + 60_000), vec!["s60", "s10"]);
    h.check_replay_and_snapshot();
    let restored = BuildState::from_snapshot(&h.state.snapshot()).unwrap();
    assert_eq!(
        ids(restored.wants_past_sla(t0 + 60_000)),
        past(&h, t0 + 60_000)
    );
}

/// Events are applied in non-decreasing timestamp order: an equal timestamp is accepted, an
/// earlier one is refused (state untouched) before anything else is checked, and replay
/// reports its index.
#[test]
fn timestamps_never_go_backwards() {
    let mut h = Harness::new();
    let t0 = h.now;
    assert_eq!(h.state.last_event_at(), None);
    h.ok(Harness::at(t0, want_create("w1", &["a"])));
    h.ok(Harness::at(t0, buffer("j1", &["a"])));
    h.ok(Harness::at(t0 + 5000, job_event("JobRunHeartbeat", "j1")));
    assert_eq!(h.state.last_event_at(), Some(t0 + 5000));
    let err = h.refused(
        Harness::at(t0 + 4999, job_event("JobRunSuccess", "j1")),
        "TIMESTAMP_NOT_MONOTONIC",
    );
    assert_eq!(
        err.to_string(),
        format!(
            "timestamp {} is earlier than {}, the timestamp of the last applied event",
            t0 + 4999,
            t0 + 5000
        )
    );
    // Checked before the state: an earlier event that is also wrong otherwise names the time.
    h.refused(
        Harness::at(t0, job_event("JobRunSuccess", "nope")),
        "TIMESTAMP_NOT_MONOTONIC",
    );
    // Shape errors come first.
    h.refused(
        Harness::at(t0, json!({"type": "WantCancel", "wantId": ""})),
        "INVALID_EVENT",
    );
    // A refused event does not move the clock; the same event on time is fine.
    assert_eq!(h.state.last_event_at(), Some(t0 + 5000));
    h.ok(Harness::at(t0 + 5000, job_event("JobRunSuccess", "j1")));
    assert_eq!(h.want("w1"), W::Successful);
    let w1 = h.state.want("w1").unwrap();
    assert_eq!((w1.created_at, w1.updated_at), (t0, t0 + 5000));

    // A snapshot carries the clock: the latest time it records.
    let restored = BuildState::from_snapshot(&h.state.snapshot()).unwrap();
    assert_eq!(restored.last_event_at(), Some(t0 + 5000));
    let mut restored = restored;
    let late = BuildEvent::from_value(
        json!({"type": "TaintCreate", "timestamp": t0 + 4000, "taintId": "t", "partitions": ["a"]}),
    )
    .unwrap();
    assert_eq!(
        restored.apply(&late).unwrap_err().code(),
        "TIMESTAMP_NOT_MONOTONIC"
    );
    h.check_replay_and_snapshot();

    // Replay stops at the event that goes back, with its index, on every path.
    let log: Vec<Value> = vec![
        json!({"type": "WantCreate", "timestamp": 10, "wantId": "w", "partitions": ["a"]}),
        json!({"type": "JobRunBuffer", "timestamp": 10, "jobRunId": "j", "buildingPartitions": ["a"]}),
        json!({"type": "JobRunSuccess", "timestamp": 9, "jobRunId": "j"}),
    ];
    let events: Vec<BuildEvent> = log
        .iter()
        .map(|v| BuildEvent::from_value(v.clone()).unwrap())
        .collect();
    for err in [
        BuildState::replay(&events).unwrap_err(),
        BuildState::replay_values(&log).unwrap_err(),
        BuildState::replay_json(&serde_json::to_string(&log).unwrap()).unwrap_err(),
    ] {
        assert_eq!(
            (err.code(), err.event_index()),
            ("TIMESTAMP_NOT_MONOTONIC", Some(2))
        );
        assert_eq!(
            err.to_string(),
            "event 2: timestamp 9 is earlier than 10, the timestamp of the last applied event"
        );
    }
}

/// A snapshot whose times contradict the order of events is refused.
#[test]
fn snapshot_with_inconsistent_times_is_refused() {
    let mut h = Harness::new();
    h.ok(want_create("w", &["a"]));
    h.ok(buffer("j", &["a"]));
    h.ok(job_event("JobRunHeartbeat", "j"));
    h.ok(job_event("JobRunSuccess", "j"));
    let snap = h.state.snapshot_value();
    type Edit = fn(&mut Value);
    let edits: [(&str, Edit); 4] = [
        ("want updated before created", |s| {
            s["wants"][0]["updatedAt"] = json!(1)
        }),
        ("job updated before created", |s| {
            s["jobRuns"][0]["createdAt"] = json!(9_000_000_000_000u64)
        }),
        ("heartbeat after the last update", |s| {
            s["jobRuns"][0]["lastHeartbeatAt"] = json!(9_000_000_000_000u64)
        }),
        ("instance updated before created", |s| {
            s["partitions"][0]["updatedAt"] = json!(1)
        }),
    ];
    for (what, edit) in edits {
        let mut s = snap.clone();
        edit(&mut s);
        let err = BuildState::from_snapshot_json(&s.to_string()).expect_err(what);
        assert_eq!(err.code(), "INVALID_SNAPSHOT", "{what}: {err}");
    }
}

#[test]
fn job_cancel_releases_the_lease() {
    let mut h = Harness::new();
    h.ok(want_create("w", &["a"]));
    h.ok(buffer("j1", &["a"]));
    let t = h.ok(job_event("JobRunCancel", "j1"));
    assert_eq!(
        t,
        vec![
            job_t("j1", Some(J::Queued), J::Canceled),
            part_t("j1", "a", Some(P::Building), P::UpForRetry),
            want_t("w", Some(W::Building), W::Idle),
        ]
    );
    assert_eq!(h.schedulable(), vec!["w"]);
    h.ok(buffer("j2", &["a"]));
    assert_eq!(h.want("w"), W::Building);
    h.check_replay_and_snapshot();
}

#[test]
fn want_sensing_priority_order() {
    let mut h = Harness::new();
    // live, building, upstream-building, failed, upstream-failed, up-for-retry refs
    h.ok(buffer("jl", &["live"]));
    h.ok(job_event("JobRunSuccess", "jl"));
    h.ok(buffer("jb", &["building"]));
    h.ok(buffer("jub", &["ub"]));
    h.ok(dep_miss("jub", &["ub"], &["never"]));
    h.ok(buffer("jf", &["failed"]));
    h.ok(job_event("JobRunFailure", "jf"));
    h.ok(buffer("juf", &["uf"]));
    h.ok(dep_miss("juf", &["uf"], &["failed"]));
    h.ok(buffer("jr", &["retry"]));
    h.ok(job_event("JobRunCancel", "jr"));
    let cases: &[(&[&str], WantState)] = &[
        (&["live", "building", "ub", "uf", "failed"], W::Failed),
        (&["live", "building", "ub", "uf"], W::UpstreamFailed),
        (&["live"], W::Successful),
        (&["live", "ub", "building", "retry"], W::Building),
        (&["live", "ub", "retry", "none"], W::UpstreamBuilding),
        (&["live", "retry"], W::Idle),
        (&["none"], W::Idle),
    ];
    for (k, (parts, expected)) in cases.iter().enumerate() {
        let id = format!("w{k}");
        assert_eq!(
            h.ok(want_create(&id, parts)),
            vec![want_t(&id, None, *expected)],
            "{parts:?}"
        );
    }
    assert_eq!(h.schedulable(), vec!["w5", "w6"]);
    h.check_replay_and_snapshot();
}

#[test]
fn replay_stops_at_the_first_bad_event() {
    let events: Vec<Value> = vec![
        json!({"type": "WantCreate", "timestamp": 1, "wantId": "w", "partitions": ["a"]}),
        json!({"type": "JobRunBuffer", "timestamp": 2, "jobRunId": "j", "buildingPartitions": ["a"]}),
        json!({"type": "JobRunSuccess", "timestamp": 3, "jobRunId": "nope"}),
        json!({"type": "JobRunSuccess", "timestamp": 4, "jobRunId": "j"}),
    ];
    let err = BuildState::replay_values(&events).unwrap_err();
    assert_eq!(
        (err.code(), err.event_index()),
        ("UNKNOWN_JOB_RUN", Some(2))
    );
    assert_eq!(err.to_string(), "event 2: unknown job run 'nope'");
    let mut bad = events.clone();
    bad[1] = json!({"type": "JobRunBuffer", "timestamp": 2, "jobRunId": "j"});
    let err = BuildState::replay_values(&bad).unwrap_err();
    assert_eq!((err.code(), err.event_index()), ("INVALID_EVENT", Some(1)));
    // The JSON text path: one pass, the failing element's index, earlier refusals first.
    let text = |list: &[Value]| serde_json::to_string(list).unwrap();
    let err = BuildState::replay_json(&text(&events)).unwrap_err();
    assert_eq!(
        (err.code(), err.event_index()),
        ("UNKNOWN_JOB_RUN", Some(2))
    );
    let err = BuildState::replay_json(&text(&bad)).unwrap_err();
    assert_eq!((err.code(), err.event_index()), ("INVALID_EVENT", Some(1)));
    let lone = r#"[{"type":"WantCreate","timestamp":1,"wantId":"w","partitions":["a"]},{"type":"WantCancel","timestamp":2,"wantId":"\ud800"}]"#;
    let err = BuildState::replay_json(lone).unwrap_err();
    assert_eq!((err.code(), err.event_index()), ("INVALID_EVENT", Some(1)));
    let err = BuildState::replay_json(r#"{"type":"WantCancel"}"#).unwrap_err();
    assert_eq!((err.code(), err.event_index()), ("INVALID_EVENT", None));
    assert_eq!(BuildState::replay_json("[]").unwrap().want_count(), 0);
    let good: Vec<Value> = vec![events[0].clone(), events[1].clone(), events[3].clone()];
    assert_eq!(
        BuildState::replay_json(&text(&good)).unwrap().snapshot(),
        BuildState::replay_values(&good).unwrap().snapshot()
    );
    let state = BuildState::replay_values(&good).unwrap();
    assert_eq!(state.want("w").unwrap().state, W::Successful);
    assert_eq!(state.want("w").unwrap().updated_at, 4);
}

#[test]
fn snapshot_is_plain_json_and_corruption_is_refused() {
    let mut h = Harness::new();
    h.ok(want_create("w", &["C"]));
    h.ok(buffer("j1", &["C"]));
    h.ok(dep_miss("j1", &["C"], &["B"]));
    h.ok(derivative("d", &["B"], "j1"));
    h.ok(buffer("j2", &["B"]));
    h.ok(job_event("JobRunSuccess", "j2"));
    h.ok(taint("t", &["B"]));
    let snap = h.state.snapshot_value();
    assert_eq!(snap["format"], "partkit.lifecycle");
    assert_eq!(snap["partitions"][0]["state"], "UpForRetry");
    assert_eq!(snap["partitions"][1]["state"], "Tainted");
    assert_eq!(snap["partitions"][1]["taintId"], "t");
    assert_eq!(snap["jobRuns"][0]["state"], "DepMissed");
    assert_eq!(snap["jobRuns"][0]["missingDeps"][0]["missing"][0], "B");
    assert_eq!(snap["wants"][1]["sourceJobRunId"], "j1");

    type Corruption = Box<dyn Fn(&mut Value)>;
    let corruptions: Vec<(&str, Corruption)> = vec![
        (
            "want state",
            Box::new(|s| s["wants"][0]["state"] = json!("Building")),
        ),
        (
            "partition state",
            Box::new(|s| s["partitions"][1]["state"] = json!("Building")),
        ),
        (
            "uuid",
            Box::new(|s| {
                s["partitions"][0]["uuid"] = json!("00000000-0000-8000-8000-000000000000")
            }),
        ),
        (
            "job ref",
            Box::new(|s| s["partitions"][0]["jobRunId"] = json!("j2")),
        ),
        (
            "unknown job",
            Box::new(|s| s["partitions"][0]["jobRunId"] = json!("zz")),
        ),
        (
            "derivative",
            Box::new(|s| s["jobRuns"][0]["derivativeWantIds"] = json!([])),
        ),
        ("version", Box::new(|s| s["version"] = json!(2))),
        (
            "taint",
            Box::new(|s| s["taints"][0]["taintedUuids"] = json!([])),
        ),
        (
            "duplicate want",
            Box::new(|s| {
                let w = s["wants"][0].clone();
                s["wants"].as_array_mut().unwrap().push(w);
            }),
        ),
        (
            "big number",
            Box::new(|s| s["wants"][0]["createdAt"] = json!(9_007_199_254_740_993u64)),
        ),
        (
            "unknown field",
            Box::new(|s| s["partitions"][0]["extra"] = json!(1)),
        ),
        (
            "unknown job field",
            Box::new(|s| s["jobRuns"][1]["extra"] = json!(1)),
        ),
        (
            "state field of another state",
            Box::new(|s| s["partitions"][0]["taintId"] = json!("t")),
        ),
        (
            "state without its field",
            Box::new(|s| {
                s["partitions"][1]
                    .as_object_mut()
                    .unwrap()
                    .remove("taintId");
            }),
        ),
        (
            "job reason on success",
            Box::new(|s| s["jobRuns"][1]["reason"] = json!("x")),
        ),
        (
            "unknown top-level field",
            Box::new(|s| s["extra"] = json!([])),
        ),
    ];
    for (what, corrupt) in corruptions {
        let mut s = snap.clone();
        corrupt(&mut s);
        let err = BuildState::from_snapshot_json(&s.to_string()).expect_err(what);
        assert_eq!(err.code(), "INVALID_SNAPSHOT", "{what}: {err}");
    }
    assert!(BuildState::from_snapshot_json("[]").is_err());
}

#[test]
fn uuid_vectors() {
    // SHA-256(be_u64(len(jobRunId)) || jobRunId || ref), first 16 bytes, version 8, RFC variant.
    let vectors = [
        ("job-1", "data/beta", "b9fdaee2-c421-8dda-b7ad-0d0b3b24b0d4"),
        ("ab", "c", "290a3daa-9b49-826a-aed7-352cd7f5e69c"),
        ("a", "bc", "e98bc483-cc6a-89cc-b82b-c23e481a128c"),
        ("", "", "af5570f5-a181-8b7a-b78c-af4bc70a660f"),
        (
            "job-42",
            "data/date=2024-01-01/region=eu",
            "6562c90c-f1a3-8750-9c64-cfc6e71df863",
        ),
        ("jöb-ü", "数据/β", "8d9d15ff-c105-8efb-a1a1-d64f0026dd27"),
    ];
    for (job, r, expected) in vectors {
        assert_eq!(
            derive_partition_uuid(job, r).to_string(),
            expected,
            "({job:?}, {r:?})"
        );
    }
}
