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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
