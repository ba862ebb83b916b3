//! Import-bucket bindings. Argument types (array, object, string) are checked by
//! `js/imports.mjs`; every value rule lives in `crate::imports`.
//!
//! A batch crosses packed: the distinct dataset names and the distinct raw bucket strings, each
//! as one joined string plus UTF-16 lengths (`crate::packed`), and per item one `u32` reference
//! into each table. Dataset references at the top of the `u32` range mean "not an object",
//! "no dataset field" and "dataset not a string"; bucket reference 0 means "no bucket", 1 "not a
//! string", `2 + i` the `i`-th raw bucket string.

use js_sys::{Array, Uint32Array};
use wasm_bindgen::prelude::*;

use super::error::{throw, JsError};
use crate::imports::{
    self as core, BucketCount, BucketRef, BucketValue, DatasetRef, DatasetValue, FieldNames,
    ImportBucketError, ImportOptions, ItemValue, OsRandom, PackedItem, PackedItems,
};
use crate::packed::PackedSplitter;

type Result<T> = std::result::Result<T, JsError>;

impl From<ImportBucketError> for JsError {
    fn from(e: ImportBucketError) -> Self {
        JsError(throw("import", e.code(), &e.to_string()))
    }
}

const DATASET_NOT_OBJECT: u32 = u32::MAX;
const DATASET_MISSING: u32 = u32::MAX - 1;
const DATASET_NOT_STRING: u32 = u32::MAX - 2;
const BUCKET_ABSENT: u32 = 0;
const BUCKET_NOT_STRING: u32 = 1;

fn unpack(joined: &str, lens: &[u32]) -> std::result::Result<Vec<String>, ImportBucketError> {
    let bad = |e: crate::packed::PackedError| ImportBucketError::invalid_argument(e.to_string());
    let mut split = PackedSplitter::new(joined);
    let mut scratch = Vec::new();
    let mut out = Vec::with_capacity(lens.len());
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

/// N from a JS value: a number goes to the core's check; anything else is rejected here.
fn bucket_count(value: &JsValue) -> Result<BucketCount> {
    match value.as_f64() {
        Some(n) => Ok(BucketCount::from_f64(n)?),
        None => Err(BucketCount::invalid(&describe(value)).into()),
    }
}

fn describe(value: &JsValue) -> String {
    if value.is_null() {
        "null".to_owned()
    } else if value.is_undefined() {
        "undefined".to_owned()
    } else if let Some(s) = value.as_string() {
        let head: String = s.chars().take(40).collect();
        if head.len() < s.len() {
            format!("{head:?}…")
        } else {
            format!("{head:?}")
        }
    } else if value.as_bool().is_some() {
        "a boolean".to_owned()
    } else if value.is_bigint() {
        "a bigint".to_owned()
    } else if Array::is_array(value) {
        "an array".to_owned()
    } else {
        "an object".to_owned()
    }
}

/// N from the value of `GTC_IMPORT_BUCKETS_DEFAULT` (`undefined` when unset).
#[wasm_bindgen(js_name = importBucketsDefault)]
pub fn import_buckets_default(value: Option<String>) -> Result<u32> {
    Ok(BucketCount::from_env_value(value.as_deref())?.get())
}

/// Checks N; returns it.
#[wasm_bindgen(js_name = checkImportBuckets)]
pub fn check_import_buckets(buckets: JsValue) -> Result<u32> {
    Ok(bucket_count(&buckets)?.get())
}

/// `[table, indices]`: `table` is the distinct buckets joined (36 characters each), `indices` a
/// Uint32Array with each item's index into it.
#[wasm_bindgen(js_name = assignImportBuckets)]
#[allow(clippy::too_many_arguments)]
pub fn assign_import_buckets(
    buckets: JsValue,
    import_id: Option<String>,
    dataset_field: &str,
    bucket_field: &str,
    datasets_joined: &str,
    dataset_lens: &[u32],
    dataset_refs: &[u32],
    buckets_joined: &str,
    bucket_lens: &[u32],
    bucket_refs: &[u32],
) -> Result<Array> {
    let n = bucket_count(&buckets)?;
    let datasets = unpack(datasets_joined, dataset_lens)?;
    let raw = unpack(buckets_joined, bucket_lens)?;
    let batch = batch(&datasets, dataset_refs, &raw, bucket_refs)?;
    let options = ImportOptions {
        buckets: n,
        fields: FieldNames {
            dataset: dataset_field,
            bucket: bucket_field,
        },
        import_id: import_id.as_deref(),
    };
    let a = core::assign_packed(&batch, &options, &mut OsRandom)?;
    let table: String = a.buckets.iter().map(|u| u.to_string()).collect();
    Ok(Array::of2(
        &JsValue::from_str(&table),
        &Uint32Array::from(a.item_buckets.as_slice()),
    ))
}

/// `[keyDatasets, keyBuckets, itemGroups]`: per group its dataset's index and its bucket (joined,
/// 36 characters each), per item its group.
#[wasm_bindgen(js_name = groupByPartitionKey)]
#[allow(clippy::too_many_arguments)]
pub fn group_by_partition_key(
    dataset_field: &str,
    bucket_field: &str,
    datasets_joined: &str,
    dataset_lens: &[u32],
    dataset_refs: &[u32],
    buckets_joined: &str,
    bucket_lens: &[u32],
    bucket_refs: &[u32],
) -> Result<Array> {
    let datasets = unpack(datasets_joined, dataset_lens)?;
    let raw = unpack(buckets_joined, bucket_lens)?;
    let batch = batch(&datasets, dataset_refs, &raw, bucket_refs)?;
    let fields = FieldNames {
        dataset: dataset_field,
        bucket: bucket_field,
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
    dataset: JsValue,
    bucket: JsValue,
    dataset_field: &str,
    bucket_field: &str,
) -> Result<String> {
    let dataset_text = dataset.as_string();
    let bucket_text = bucket.as_string();
    let item = if !is_object {
        ItemValue::NotObject
    } else {
        ItemValue::Object {
            dataset: match (&dataset_text, dataset.is_undefined()) {
                (Some(s), _) => DatasetValue::Str(s),
                (None, true) => DatasetValue::Missing,
                (None, false) => DatasetValue::NotString,
            },
            bucket: match &bucket_text {
                Some(s) => BucketValue::Str(s),
                None if bucket.is_undefined() || bucket.is_null() => BucketValue::Absent,
                None => BucketValue::NotString,
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
