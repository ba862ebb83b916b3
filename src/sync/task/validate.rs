//! Validation of what a task is given: messages read from the sync topic and their states.

use rustc_hash::FxHashSet as HashSet;

use super::limits::{MAX_CHUNKS, MAX_REJECTED, MAX_SAFE_INTEGER};
use super::SyncTask;
use crate::sync::error::{malformed, ErrorKind, SyncError};
use crate::sync::types::{MessageType, SyncMessage, TaskState};

pub(super) fn invalid_partition(why: impl std::fmt::Display) -> SyncError {
    SyncError::new(
        ErrorKind::InvalidPartition,
        format!("invalid partition: {why}"),
    )
}

pub(super) fn safe(n: Option<u64>, what: &str) -> Result<(), SyncError> {
    match n {
        Some(v) if v > MAX_SAFE_INTEGER => Err(malformed(format!("{what} {v} is above 2^53-1"))),
        _ => Ok(()),
    }
}

pub(super) fn validate_state(s: &TaskState) -> Result<(), SyncError> {
    if s.task_id.is_empty() {
        return Err(malformed("a state has an empty taskID"));
    }
    safe(Some(s.state_timestamp), "stateTimestamp")?;
    safe(Some(s.state_version), "stateVersion")?;
    for p in &s.data.partitions {
        safe(p.start_timestamp, "startTimestamp")?;
        safe(p.end_timestamp, "endTimestamp")?;
        safe(p.finished_timestamp, "finishedTimestamp")?;
    }
    for p in &s.share.partitions {
        safe(p.start_timestamp, "startTimestamp")?;
        safe(p.end_timestamp, "endTimestamp")?;
        safe(p.finished_timestamp, "finishedTimestamp")?;
    }
    let mut seen = HashSet::with_capacity_and_hasher(s.data.partitions.len(), Default::default());
    for p in &s.data.partitions {
        if p.token.is_empty() {
            return Err(malformed(format!(
                "state of {} has a partition with an empty token",
                s.task_id
            )));
        }
        if !seen.insert(p.token.as_str()) {
            return Err(malformed(format!(
                "state of {} owns {} twice",
                s.task_id, p.token
            )));
        }
    }
    let mut seen = HashSet::with_capacity_and_hasher(s.share.partitions.len(), Default::default());
    for p in &s.share.partitions {
        if p.token.is_empty() || p.assignee.is_empty() {
            return Err(malformed(format!(
                "state of {} has a share with an empty token or assignee",
                s.task_id
            )));
        }
        if !seen.insert(p.token.as_str()) {
            return Err(malformed(format!(
                "state of {} shares {} twice",
                s.task_id, p.token
            )));
        }
    }
    Ok(())
}

impl SyncTask {
    /// The fields every record must have right, chunk or whole message.
    fn validate_header(msg: &SyncMessage) -> Result<(), SyncError> {
        if msg.task_id.is_empty() {
            return Err(malformed("empty taskID"));
        }
        safe(Some(msg.message_timestamp), "messageTimestamp")?;
        safe(Some(msg.epoch_generation), "epochGeneration")?;
        safe(msg.rebalance_generation, "rebalanceGeneration")?;
        safe(msg.message_seq, "messageSeq")?;
        safe(
            msg.checkpoint.as_ref().map(|c| c.after_seq),
            "checkpoint.afterSeq",
        )?;
        safe(
            msg.checkpoint.as_ref().and_then(|c| c.after_timestamp),
            "checkpoint.afterTimestamp",
        )?;
        if msg.kind == MessageType::NewEpoch
            && (msg.sync_epoch.is_empty() || msg.epoch_generation == 0)
        {
            return Err(malformed(
                "a NewEpoch needs a syncEpoch and a positive epochGeneration",
            ));
        }
        if msg.kind == MessageType::RebalanceAnswer && msg.rebalance_generation.is_none() {
            return Err(malformed("a RebalanceAnswer needs rebalanceGeneration"));
        }
        Ok(())
    }

    /// A chunk of a message (the whole message is checked when its last chunk is read): a
    /// sound header, `index < count <= MAX_CHUNKS`, at least one state, each state sound.
    pub(super) fn validate_chunk(&self, msg: &SyncMessage) -> Result<(), SyncError> {
        Self::validate_header(msg)?;
        let c = msg.chunk.as_ref().expect("a chunk");
        if c.count == 0 || c.count > MAX_CHUNKS || c.index >= c.count {
            return Err(malformed(format!(
                "chunk {} of {} (at most {MAX_CHUNKS} chunks)",
                c.index, c.count
            )));
        }
        if msg.connector_state.is_empty() {
            return Err(malformed("a chunk carries at least one state"));
        }
        msg.connector_state.iter().try_for_each(validate_state)
    }

    pub(super) fn validate_message(&self, msg: &SyncMessage) -> Result<(), SyncError> {
        Self::validate_header(msg)?;
        if msg.chunk.is_some() {
            return Err(malformed("a whole message has no chunk"));
        }
        if let Some(d) = &msg.delta {
            if msg.kind != MessageType::Regular {
                return Err(malformed(format!(
                    "a {:?} message carries no delta",
                    msg.kind
                )));
            }
            if d.removed.iter().chain(&d.unshared).any(|t| t.is_empty()) {
                return Err(malformed("a delta drops an empty token"));
            }
        }
        if !msg.rejected.is_empty() {
            if msg.kind != MessageType::NewEpoch || msg.checkpoint.is_none() {
                return Err(malformed("only a checkpoint names rejected epochs"));
            }
            if msg.rejected.len() > MAX_REJECTED || msg.rejected.iter().any(|e| e.is_empty()) {
                return Err(malformed(format!(
                    "a checkpoint names at most {MAX_REJECTED} rejected epochs, none empty"
                )));
            }
        }
        match msg.kind {
            MessageType::Regular | MessageType::RebalanceAnswer => {
                let own: Vec<&TaskState> = msg
                    .connector_state
                    .iter()
                    .filter(|s| s.task_id == msg.task_id)
                    .collect();
                if own.len() != 1 {
                    return Err(malformed(format!(
                        "a {:?} message must carry exactly one state of its sender {}",
                        msg.kind, msg.task_id
                    )));
                }
                validate_state(own[0])?;
            }
            MessageType::NewEpoch => {
                if !msg.resend && !msg.connector_state.iter().any(|s| s.task_id == msg.task_id) {
                    return Err(malformed("a NewEpoch must carry the state of its leader"));
                }
                let mut ids = HashSet::default();
                for s in &msg.connector_state {
                    validate_state(s)?;
                    if !ids.insert(s.task_id.as_str()) {
                        return Err(malformed(format!("NewEpoch lists {} twice", s.task_id)));
                    }
                }
            }
        }
        Ok(())
    }
}
