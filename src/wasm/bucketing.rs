//! Bucketing bindings. Argument types (string, number, array) are checked by `js/bucketing.mjs`,
//! which copies configs into plain values (see [`decode`]); values are checked here by the core.

use std::cell::Cell;

use wasm_bindgen::prelude::*;

use super::error::{out_of_memory, BoundaryError};
use crate::bucketing::{self as core, BucketSet, Bucketer, RawConfig, Selector, Value};
use crate::packed::PackedSplitter;

type Result<T> = std::result::Result<T, BoundaryError>;

thread_local! {
    /// The last key's HMAC state: connectors call `bucket()` with one key over and over. A
    /// `Cell` taken for the call and put back after, not a `RefCell`: a call that traps (out of
    /// memory) leaves it empty, never borrowed, so the next call simply rebuilds it.
    static LAST: Cell<Option<(String, Bucketer)>> = const { Cell::new(None) };
}

/// Runs `f` with a bucketer for `key`/`total`, reusing the cached key schedule.
fn with_bucketer<T>(key: &str, total: f64, f: impl FnOnce(&Bucketer) -> T) -> Result<T> {
    let total = core::parse_total(&Value::Number(total))?;
    let cached = LAST.with(Cell::take);
    let (k, b) = match cached {
        Some((k, b)) if k == key && b.total() == total => (k, b),
        _ => (key.to_owned(), Bucketer::new(key, total)?),
    };
    let out = f(&b);
    LAST.with(|cell| cell.set(Some((k, b))));
    Ok(out)
}

#[wasm_bindgen]
pub fn bucket(key: &str, data: &str, total: f64) -> Result<u32> {
    with_bucketer(key, total, |b| b.bucket(data))
}

/// Buckets of a batch of strings (UTF-16 code units written into wasm memory by
/// `js/packed.mjs` `mapPacked`, the one packed format of batch calls: measured 2.06× faster
/// than a joined string, see docs/benchmarks.md).
#[wasm_bindgen(js_name = bucketUtf16)]
pub fn bucket_utf16(
    key: &str,
    total: f64,
    keys: &super::packed::PackedStrings,
) -> Result<Vec<u32>> {
    with_bucketer(key, total, |b| utf16_buckets(b, keys))?
}

fn utf16_buckets(b: &Bucketer, keys: &super::packed::PackedStrings) -> Result<Vec<u32>> {
    let batch = keys.batch().map_err(|e| {
        BoundaryError::from(crate::bucketing::BucketingError::InvalidArgument(
            e.to_string(),
        ))
    })?;
    let mut out = Vec::new();
    out.try_reserve_exact(batch.len())
        .map_err(|_| out_of_memory("bucketing"))?;
    b.bucket_utf16(&batch, &mut out);
    Ok(out)
}

/// `[min, max, mean, spread, count_1, …, count_total]` of 1-based `buckets`.
#[wasm_bindgen(js_name = distributionOf)]
pub fn distribution_of(total: f64, buckets: &[u32]) -> Result<Vec<f64>> {
    let total = core::parse_total(&Value::Number(total))?;
    let d = core::Distribution::from_buckets(total, buckets.iter().copied())?;
    let mut out = Vec::new();
    out.try_reserve_exact(d.counts.len() + 4)
        .map_err(|_| out_of_memory("bucketing"))?;
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

    /// Buckets of a batch of strings (see [`bucket_utf16`]).
    #[wasm_bindgen(js_name = bucketUtf16)]
    pub fn bucket_utf16(&self, keys: &super::packed::PackedStrings) -> Result<Vec<u32>> {
        utf16_buckets(&self.0, keys)
    }
}

// Kinds of the plain values `js/bucketing.mjs` encodes a config into (see [`decode`]): the one
// numbering of `super::kinds`. An array other than `bucket_ranges` is sent as an object.
use super::kinds::{
    ARRAY as K_LIST, BIGINT as K_BIGINT, FALSE as K_FALSE, NULL as K_NULL, NUMBER as K_NUMBER,
    OBJECT as K_OBJECT, OTHER as K_OTHER, STRING as K_TEXT, TRUE as K_TRUE, UNDEFINED as K_MISSING,
};

fn bad_encoding() -> BoundaryError {
    core::BucketingError::InvalidArgument("packed config: malformed encoding".into()).into()
}

/// Values JS read and copied before entering wasm: per value a kind, a number (a number's
/// value, a list's item count), and the texts joined with their UTF-16 lengths. A list's items
/// follow it and are never lists. No JS value is read here (docs/ARCHITECTURE.md, "The
/// boundary rule").
fn decode(kinds: &[u8], nums: &[f64], joined: &str, lens: &[u32]) -> Result<Vec<Value>> {
    if kinds.len() != nums.len() {
        return Err(bad_encoding());
    }
    let mut split = PackedSplitter::new(joined);
    let mut scratch = Vec::new();
    let mut texts = lens.iter();
    let mut text = |split: &mut PackedSplitter, scratch: &mut Vec<u8>| -> Result<Value> {
        let len = *texts.next().ok_or_else(bad_encoding)?;
        let bytes = split
            .next_item(len as usize, scratch)
            .map_err(|_| bad_encoding())?;
        Ok(Value::Text(String::from_utf8_lossy(bytes).into_owned()))
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < kinds.len() {
        let (kind, num) = (kinds[i], nums[i]);
        i += 1;
        let v = match kind {
            K_LIST => {
                if !(num.fract() == 0.0 && num >= 0.0 && num <= (kinds.len() - i) as f64) {
                    return Err(bad_encoding());
                }
                let n = num as usize;
                let mut items = Vec::new();
                items
                    .try_reserve_exact(n)
                    .map_err(|_| out_of_memory("bucketing"))?;
                for j in i..i + n {
                    items.push(match kinds[j] {
                        K_TEXT => text(&mut split, &mut scratch)?,
                        K_LIST => return Err(bad_encoding()),
                        k => scalar(k, nums[j])?,
                    });
                }
                i += n;
                Value::List(items)
            }
            K_TEXT => text(&mut split, &mut scratch)?,
            k => scalar(k, num)?,
        };
        out.push(v);
    }
    if texts.next().is_some() || split.finish().is_err() {
        return Err(bad_encoding());
    }
    Ok(out)
}

fn scalar(kind: u8, num: f64) -> Result<Value> {
    Ok(match kind {
        K_MISSING | K_NULL => Value::Missing,
        K_FALSE => Value::Bool(false),
        K_TRUE => Value::Bool(true),
        K_NUMBER => Value::Number(num),
        K_OBJECT | K_OTHER => Value::Other("object"),
        K_BIGINT => Value::Other("bigint"),
        _ => return Err(bad_encoding()),
    })
}

/// A config as `js/bucketing.mjs` encodes it: `[round_robin_bucket_execution, bucket_id,
/// bucket_total, bucket_ranges, last_executed_bucket_id]`.
struct Encoded {
    raw: RawConfig,
    last: Value,
}

fn config(kinds: &[u8], nums: &[f64], joined: &str, lens: &[u32]) -> Result<Encoded> {
    let mut values = decode(kinds, nums, joined, lens)?.into_iter();
    let mut next = || values.next().ok_or_else(bad_encoding);
    let raw = RawConfig {
        round_robin: next()?,
        bucket_id: next()?,
        bucket_total: next()?,
        bucket_ranges: next()?,
    };
    let last = next()?;
    Ok(Encoded { raw, last })
}

/// The calls on one config, as one export (wasm-bindgen writes each export's argument passing into
/// every bundle that reaches it; four of these were 2 KB of a bundle that calls `Bucketing.create`):
/// `op` 0, [`validate_config`] (`[1]` when `bucket_ranges` is ignored, else `[0]`); 1,
/// [`resolve_config`]; 2, [`round_robin_enabled`] (`[0]` or `[1]`); 3, [`next_bucket_id`] (`[id]`).
#[wasm_bindgen(js_name = configCall)]
pub fn config_call(op: u8, kinds: &[u8], nums: &[f64], joined: &str, lens: &[u32]) -> Result<Vec<u32>> {
    match op {
        0 => Ok(vec![u32::from(validate_config(kinds, nums, joined, lens)?)]),
        1 => resolve_config(kinds, nums, joined, lens),
        2 => Ok(vec![u32::from(round_robin_enabled(kinds, nums, joined, lens)?)]),
        _ => Ok(vec![next_bucket_id(kinds, nums, joined, lens)?]),
    }
}

/// Returns true when `bucket_ranges` is ignored (round robin off): the caller logs it.
fn validate_config(kinds: &[u8], nums: &[f64], joined: &str, lens: &[u32]) -> Result<bool> {
    let c = config(kinds, nums, joined, lens)?;
    let notice = core::validate(&c.raw)?;
    Ok(notice == core::Notice::RangesIgnored)
}

/// `[bucket_id, bucket_total]` of a valid config, defaults applied.
fn resolve_config(kinds: &[u8], nums: &[f64], joined: &str, lens: &[u32]) -> Result<Vec<u32>> {
    let raw = config(kinds, nums, joined, lens)?.raw;
    core::validate(&raw)?;
    let total = core::bucket_total(&raw)?;
    Ok(vec![core::bucket_id(&raw, total)?, total])
}

/// Whether round robin is on (type-checked).
fn round_robin_enabled(kinds: &[u8], nums: &[f64], joined: &str, lens: &[u32]) -> Result<bool> {
    let c = config(kinds, nums, joined, lens)?;
    let raw = RawConfig {
        round_robin: c.raw.round_robin,
        ..RawConfig::default()
    };
    Ok(core::round_robin(&raw)?)
}

/// Like faros' `nextBucketId`, `bucket_id` is not consulted.
fn next_bucket_id(kinds: &[u8], nums: &[f64], joined: &str, lens: &[u32]) -> Result<u32> {
    let c = config(kinds, nums, joined, lens)?;
    let raw = RawConfig {
        bucket_id: Value::Missing,
        ..c.raw
    };
    let selector = Selector::new(&raw)?;
    Ok(selector.next(core::last_executed(&c.last)?))
}

/// The bucket ids of the next `runs` runs.
#[wasm_bindgen(js_name = roundRobinSchedule)]
pub fn round_robin_schedule(
    kinds: &[u8],
    nums: &[f64],
    joined: &str,
    lens: &[u32],
    runs: f64,
) -> Result<Vec<u32>> {
    const MAX_RUNS: f64 = 1_000_000.0;
    if !(runs.fract() == 0.0 && (0.0..=MAX_RUNS).contains(&runs)) {
        // the bound written out: formatting an f64 pulls Rust's float printing (~14 kB) into the wasm
        return Err(core::BucketingError::InvalidArgument(
            "runs must be an integer between 0 and 1000000".into(),
        )
        .into());
    }
    let c = config(kinds, nums, joined, lens)?;
    let raw = c.raw;
    core::validate(&raw)?;
    let selector = Selector::new(&raw)?;
    let runs = runs as usize;
    let mut out = Vec::new();
    out.try_reserve_exact(runs)
        .map_err(|_| out_of_memory("bucketing"))?;
    if !selector.round_robin() {
        let total = core::bucket_total(&raw)?;
        out.resize(runs, core::bucket_id(&raw, total)?);
        return Ok(out);
    }
    let mut last = core::last_executed(&c.last)?;
    for _ in 0..runs {
        let next = selector.next(last);
        last = Some(i64::from(next));
        out.push(next);
    }
    Ok(out)
}

/// The eligible buckets of `bucket_ranges`.
#[wasm_bindgen(js_name = BucketSet)]
pub struct WasmBucketSet(BucketSet);

#[wasm_bindgen(js_class = BucketSet)]
impl WasmBucketSet {
    /// From an encoded config (see [`config`]): its `bucket_total` and `bucket_ranges`.
    #[wasm_bindgen(constructor)]
    pub fn new(kinds: &[u8], nums: &[f64], joined: &str, lens: &[u32]) -> Result<WasmBucketSet> {
        let c = config(kinds, nums, joined, lens)?;
        let total = core::parse_total(&c.raw.bucket_total)?;
        let raw = RawConfig {
            bucket_ranges: c.raw.bucket_ranges,
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
                "the bucket set has {} buckets, more than {} can be listed",
                self.0.len(),
                // `limit` is JavaScript's constant (an integer); as u64, not f64, so that the
                // wasm carries no float printing
                limit as u64
            ))
            .into());
        }
        let mut out = Vec::new();
        out.try_reserve_exact(usize::try_from(self.0.len()).unwrap_or(usize::MAX))
            .map_err(|_| out_of_memory("bucketing"))?;
        out.extend(self.0.iter());
        Ok(out)
    }

    pub fn size(&self) -> f64 {
        self.0.len() as f64
    }

    pub fn has(&self, id: f64) -> bool {
        id.fract() == 0.0 && (1.0..=f64::from(u32::MAX)).contains(&id) && self.0.contains(id as u32)
    }
}
