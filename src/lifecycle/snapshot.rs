//! `snapshot` / `from_snapshot`: the state as plain, JSON-safe data and back.

use std::collections::HashSet;

use super::error::{LifecycleError, OptionText};
use super::event::{check_id, check_ref_list, MAX_SAFE_INTEGER};
use super::state::{BuildState, InstState, Instance, Ix, JobRec, RefEntry, TaintRec, WantRec};
use super::types::{JobRunState, PartitionState, Snapshot, SNAPSHOT_FORMAT, SNAPSHOT_VERSION};

fn bad(message: impl Into<String>) -> LifecycleError {
    LifecycleError::invalid_snapshot(message)
}

fn check_time(what: &str, value: u64) -> Result<(), LifecycleError> {
    if value > MAX_SAFE_INTEGER {
        return Err(bad(format!("{what} {value} is larger than 2^53-1")));
    }
    Ok(())
}

fn ix(len: usize) -> Result<Ix, LifecycleError> {
    Ix::try_from(len)
        .ok()
        .filter(|&i| i < Ix::MAX)
        .ok_or_else(|| bad("too many items"))
}

impl BuildState {
    /// The whole state as plain data (see [`Snapshot`]); serializes to JSON with serde.
    ///
    /// # Examples
    /// ```
    /// use partkit::lifecycle::{BuildEvent, BuildState};
    /// let mut state = BuildState::new();
    /// state.apply(&BuildEvent::from_json(
    ///     r#"{"type":"WantCreate","timestamp":1,"wantId":"w1","partitions":["a"]}"#).unwrap()).unwrap();
    /// let json = serde_json::to_string(&state.snapshot()).unwrap();
    /// let back = BuildState::from_snapshot_json(&json).unwrap();
    /// assert_eq!(back.snapshot(), state.snapshot());
    /// ```
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            format: SNAPSHOT_FORMAT.to_string(),
            version: SNAPSHOT_VERSION,
            wants: (0..self.wants.len() as Ix)
                .map(|w| self.want_view(w))
                .collect(),
            job_runs: (0..self.jobs.len() as Ix)
                .map(|j| self.job_view(j))
                .collect(),
            partitions: (0..self.instances.len() as Ix)
                .map(|i| self.instance_view(i))
                .collect(),
            taints: (0..self.taints.len() as Ix)
                .map(|t| self.taint_view(t))
                .collect(),
        }
    }

    /// The snapshot as a JSON value.
    pub fn snapshot_value(&self) -> serde_json::Value {
        serde_json::to_value(self.snapshot()).unwrap_or(serde_json::Value::Null)
    }

    /// Parses a JSON snapshot and rebuilds the state, like [`BuildState::from_snapshot`].
    ///
    /// # Errors
    /// `INVALID_SNAPSHOT` when the text is not a snapshot or the snapshot is inconsistent.
    pub fn from_snapshot_json(text: &str) -> Result<BuildState, LifecycleError> {
        let snapshot: Snapshot = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
        Self::from_snapshot(&snapshot)
    }

    /// Rebuilds a state from a snapshot, index by index, then checks every invariant
    /// ([`BuildState::check_invariants`]), so a hand-edited or corrupted snapshot is refused
    /// rather than trusted.
    ///
    /// # Errors
    /// `INVALID_SNAPSHOT` naming the first problem found.
    pub fn from_snapshot(s: &Snapshot) -> Result<BuildState, LifecycleError> {
        if s.format != SNAPSHOT_FORMAT {
            return Err(bad(format!(
                "format is '{}', expected '{SNAPSHOT_FORMAT}'",
                s.format
            )));
        }
        if s.version != SNAPSHOT_VERSION {
            return Err(bad(format!(
                "version is {}, expected {SNAPSHOT_VERSION}",
                s.version
            )));
        }
        let mut st = BuildState::new();
        let id =
            |what: &str, v: &str| check_id(what, v).map_err(|_| bad(format!("{what} is empty")));
        let list = |what: &str, v: &[String]| {
            check_ref_list(what, v).map_err(|e| bad(e.to_string().replace("invalid event: ", "")))
        };

        // Taint ids first: instances name them.
        for t in &s.taints {
            id("taintId", &t.taint_id)?;
            list(
                &format!("partitions of taint '{}'", t.taint_id),
                &t.partitions,
            )?;
            check_time("createdAt", t.created_at)?;
            let ti = ix(st.taints.len())?;
            if st
                .taint_ids
                .insert(t.taint_id.as_str().into(), ti)
                .is_some()
            {
                return Err(bad(format!("taint '{}' appears twice", t.taint_id)));
            }
            st.taints.push(TaintRec {
                id: t.taint_id.as_str().into(),
                partitions: t.partitions.iter().map(|p| p.as_str().into()).collect(),
                created_at: t.created_at,
                tainted: Vec::new(),
            });
        }

        // Job runs (their instances are attached once the instances exist).
        for job in &s.job_runs {
            id("jobRunId", &job.job_run_id)?;
            for (what, t) in [
                ("createdAt", Some(job.created_at)),
                ("updatedAt", Some(job.updated_at)),
                ("lastHeartbeatAt", job.last_heartbeat_at),
            ] {
                if let Some(t) = t {
                    check_time(what, t)?;
                }
            }
            if let JobRunState::DepMissed { missing_deps } = &job.state {
                for md in missing_deps {
                    list("impacted", &md.impacted)?;
                    list("missing", &md.missing)?;
                }
            }
            let j = ix(st.jobs.len())?;
            if st
                .job_ids
                .insert(job.job_run_id.as_str().into(), j)
                .is_some()
            {
                return Err(bad(format!("job run '{}' appears twice", job.job_run_id)));
            }
            st.jobs.push(JobRec {
                id: job.job_run_id.as_str().into(),
                label: job.job_label.as_deref().map(Into::into),
                state: job.state.clone(),
                instances: Box::new([]),
                created_at: job.created_at,
                updated_at: job.updated_at,
                last_heartbeat_at: job.last_heartbeat_at,
                derivative_wants: Vec::new(),
            });
        }

        // Partition instances, in creation order: this rebuilds every ref's history.
        for p in &s.partitions {
            id("ref", &p.partition_ref)?;
            check_time("createdAt", p.created_at)?;
            check_time("updatedAt", p.updated_at)?;
            let i = ix(st.instances.len())?;
            if st.instance_ids.insert(p.uuid, i).is_some() {
                return Err(bad(format!("partition {} appears twice", p.uuid)));
            }
            let Some(&job) = st.job_ids.get(p.job_run_id.as_str()) else {
                return Err(bad(format!(
                    "partition {} names unknown job run '{}'",
                    p.uuid, p.job_run_id
                )));
            };
            let r = st.intern_ref_checked(&p.partition_ref)?;
            let previous = st.refs[r as usize].history.last().copied();
            let previous_uuid = previous.map(|x| st.instances[x as usize].uuid);
            if previous_uuid != p.previous_uuid {
                return Err(bad(format!(
                    "partition {} has previousUuid {}, but the instance before it is {}",
                    p.uuid,
                    OptionText(p.previous_uuid),
                    OptionText(previous_uuid)
                )));
            }
            let state = match &p.state {
                PartitionState::Building => InstState::Building,
                PartitionState::UpstreamBuilding { missing_deps } => {
                    list(
                        &format!("missingDeps of partition {}", p.uuid),
                        missing_deps,
                    )?;
                    let mut missing = Vec::with_capacity(missing_deps.len());
                    for m in missing_deps {
                        missing.push(st.intern_ref_checked(m)?);
                    }
                    InstState::UpstreamBuilding {
                        missing: missing.into_boxed_slice(),
                    }
                }
                PartitionState::UpForRetry => InstState::UpForRetry,
                PartitionState::Live => InstState::Live,
                PartitionState::Failed => InstState::Failed,
                PartitionState::UpstreamFailed { failed_upstream } => {
                    id("failedUpstream", failed_upstream)?;
                    InstState::UpstreamFailed {
                        upstream: st.intern_ref_checked(failed_upstream)?,
                    }
                }
                PartitionState::Tainted { taint_id } => {
                    let Some(&t) = st.taint_ids.get(taint_id.as_str()) else {
                        return Err(bad(format!(
                            "partition {} names unknown taint '{taint_id}'",
                            p.uuid
                        )));
                    };
                    InstState::Tainted { taint: t }
                }
            };
            st.refs[r as usize].history.push(i);
            st.instances.push(Instance {
                uuid: p.uuid,
                ref_ix: r,
                job,
                state,
                created_at: p.created_at,
                updated_at: p.updated_at,
                previous,
            });
        }

        // Attach instances to job runs, checking the listed UUIDs and refs.
        for (j, job) in s.job_runs.iter().enumerate() {
            if job.partition_uuids.len() != job.partition_refs.len() {
                return Err(bad(format!(
                    "job run '{}' lists {} uuids but {} refs",
                    job.job_run_id,
                    job.partition_uuids.len(),
                    job.partition_refs.len()
                )));
            }
            let mut instances = Vec::with_capacity(job.partition_uuids.len());
            let mut seen = HashSet::new();
            for (uuid, r) in job.partition_uuids.iter().zip(&job.partition_refs) {
                let Some(&i) = st.instance_ids.get(uuid) else {
                    return Err(bad(format!(
                        "job run '{}' lists unknown partition {uuid}",
                        job.job_run_id
                    )));
                };
                let inst = &st.instances[i as usize];
                if inst.job != j as Ix || st.ref_name(inst.ref_ix) != r || !seen.insert(i) {
                    return Err(bad(format!(
                        "job run '{}' lists partition {uuid} ('{r}') that it did not create",
                        job.job_run_id
                    )));
                }
                instances.push(i);
            }
            st.jobs[j].instances = instances.into_boxed_slice();
        }
        let claimed: usize = st.jobs.iter().map(|j| j.instances.len()).sum();
        if claimed != st.instances.len() {
            return Err(bad("some partitions are not listed by their job run"));
        }

        // Taints list the instances they tainted.
        for (t, taint) in s.taints.iter().enumerate() {
            for uuid in &taint.tainted_uuids {
                let Some(&i) = st.instance_ids.get(uuid) else {
                    return Err(bad(format!(
                        "taint '{}' lists unknown partition {uuid}",
                        taint.taint_id
                    )));
                };
                if st.taints[t].tainted.contains(&i) {
                    return Err(bad(format!(
                        "taint '{}' lists partition {uuid} twice",
                        taint.taint_id
                    )));
                }
                st.taints[t].tainted.push(i);
            }
        }

        // Wants, in creation order: the wants-for-partition index and derivative links.
        for want in &s.wants {
            id("wantId", &want.want_id)?;
            list(
                &format!("partitions of want '{}'", want.want_id),
                &want.partitions,
            )?;
            for (what, t) in [
                ("createdAt", Some(want.created_at)),
                ("updatedAt", Some(want.updated_at)),
                ("dataTimestamp", want.data_timestamp),
                ("ttlSeconds", want.ttl_seconds),
                ("slaSeconds", want.sla_seconds),
            ] {
                if let Some(t) = t {
                    check_time(what, t)?;
                }
            }
            let w = ix(st.wants.len())?;
            if st
                .want_ids
                .insert(want.want_id.as_str().into(), w)
                .is_some()
            {
                return Err(bad(format!("want '{}' appears twice", want.want_id)));
            }
            let source_job = match &want.source_job_run_id {
                None => None,
                Some(id) => match st.job_ids.get(id.as_str()) {
                    Some(&j) => Some(j),
                    None => {
                        return Err(bad(format!(
                            "want '{}' names unknown source job run '{id}'",
                            want.want_id
                        )))
                    }
                },
            };
            let mut refs = Vec::with_capacity(want.partitions.len());
            for p in &want.partitions {
                let r = st.intern_ref_checked(p)?;
                st.refs[r as usize].wants.push(w);
                refs.push(r);
            }
            st.wants.push(WantRec {
                id: want.want_id.as_str().into(),
                refs: refs.into_boxed_slice(),
                state: want.state,
                created_at: want.created_at,
                updated_at: want.updated_at,
                data_timestamp: want.data_timestamp,
                ttl_seconds: want.ttl_seconds,
                sla_seconds: want.sla_seconds,
                comment: want.comment.as_deref().map(Into::into),
                source_job,
            });
            if let Some(j) = source_job {
                st.jobs[j as usize].derivative_wants.push(w);
            }
            st.list_want(w);
        }
        for (j, job) in s.job_runs.iter().enumerate() {
            let derived: Vec<&str> = st.jobs[j]
                .derivative_wants
                .iter()
                .map(|&w| &*st.wants[w as usize].id)
                .collect();
            if derived
                != job
                    .derivative_want_ids
                    .iter()
                    .map(String::as_str)
                    .collect::<Vec<_>>()
            {
                return Err(bad(format!(
                    "derivativeWantIds of job run '{}' do not match the wants naming it as source",
                    job.job_run_id
                )));
            }
        }

        // downstream_waiting, from the UpstreamBuilding instances.
        for i in 0..st.instances.len() {
            if let InstState::UpstreamBuilding { missing } = &st.instances[i].state {
                for &m in missing.clone().iter() {
                    st.refs[m as usize].waiting.insert(i as Ix);
                }
            }
        }

        // Events are applied in timestamp order, so the last one's time is the latest recorded.
        st.last_event_at = st.latest_recorded_time();

        st.check_invariants().map_err(|e| bad(e.to_string()))?;
        Ok(st)
    }

    fn intern_ref_checked(&mut self, name: &str) -> Result<Ix, LifecycleError> {
        if let Some(&r) = self.ref_ids.get(name) {
            return Ok(r);
        }
        if name.is_empty() {
            return Err(bad("a partition ref is empty"));
        }
        let r = ix(self.refs.len())?;
        self.refs.push(RefEntry {
            name: name.into(),
            ..RefEntry::default()
        });
        self.ref_ids.insert(name.into(), r);
        Ok(r)
    }
}
