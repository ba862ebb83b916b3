//! Bucketing bindings. Argument types (string, number, array) are checked by `js/bucketing.mjs`;
//! values are checked here by the core.

use std::cell::RefCell;

use js_sys::Array;
use wasm_bindgen::prelude::*;

use super::error::JsError;
use crate::bucketing::{self as core, BucketSet, Bucketer, RawConfig, Selector, Value};

type Result<T> = std::result::Result<T, JsError>;

thread_local! {
    /// The last key's HMAC state: connectors call `bucket()` with one key over and over.
    static LAST: RefCell<Option<(String, Bucketer)>> = const { RefCell::new(None) };
}

/// Runs `f` with a bucketer for `key`/`total`, reusing the cached key schedule.
fn with_bucketer<T>(key: &str, total: f64, f: impl FnOnce(&Bucketer) -> T) -> Result<T> {
    let total = core::parse_total(&Value::Number(total))?;
    LAST.with(|cell| {
        let mut slot = cell.borrow_mut();
        match slot.as_mut() {
            Some((k, b)) if k == key => {
                if b.total() != total {
                    *b = Bucketer::new(key, total)?;
                }
            }
            _ => *slot = Some((key.to_owned(), Bucketer::new(key, total)?)),
        }
        match slot.as_ref() {
            Some((_, b)) => Ok(f(b)),
            None => Err(core::BucketingError::TotalInvalid.into()),
        }
    })
}

#[wasm_bindgen]
pub fn bucket(key: &str, data: &str, total: f64) -> Result<u32> {
    with_bucketer(key, total, |b| b.bucket(data))
}

#[wasm_bindgen(js_name = bucketPacked)]
pub fn bucket_packed(key: &str, total: f64, joined: &str, lens: &[u32]) -> Result<Vec<u32>> {
    let mut out = Vec::new();
    with_bucketer(key, total, |b| b.bucket_packed(joined, lens, &mut out))??;
    Ok(out)
}

/// `[min, max, mean, spread, count_1, …, count_total]` of 1-based `buckets`.
#[wasm_bindgen(js_name = distributionOf)]
pub fn distribution_of(total: f64, buckets: &[u32]) -> Result<Vec<f64>> {
    let total = core::parse_total(&Value::Number(total))?;
    let d = core::Distribution::from_buckets(total, buckets.iter().copied())?;
    let mut out = Vec::with_capacity(d.counts.len() + 4);
    out.extend([d.min as f64, d.max as f64, d.mean, d.spread]);
    out.extend(d.counts.iter().map(|&c| c as f64));
    Ok(out)
}

/// A bucketer bound to one key and total.
#[wasm_bindgen(js_name = Bucketer)]
pub struct WasmBucketer(Bucketer);

#[wasm_bindgen(js_class = Bucketer)]
impl WasmBucketer {
    #[wasm_bindgen(constructor)]
    pub fn new(key: &str, total: f64) -> Result<WasmBucketer> {
        let total = core::parse_total(&Value::Number(total))?;
        Ok(Self(Bucketer::new(key, total)?))
    }

    pub fn bucket(&self, data: &str) -> u32 {
        self.0.bucket(data)
    }

    #[wasm_bindgen(js_name = bucketPacked)]
    pub fn bucket_packed(&self, joined: &str, lens: &[u32]) -> Result<Vec<u32>> {
        let mut out = Vec::new();
        self.0.bucket_packed(joined, lens, &mut out)?;
        Ok(out)
    }
}

fn value(v: &JsValue) -> Value {
    shallow(v, true)
}

fn shallow(v: &JsValue, allow_list: bool) -> Value {
    if v.is_undefined() || v.is_null() {
        Value::Missing
    } else if let Some(b) = v.as_bool() {
        Value::Bool(b)
    } else if let Some(n) = v.as_f64() {
        Value::Number(n)
    } else if let Some(s) = v.as_string() {
        Value::Text(s)
    } else if allow_list && Array::is_array(v) {
        // The JS layer passes plain arrays (copied from any proxy), so reading cannot throw.
        Value::List(
            Array::from(v)
                .iter()
                .map(|item| shallow(&item, false))
                .collect(),
        )
    } else if v.is_bigint() {
        Value::Other("bigint")
    } else {
        Value::Other("object")
    }
}

fn raw(rr: &JsValue, id: &JsValue, total: &JsValue, ranges: &JsValue) -> RawConfig {
    RawConfig {
        round_robin: value(rr),
        bucket_id: value(id),
        bucket_total: value(total),
        bucket_ranges: value(ranges),
    }
}

/// Returns true when `bucket_ranges` is ignored (round robin off): the caller logs it.
#[wasm_bindgen(js_name = validateConfig)]
pub fn validate_config(rr: JsValue, id: JsValue, total: JsValue, ranges: JsValue) -> Result<bool> {
    let notice = core::validate(&raw(&rr, &id, &total, &ranges))?;
    Ok(notice == core::Notice::RangesIgnored)
}

/// `[bucket_id, bucket_total]` of a valid config, defaults applied.
#[wasm_bindgen(js_name = resolveConfig)]
pub fn resolve_config(
    rr: JsValue,
    id: JsValue,
    total: JsValue,
    ranges: JsValue,
) -> Result<Vec<u32>> {
    let raw = raw(&rr, &id, &total, &ranges);
    core::validate(&raw)?;
    let total = core::bucket_total(&raw)?;
    Ok(vec![core::bucket_id(&raw, total)?, total])
}

/// Whether round robin is on (type-checked).
#[wasm_bindgen(js_name = roundRobinEnabled)]
pub fn round_robin_enabled(rr: JsValue) -> Result<bool> {
    let raw = RawConfig {
        round_robin: value(&rr),
        ..RawConfig::default()
    };
    Ok(core::round_robin(&raw)?)
}

#[wasm_bindgen(js_name = nextBucketId)]
pub fn next_bucket_id(rr: JsValue, total: JsValue, ranges: JsValue, last: JsValue) -> Result<u32> {
    let selector = Selector::new(&raw(&rr, &JsValue::UNDEFINED, &total, &ranges))?;
    Ok(selector.next(core::last_executed(&value(&last))?))
}

/// The bucket ids of the next `runs` runs.
#[wasm_bindgen(js_name = roundRobinSchedule)]
pub fn round_robin_schedule(
    rr: JsValue,
    id: JsValue,
    total: JsValue,
    ranges: JsValue,
    last: JsValue,
    runs: f64,
) -> Result<Vec<u32>> {
    const MAX_RUNS: f64 = 1_000_000.0;
    if !(runs.fract() == 0.0 && (0.0..=MAX_RUNS).contains(&runs)) {
        return Err(core::BucketingError::InvalidArgument(format!(
            "runs must be an integer between 0 and {MAX_RUNS}"
        ))
        .into());
    }
    let raw = raw(&rr, &id, &total, &ranges);
    core::validate(&raw)?;
    let selector = Selector::new(&raw)?;
    let runs = runs as usize;
    if !selector.round_robin() {
        let total = core::bucket_total(&raw)?;
        return Ok(vec![core::bucket_id(&raw, total)?; runs]);
    }
    let mut last = core::last_executed(&value(&last))?;
    Ok((0..runs)
        .map(|_| {
            let next = selector.next(last);
            last = Some(i64::from(next));
            next
        })
        .collect())
}

/// The eligible buckets of `bucket_ranges`.
#[wasm_bindgen(js_name = BucketSet)]
pub struct WasmBucketSet(BucketSet);

#[wasm_bindgen(js_class = BucketSet)]
impl WasmBucketSet {
    #[wasm_bindgen(constructor)]
    pub fn new(total: JsValue, ranges: JsValue) -> Result<WasmBucketSet> {
        let total = core::parse_total(&value(&total))?;
        let raw = RawConfig {
            bucket_ranges: value(&ranges),
            ..RawConfig::default()
        };
        // Unlike a config, an explicit BucketSet has no "unset" ranges: '' and [] are empty.
        let set = match raw.bucket_ranges {
            Value::Text(ref s) if s.is_empty() => Err(core::BucketingError::RangesEmpty),
            Value::Text(_) | Value::List(_) => core::bucket_set(&raw, total)
                .and_then(|s| s.ok_or(core::BucketingError::RangesEmpty)),
            _ => Err(core::BucketingError::RangesType),
        }?;
        Ok(Self(set))
    }

    pub fn next(&self, last: f64) -> Result<u32> {
        let last = core::last_executed(&Value::Number(last))?.ok_or(
            core::BucketingError::InvalidArgument("bucket id must be an integer".into()),
        )?;
        Ok(self.0.next(last))
    }

    /// At most `limit` eligible buckets, ascending.
    pub fn buckets(&self, limit: f64) -> Result<Vec<u32>> {
        if (self.0.len() as f64) > limit {
            return Err(core::BucketingError::InvalidArgument(format!(
                "the bucket set has {} buckets, more than {limit} can be listed",
                self.0.len()
            ))
            .into());
        }
        Ok(self.0.iter().collect())
    }

    pub fn size(&self) -> f64 {
        self.0.len() as f64
    }

    pub fn has(&self, id: f64) -> bool {
        id.fract() == 0.0 && (1.0..=f64::from(u32::MAX)).contains(&id) && self.0.contains(id as u32)
    }
}
