//! Lifecycle bindings: the core `BuildState` as a JS class. Argument types (strings, arrays,
//! objects) are checked by `js/lifecycle.mjs`; every rule lives in `crate::lifecycle`.
//!
//! Events and snapshots come in as JSON text, made by `JSON.stringify` in JS before wasm is
//! entered: reading a JS object from inside wasm (serde-wasm-bindgen's deserializer) runs user
//! code (getters, proxies) and recurses on nesting, and a JS exception or stack overflow in the
//! middle of a `&mut self` call leaves the object borrowed forever. The transitions of `apply`,
//! wants and taints go out as plain JS objects through serde-wasm-bindgen's JSON-compatible
//! serializer (objects, not `Map`s; numbers, not `BigInt`s — the core keeps every number within
//! 2^53-1), which runs no user code. Job runs and partition instances, the larger views, go out
//! as JSON text that `js/lifecycle.mjs` parses: the snapshot's JSON writer already writes them,
//! and that is faster for them than building the object from wasm (`jobRun` 19%,
//! `partitionHistory` 15%) and drops serde-wasm-bindgen's writer of both types (2 KB gzipped).
//! A bulk replay is one JSON text for the whole log.

use serde::Serialize;
use wasm_bindgen::prelude::*;

use super::error::{error_value, headroom, out_of_memory, BoundaryError};
use crate::lifecycle::{self as lc, BuildEvent, LifecycleError};

type Result<T> = std::result::Result<T, BoundaryError>;

impl From<LifecycleError> for BoundaryError {
    fn from(e: LifecycleError) -> Self {
        let error = error_value("lifecycle", e.code(), &e.to_string());
        if let Some(index) = e.event_index() {
            // Setting a property on a fresh Error object cannot fail.
            let _ = js_sys::Reflect::set(
                &error,
                &JsValue::from_str("eventIndex"),
                &JsValue::from_f64(index as f64),
            );
        }
        BoundaryError(error)
    }
}

/// `value` as JSON text, which `js/lifecycle.mjs` parses.
fn to_json<T: Serialize + ?Sized>(value: &T) -> Result<String> {
    serde_json::to_string(value)
        .map_err(|e| BoundaryError(error_value("lifecycle", "INTERNAL", &e.to_string())))
}

/// `value` as JS objects. For small values (one event's transitions, a want) this is faster
/// than JSON text and `JSON.parse`: `apply` one event at a time was 6% slower through JSON.
fn to_js<T: Serialize + ?Sized>(value: &T) -> Result<JsValue> {
    value
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| BoundaryError(error_value("lifecycle", "INTERNAL", &e.to_string())))
}

/// `undefined` for `None` (the JSON-compatible serializer would give `null`).
fn opt_to_js<T: Serialize>(value: &Option<T>) -> Result<JsValue> {
    match value {
        Some(v) => to_js(v),
        None => Ok(JsValue::UNDEFINED),
    }
}

/// `undefined` for `None` (JSON would say `null`).
fn opt_to_json<T: Serialize>(value: &Option<T>) -> Result<Option<String>> {
    match value {
        Some(v) => to_json(v).map(Some),
        None => Ok(None),
    }
}

/// A time argument in integer milliseconds (`now`), checked here as well as in JS: a finite
/// integer in `0..=2^53-1`, else `INVALID_ARGUMENT`.
fn millis(name: &str, value: f64) -> Result<u64> {
    let max = lc::MAX_SAFE_INTEGER as f64;
    if value.is_finite() && value.fract() == 0.0 && (0.0..=max).contains(&value) {
        Ok(value as u64)
    } else {
        Err(BoundaryError(error_value(
            "lifecycle",
            "INVALID_ARGUMENT",
            &format!("{name} must be an integer number of milliseconds in 0..=2^53-1, got {value}"),
        )))
    }
}

/// Memory a call taking `text` reserves before it starts: parsing it, its strings copied into
/// the state, and the transitions it returns stay well within this.
fn text_headroom(text: &str, factor: usize) -> Result<()> {
    headroom(
        "lifecycle",
        text.len().saturating_mul(factor).saturating_add(1 << 20),
    )
}

/// Table room for what `text` may add: every ref, id or event takes more than 8 bytes of JSON.
fn reserve_for(state: &mut lc::BuildState, text: &str) -> Result<()> {
    state
        .try_reserve(text.len() / 8 + 1)
        .map_err(|_| out_of_memory("lifecycle"))
}

/// The build state (see `crate::lifecycle::BuildState`).
#[wasm_bindgen(js_name = BuildState)]
pub struct WasmBuildState {
    inner: lc::BuildState,
}

#[wasm_bindgen(js_class = BuildState)]
impl WasmBuildState {
    /// An empty state.
    #[wasm_bindgen(constructor)]
    pub fn new() -> WasmBuildState {
        WasmBuildState {
            inner: lc::BuildState::new(),
        }
    }

    /// Applies one event given as JSON text; returns the transitions it caused (objects).
    /// Refused: throws, state unchanged.
    #[wasm_bindgen(js_name = applyJson)]
    pub fn apply_json(&mut self, text: &str) -> Result<JsValue> {
        text_headroom(text, 16)?;
        let e = BuildEvent::from_json(text)?;
        reserve_for(&mut self.inner, text)?;
        to_js(&self.inner.apply(&e)?)
    }

    /// Applies the events of a JSON array text (one chunk of a log whose first event has
    /// index `offset`); stops at the first refused one, whose `eventIndex` counts from the
    /// start of the log. Used by `BuildState.replay`, which frees the state on error.
    #[wasm_bindgen(js_name = applyLogJson)]
    pub fn apply_log_json(&mut self, text: &str, offset: u32) -> Result<u32> {
        text_headroom(text, 8)?;
        reserve_for(&mut self.inner, text)?;
        let applied = self
            .inner
            .apply_json_log(text)
            .map_err(|e| e.offset_event(offset as usize))?;
        Ok(u32::try_from(applied).unwrap_or(u32::MAX))
    }

    #[wasm_bindgen(js_name = canonicalPartition)]
    pub fn canonical_partition(&self, partition_ref: &str) -> Result<Option<String>> {
        opt_to_json(&self.inner.canonical_partition(partition_ref))
    }

    pub fn partition(&self, uuid: &str) -> Result<Option<String>> {
        opt_to_json(&self.inner.partition_by_str(uuid))
    }

    #[wasm_bindgen(js_name = partitionHistory)]
    pub fn partition_history(&self, partition_ref: &str) -> Result<String> {
        to_json(&self.inner.partition_history(partition_ref))
    }

    pub fn want(&self, want_id: &str) -> Result<JsValue> {
        opt_to_js(&self.inner.want(want_id))
    }

    #[wasm_bindgen(js_name = wantsForPartition)]
    pub fn wants_for_partition(&self, partition_ref: &str) -> Vec<String> {
        self.inner.wants_for_partition(partition_ref)
    }

    #[wasm_bindgen(js_name = jobRun)]
    pub fn job_run(&self, job_run_id: &str) -> Result<Option<String>> {
        opt_to_json(&self.inner.job_run(job_run_id))
    }

    pub fn taint(&self, taint_id: &str) -> Result<JsValue> {
        opt_to_js(&self.inner.taint(taint_id))
    }

    /// Without `now`: every schedulable want; with `now`: only those within their TTL.
    #[wasm_bindgen(js_name = schedulableWants)]
    pub fn schedulable_wants(&self, now: Option<f64>) -> Result<JsValue> {
        match now {
            None => to_js(&self.inner.schedulable_wants()),
            Some(now) => to_js(&self.inner.schedulable_wants_at(millis("now", now)?)),
        }
    }

    #[wasm_bindgen(js_name = wantsPastSla)]
    pub fn wants_past_sla(&self, now: f64) -> Result<JsValue> {
        to_js(&self.inner.wants_past_sla(millis("now", now)?))
    }

    /// The snapshot as JSON text (the packed form of `snapshot`).
    #[wasm_bindgen(js_name = snapshotJson)]
    pub fn snapshot_json(&self) -> String {
        serde_json::to_string(&self.inner.snapshot()).unwrap_or_default()
    }

    #[wasm_bindgen(js_name = fromSnapshotJson)]
    pub fn from_snapshot_json(text: &str) -> Result<WasmBuildState> {
        text_headroom(text, 4)?;
        Ok(WasmBuildState {
            inner: lc::BuildState::from_snapshot_json(text)?,
        })
    }

    #[wasm_bindgen(js_name = checkInvariants)]
    pub fn check_invariants(&self) -> Result<()> {
        Ok(self.inner.check_invariants()?)
    }

    /// `[partitions, wants, jobRuns, refs]`.
    pub fn counts(&self) -> Vec<u32> {
        [
            self.inner.partition_count(),
            self.inner.want_count(),
            self.inner.job_run_count(),
            self.inner.ref_count(),
        ]
        .iter()
        .map(|&n| u32::try_from(n).unwrap_or(u32::MAX))
        .collect()
    }
}

impl Default for WasmBuildState {
    fn default() -> Self {
        Self::new()
    }
}

/// `derive_partition_uuid(jobRunId, partitionRef)` as text.
#[wasm_bindgen(js_name = derivePartitionUuid)]
pub fn derive_partition_uuid(job_run_id: &str, partition_ref: &str) -> String {
    lc::derive_partition_uuid(job_run_id, partition_ref).to_string()
}

/// Bytes of wasm linear memory (it only grows). For `bench/lifecycle.mjs`, which measures the
/// memory a state takes in a fresh process; not re-exported by the package.
#[wasm_bindgen(js_name = lifecycleMemoryBytes)]
pub fn lifecycle_memory_bytes() -> f64 {
    (core::arch::wasm32::memory_size(0) * 65536) as f64
}
