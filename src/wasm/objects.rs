//! Object-partitioning bindings. Argument types are checked by `js/objects.mjs`, which passes
//! configs and constructor options as plain data objects (read here property by property);
//! numbers are checked again here (finite safe integers), values by the
//! core. Keys cross packed: a
//! [`PackedStrings`] (UTF-16 code units and lengths, written by `js/packed.mjs`) and one
//! directory flag byte per key (0 file, 1 directory, 2 decide by a trailing `/`; no flags: 2
//! for every key).

use wasm_bindgen::prelude::*;

use super::error::{error_value, headroom, out_of_memory, BoundaryError};
use super::packed::PackedStrings;
use crate::objects::{
    self as core, Assignment, ObjectPartitioner, PartitionConfig, PartitionError, StatsBuilder,
};

type Result<T> = std::result::Result<T, BoundaryError>;

/// `plan` and `stats` list every partition: a bound on what they allocate.
const MAX_LISTED_PARTITIONS: i64 = 1 << 24;

impl From<PartitionError> for BoundaryError {
    fn from(e: PartitionError) -> Self {
        BoundaryError(error_value("partition", e.code(), &e.to_string()))
    }
}

fn invalid(message: &str) -> BoundaryError {
    BoundaryError(error_value("partition", "INVALID_ARGUMENT", message))
}

/// A JS number that must be a safe integer (Go's `int` is 64-bit; JS is exact to 2^53).
pub(super) fn int(value: f64, name: &str) -> Result<i64> {
    const MAX_SAFE: f64 = 9_007_199_254_740_991.0;
    if value.is_finite() && value.fract() == 0.0 && value.abs() <= MAX_SAFE {
        Ok(value as i64)
    } else {
        Err(invalid(&format!("{name} must be a safe integer")))
    }
}

/// A `PartitionConfig` as `js/objects.mjs` builds it: a fresh plain object of checked values.
struct ConfigArgs {
    key_type: String,
    pattern: String,
    start_index: f64,
    end_index: f64,
    date_format: String,
}

/// The options of the two constructors, built by `js/objects.mjs` as plain data.
struct PartitionerArgs {
    total_partitions: f64,
    /// `PartitionSelector` only.
    partition_index: Option<f64>,
    source_key: String,
    partition: ConfigArgs,
}

// The plain data `js/objects.mjs` built, read property by property; a value of another shape
// is `INVALID_ARGUMENT`. (Not serde: its messages print an `f64`, and Rust's float printing with
// its tables was 14 KB of this module.)

/// `value.name`, which must be there (`undefined` is missing).
#[inline(never)]
fn field(value: &JsValue, name: &str) -> Result<JsValue> {
    let v = if value.is_object() {
        js_sys::Reflect::get(value, &JsValue::from_str(name)).unwrap_or(JsValue::UNDEFINED)
    } else {
        return Err(invalid("options: expected an object"));
    };
    if v.is_undefined() {
        return Err(invalid(&format!("options: missing field `{name}`")));
    }
    Ok(v)
}

#[inline(never)]
fn string_field(value: &JsValue, name: &str) -> Result<String> {
    field(value, name)?
        .as_string()
        .ok_or_else(|| invalid(&format!("options: `{name}` must be a string")))
}

#[inline(never)]
fn number_field(value: &JsValue, name: &str) -> Result<f64> {
    field(value, name)?
        .as_f64()
        .ok_or_else(|| invalid(&format!("options: `{name}` must be a number")))
}

impl ConfigArgs {
    #[inline(never)]
    fn read(value: &JsValue) -> Result<ConfigArgs> {
        Ok(ConfigArgs {
            key_type: string_field(value, "type")?,
            pattern: string_field(value, "pattern")?,
            start_index: number_field(value, "startIndex")?,
            end_index: number_field(value, "endIndex")?,
            date_format: string_field(value, "dateFormat")?,
        })
    }
}

impl PartitionerArgs {
    #[inline(never)]
    fn read(value: &JsValue) -> Result<PartitionerArgs> {
        let total_partitions = number_field(value, "totalPartitions")?;
        // Optional: absent, `undefined` or `null` is none.
        let partition_index = match field(value, "partitionIndex") {
            Ok(v) if v.is_null() => None,
            Ok(v) => Some(
                v.as_f64()
                    .ok_or_else(|| invalid("options: `partitionIndex` must be a number"))?,
            ),
            Err(_) if value.is_object() => None,
            Err(e) => return Err(e),
        };
        Ok(PartitionerArgs {
            total_partitions,
            partition_index,
            source_key: string_field(value, "sourceKey")?,
            partition: ConfigArgs::read(&field(value, "partition")?)?,
        })
    }
}

fn config(c: ConfigArgs) -> Result<PartitionConfig> {
    Ok(PartitionConfig {
        start_index: int(c.start_index, "partition.startIndex")?,
        end_index: int(c.end_index, "partition.endIndex")?,
        key_type: c.key_type,
        pattern: c.pattern,
        date_format: c.date_format,
    })
}

/// Calls `f` with the assignment of every packed key, in order.
fn each_key(
    p: &ObjectPartitioner,
    keys: &PackedStrings,
    dirs: &[u8],
    f: impl FnMut(Assignment),
) -> Result<()> {
    let batch = keys.batch().map_err(|e| invalid(&e.to_string()))?;
    if !dirs.is_empty() && dirs.len() != batch.len() {
        return Err(invalid("packed keys and directory flags differ in length"));
    }
    // Scratch: one key as UTF-8 (at most 3 bytes per unit), capture slots, the regex's lazy
    // DFA cache (at most `dfa_size_limit`), reserved up front.
    headroom(
        "partition",
        keys.units_len().saturating_mul(3).saturating_add(24 << 20),
    )?;
    p.assign_utf16(&batch, dirs, &mut p.scratch(), f);
    Ok(())
}

/// Go's `PartitionConfig.Validate`.
#[wasm_bindgen(js_name = validatePartitionConfig)]
pub fn validate_partition_config(partition: JsValue) -> Result<()> {
    Ok(config(ConfigArgs::read(&partition)?)?.validate()?)
}

/// Go's `PartitionObjects` for one partition: the constructor validates as Go does (config,
/// total, index), `select` gives the positions of the selected keys, in input order.
#[wasm_bindgen]
pub struct PartitionSelector {
    p: ObjectPartitioner,
    index: i64,
}

#[wasm_bindgen]
impl PartitionSelector {
    /// `options`: `{totalPartitions, partitionIndex, sourceKey, partition}`.
    #[wasm_bindgen(constructor)]
    pub fn new(options: JsValue) -> Result<PartitionSelector> {
        let a = PartitionerArgs::read(&options)?;
        let cfg = config(a.partition)?;
        let (total, index) = (
            int(a.total_partitions, "totalPartitions")?,
            int(a.partition_index.unwrap_or(f64::NAN), "partitionIndex")?,
        );
        let p = ObjectPartitioner::new(total, &a.source_key, &cfg)?;
        p.check_index(index)?;
        Ok(PartitionSelector { p, index })
    }

    pub fn select(&self, keys: &PackedStrings, dirs: &[u8]) -> Result<Vec<u32>> {
        let mut out = Vec::new();
        out.try_reserve_exact(keys.len())
            .map_err(|_| out_of_memory("partition"))?;
        let mut i = 0u32;
        each_key(&self.p, keys, dirs, |a| {
            if a.selected_by(self.index) {
                out.push(i);
            }
            i += 1;
        })?;
        Ok(out)
    }
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
pub(super) fn code(a: Assignment) -> i32 {
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
pub struct WasmObjectPartitioner(pub(super) ObjectPartitioner);

#[wasm_bindgen(js_class = ObjectPartitioner)]
impl WasmObjectPartitioner {
    /// `options`: `{totalPartitions, sourceKey, partition}`.
    #[wasm_bindgen(constructor)]
    pub fn new(options: JsValue) -> Result<WasmObjectPartitioner> {
        let a = PartitionerArgs::read(&options)?;
        let cfg = config(a.partition)?;
        let total = int(a.total_partitions, "totalPartitions")?;
        let p = ObjectPartitioner::new(total, &a.source_key, &cfg)?;
        if total > i64::from(i32::MAX) {
            return Err(BoundaryError(error_value(
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
    pub fn index_packed(&self, keys: &PackedStrings, dirs: &[u8]) -> Result<Vec<i32>> {
        let mut out = Vec::new();
        out.try_reserve_exact(keys.len())
            .map_err(|_| out_of_memory("partition"))?;
        each_key(&self.0, keys, dirs, |a| out.push(code(a)))?;
        Ok(out)
    }

    /// `[fallback, directories, count_0, …, count_{total-1}]` of the packed keys, one pass.
    #[wasm_bindgen(js_name = statsPacked)]
    pub fn stats_packed(&self, keys: &PackedStrings, dirs: &[u8]) -> Result<Vec<f64>> {
        if self.0.total() > MAX_LISTED_PARTITIONS {
            return Err(invalid(&format!(
                "stats and plan support at most {MAX_LISTED_PARTITIONS} partitions"
            )));
        }
        // The counts, twice (builder and output), reserved up front.
        headroom("partition", (self.0.total() as usize).saturating_mul(24))?;
        let mut b = StatsBuilder::new(self.0.total() as usize);
        each_key(&self.0, keys, dirs, |a| b.record(a))?;
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

    /// What is almost surely a mistake in the config although Go accepts it (see
    /// `ObjectPartitioner::warnings`).
    pub fn warnings(&self) -> Vec<String> {
        self.0.warnings()
    }

    #[wasm_bindgen(js_name = isPartitioned)]
    pub fn is_partitioned(&self) -> bool {
        self.0.is_partitioned()
    }
}
