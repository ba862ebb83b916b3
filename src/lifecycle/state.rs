//! `BuildState`: the indexes, the event handlers and the read-only views.

use std::collections::{BTreeSet, HashMap};

use super::error::{ErrorKind, LifecycleError};
use super::event::BuildEvent;
use super::types::{AppliedTransition, JobRunState, PartitionStatus, WantState};
use super::uuid::PartitionUuid;

mod check;
mod mutate;
mod sense;
mod views;

/// Index of a ref, instance, want, job run or taint in its table. Tables only grow, so an
/// index is stable for the life of the state.
pub(crate) type Ix = u32;

/// Sorts table indexes in increasing order: insertion sort for short lists (the usual case:
/// the wants of the refs one event touched, runs already in order), `crate::heapsort` beyond.
/// The module's only sort: `sort_unstable`'s pattern-defeating quicksort with its helpers was 4
/// KB of wasm.
pub(crate) fn sort_ix(v: &mut [Ix]) {
    if v.len() <= 64 {
        for i in 1..v.len() {
            let x = v[i];
            let mut j = i;
            while j > 0 && v[j - 1] > x {
                v[j] = v[j - 1];
                j -= 1;
            }
            v[j] = x;
        }
        return;
    }
    crate::heapsort::heapsort(v);
}

/// The event-sourced build state: wants (by ref), job runs (by partition UUID), partition
/// instances (one canonical per ref, older ones kept as history) and taints.
///
/// [`apply`](BuildState::apply) is the only mutator. It validates the whole event against
/// the current state first and changes nothing when it refuses the event. Every lookup an
/// event needs goes through a hash index or a per-ref index, so the cost of an event depends
/// on what the event touches (its refs, the wants and waiting partitions of those refs), not
/// on the length of the log.
///
/// # Examples
/// ```
/// use partkit::lifecycle::{BuildEvent, BuildState, PartitionStatus, WantState};
/// let mut state = BuildState::new();
/// for text in [
///     r#"{"type":"WantCreate","timestamp":1,"wantId":"w1","partitions":["data/beta"]}"#,
///     r#"{"type":"JobRunBuffer","timestamp":2,"jobRunId":"j1","buildingPartitions":["data/beta"]}"#,
///     r#"{"type":"JobRunSuccess","timestamp":3,"jobRunId":"j1"}"#,
/// ] {
///     state.apply(&BuildEvent::from_json(text).unwrap()).unwrap();
/// }
/// assert_eq!(state.want("w1").unwrap().state, WantState::Successful);
/// let live = state.canonical_partition("data/beta").unwrap();
/// assert_eq!(live.state.status(), PartitionStatus::Live);
/// assert_eq!(live.uuid, partkit::lifecycle::derive_partition_uuid("j1", "data/beta"));
/// ```
#[derive(Debug, Clone, Default)]
pub struct BuildState {
    pub(crate) refs: Vec<RefEntry>,
    pub(crate) ref_ids: HashMap<Box<str>, Ix>,
    pub(crate) instances: Vec<Instance>,
    pub(crate) instance_ids: HashMap<PartitionUuid, Ix>,
    pub(crate) wants: Vec<WantRec>,
    pub(crate) want_ids: HashMap<Box<str>, Ix>,
    pub(crate) jobs: Vec<JobRec>,
    pub(crate) job_ids: HashMap<Box<str>, Ix>,
    pub(crate) taints: Vec<TaintRec>,
    pub(crate) taint_ids: HashMap<Box<str>, Ix>,
    /// Wants in state Idle, by creation order.
    pub(crate) idle_wants: BTreeSet<Ix>,
    /// Wants in state Idle, Building or UpstreamBuilding that have an SLA, keyed by its end
    /// (`createdAt + slaSeconds * 1000`): [`BuildState::wants_past_sla`] is a range query.
    pub(crate) sla_open_wants: BTreeSet<(u64, Ix)>,
    /// The timestamp of the last applied event (`None` before the first): events are applied
    /// in non-decreasing timestamp order.
    pub(crate) last_event_at: Option<u64>,
}

/// Everything known about one partition ref.
#[derive(Debug, Clone, Default)]
pub(crate) struct RefEntry {
    pub(crate) name: Box<str>,
    /// Instances of this ref, oldest first; the last one is canonical.
    pub(crate) history: Vec<Ix>,
    /// Every want naming this ref, in creation order (never pruned, as DataBuild's partition-identity design decides).
    pub(crate) wants: Vec<Ix>,
    /// Wants naming this ref whose state is Idle, Building or UpstreamBuilding: the ones an
    /// event on this ref may move. Keeps per-event work independent of old, finished wants.
    pub(crate) active_wants: BTreeSet<Ix>,
    /// Wants naming this ref whose state is Successful, keyed by the end of their TTL
    /// (`createdAt + ttlSeconds * 1000`, `u64::MAX` without TTL): a taint of the ref at time T
    /// reopens those whose TTL ends after T, found by a range query, so old finished wants
    /// cost nothing.
    pub(crate) successful_wants: BTreeSet<(u64, Ix)>,
    /// UpstreamBuilding instances whose missing deps include this ref (`downstream_waiting`).
    pub(crate) waiting: BTreeSet<Ix>,
}

#[derive(Debug, Clone)]
pub(crate) struct Instance {
    pub(crate) uuid: PartitionUuid,
    pub(crate) ref_ix: Ix,
    pub(crate) job: Ix,
    pub(crate) state: InstState,
    pub(crate) created_at: u64,
    pub(crate) updated_at: u64,
    pub(crate) previous: Option<Ix>,
}

/// [`PartitionState`] with refs and taints as indexes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum InstState {
    Building,
    UpstreamBuilding { missing: Box<[Ix]> },
    UpForRetry,
    Live,
    Failed,
    UpstreamFailed { upstream: Ix },
    Tainted { taint: Ix },
}

impl InstState {
    pub(crate) fn status(&self) -> PartitionStatus {
        match self {
            InstState::Building => PartitionStatus::Building,
            InstState::UpstreamBuilding { .. } => PartitionStatus::UpstreamBuilding,
            InstState::UpForRetry => PartitionStatus::UpForRetry,
            InstState::Live => PartitionStatus::Live,
            InstState::Failed => PartitionStatus::Failed,
            InstState::UpstreamFailed { .. } => PartitionStatus::UpstreamFailed,
            InstState::Tainted { .. } => PartitionStatus::Tainted,
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct WantRec {
    pub(crate) id: Box<str>,
    pub(crate) refs: Box<[Ix]>,
    pub(crate) state: WantState,
    pub(crate) created_at: u64,
    pub(crate) updated_at: u64,
    pub(crate) data_timestamp: Option<u64>,
    pub(crate) ttl_seconds: Option<u64>,
    pub(crate) sla_seconds: Option<u64>,
    pub(crate) comment: Option<Box<str>>,
    pub(crate) source_job: Option<Ix>,
}

impl WantRec {
    /// When the want's TTL ends, in milliseconds (`u64::MAX` without TTL): the want is within
    /// its TTL at time `t` while `t < ttl_end()`.
    pub(crate) fn ttl_end(&self) -> u64 {
        match self.ttl_seconds {
            Some(ttl) => self.created_at.saturating_add(ttl.saturating_mul(1000)),
            None => u64::MAX,
        }
    }

    /// Whether the want is within its TTL at time `t` (always, without TTL).
    pub(crate) fn within_ttl(&self, t: u64) -> bool {
        self.ttl_seconds.is_none() || t < self.ttl_end()
    }

    /// When the want's SLA ends, in milliseconds, if it has one.
    pub(crate) fn sla_end(&self) -> Option<u64> {
        self.sla_seconds
            .map(|sla| self.created_at.saturating_add(sla.saturating_mul(1000)))
    }
}

#[derive(Debug, Clone)]
pub(crate) struct JobRec {
    pub(crate) id: Box<str>,
    pub(crate) label: Option<Box<str>>,
    pub(crate) state: JobRunState,
    /// Instances it created, in `buildingPartitions` order.
    pub(crate) instances: Box<[Ix]>,
    pub(crate) created_at: u64,
    pub(crate) updated_at: u64,
    pub(crate) last_heartbeat_at: Option<u64>,
    pub(crate) derivative_wants: Vec<Ix>,
}

#[derive(Debug, Clone)]
pub(crate) struct TaintRec {
    pub(crate) id: Box<str>,
    pub(crate) partitions: Box<[Box<str>]>,
    pub(crate) created_at: u64,
    pub(crate) tainted: Vec<Ix>,
}

/// What an event touched, gathered while it is applied: wants of these refs are re-sensed.
#[derive(Default)]
struct Touched {
    /// Refs whose canonical instance was created or changed state.
    refs: Vec<Ix>,
    /// Refs whose Live canonical instance was tainted: their Successful wants reopen.
    tainted_refs: Vec<Ix>,
}

fn table_ix(len: usize, what: &str) -> Result<Ix, LifecycleError> {
    Ix::try_from(len)
        .ok()
        .filter(|&ix| ix < Ix::MAX)
        .ok_or_else(|| LifecycleError::invalid_event(format!("too many {what}")))
}

impl BuildState {
    /// An empty state.
    pub fn new() -> Self {
        Self::default()
    }

    /// Applies `events` in order to an empty state.
    ///
    /// # Errors
    /// Stops at the first refused event and returns its error, with
    /// [`event_index`](LifecycleError::event_index) set to the event's index in `events`.
    pub fn replay<'a, I>(events: I) -> Result<BuildState, LifecycleError>
    where
        I: IntoIterator<Item = &'a BuildEvent>,
    {
        let mut state = BuildState::new();
        for (index, event) in events.into_iter().enumerate() {
            state.apply(event).map_err(|e| e.at_event(index))?;
        }
        Ok(state)
    }

    /// Parses each JSON value as an event and applies it, like [`BuildState::replay`]; a
    /// malformed value is refused (`INVALID_EVENT`) with its index.
    ///
    /// # Errors
    /// As [`BuildState::replay`].
    pub fn replay_values<'a, I>(values: I) -> Result<BuildState, LifecycleError>
    where
        I: IntoIterator<Item = &'a serde_json::Value>,
    {
        let mut state = BuildState::new();
        for (index, value) in values.into_iter().enumerate() {
            let event = BuildEvent::deserialize_value(value).map_err(|e| e.at_event(index))?;
            state.apply(&event).map_err(|e| e.at_event(index))?;
        }
        Ok(state)
    }

    /// Parses a JSON array of events and applies them to an empty state, like
    /// [`BuildState::replay`] (the bulk path: one text instead of a million objects).
    ///
    /// # Errors
    /// As [`BuildState::replay`]; a malformed element is `INVALID_EVENT` with its index, text
    /// that is not a JSON array is `INVALID_EVENT` without one.
    pub fn replay_json(text: &str) -> Result<BuildState, LifecycleError> {
        let mut state = BuildState::new();
        state.apply_json_log(text)?;
        Ok(state)
    }

    /// Applies the events of a JSON array text in order; stops at the first refused event
    /// (the events before it stay applied) and returns how many were applied.
    ///
    /// # Errors
    /// The first refused event's error, with its index in the array.
    pub fn apply_json_log(&mut self, text: &str) -> Result<usize, LifecycleError> {
        apply_log(self, text)
    }

    /// Reserves room for `additional` more refs, instances, wants, job runs and taints, so
    /// that applying an event that adds at most that many of each grows no table: the
    /// allocation that could fail happens here, fallibly, before anything changes.
    ///
    /// # Errors
    /// [`std::collections::TryReserveError`] when the memory cannot be had; the state is
    /// unchanged.
    pub fn try_reserve(
        &mut self,
        additional: usize,
    ) -> Result<(), std::collections::TryReserveError> {
        self.refs.try_reserve(additional)?;
        self.ref_ids.try_reserve(additional)?;
        self.instances.try_reserve(additional)?;
        self.instance_ids.try_reserve(additional)?;
        self.wants.try_reserve(additional)?;
        self.want_ids.try_reserve(additional)?;
        self.jobs.try_reserve(additional)?;
        self.job_ids.try_reserve(additional)?;
        self.taints.try_reserve(additional)?;
        self.taint_ids.try_reserve(additional)?;
        Ok(())
    }

    /// Applies one event and returns the state changes it caused, in order.
    ///
    /// The whole event is checked against the current state before anything changes; a
    /// refused event leaves the state exactly as it was.
    ///
    /// # Errors
    /// A [`LifecycleError`] whose [`code`](LifecycleError::code) says why the event was refused
    /// (`INVALID_EVENT`, `UNKNOWN_WANT`, `DUPLICATE_WANT`, `WANT_WRONG_STATE`,
    /// `UNKNOWN_JOB_RUN`, `DUPLICATE_JOB_RUN`, `JOB_RUN_WRONG_STATE`, `DUPLICATE_REF_IN_JOB`,
    /// `PARTITION_LEASED`, `DUPLICATE_TAINT`, `DEPENDENCY_CYCLE`, `TIMESTAMP_NOT_MONOTONIC`).
    /// The shape of the event is checked first, then its timestamp (it may equal, but not
    /// precede, the last applied event's), then everything else.
    pub fn apply(&mut self, event: &BuildEvent) -> Result<Vec<AppliedTransition>, LifecycleError> {
        event.check_shape()?;
        let ts = event.timestamp();
        if let Some(last) = self.last_event_at {
            if ts < last {
                return Err(LifecycleError::new(ErrorKind::TimestampNotMonotonic {
                    timestamp: ts,
                    last,
                }));
            }
        }
        let transitions = self.apply_checked(event, ts)?;
        self.last_event_at = Some(ts);
        Ok(transitions)
    }

    /// The time of the last applied event (`None` for a state no event has touched). The next
    /// event's `timestamp` must be at least this. A state restored from a snapshot takes the
    /// latest time the snapshot records, which is the same value.
    pub fn last_event_at(&self) -> Option<u64> {
        self.last_event_at
    }

    /// [`apply`](BuildState::apply) after the shape and timestamp checks: validates the event
    /// against the state (no change on error), then applies it.
    fn apply_checked(
        &mut self,
        event: &BuildEvent,
        ts: u64,
    ) -> Result<Vec<AppliedTransition>, LifecycleError> {
        match event {
            BuildEvent::WantCreate(e) => {
                let source = self.check_want_create(e)?;
                Ok(self.do_want_create(e, source))
            }
            BuildEvent::WantCancel(e) => {
                let w = self.check_want_cancel(e)?;
                Ok(self.do_want_cancel(w, ts))
            }
            BuildEvent::JobRunBuffer(e) => {
                self.check_job_buffer(e)?;
                Ok(self.do_job_buffer(e))
            }
            BuildEvent::JobRunHeartbeat(e) => {
                let j = self.active_job(&e.job_run_id, "JobRunHeartbeat")?;
                Ok(self.do_heartbeat(j, ts))
            }
            BuildEvent::JobRunSuccess(e) => {
                let j = self.active_job(&e.job_run_id, "JobRunSuccess")?;
                Ok(self.do_job_end(j, ts, JobRunState::Succeeded))
            }
            BuildEvent::JobRunFailure(e) => {
                let j = self.active_job(&e.job_run_id, "JobRunFailure")?;
                Ok(self.do_job_end(
                    j,
                    ts,
                    JobRunState::Failed {
                        reason: e.reason.clone(),
                    },
                ))
            }
            BuildEvent::JobRunCancel(e) => {
                let j = self.active_job(&e.job_run_id, "JobRunCancel")?;
                Ok(self.do_job_end(j, ts, JobRunState::Canceled))
            }
            BuildEvent::JobRunDepMiss(e) => {
                let plan = self.check_dep_miss(e)?;
                Ok(self.do_dep_miss(e, plan))
            }
            BuildEvent::TaintCreate(e) => {
                self.check_taint(e)?;
                Ok(self.do_taint(e))
            }
        }
    }
}

/// Parses a JSON array of events and applies each as soon as it is parsed (one pass, no
/// intermediate list of events); stops at the first element that is no event (malformed JSON
/// included) or is refused, with its index.
fn apply_log(state: &mut BuildState, text: &str) -> Result<usize, LifecycleError> {
    struct LogVisitor<'a> {
        state: &'a mut BuildState,
        applied: usize,
        refused: Option<LifecycleError>,
    }

    impl<'de> serde::de::Visitor<'de> for &mut LogVisitor<'_> {
        type Value = ();

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a JSON array of events")
        }

        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            while let Some(event) = seq.next_element::<BuildEvent>()? {
                if let Err(e) = self.state.apply(&event) {
                    self.refused = Some(e.at_event(self.applied));
                    return Err(serde::de::Error::custom("refused"));
                }
                self.applied += 1;
            }
            Ok(())
        }
    }

    let mut visitor = LogVisitor {
        state,
        applied: 0,
        refused: None,
    };
    let mut de = serde_json::Deserializer::from_str(text);
    let result =
        serde::Deserializer::deserialize_seq(&mut de, &mut visitor).and_then(|()| de.end());
    if let Some(refused) = visitor.refused {
        return Err(refused);
    }
    match result {
        Ok(()) => Ok(visitor.applied),
        Err(e) if text.trim_start().starts_with('[') => {
            Err(LifecycleError::invalid_event(e.to_string()).at_event(visitor.applied))
        }
        Err(e) => Err(LifecycleError::invalid_event(format!(
            "the log is not a JSON array: {e}"
        ))),
    }
}

struct DepMissPlan {
    job: Ix,
    /// Per position in the job's partitions: the merged missing refs (empty = not impacted).
    missing_by_pos: Vec<Vec<String>>,
}

enum Upstream {
    Failed(Ix),
    AllLive,
    Waiting,
}

impl BuildEvent {
    pub(crate) fn deserialize_value(
        value: &serde_json::Value,
    ) -> Result<BuildEvent, LifecycleError> {
        serde::Deserialize::deserialize(value)
            .map_err(|e: serde_json::Error| LifecycleError::invalid_event(e.to_string()))
    }
}

#[cfg(test)]
mod sort_tests {
    use super::{sort_ix, Ix};

    #[test]
    fn sort_ix_is_sort_unstable() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for len in (0..=64).chain([100, 257, 1000]) {
            for range in [3u64, 50, u64::from(u32::MAX)] {
                let v: Vec<Ix> = (0..len)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        (x % range) as Ix
                    })
                    .collect();
                let mut a = v.clone();
                let mut b = v.clone();
                sort_ix(&mut a);
                b.sort_unstable();
                assert_eq!(a, b, "{v:?}");
                let mut desc = b.clone();
                desc.reverse();
                sort_ix(&mut desc);
                assert_eq!(desc, b);
            }
        }
    }
}
