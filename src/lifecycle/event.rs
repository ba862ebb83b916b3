//! The events of the build-state log.

use serde::{Deserialize, Serialize};

use super::error::LifecycleError;

/// The largest integer a JavaScript number holds exactly (`Number.MAX_SAFE_INTEGER`): every
/// timestamp and duration must be at most this, so snapshots stay JSON- and JS-safe.
pub const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// One event of the log. JSON form: an object tagged by `type`, fields in camelCase,
/// timestamps in integer milliseconds in `0..=2^53-1` (`Number.MAX_SAFE_INTEGER`), strings
/// well-formed Unicode. Unknown fields are refused (`INVALID_EVENT`), so a misspelled optional
/// field cannot be silently dropped. Events are applied in timestamp order: a timestamp earlier
/// than the last applied event's is refused (`TIMESTAMP_NOT_MONOTONIC`); an equal one is fine.
///
/// # Examples
/// ```
/// use partkit::lifecycle::BuildEvent;
/// let e = BuildEvent::from_json(r#"{"type":"WantCancel","timestamp":5,"wantId":"w1"}"#).unwrap();
/// assert_eq!(e.timestamp(), 5);
/// ```
// Deserialize is written out below (`RawEvent`): the derived one for a tagged enum buffers each
// event and has a deserializer per variant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(tag = "type")]
pub enum BuildEvent {
    /// A user or the orchestrator wants partitions to exist.
    WantCreate(WantCreate),
    /// A want is withdrawn.
    WantCancel(WantCancel),
    /// The orchestrator queued a job run building partitions: one fresh instance per ref.
    JobRunBuffer(JobRunBuffer),
    /// A job run is alive (Queued → Running on the first one).
    JobRunHeartbeat(JobRunRef),
    /// A job run built all its partitions.
    JobRunSuccess(JobRunRef),
    /// A job run failed hard: its partitions are Failed.
    JobRunFailure(JobRunFailure),
    /// A job run stopped because upstream partitions were missing.
    JobRunDepMiss(JobRunDepMiss),
    /// A job run was canceled: its partitions are up for retry.
    JobRunCancel(JobRunRef),
    /// Partitions are declared invalid.
    TaintCreate(TaintCreate),
}

/// `{type: 'WantCreate', timestamp, wantId, partitions, dataTimestamp?, ttlSeconds?, slaSeconds?, comment?, sourceJobRunId?}`
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WantCreate {
    /// Event time, integer milliseconds.
    pub timestamp: u64,
    /// Unique id of the want.
    pub want_id: String,
    /// The partition refs wanted (non-empty, no repeats).
    pub partitions: Vec<String>,
    /// The data time the want is about, integer milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub data_timestamp: Option<u64>,
    /// How long after creation the orchestrator keeps trying: the schedulable wants at `now`
    /// leave the want out once `createdAt + ttlSeconds * 1000 <= now`, and only a taint before
    /// that reopens it once it is Successful. Without it the want never expires. Expiry is not a
    /// state (the core never reads a clock: `now` is the caller's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub ttl_seconds: Option<u64>,
    /// Alarm threshold: the wants past their SLA at `now` list the want while it is open at or
    /// past `createdAt + slaSeconds * 1000`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub sla_seconds: Option<u64>,
    /// Free text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub comment: Option<String>,
    /// Set on a *derivative* want: the job run whose dep miss asked for these partitions. The
    /// job run must be DepMissed and every partition of the want must be one of its missing deps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub source_job_run_id: Option<String>,
}

/// `{type: 'WantCancel', timestamp, wantId}`
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WantCancel {
    /// Event time, integer milliseconds.
    pub timestamp: u64,
    /// The want to cancel.
    pub want_id: String,
}

/// `{type: 'JobRunBuffer', timestamp, jobRunId, jobLabel?, buildingPartitions}`
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct JobRunBuffer {
    /// Event time, integer milliseconds.
    pub timestamp: u64,
    /// Unique id of the job run.
    pub job_run_id: String,
    /// The job's label, for display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub job_label: Option<String>,
    /// The refs built (non-empty, no repeats); instance UUIDs derive from `(jobRunId, ref)`.
    pub building_partitions: Vec<String>,
}

/// `{type: 'JobRunHeartbeat' | 'JobRunSuccess' | 'JobRunCancel', timestamp, jobRunId}`
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct JobRunRef {
    /// Event time, integer milliseconds.
    pub timestamp: u64,
    /// The job run.
    pub job_run_id: String,
}

/// `{type: 'JobRunFailure', timestamp, jobRunId, reason?}`
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct JobRunFailure {
    /// Event time, integer milliseconds.
    pub timestamp: u64,
    /// The job run.
    pub job_run_id: String,
    /// Why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub reason: Option<String>,
}

/// `{type: 'JobRunDepMiss', timestamp, jobRunId, missingDeps: [{impacted, missing}]}`
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct JobRunDepMiss {
    /// Event time, integer milliseconds.
    pub timestamp: u64,
    /// The job run.
    pub job_run_id: String,
    /// Which of the job's partitions wait for which upstream refs (non-empty).
    pub missing_deps: Vec<MissingDeps>,
}

/// `{impacted, missing}`: the job's partitions `impacted` need the upstream refs `missing`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MissingDeps {
    /// Refs built by the job run (non-empty, no repeats).
    pub impacted: Vec<String>,
    /// Upstream refs that must be Live first (non-empty, no repeats, none built by the job run).
    pub missing: Vec<String>,
}

/// `{type: 'TaintCreate', timestamp, taintId, partitions}`
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TaintCreate {
    /// Event time, integer milliseconds.
    pub timestamp: u64,
    /// Unique id of the taint.
    pub taint_id: String,
    /// The refs declared invalid (non-empty, no repeats).
    pub partitions: Vec<String>,
}

/// The `type` of an event.
#[derive(Clone, Copy, Deserialize)]
enum EventType {
    WantCreate,
    WantCancel,
    JobRunBuffer,
    JobRunHeartbeat,
    JobRunSuccess,
    JobRunFailure,
    JobRunDepMiss,
    JobRunCancel,
    TaintCreate,
}

/// Every field of every event type, read in one pass straight from the input (no buffering of
/// the object, one deserializer for all types): `Some` when given (`Some(None)` for a null of an
/// optional field). [`RawEvent::into_event`] then takes the fields of its `type` and refuses the
/// others as unknown (null or not), the missing ones as missing, with serde's words.
#[derive(Default)]
struct RawEvent {
    kind: Option<EventType>,
    timestamp: Option<u64>,
    want_id: Option<String>,
    partitions: Option<Vec<String>>,
    data_timestamp: Option<Option<u64>>,
    ttl_seconds: Option<Option<u64>>,
    sla_seconds: Option<Option<u64>>,
    comment: Option<Option<String>>,
    source_job_run_id: Option<Option<String>>,
    job_run_id: Option<String>,
    job_label: Option<Option<String>>,
    building_partitions: Option<Vec<String>>,
    reason: Option<Option<String>>,
    missing_deps: Option<Vec<MissingDeps>>,
    taint_id: Option<String>,
    /// The first key that is no field of any event.
    unknown: Option<String>,
}

/// The keys of [`RawEvent`], in its order.
const RAW_FIELDS: [&str; 15] = [
    "type",
    "timestamp",
    "wantId",
    "partitions",
    "dataTimestamp",
    "ttlSeconds",
    "slaSeconds",
    "comment",
    "sourceJobRunId",
    "jobRunId",
    "jobLabel",
    "buildingPartitions",
    "reason",
    "missingDeps",
    "taintId",
];

/// A key of an event object: the index of a known one in [`RAW_FIELDS`], or an unknown one.
enum Key {
    Known(usize),
    Unknown(String),
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl serde::de::Visitor<'_> for KeyVisitor {
            type Value = Key;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("field identifier")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Key, E> {
                Ok(match RAW_FIELDS.iter().position(|f| *f == v) {
                    Some(i) => Key::Known(i),
                    None => Key::Unknown(v.to_owned()),
                })
            }
        }
        deserializer.deserialize_identifier(KeyVisitor)
    }
}

impl<'de> Deserialize<'de> for RawEvent {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct RawVisitor;
        impl<'de> serde::de::Visitor<'de> for RawVisitor {
            type Value = RawEvent;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an event object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<RawEvent, A::Error> {
                use serde::de::Error;
                fn set<'de, T: Deserialize<'de>, A: serde::de::MapAccess<'de>>(
                    slot: &mut Option<T>,
                    map: &mut A,
                    name: &'static str,
                ) -> Result<(), A::Error> {
                    if slot.is_some() {
                        return Err(A::Error::duplicate_field(name));
                    }
                    *slot = Some(map.next_value()?);
                    Ok(())
                }
                let mut e = RawEvent::default();
                while let Some(key) = map.next_key::<Key>()? {
                    let i = match key {
                        Key::Known(i) => i,
                        Key::Unknown(name) => {
                            map.next_value::<serde::de::IgnoredAny>()?;
                            e.unknown.get_or_insert(name);
                            continue;
                        }
                    };
                    let (m, name) = (&mut map, RAW_FIELDS[i]);
                    match i {
                        0 => set(&mut e.kind, m, name)?,
                        1 => set(&mut e.timestamp, m, name)?,
                        2 => set(&mut e.want_id, m, name)?,
                        3 => set(&mut e.partitions, m, name)?,
                        4 => set(&mut e.data_timestamp, m, name)?,
                        5 => set(&mut e.ttl_seconds, m, name)?,
                        6 => set(&mut e.sla_seconds, m, name)?,
                        7 => set(&mut e.comment, m, name)?,
                        8 => set(&mut e.source_job_run_id, m, name)?,
                        9 => set(&mut e.job_run_id, m, name)?,
                        10 => set(&mut e.job_label, m, name)?,
                        11 => set(&mut e.building_partitions, m, name)?,
                        12 => set(&mut e.reason, m, name)?,
                        13 => set(&mut e.missing_deps, m, name)?,
                        _ => set(&mut e.taint_id, m, name)?,
                    }
                }
                Ok(e)
            }
        }
        deserializer.deserialize_map(RawVisitor)
    }
}

impl RawEvent {
    fn into_event<E: serde::de::Error>(self) -> Result<BuildEvent, E> {
        use serde::de::Error;
        // The fields this event has, in the order of `RawEvent`, and those of each type.
        let given: [(&'static str, bool); 14] = [
            ("timestamp", self.timestamp.is_some()),
            ("wantId", self.want_id.is_some()),
            ("partitions", self.partitions.is_some()),
            ("dataTimestamp", self.data_timestamp.is_some()),
            ("ttlSeconds", self.ttl_seconds.is_some()),
            ("slaSeconds", self.sla_seconds.is_some()),
            ("comment", self.comment.is_some()),
            ("sourceJobRunId", self.source_job_run_id.is_some()),
            ("jobRunId", self.job_run_id.is_some()),
            ("jobLabel", self.job_label.is_some()),
            ("buildingPartitions", self.building_partitions.is_some()),
            ("reason", self.reason.is_some()),
            ("missingDeps", self.missing_deps.is_some()),
            ("taintId", self.taint_id.is_some()),
        ];
        let Some(kind) = self.kind else {
            return Err(E::missing_field("type"));
        };
        let fields: &'static [&'static str] = match kind {
            EventType::WantCreate => &[
                "timestamp",
                "wantId",
                "partitions",
                "dataTimestamp",
                "ttlSeconds",
                "slaSeconds",
                "comment",
                "sourceJobRunId",
            ],
            EventType::WantCancel => &["timestamp", "wantId"],
            EventType::JobRunBuffer => &["timestamp", "jobRunId", "jobLabel", "buildingPartitions"],
            EventType::JobRunHeartbeat | EventType::JobRunSuccess | EventType::JobRunCancel => {
                &["timestamp", "jobRunId"]
            }
            EventType::JobRunFailure => &["timestamp", "jobRunId", "reason"],
            EventType::JobRunDepMiss => &["timestamp", "jobRunId", "missingDeps"],
            EventType::TaintCreate => &["timestamp", "taintId", "partitions"],
        };
        if let Some(name) = &self.unknown {
            return Err(E::unknown_field(name, fields));
        }
        if let Some((name, _)) = given.iter().find(|(n, set)| *set && !fields.contains(n)) {
            return Err(E::unknown_field(name, fields));
        }
        fn need<T, E: Error>(value: Option<T>, name: &'static str) -> Result<T, E> {
            value.ok_or_else(|| E::missing_field(name))
        }
        let timestamp = need(self.timestamp, "timestamp")?;
        let job_run = |job_run_id| -> Result<JobRunRef, E> {
            Ok(JobRunRef {
                timestamp,
                job_run_id: need(job_run_id, "jobRunId")?,
            })
        };
        Ok(match kind {
            EventType::WantCreate => BuildEvent::WantCreate(WantCreate {
                timestamp,
                want_id: need(self.want_id, "wantId")?,
                partitions: need(self.partitions, "partitions")?,
                data_timestamp: self.data_timestamp.flatten(),
                ttl_seconds: self.ttl_seconds.flatten(),
                sla_seconds: self.sla_seconds.flatten(),
                comment: self.comment.flatten(),
                source_job_run_id: self.source_job_run_id.flatten(),
            }),
            EventType::WantCancel => BuildEvent::WantCancel(WantCancel {
                timestamp,
                want_id: need(self.want_id, "wantId")?,
            }),
            EventType::JobRunBuffer => BuildEvent::JobRunBuffer(JobRunBuffer {
                timestamp,
                job_run_id: need(self.job_run_id, "jobRunId")?,
                job_label: self.job_label.flatten(),
                building_partitions: need(self.building_partitions, "buildingPartitions")?,
            }),
            EventType::JobRunHeartbeat => BuildEvent::JobRunHeartbeat(job_run(self.job_run_id)?),
            EventType::JobRunSuccess => BuildEvent::JobRunSuccess(job_run(self.job_run_id)?),
            EventType::JobRunCancel => BuildEvent::JobRunCancel(job_run(self.job_run_id)?),
            EventType::JobRunFailure => BuildEvent::JobRunFailure(JobRunFailure {
                timestamp,
                job_run_id: need(self.job_run_id, "jobRunId")?,
                reason: self.reason.flatten(),
            }),
            EventType::JobRunDepMiss => BuildEvent::JobRunDepMiss(JobRunDepMiss {
                timestamp,
                job_run_id: need(self.job_run_id, "jobRunId")?,
                missing_deps: need(self.missing_deps, "missingDeps")?,
            }),
            EventType::TaintCreate => BuildEvent::TaintCreate(TaintCreate {
                timestamp,
                taint_id: need(self.taint_id, "taintId")?,
                partitions: need(self.partitions, "partitions")?,
            }),
        })
    }
}

impl<'de> Deserialize<'de> for BuildEvent {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        RawEvent::deserialize(deserializer)?.into_event()
    }
}

impl BuildEvent {
    /// The event's `timestamp` (integer milliseconds).
    pub fn timestamp(&self) -> u64 {
        match self {
            BuildEvent::WantCreate(e) => e.timestamp,
            BuildEvent::WantCancel(e) => e.timestamp,
            BuildEvent::JobRunBuffer(e) => e.timestamp,
            BuildEvent::JobRunHeartbeat(e)
            | BuildEvent::JobRunSuccess(e)
            | BuildEvent::JobRunCancel(e) => e.timestamp,
            BuildEvent::JobRunFailure(e) => e.timestamp,
            BuildEvent::JobRunDepMiss(e) => e.timestamp,
            BuildEvent::TaintCreate(e) => e.timestamp,
        }
    }

    /// The event's `type` tag.
    pub fn type_name(&self) -> &'static str {
        match self {
            BuildEvent::WantCreate(_) => "WantCreate",
            BuildEvent::WantCancel(_) => "WantCancel",
            BuildEvent::JobRunBuffer(_) => "JobRunBuffer",
            BuildEvent::JobRunHeartbeat(_) => "JobRunHeartbeat",
            BuildEvent::JobRunSuccess(_) => "JobRunSuccess",
            BuildEvent::JobRunFailure(_) => "JobRunFailure",
            BuildEvent::JobRunDepMiss(_) => "JobRunDepMiss",
            BuildEvent::JobRunCancel(_) => "JobRunCancel",
            BuildEvent::TaintCreate(_) => "TaintCreate",
        }
    }

    /// Parses one event from JSON text.
    ///
    /// # Errors
    /// `INVALID_EVENT` when the text is not an event object of a known `type` with the right fields.
    pub fn from_json(text: &str) -> Result<BuildEvent, LifecycleError> {
        serde_json::from_str(text).map_err(|e| LifecycleError::invalid_event(e.to_string()))
    }

    /// Parses one event from a JSON value.
    ///
    /// # Errors
    /// `INVALID_EVENT` as for [`BuildEvent::from_json`].
    pub fn from_value(value: serde_json::Value) -> Result<BuildEvent, LifecycleError> {
        serde_json::from_value(value).map_err(|e| LifecycleError::invalid_event(e.to_string()))
    }

    /// The event as a JSON value (the same shape it is parsed from).
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    /// Checks what can be checked without the state: non-empty ids and refs, non-empty lists
    /// without repeats, numbers within `0..=2^53-1`.
    pub(crate) fn check_shape(&self) -> Result<(), LifecycleError> {
        check_number("timestamp", self.timestamp())?;
        match self {
            BuildEvent::WantCreate(e) => {
                check_id("wantId", &e.want_id)?;
                check_ref_list("partitions", &e.partitions)?;
                for (name, value) in [
                    ("dataTimestamp", e.data_timestamp),
                    ("ttlSeconds", e.ttl_seconds),
                    ("slaSeconds", e.sla_seconds),
                ] {
                    if let Some(v) = value {
                        check_number(name, v)?;
                    }
                }
                if let Some(id) = &e.source_job_run_id {
                    check_id("sourceJobRunId", id)?;
                }
                Ok(())
            }
            BuildEvent::WantCancel(e) => check_id("wantId", &e.want_id),
            BuildEvent::JobRunBuffer(e) => {
                check_id("jobRunId", &e.job_run_id)?;
                // Repeats are DUPLICATE_REF_IN_JOB, checked with the state.
                if e.building_partitions.is_empty() {
                    return Err(LifecycleError::invalid_event("buildingPartitions is empty"));
                }
                for r in &e.building_partitions {
                    check_id("buildingPartitions item", r)?;
                }
                Ok(())
            }
            BuildEvent::JobRunHeartbeat(e)
            | BuildEvent::JobRunSuccess(e)
            | BuildEvent::JobRunCancel(e) => check_id("jobRunId", &e.job_run_id),
            BuildEvent::JobRunFailure(e) => check_id("jobRunId", &e.job_run_id),
            BuildEvent::JobRunDepMiss(e) => {
                check_id("jobRunId", &e.job_run_id)?;
                if e.missing_deps.is_empty() {
                    return Err(LifecycleError::invalid_event("missingDeps is empty"));
                }
                for (i, md) in e.missing_deps.iter().enumerate() {
                    check_ref_list(&format!("missingDeps[{i}].impacted"), &md.impacted)?;
                    check_ref_list(&format!("missingDeps[{i}].missing"), &md.missing)?;
                }
                Ok(())
            }
            BuildEvent::TaintCreate(e) => {
                check_id("taintId", &e.taint_id)?;
                check_ref_list("partitions", &e.partitions)
            }
        }
    }
}

fn check_number(name: &str, value: u64) -> Result<(), LifecycleError> {
    if value > MAX_SAFE_INTEGER {
        return Err(LifecycleError::invalid_event(format!(
            "{name} {value} is larger than 2^53-1"
        )));
    }
    Ok(())
}

pub(crate) fn check_id(name: &str, value: &str) -> Result<(), LifecycleError> {
    if value.is_empty() {
        return Err(LifecycleError::invalid_event(format!("{name} is empty")));
    }
    Ok(())
}

pub(crate) fn check_ref_list(name: &str, refs: &[String]) -> Result<(), LifecycleError> {
    if refs.is_empty() {
        return Err(LifecycleError::invalid_event(format!("{name} is empty")));
    }
    let mut seen = std::collections::HashSet::with_capacity(refs.len());
    for r in refs {
        check_id(&format!("{name} item"), r)?;
        if !seen.insert(r.as_str()) {
            return Err(LifecycleError::invalid_event(format!(
                "{name} lists '{r}' more than once"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_event_type() {
        let texts = [
            r#"{"type":"WantCreate","timestamp":1,"wantId":"w","partitions":["a"],"dataTimestamp":2,"ttlSeconds":3,"slaSeconds":4,"comment":"c","sourceJobRunId":"j"}"#,
            r#"{"type":"WantCancel","timestamp":1,"wantId":"w"}"#,
            r#"{"type":"JobRunBuffer","timestamp":1,"jobRunId":"j","jobLabel":"l","buildingPartitions":["a"]}"#,
            r#"{"type":"JobRunHeartbeat","timestamp":1,"jobRunId":"j"}"#,
            r#"{"type":"JobRunSuccess","timestamp":1,"jobRunId":"j"}"#,
            r#"{"type":"JobRunFailure","timestamp":1,"jobRunId":"j","reason":"r"}"#,
            r#"{"type":"JobRunDepMiss","timestamp":1,"jobRunId":"j","missingDeps":[{"impacted":["a"],"missing":["b"]}]}"#,
            r#"{"type":"JobRunCancel","timestamp":1,"jobRunId":"j"}"#,
            r#"{"type":"TaintCreate","timestamp":1,"taintId":"t","partitions":["a"]}"#,
        ];
        for t in texts {
            let e = BuildEvent::from_json(t).unwrap();
            e.check_shape().unwrap();
            // Round trip through JSON keeps the event.
            assert_eq!(BuildEvent::from_value(e.to_value()).unwrap(), e);
        }
    }

    #[test]
    fn refuses_malformed_events() {
        let bad = [
            r#"{"type":"Nope","timestamp":1}"#,
            r#"{"timestamp":1,"wantId":"w"}"#,
            r#"{"type":"WantCancel","wantId":"w"}"#,
            r#"{"type":"WantCancel","timestamp":-1,"wantId":"w"}"#,
            r#"{"type":"WantCancel","timestamp":1.5,"wantId":"w"}"#,
            r#"{"type":"WantCancel","timestamp":1,"wantId":7}"#,
            r#"{"type":"WantCancel","timestamp":1,"wantId":"w","extra":true}"#,
            r#"{"type":"WantCreate","timestamp":1,"wantId":"w","partitions":"a"}"#,
            r#"[1,2]"#,
            r#"null"#,
        ];
        for t in bad {
            let err = BuildEvent::from_json(t).unwrap_err();
            assert_eq!(err.code(), "INVALID_EVENT", "{t}");
        }
        // serde's words, with the fields of the event's own type; a field of another type is
        // unknown even when null, and a field given twice is refused
        let message = |t: &str| BuildEvent::from_json(t).unwrap_err().to_string();
        for t in [
            r#"{"type":"WantCancel","timestamp":1,"wantId":"w","reason":null}"#,
            r#"{"wantId":"w","type":"WantCancel","timestamp":1,"reason":"r"}"#,
        ] {
            assert!(
                message(t).contains("unknown field `reason`, expected `timestamp` or `wantId`"),
                "{}",
                message(t)
            );
        }
        assert!(
            message(r#"{"type":"WantCancel","timestamp":1,"wantId":"w","extra":1}"#)
                .contains("unknown field `extra`, expected `timestamp` or `wantId`")
        );
        assert!(
            message(r#"{"type":"WantCancel","timestamp":1,"timestamp":2,"wantId":"w"}"#)
                .contains("duplicate field `timestamp`")
        );
        assert!(
            message(r#"{"type":"WantCancel","timestamp":1}"#).contains("missing field `wantId`")
        );
        assert!(message(r#"{"timestamp":1,"wantId":"w"}"#).contains("missing field `type`"));
        assert!(message(r#"{"type":"Nope","timestamp":1}"#).contains("unknown variant `Nope`"));
        // an optional field given null is absent
        let e = BuildEvent::from_json(
            r#"{"type":"JobRunFailure","timestamp":1,"jobRunId":"j","reason":null}"#,
        );
        assert!(matches!(
            e,
            Ok(BuildEvent::JobRunFailure(JobRunFailure {
                reason: None,
                ..
            }))
        ));
        let shape_bad = [
            r#"{"type":"WantCancel","timestamp":9007199254740992,"wantId":"w"}"#,
            r#"{"type":"WantCancel","timestamp":1,"wantId":""}"#,
            r#"{"type":"WantCreate","timestamp":1,"wantId":"w","partitions":[]}"#,
            r#"{"type":"WantCreate","timestamp":1,"wantId":"w","partitions":["a","a"]}"#,
            r#"{"type":"WantCreate","timestamp":1,"wantId":"w","partitions":[""]}"#,
            r#"{"type":"JobRunBuffer","timestamp":1,"jobRunId":"j","buildingPartitions":[]}"#,
            r#"{"type":"JobRunDepMiss","timestamp":1,"jobRunId":"j","missingDeps":[]}"#,
            r#"{"type":"JobRunDepMiss","timestamp":1,"jobRunId":"j","missingDeps":[{"impacted":[],"missing":["b"]}]}"#,
            r#"{"type":"TaintCreate","timestamp":1,"taintId":"t","partitions":[]}"#,
        ];
        for t in shape_bad {
            let err = BuildEvent::from_json(t).unwrap().check_shape().unwrap_err();
            assert_eq!(err.code(), "INVALID_EVENT", "{t}");
        }
    }
}
