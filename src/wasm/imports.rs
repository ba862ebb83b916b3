//! Import-bucket bindings. Argument types (array, object, string) are checked by
//! `js/imports.mjs`, which reads every caller value and hands over plain data (strings, numbers,
//! kinds, typed arrays; a batch call's as one array of plain values read here by index);
//! every value rule lives in `crate::imports`.
//!
//! A batch crosses packed: the distinct dataset names and the distinct raw bucket strings, each
//! as one joined string plus UTF-16 lengths (`crate::packed`), and per item one `u32` reference
//! into each table. Dataset references at the top of the `u32` range mean "not an object",
//! "no dataset field" and "dataset not a string"; bucket reference 0 means "no bucket", 1 "not a
//! string", `2 + i` the `i`-th raw bucket string.

use js_sys::{Array, Uint32Array};
use wasm_bindgen::prelude::*;

use super::error::{error_value, headroom, out_of_memory, BoundaryError};
use crate::imports::{
    self as core, display_from_js, BucketCount, BucketRef, BucketValue, DatasetRef, DatasetValue,
    FieldNames, ImportBucketError, ImportOptions, ItemValue, OsRandom, PackedItem, PackedItems,
};
use crate::packed::PackedSplitter;

type Result<T> = std::result::Result<T, BoundaryError>;

impl From<ImportBucketError> for BoundaryError {
    fn from(e: ImportBucketError) -> Self {
        BoundaryError(error_value("import", e.code(), &e.to_string()))
    }
}

/// Memory a batch call needs besides its inputs: a generous bound (the copies of the distinct
/// strings, their maps, and per item its references and outputs), reserved up front.
fn batch_bytes(datasets_joined: &str, buckets_joined: &str, items: usize) -> usize {
    let strings = datasets_joined.len().saturating_add(buckets_joined.len());
    strings
        .saturating_mul(4)
        .saturating_add(items.saturating_mul(32))
        .saturating_add(1 << 16)
}

const DATASET_NOT_OBJECT: u32 = u32::MAX;
const DATASET_MISSING: u32 = u32::MAX - 1;
const DATASET_NOT_STRING: u32 = u32::MAX - 2;
const BUCKET_ABSENT: u32 = 0;
const BUCKET_NOT_STRING: u32 = 1;

fn unpack(joined: &str, lens: &[u32]) -> Result<Vec<String>> {
    let bad = |e: crate::packed::PackedError| {
        BoundaryError::from(ImportBucketError::invalid_argument(e.to_string()))
    };
    let mut split = PackedSplitter::new(joined);
    let mut scratch = Vec::new();
    let mut out = Vec::new();
    out.try_reserve_exact(lens.len())
        .map_err(|_| out_of_memory("import"))?;
    for &len in lens {
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        let bytes = split.next_item(len, &mut scratch).map_err(bad)?;
        out.push(String::from_utf8_lossy(bytes).into_owned());
    }
    split.finish().map_err(bad)?;
    Ok(out)
}

fn batch<'a>(
    datasets: &'a [String],
    dataset_refs: &[u32],
    buckets: &'a [String],
    bucket_refs: &[u32],
) -> std::result::Result<PackedItems<'a>, ImportBucketError> {
    if dataset_refs.len() != bucket_refs.len() {
        return Err(ImportBucketError::invalid_argument(
            "packed batch: reference arrays differ in length",
        ));
    }
    let items = dataset_refs
        .iter()
        .zip(bucket_refs)
        .map(|(&d, &b)| PackedItem {
            dataset: match d {
                DATASET_NOT_OBJECT => DatasetRef::NotObject,
                DATASET_MISSING => DatasetRef::Missing,
                DATASET_NOT_STRING => DatasetRef::NotString,
                d => DatasetRef::Index(d),
            },
            bucket: match b {
                BUCKET_ABSENT => BucketRef::Absent,
                BUCKET_NOT_STRING => BucketRef::NotString,
                b => BucketRef::Index(b - 2),
            },
        })
        .collect();
    Ok(PackedItems {
        datasets: datasets.iter().map(String::as_str).collect(),
        buckets: buckets.iter().map(String::as_str).collect(),
        items,
    })
}

// Kinds of JS values, read by `js/imports.mjs`: the one numbering of `super::kinds`.
use super::kinds::{
    ARRAY as N_ARRAY, BIGINT as N_BIGINT, FALSE, NULL as N_NULL, NUMBER as N_NUMBER,
    STRING as N_STRING, TRUE, UNDEFINED as N_UNDEFINED,
};

/// N from a JS number. A message writes the number as Rust's `{}` does, made from JavaScript's
/// `String(n)` (the module carries no float printing: 14 KB with its tables).
fn bucket_count_of(n: f64) -> Result<BucketCount> {
    Ok(BucketCount::from_f64_with(n, |n| {
        let js: String = js_sys::Number::from(n)
            .to_string_with_radix(10)
            .map(String::from)
            .unwrap_or_default();
        display_from_js(&js, n)
    })?)
}

/// N from the kind of a JS value: a number goes to the core's check; anything else is rejected
/// here, described by its kind (a string by its first 40 characters).
fn bucket_count(kind: u8, number: f64, text: Option<String>) -> Result<BucketCount> {
    let described = match kind {
        N_NUMBER => return bucket_count_of(number),
        N_STRING => {
            let s = text.unwrap_or_default();
            let head: String = s.chars().take(40).collect();
            if head.len() < s.len() {
                format!("{head:?}…")
            } else {
                format!("{head:?}")
            }
        }
        N_NULL => "null".to_owned(),
        N_UNDEFINED => "undefined".to_owned(),
        FALSE | TRUE => "a boolean".to_owned(),
        N_BIGINT => "a bigint".to_owned(),
        N_ARRAY => "an array".to_owned(),
        _ => "an object".to_owned(),
    };
    Err(BucketCount::invalid(&described).into())
}

/// N from the value of `GTC_IMPORT_BUCKETS_DEFAULT` (`undefined` when unset).
#[wasm_bindgen(js_name = importBucketsDefault)]
pub fn import_buckets_default(value: Option<String>) -> Result<u32> {
    Ok(BucketCount::from_env_value(value.as_deref())?.get())
}

/// Checks N; returns it.
#[wasm_bindgen(js_name = checkImportBuckets)]
pub fn check_import_buckets(kind: u8, number: f64, text: Option<String>) -> Result<u32> {
    Ok(bucket_count(kind, number, text)?.get())
}

/// A packed batch and the field names, as `js/imports.mjs` builds it: plain data (strings
/// and `Uint32Array`s, the arrays handed over as they are and copied once).
struct BatchArgs {
    dataset_field: String,
    bucket_field: String,
    datasets_joined: String,
    dataset_lens: Uint32Array,
    dataset_refs: Uint32Array,
    buckets_joined: String,
    bucket_lens: Uint32Array,
    bucket_refs: Uint32Array,
}

/// The options of `assignImportBuckets`: N (already checked by `checkImportBuckets`, checked
/// again), the import id, the batch.
struct AssignArgs {
    buckets: f64,
    import_id: Option<String>,
    batch: BatchArgs,
}

// The plain data `js/imports.mjs` built: arrays of values in the order of the fields above, read
// by index (no property name crosses per call); a value of another shape is `INVALID_ARGUMENT`.
// (Not serde-wasm-bindgen: serde's messages print an `f64`, and Rust's float printing with its
// tables was 14 KB of this module.)

fn invalid(message: &str) -> BoundaryError {
    ImportBucketError::invalid_argument(message).into()
}

/// Element `i` of the array `value`, the field `name` (`undefined` is missing).
#[inline(never)]
fn field(value: &JsValue, i: u32, name: &str) -> Result<JsValue> {
    if !Array::is_array(value) {
        return Err(invalid("options: expected an array"));
    }
    let v = value.unchecked_ref::<Array>().get(i);
    if v.is_undefined() {
        return Err(invalid(&format!("options: missing field `{name}`")));
    }
    Ok(v)
}

#[inline(never)]
fn string_field(value: &JsValue, i: u32, name: &str) -> Result<String> {
    field(value, i, name)?
        .as_string()
        .ok_or_else(|| invalid(&format!("options: `{name}` must be a string")))
}

#[inline(never)]
fn u32_array_field(value: &JsValue, i: u32, name: &str) -> Result<Uint32Array> {
    field(value, i, name)?
        .dyn_into::<Uint32Array>()
        .map_err(|_| invalid(&format!("options: `{name}` must be a Uint32Array")))
}

impl BatchArgs {
    /// `[datasetField, bucketField, datasetsJoined, datasetLens, datasetRefs, bucketsJoined,
    /// bucketLens, bucketRefs]`.
    #[inline(never)]
    fn read(value: &JsValue) -> Result<BatchArgs> {
        Ok(BatchArgs {
            dataset_field: string_field(value, 0, "datasetField")?,
            bucket_field: string_field(value, 1, "bucketField")?,
            datasets_joined: string_field(value, 2, "datasetsJoined")?,
            dataset_lens: u32_array_field(value, 3, "datasetLens")?,
            dataset_refs: u32_array_field(value, 4, "datasetRefs")?,
            buckets_joined: string_field(value, 5, "bucketsJoined")?,
            bucket_lens: u32_array_field(value, 6, "bucketLens")?,
            bucket_refs: u32_array_field(value, 7, "bucketRefs")?,
        })
    }
}

impl AssignArgs {
    /// `[buckets, importId, batch]`, `importId` `undefined` or `null` when there is none.
    fn read(value: &JsValue) -> Result<AssignArgs> {
        let buckets = field(value, 0, "buckets")?
            .as_f64()
            .ok_or_else(|| invalid("options: `buckets` must be a number"))?;
        let import_id = value.unchecked_ref::<Array>().get(1);
        let import_id = if import_id.is_undefined() || import_id.is_null() {
            None
        } else {
            Some(
                import_id
                    .as_string()
                    .ok_or_else(|| invalid("options: `importId` must be a string"))?,
            )
        };
        Ok(AssignArgs {
            buckets,
            import_id,
            batch: BatchArgs::read(&field(value, 2, "batch")?)?,
        })
    }
}

/// The batch's strings unpacked and its references copied, the call's memory reserved first.
struct Unpacked {
    datasets: Vec<String>,
    dataset_refs: Vec<u32>,
    raw: Vec<String>,
    bucket_refs: Vec<u32>,
}

fn unpack_batch(b: &BatchArgs) -> Result<Unpacked> {
    // The core's maps and outputs: a few words per item and per distinct string.
    headroom(
        "import",
        batch_bytes(
            &b.datasets_joined,
            &b.buckets_joined,
            b.dataset_refs.length() as usize,
        ),
    )?;
    Ok(Unpacked {
        datasets: unpack(&b.datasets_joined, &b.dataset_lens.to_vec())?,
        dataset_refs: b.dataset_refs.to_vec(),
        raw: unpack(&b.buckets_joined, &b.bucket_lens.to_vec())?,
        bucket_refs: b.bucket_refs.to_vec(),
    })
}

/// `[table, indices]`: `table` is the distinct buckets joined (36 characters each), `indices` a
/// Uint32Array with each item's index into it. `options`: `[buckets, importId, batch]`.
#[wasm_bindgen(js_name = assignImportBuckets)]
pub fn assign_import_buckets(options: JsValue) -> Result<Array> {
    let a = AssignArgs::read(&options)?;
    let n = bucket_count_of(a.buckets)?;
    let u = unpack_batch(&a.batch)?;
    let batch = batch(&u.datasets, &u.dataset_refs, &u.raw, &u.bucket_refs)?;
    let options = ImportOptions {
        buckets: n,
        fields: FieldNames {
            dataset: &a.batch.dataset_field,
            bucket: &a.batch.bucket_field,
        },
        import_id: a.import_id.as_deref(),
    };
    let a = core::assign_packed(&batch, &options, &mut OsRandom)?;
    let table: String = a.buckets.iter().map(|u| u.to_string()).collect();
    Ok(Array::of2(
        &JsValue::from_str(&table),
        &Uint32Array::from(a.item_buckets.as_slice()),
    ))
}

/// `[keyDatasets, keyBuckets, itemGroups]`: per group its dataset's index and its bucket (joined,
/// 36 characters each), per item its group. `batch`: as `assignImportBuckets`' `batch`.
#[wasm_bindgen(js_name = groupByPartitionKey)]
pub fn group_by_partition_key(batch_args: JsValue) -> Result<Array> {
    let b = BatchArgs::read(&batch_args)?;
    let u = unpack_batch(&b)?;
    let batch = batch(&u.datasets, &u.dataset_refs, &u.raw, &u.bucket_refs)?;
    let fields = FieldNames {
        dataset: &b.dataset_field,
        bucket: &b.bucket_field,
    };
    let g = core::group_packed(&batch, &fields)?;
    let key_datasets: Vec<u32> = g.keys.iter().map(|k| k.dataset).collect();
    let key_buckets: String = g.keys.iter().map(|k| k.bucket.to_string()).collect();
    Ok(Array::of3(
        &Uint32Array::from(key_datasets.as_slice()),
        &JsValue::from_str(&key_buckets),
        &Uint32Array::from(g.item_groups.as_slice()),
    ))
}

/// The normalised bucket of one item (its dataset is returned by the JS layer as is).
#[wasm_bindgen(js_name = partitionKeyOf)]
pub fn partition_key_of(
    is_object: bool,
    dataset_kind: u8,
    dataset: Option<String>,
    bucket_kind: u8,
    bucket: Option<String>,
    dataset_field: &str,
    bucket_field: &str,
) -> Result<String> {
    // Kinds of `super::kinds`: a string, undefined, null, or anything else.
    let item = if !is_object {
        ItemValue::NotObject
    } else {
        ItemValue::Object {
            dataset: match (&dataset, dataset_kind) {
                (Some(s), N_STRING) => DatasetValue::Str(s),
                (_, N_UNDEFINED) => DatasetValue::Missing,
                _ => DatasetValue::NotString,
            },
            bucket: match (&bucket, bucket_kind) {
                (Some(s), N_STRING) => BucketValue::Str(s),
                (_, N_UNDEFINED | N_NULL) => BucketValue::Absent,
                _ => BucketValue::NotString,
            },
        }
    };
    let fields = FieldNames {
        dataset: dataset_field,
        bucket: bucket_field,
    };
    Ok(core::partition_key(&item, &fields)?.1.to_string())
}

#[wasm_bindgen(js_name = isUuid)]
pub fn is_uuid(value: &str) -> bool {
    core::is_uuid(value)
}

#[wasm_bindgen(js_name = normalizeUuid)]
pub fn normalize_uuid(value: &str) -> Result<String> {
    Ok(core::normalize_uuid(value)?)
}
