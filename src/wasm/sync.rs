//! Sync bindings: the core `SyncTask` as a JS class. Argument types are checked by
//! `js/sync.mjs`; every rule lives in `crate::sync`.
//!
//! Inputs (rebalance events, messages, partition specs, options) come in as the UTF-8 bytes of
//! JSON text made by `JSON.stringify` in JS before wasm is entered, as in the lifecycle binding
//! (reading a JS object from inside wasm runs user code, getters and proxies, while the task is
//! borrowed), or, for a message, as the bytes of a record's value as the caller read it, copied
//! by JS. Outputs and views go out as JSON text that `js/sync.mjs` parses (the core keeps every
//! number within 2^53-1); with `as_records` (`publishAs: 'records'`) an output's messages stay out of it, each
//! written once as the JSON text of a record to publish (`takeRecords`). Bytes (encoded by `TextEncoder`, copied in one go) and text (decoded
//! and parsed natively) cross the boundary faster than strings copied character by character and
//! objects built one property at a time, which is what a new epoch of thousands of partitions
//! costs (docs/benchmarks.md, "Task coordination").

use serde::de::DeserializeOwned;
use serde::Serialize;
use wasm_bindgen::prelude::*;

use super::error::{error_value, headroom, out_of_memory, BoundaryError};
use crate::sync::{
    self, PartitionSpec, RebalanceEvent, SyncError, SyncMessage, SyncOptions, SyncOutput,
    MAX_SAFE_INTEGER,
};

type Result<T> = std::result::Result<T, BoundaryError>;

impl From<SyncError> for BoundaryError {
    fn from(e: SyncError) -> Self {
        BoundaryError(error_value("sync", e.code(), &e.to_string()))
    }
}

/// A byte buffer that grows fallibly: a write it has no memory for fails instead of trapping.
struct TryVec(Vec<u8>);

impl std::io::Write for TryVec {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .try_reserve(buf.len())
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::OutOfMemory))?;
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// `value` as JSON text, written in one pass into a buffer that grows fallibly (an allocation
/// failure is an `OUT_OF_MEMORY` error, not a trap).
fn to_json<T: Serialize + ?Sized>(value: &T) -> Result<String> {
    let internal =
        |e: &dyn std::fmt::Display| BoundaryError(error_value("sync", "INTERNAL", &e.to_string()));
    let mut buf = TryVec(Vec::new());
    serde_json::to_writer(&mut buf, value).map_err(|e| {
        if e.is_io() {
            out_of_memory("sync")
        } else {
            internal(&e)
        }
    })?;
    String::from_utf8(buf.0).map_err(|e| internal(&e))
}

/// Parses JSON bytes made in JS, after reserving memory for the call up front (an allocation
/// failure is then an `OUT_OF_MEMORY` error, not a trap with the task borrowed).
fn parse<T: DeserializeOwned>(bytes: &[u8], code: &str, what: &str) -> Result<T> {
    headroom(
        "sync",
        bytes.len().saturating_mul(16).saturating_add(1 << 20),
    )?;
    serde_json::from_slice(bytes)
        .map_err(|e| BoundaryError(error_value("sync", code, &format!("{what}: {e}"))))
}

/// `SyncOptions` from the JSON bytes made in JS (the defaults when there are none).
fn read_options(options: Option<Vec<u8>>) -> Result<SyncOptions> {
    match options {
        Some(bytes) => parse(&bytes, "SYNC_INVALID_OPTIONS", "invalid options"),
        None => Ok(SyncOptions::default()),
    }
}

/// The options a `SyncTask` would run with, checked by the core as a task's are, and the least
/// retention of the sync topic for them: `{"options": SyncOptions, "minRetention": n}`.
#[wasm_bindgen(js_name = syncOptionsJson)]
pub fn sync_options_json(options: Option<Vec<u8>>) -> Result<String> {
    // (the rules of a task's options are SyncTask::with_options')
    let task = sync::SyncTask::with_options("options", read_options(options)?)?;
    let opts = task.options();
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Resolved<'a> {
        options: &'a SyncOptions,
        min_retention: u64,
    }
    to_json(&Resolved {
        options: opts,
        min_retention: opts.min_retention(),
    })
}

fn now(value: f64) -> Result<u64> {
    if value.is_finite() && value >= 0.0 && value.fract() == 0.0 && value <= MAX_SAFE_INTEGER as f64
    {
        Ok(value as u64)
    } else {
        Err(BoundaryError(error_value(
            "sync",
            "INVALID_ARGUMENT",
            "now must be an integer in 0..=Number.MAX_SAFE_INTEGER",
        )))
    }
}

/// One connector task's side of the sync protocol (see `crate::sync::SyncTask`).
#[wasm_bindgen(js_name = SyncTask)]
pub struct WasmSyncTask {
    inner: sync::SyncTask,
    /// Whether outputs give their messages as records (`as_records` of the constructor).
    as_records: bool,
    /// The records of the last output, `key, type, value` for each, until `takeRecords`.
    records: Vec<String>,
}

impl WasmSyncTask {
    /// An output as JSON text. With `as_records`, its messages are not in the text (`publish` is
    /// empty) but kept as records for `takeRecords`: each message's JSON text is written once, as
    /// the value to publish, and JS neither parses nor stringifies it again.
    fn output(&mut self, mut out: SyncOutput) -> Result<String> {
        self.records.clear();
        if self.as_records {
            let mut records = Vec::new();
            records
                .try_reserve(out.publish.len().saturating_mul(3))
                .map_err(|_| out_of_memory("sync"))?;
            for m in std::mem::take(&mut out.publish) {
                records.push(m.task_id.clone());
                records.push(m.kind.as_str().to_string());
                records.push(to_json(&m)?);
            }
            self.records = records;
        }
        to_json(&out)
    }
}

#[wasm_bindgen(js_class = SyncTask)]
impl WasmSyncTask {
    /// A task; `options` is the JSON of `SyncOptions` (unknown fields refused); with
    /// `as_records` (JS's `publishAs: 'records'`), outputs give their messages as records
    /// (`takeRecords`) instead of in `publish`.
    #[wasm_bindgen(constructor)]
    pub fn new(task_id: &str, options: Option<Vec<u8>>, as_records: bool) -> Result<WasmSyncTask> {
        Ok(WasmSyncTask {
            inner: sync::SyncTask::with_options(task_id, read_options(options)?)?,
            as_records,
            records: Vec::new(),
        })
    }

    /// The options this task runs with (defaults filled in), as JSON text.
    #[wasm_bindgen(js_name = optionsJson)]
    pub fn options_json(&self) -> Result<String> {
        to_json(self.inner.options())
    }

    /// The records of the last output: `key, type, value` for each message, in order (empty
    /// unless the task was made with `as_records`); taking them leaves none.
    #[wasm_bindgen(js_name = takeRecords)]
    pub fn take_records(&mut self) -> Vec<String> {
        std::mem::take(&mut self.records)
    }

    #[wasm_bindgen(js_name = onRebalanceJson)]
    pub fn on_rebalance_json(&mut self, json: &[u8], at: f64) -> Result<String> {
        let at = now(at)?;
        let event: RebalanceEvent = parse(json, "SYNC_INVALID_REBALANCE", "invalid rebalance")?;
        let out = self.inner.on_rebalance(&event, at)?;
        self.output(out)
    }

    #[wasm_bindgen(js_name = onMessageJson)]
    pub fn on_message_json(&mut self, json: &[u8], at: f64) -> Result<String> {
        let at = now(at)?;
        let msg: SyncMessage = parse(json, "SYNC_MALFORMED_MESSAGE", "malformed sync message")?;
        let out = self.inner.on_message_owned(msg, at)?;
        self.output(out)
    }

    #[wasm_bindgen(js_name = addPartitionsJson)]
    pub fn add_partitions_json(&mut self, json: &[u8], at: f64) -> Result<String> {
        let at = now(at)?;
        let specs: Vec<PartitionSpec> = parse(json, "SYNC_INVALID_PARTITION", "invalid partition")?;
        let out = self.inner.add_partitions(&specs, at)?;
        self.output(out)
    }

    #[wasm_bindgen(js_name = partitionStarted)]
    pub fn partition_started(&mut self, token: &str, at: f64) -> Result<String> {
        let at = now(at)?;
        let out = self.inner.partition_started(token, at)?;
        self.output(out)
    }

    #[wasm_bindgen(js_name = partitionFinished)]
    pub fn partition_finished(&mut self, token: &str, at: f64) -> Result<String> {
        let at = now(at)?;
        let out = self.inner.partition_finished(token, at)?;
        self.output(out)
    }

    pub fn tick(&mut self, at: f64) -> Result<String> {
        let at = now(at)?;
        let out = self.inner.tick(at);
        self.output(out)
    }

    /// The task stops cleanly (see `crate::sync::SyncTask::close`).
    pub fn close(&mut self, at: f64) -> Result<String> {
        let at = now(at)?;
        let out = self.inner.close(at);
        self.output(out)
    }

    pub fn closed(&self) -> bool {
        self.inner.closed()
    }

    #[wasm_bindgen(js_name = taskId)]
    pub fn task_id(&self) -> String {
        self.inner.task_id().to_string()
    }

    #[wasm_bindgen(js_name = ownedPartitions)]
    pub fn owned_partitions(&self) -> Result<String> {
        to_json(self.inner.owned_partitions())
    }

    #[wasm_bindgen(js_name = sharedPartitions)]
    pub fn shared_partitions(&self) -> Result<String> {
        to_json(self.inner.shared_partitions())
    }

    #[wasm_bindgen(js_name = knownTasks)]
    pub fn known_tasks(&self) -> Result<String> {
        to_json(&self.inner.known_tasks())
    }

    pub fn epoch(&self) -> Option<String> {
        self.inner.epoch().map(str::to_string)
    }

    #[wasm_bindgen(js_name = epochMembers)]
    pub fn epoch_members(&self) -> Vec<String> {
        self.inner.epoch_members()
    }

    #[wasm_bindgen(js_name = isLeader)]
    pub fn is_leader(&self) -> bool {
        self.inner.is_leader()
    }

    #[wasm_bindgen(js_name = sharingEnabled)]
    pub fn sharing_enabled(&self) -> bool {
        self.inner.sharing_enabled()
    }

    #[wasm_bindgen(js_name = isBehind)]
    pub fn is_behind(&self) -> bool {
        self.inner.is_behind()
    }

    /// The caller found a hole in the sync log (see `crate::sync::SyncTask::fence`).
    #[wasm_bindgen(js_name = fence)]
    pub fn fence_input(&mut self, reason: &str, at: f64) -> Result<String> {
        let at = now(at)?;
        let out = self.inner.fence(reason, at);
        self.output(out)
    }

    pub fn fenced(&self) -> Option<String> {
        self.inner.fenced().map(str::to_string)
    }

    #[wasm_bindgen(js_name = waitingFor)]
    pub fn waiting_for(&self) -> Vec<String> {
        self.inner.waiting_for()
    }

    #[wasm_bindgen(js_name = loadOf)]
    pub fn load_of(&self, task_id: &str) -> u32 {
        u32::try_from(self.inner.load_of(task_id)).unwrap_or(u32::MAX)
    }

    #[wasm_bindgen(js_name = pollTimeout)]
    pub fn poll_timeout(&self) -> Option<f64> {
        self.inner.poll_timeout().map(|t| t as f64)
    }
}

/// A record's header as `js/sync.mjs` copies it for the start rule: every field checked and of
/// the right type (a wrong-typed one is left out there), offsets as decimal strings.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct HeaderArg {
    #[serde(rename = "type")]
    kind: Option<String>,
    sync_epoch: Option<String>,
    base_epoch: Option<String>,
    #[serde(default)]
    resend: bool,
    #[serde(rename = "taskID")]
    task_id: Option<String>,
    message_seq: Option<u64>,
    #[serde(default)]
    epoch_generation: u64,
    checkpoint: Option<sync::CheckpointRef>,
    chunk: Option<sync::ChunkRef>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RecordArg {
    offset: String,
    message: Option<HeaderArg>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct StartArgs {
    records: Vec<RecordArg>,
    #[serde(rename = "atLow")]
    at_low: bool,
    low: String,
}

fn invalid_argument(message: &str) -> BoundaryError {
    BoundaryError(error_value("sync", "INVALID_ARGUMENT", message))
}

fn offset_of(text: &str, what: &str) -> Result<u64> {
    text.parse().map_err(|_| {
        invalid_argument(&format!(
            "findEpochStart: {what} must be an offset below 2^64, got {text:.40}"
        ))
    })
}

#[derive(Serialize)]
struct StartOut {
    #[serde(skip_serializing_if = "Option::is_none")]
    offset: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    checkpoint: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    chunks: Option<Vec<String>>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    extend: bool,
}

/// The start rule (`crate::sync::find_epoch_start`) over the JSON of `{records: [{offset,
/// message}], atLow, low}` made by `findEpochStart` in `js/sync.mjs`; returns the JSON of
/// `{offset}`, `{offset, checkpoint[, chunks]}` (offsets as strings; `chunks` only for a
/// checkpoint in more than one record) or `{extend: true}`.
#[wasm_bindgen(js_name = findEpochStartJson)]
pub fn find_epoch_start_json(json: &[u8]) -> Result<String> {
    headroom("sync", json.len().saturating_mul(4).saturating_add(1 << 20))?;
    let args: StartArgs = serde_json::from_slice(json)
        .map_err(|e| invalid_argument(&format!("findEpochStart: {e}")))?;
    let mut records = Vec::new();
    records
        .try_reserve_exact(args.records.len())
        .map_err(|_| out_of_memory("sync"))?;
    for (i, r) in args.records.iter().enumerate() {
        let header = r.message.as_ref().map(|m| sync::RecordHeader {
            kind: match m.kind.as_deref() {
                Some("Regular") => Some(sync::MessageType::Regular),
                Some("RebalanceAnswer") => Some(sync::MessageType::RebalanceAnswer),
                Some("NewEpoch") => Some(sync::MessageType::NewEpoch),
                _ => None,
            },
            sync_epoch: m.sync_epoch.as_deref(),
            base_epoch: m.base_epoch.as_deref(),
            resend: m.resend,
            task_id: m.task_id.as_deref(),
            message_seq: m.message_seq,
            epoch_generation: m.epoch_generation,
            checkpoint: m
                .checkpoint
                .as_ref()
                .map(|c| (c.after_task_id.as_str(), c.after_seq)),
            chunk: m.chunk.clone(),
        });
        let offset = offset_of(&r.offset, &format!("records[{i}].offset"))?;
        records.push(sync::LogRecord { offset, header });
    }
    let low = offset_of(&args.low, "where.low")?;
    let out = match sync::find_epoch_start(&records, args.at_low, low)? {
        sync::EpochStart::At(offset) => StartOut {
            offset: Some(offset.to_string()),
            checkpoint: None,
            chunks: None,
            extend: false,
        },
        sync::EpochStart::AfterCheckpoint { offset, checkpoint } => StartOut {
            offset: Some(offset.to_string()),
            checkpoint: checkpoint.first().map(u64::to_string),
            chunks: (checkpoint.len() > 1).then(|| checkpoint.iter().map(u64::to_string).collect()),
            extend: false,
        },
        sync::EpochStart::Extend => StartOut {
            offset: None,
            checkpoint: None,
            chunks: None,
            extend: true,
        },
    };
    to_json(&out)
}

/// What a task starting after a checkpoint applies first (`crate::sync::checkpoint_message_value`):
/// from the JSON of the checkpoint's records' parsed values in order, the JSON of the message
/// joined from them, without `chunk` and `messageSeq`.
#[wasm_bindgen(js_name = checkpointMessageJson)]
pub fn checkpoint_message_json(json: &[u8]) -> Result<String> {
    let parts: Vec<sync::MessageValue> = parse(json, "INVALID_ARGUMENT", "checkpointMessage")?;
    to_json(&sync::checkpoint_message_value(parts)?)
}
