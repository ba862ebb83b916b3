//! Object-partitioning bindings. Argument types are checked by `js/objects.mjs`; numbers are
//! checked again here (finite safe integers), values by the core. Keys cross packed: one
//! joined string, UTF-16 lengths, and one directory flag byte per key (0 file, 1 directory,
//! 2 decide by a trailing `/`).

use wasm_bindgen::prelude::*;

use super::error::{throw, JsError};
use crate::objects::{
    self as core, Assignment, ObjectPartitioner, PartitionConfig, PartitionError, StatsBuilder,
};
use crate::packed::PackedSplitter;

type Result<T> = std::result::Result<T, JsError>;

/// `plan` and `stats` list every partition: a bound on what they allocate.
const MAX_LISTED_PARTITIONS: i64 = 1 << 24;

impl From<PartitionError> for JsError {
    fn from(e: PartitionError) -> Self {
        JsError(throw("partition", e.code(), &e.to_string()))
    }
}

fn invalid(message: &str) -> JsError {
    JsError(throw("partition", "INVALID_ARGUMENT", message))
}

/// A JS number that must be a safe integer (Go's `int` is 64-bit; JS is exact to 2^53).
fn int(value: f64, name: &str) -> Result<i64> {
    const MAX_SAFE: f64 = 9_007_199_254_740_991.0;
    if value.is_finite() && value.fract() == 0.0 && value.abs() <= MAX_SAFE {
        Ok(value as i64)
    } else {
        Err(invalid(&format!("{name} must be a safe integer")))
    }
}

fn config(
    key_type: &str,
    pattern: &str,
    start: f64,
    end: f64,
    date_format: &str,
) -> Result<PartitionConfig> {
    Ok(PartitionConfig {
        key_type: key_type.to_owned(),
        pattern: pattern.to_owned(),
        start_index: int(start, "partition.startIndex")?,
        end_index: int(end, "partition.endIndex")?,
        date_format: date_format.to_owned(),
    })
}

/// Calls `f(key, is_dir)` for every packed key.
fn each_key(joined: &str, lens: &[u32], dirs: &[u8], mut f: impl FnMut(&str, bool)) -> Result<()> {
    if lens.len() != dirs.len() {
        return Err(invalid("packed keys and directory flags differ in length"));
    }
    let mut split = PackedSplitter::new(joined);
    let mut scratch = Vec::new();
    for (&len, &dir) in lens.iter().zip(dirs) {
        let bytes = split
            .next_item(len as usize, &mut scratch)
            .map_err(|e| invalid(&e.to_string()))?;
        // Items of a `&str` (plus U+FFFD repairs) are always valid UTF-8.
        let key =
            std::str::from_utf8(bytes).map_err(|_| invalid("packed keys are not valid UTF-8"))?;
        let is_dir = match dir {
            0 => false,
            1 => true,
            _ => key.ends_with('/'),
        };
        f(key, is_dir);
    }
    split.finish().map_err(|e| invalid(&e.to_string()))
}

/// Go's `PartitionConfig.Validate`.
#[wasm_bindgen(js_name = validatePartitionConfig)]
pub fn validate_partition_config(
    key_type: &str,
    pattern: &str,
    start: f64,
    end: f64,
    date_format: &str,
) -> Result<()> {
    Ok(config(key_type, pattern, start, end, date_format)?.validate()?)
}

/// Go's `PartitionObjects`: positions of the selected keys, in input order.
#[allow(clippy::too_many_arguments)]
#[wasm_bindgen(js_name = partitionPacked)]
pub fn partition_packed(
    total: f64,
    index: f64,
    source_key: &str,
    key_type: &str,
    pattern: &str,
    start: f64,
    end: f64,
    date_format: &str,
    joined: &str,
    lens: &[u32],
    dirs: &[u8],
) -> Result<Vec<u32>> {
    let cfg = config(key_type, pattern, start, end, date_format)?;
    let (total, index) = (
        int(total, "totalPartitions")?,
        int(index, "partitionIndex")?,
    );
    let p = ObjectPartitioner::new(total, source_key, &cfg)?;
    p.check_index(index)?;
    let mut out = Vec::new();
    let mut i = 0u32;
    let mut scratch = p.scratch();
    each_key(joined, lens, dirs, |key, is_dir| {
        if p.assign_with(key, is_dir, &mut scratch).selected_by(index) {
            out.push(i);
        }
        i += 1;
    })?;
    Ok(out)
}

/// Go's `sanitizeKeyForPatternMatching`.
#[wasm_bindgen(js_name = sanitizeKeyForPatternMatching)]
pub fn sanitize_key_for_pattern_matching(key: &str, prefix: &str) -> String {
    core::sanitize_key_for_pattern_matching(key, prefix).to_owned()
}

/// The prefix Go trims from keys, from `SourceSpec.Key`.
#[wasm_bindgen(js_name = listingPrefix)]
pub fn listing_prefix(source_key: &str) -> String {
    core::listing_prefix(source_key).to_owned()
}

/// 32-bit FNV-1a of the UTF-8 bytes of `text`.
#[wasm_bindgen]
pub fn fnv1a32(text: &str) -> u32 {
    core::fnv1a32(text.as_bytes())
}

/// `Assignment` as an `Int32Array` entry: -1 directory, -2 every partition, else the index.
fn code(a: Assignment) -> i32 {
    match a {
        Assignment::Directory => -1,
        Assignment::All => -2,
        Assignment::Fallback => 0,
        // Totals are at most i32::MAX here (checked in the constructor).
        Assignment::Hashed(i) => i32::try_from(i).unwrap_or(i32::MAX),
    }
}

/// A compiled partitioner (totals up to `i32::MAX`, so indices fit an `Int32Array`).
#[wasm_bindgen(js_name = ObjectPartitioner)]
pub struct WasmObjectPartitioner(ObjectPartitioner);

#[wasm_bindgen(js_class = ObjectPartitioner)]
impl WasmObjectPartitioner {
    #[wasm_bindgen(constructor)]
    pub fn new(
        total: f64,
        source_key: &str,
        key_type: &str,
        pattern: &str,
        start: f64,
        end: f64,
        date_format: &str,
    ) -> Result<WasmObjectPartitioner> {
        let cfg = config(key_type, pattern, start, end, date_format)?;
        let total = int(total, "totalPartitions")?;
        let p = ObjectPartitioner::new(total, source_key, &cfg)?;
        if total > i64::from(i32::MAX) {
            return Err(JsError(throw(
                "partition",
                "PARTITION_COUNT_UNSUPPORTED",
                &format!(
                    "ObjectPartitioner supports at most {} partitions; use partitionObjects",
                    i32::MAX
                ),
            )));
        }
        Ok(Self(p))
    }

    #[wasm_bindgen(js_name = indexOf)]
    pub fn index_of(&self, key: &str, dir: u8) -> i32 {
        let is_dir = match dir {
            0 => false,
            1 => true,
            _ => key.ends_with('/'),
        };
        code(self.0.assign(key, is_dir))
    }

    #[wasm_bindgen(js_name = indexPacked)]
    pub fn index_packed(&self, joined: &str, lens: &[u32], dirs: &[u8]) -> Result<Vec<i32>> {
        let mut out = Vec::with_capacity(lens.len());
        each_key(joined, lens, dirs, |key, is_dir| {
            out.push(code(self.0.assign(key, is_dir)))
        })?;
        Ok(out)
    }

    /// `[fallback, directories, count_0, …, count_{total-1}]` of the packed keys, one pass.
    #[wasm_bindgen(js_name = statsPacked)]
    pub fn stats_packed(&self, joined: &str, lens: &[u32], dirs: &[u8]) -> Result<Vec<f64>> {
        if self.0.total() > MAX_LISTED_PARTITIONS {
            return Err(invalid(&format!(
                "stats and plan support at most {MAX_LISTED_PARTITIONS} partitions"
            )));
        }
        let mut b = StatsBuilder::new(self.0.total() as usize);
        let mut scratch = self.0.scratch();
        each_key(joined, lens, dirs, |key, is_dir| {
            b.record(self.0.assign_with(key, is_dir, &mut scratch))
        })?;
        let s = b.finish();
        let mut out = Vec::with_capacity(s.counts.len() + 2);
        out.push(s.fallback as f64);
        out.push(s.directories as f64);
        out.extend(s.counts.iter().map(|&c| c as f64));
        Ok(out)
    }

    #[wasm_bindgen(js_name = checkIndex)]
    pub fn check_index(&self, index: f64) -> Result<()> {
        Ok(self.0.check_index(int(index, "partitionIndex")?)?)
    }

    pub fn total(&self) -> f64 {
        self.0.total() as f64
    }

    pub fn prefix(&self) -> String {
        self.0.prefix().to_owned()
    }

    #[wasm_bindgen(js_name = isPartitioned)]
    pub fn is_partitioned(&self) -> bool {
        self.0.is_partitioned()
    }
}
