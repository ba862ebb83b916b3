//! UUID buckets for bulk imports.
//!
//! An import is split, per dataset, into a few UUID buckets so that writes spread across a
//! store's logical partitions (e.g. Cosmos DB hierarchical keys `[datasetName, bucket]`). This
//! module is the pure core: it validates a batch, decides which bucket every item goes to, and
//! groups items by partition key. It never touches JavaScript and never picks a random generator
//! itself (see [`RandomSource`]).
//!
//! # The rule
//! For each dataset independently, the items that carry no bucket get
//! `k = max(1, min(N, count))` buckets (`count` = how many bucketless items the dataset has, `N`
//! = [`BucketCount`], default 5) and are assigned round-robin in input order: the `i`-th
//! bucketless item of the dataset goes to `buckets[i % k]`, so bucket sizes differ by at most 1.
//! Items that already carry a bucket keep it, normalised to the canonical lower-case form.
//! Everything is validated before anything is assigned: on error nothing is returned.
//!
//! # Random or derived buckets
//! Without an import id the `k` buckets are fresh v4 UUIDs (122 random bits from the injected
//! [`RandomSource`]). With an import id, bucket `j` of dataset `d` is the v5 UUID
//! [`import_bucket_uuid`]`(import_id, d, j)`: retrying the same import (same items in the same
//! order, same N, same import id) assigns exactly the same buckets, so a retried write lands in
//! the same logical partition and overwrites instead of duplicating.
//!
//! # Example
//! ```
//! use partkit::imports::{assign_import_buckets, ImportItem, ImportOptions, BucketCount, OsRandom};
//! let items: Vec<ImportItem> = (0..10).map(|_| ImportItem::new("faq", None)).collect();
//! let options = ImportOptions { buckets: BucketCount::new(3)?, import_id: Some("import-42"), ..Default::default() };
//! let buckets = assign_import_buckets(&items, &options, &mut OsRandom)?;
//! assert_eq!(buckets[0], buckets[3]);
//! assert_ne!(buckets[0], buckets[1]);
//! // Derived, so a retry gives the same buckets:
//! assert_eq!(buckets, assign_import_buckets(&items, &options, &mut OsRandom)?);
//! # Ok::<(), partkit::imports::ImportBucketError>(())
//! ```

mod config;
mod error;
mod rng;
mod sha1;
mod uuid;

use std::collections::HashMap;

#[cfg_attr(
    not(all(target_arch = "wasm32", feature = "imports")),
    allow(unused_imports)
)]
pub(crate) use self::config::display_from_js;
pub use self::config::{
    BucketCount, BUCKETS_DEFAULT_ENV, DEFAULT_BUCKETS, MAX_BUCKETS, MIN_BUCKETS,
};
pub use self::error::ImportBucketError;
pub use self::rng::{OsRandom, RandomSource};
pub use self::uuid::{is_uuid, normalize_uuid, Uuid, NIL_UUID};

use self::error::{At, DatasetProblem, ErrorKind};

/// The namespace of derived bucket UUIDs: the v5 UUID of `urn:partkit:import-bucket:v1` in the
/// RFC 9562 URL namespace (`04165046-af2f-57a0-b4b6-08b285f3f5e3`).
///
/// # Examples
/// ```
/// use partkit::imports::{Uuid, IMPORT_BUCKET_NAMESPACE};
/// assert_eq!(IMPORT_BUCKET_NAMESPACE, Uuid::new_v5(&Uuid::NAMESPACE_URL, b"urn:partkit:import-bucket:v1"));
/// ```
pub const IMPORT_BUCKET_NAMESPACE: Uuid = Uuid::from_bytes([
    0x04, 0x16, 0x50, 0x46, 0xaf, 0x2f, 0x57, 0xa0, 0xb4, 0xb6, 0x08, 0xb2, 0x85, 0xf3, 0xf5, 0xe3,
]);

/// The name that [`import_bucket_uuid`] hashes: `"<L1>:<importId>,<L2>:<dataset>,<j>"` where
/// `L1`, `L2` are the UTF-8 byte lengths in decimal (netstring style), so that no two different
/// tuples give the same name however their strings are chosen.
///
/// # Examples
/// ```
/// assert_eq!(partkit::imports::import_bucket_name("import-1", "données", 2), "8:import-1,8:données,2");
/// ```
pub fn import_bucket_name(import_id: &str, dataset: &str, j: u32) -> String {
    format!(
        "{}:{import_id},{}:{dataset},{j}",
        import_id.len(),
        dataset.len()
    )
}

/// The derived bucket `j` of `dataset` in the import `import_id`: the v5 (SHA-1) UUID of
/// [`import_bucket_name`]`(import_id, dataset, j)` in [`IMPORT_BUCKET_NAMESPACE`].
///
/// v5 rather than v8-over-SHA-256: any standard UUID library recomputes it (Python's
/// `uuid.uuid5(ns, name)`, the npm `uuid` package's `v5`), and collision resistance against an
/// adversary is not what a bucket id needs (a collision only merges two partitions).
///
/// # Errors
/// `IMPORT_ID_INVALID` when `import_id` is empty.
///
/// # Examples
/// ```
/// use partkit::imports::import_bucket_uuid;
/// // Same as Python: uuid.uuid5(uuid.UUID("04165046-af2f-57a0-b4b6-08b285f3f5e3"), "8:import-1,2:ds,0")
/// assert_eq!(import_bucket_uuid("import-1", "ds", 0)?.to_string(), "99c96268-95f0-5e8f-9675-2ead558b2345");
/// # Ok::<(), partkit::imports::ImportBucketError>(())
/// ```
pub fn import_bucket_uuid(
    import_id: &str,
    dataset: &str,
    j: u32,
) -> Result<Uuid, ImportBucketError> {
    check_import_id(import_id)?;
    Ok(Uuid::new_v5(
        &IMPORT_BUCKET_NAMESPACE,
        import_bucket_name(import_id, dataset, j).as_bytes(),
    ))
}

fn check_import_id(import_id: &str) -> Result<(), ImportBucketError> {
    if import_id.is_empty() {
        Err(ImportBucketError(ErrorKind::ImportIdInvalid))
    } else {
        Ok(())
    }
}

/// The names of the dataset and bucket fields of an item (used in error messages).
///
/// # Examples
/// ```
/// let f = partkit::imports::FieldNames::default();
/// assert_eq!((f.dataset, f.bucket), ("datasetName", "bucket"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldNames<'a> {
    /// The dataset field, default `datasetName`.
    pub dataset: &'a str,
    /// The bucket field, default `bucket`.
    pub bucket: &'a str,
}

impl Default for FieldNames<'_> {
    fn default() -> Self {
        FieldNames {
            dataset: "datasetName",
            bucket: "bucket",
        }
    }
}

/// Options of an assignment.
///
/// # Examples
/// ```
/// use partkit::imports::ImportOptions;
/// let o = ImportOptions::default();
/// assert_eq!((o.buckets.get(), o.import_id), (5, None));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ImportOptions<'a> {
    /// N, the most buckets a dataset gets in one import.
    pub buckets: BucketCount,
    /// Field names, for messages.
    pub fields: FieldNames<'a>,
    /// When set, buckets are derived from it ([`import_bucket_uuid`]) instead of random.
    pub import_id: Option<&'a str>,
}

/// A well-formed item: its dataset and, if it has one, its bucket (any accepted UUID form).
///
/// # Examples
/// ```
/// use partkit::imports::ImportItem;
/// let item = ImportItem::new("faq", Some("00000000-0000-0000-0000-000000000000"));
/// assert_eq!(item.dataset, "faq");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImportItem<'a> {
    /// The dataset name; must not be empty.
    pub dataset: &'a str,
    /// The pre-assigned bucket, if any.
    pub bucket: Option<&'a str>,
}

impl<'a> ImportItem<'a> {
    /// An item of `dataset` with an optional pre-assigned bucket.
    ///
    /// # Examples
    /// ```
    /// assert_eq!(partkit::imports::ImportItem::new("a", None).bucket, None);
    /// ```
    pub fn new(dataset: &'a str, bucket: Option<&'a str>) -> Self {
        ImportItem { dataset, bucket }
    }
}

/// What an item's dataset field holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DatasetValue<'a> {
    /// A string (an empty one is rejected).
    Str(&'a str),
    /// No such field (or `undefined`).
    Missing,
    /// Some other type (`null`, a number, an object…).
    NotString,
}

/// What an item's bucket field holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BucketValue<'a> {
    /// No bucket: no such field, `undefined` or `null`.
    Absent,
    /// A string, which must be a UUID.
    Str(&'a str),
    /// Some other type (a number, an object…): rejected.
    NotString,
}

/// Any input item, including malformed ones, as a calling layer sees it.
///
/// # Examples
/// ```
/// use partkit::imports::{ItemValue, DatasetValue, BucketValue, ImportItem};
/// let v: ItemValue = ImportItem::new("faq", None).into();
/// assert_eq!(v, ItemValue::Object { dataset: DatasetValue::Str("faq"), bucket: BucketValue::Absent });
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemValue<'a> {
    /// Not an object (a string, a number, `null`, an array…).
    NotObject,
    /// An object with these fields.
    Object {
        /// Its dataset field.
        dataset: DatasetValue<'a>,
        /// Its bucket field.
        bucket: BucketValue<'a>,
    },
}

impl<'a> From<ImportItem<'a>> for ItemValue<'a> {
    fn from(item: ImportItem<'a>) -> Self {
        ItemValue::Object {
            dataset: DatasetValue::Str(item.dataset),
            bucket: item.bucket.map_or(BucketValue::Absent, BucketValue::Str),
        }
    }
}

/// An item of a [`PackedItems`] batch: its dataset and bucket as indices into the batch's string
/// tables, or the reason there is none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PackedItem {
    /// The dataset.
    pub dataset: DatasetRef,
    /// The bucket.
    pub bucket: BucketRef,
}

/// An item's dataset in a [`PackedItems`] batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DatasetRef {
    /// Index into [`PackedItems::datasets`].
    Index(u32),
    /// The item is not an object.
    NotObject,
    /// No dataset field.
    Missing,
    /// A dataset field that is not a string.
    NotString,
}

/// An item's bucket in a [`PackedItems`] batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BucketRef {
    /// No bucket.
    Absent,
    /// Index into [`PackedItems::buckets`].
    Index(u32),
    /// A bucket field that is not a string.
    NotString,
}

/// A batch in compact form: each distinct dataset name and raw bucket string once, and per item
/// two small references. This is what crosses the WebAssembly boundary for large imports.
///
/// Each entry of `datasets` is one dataset: [`PackedItems::from_values`] interns names, and a
/// calling layer must too (the JS layer interns by JavaScript string identity, so two names that
/// differ only in lone surrogates stay two datasets). Entries of `buckets` may repeat. Every index
/// must be in range, else the call fails with `INVALID_ARGUMENT`.
///
/// # Examples
/// ```
/// use partkit::imports::{PackedItems, ItemValue, ImportItem};
/// let values: Vec<ItemValue> = vec![ImportItem::new("a", None).into(), ImportItem::new("a", None).into()];
/// let packed = PackedItems::from_values(&values);
/// assert_eq!(packed.datasets, vec!["a"]);
/// assert_eq!(packed.items.len(), 2);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PackedItems<'a> {
    /// Dataset names.
    pub datasets: Vec<&'a str>,
    /// Raw (unvalidated) bucket strings.
    pub buckets: Vec<&'a str>,
    /// The items, in input order.
    pub items: Vec<PackedItem>,
}

impl<'a> PackedItems<'a> {
    /// Packs item values, interning dataset names and bucket strings.
    ///
    /// # Examples
    /// ```
    /// use partkit::imports::{PackedItems, ItemValue};
    /// assert!(PackedItems::from_values(&[ItemValue::NotObject]).datasets.is_empty());
    /// ```
    pub fn from_values(values: &[ItemValue<'a>]) -> Self {
        let mut packed = PackedItems::default();
        let mut dataset_ids: HashMap<&'a str, u32> = HashMap::new();
        let mut bucket_ids: HashMap<&'a str, u32> = HashMap::new();
        packed.items.reserve(values.len());
        for value in values {
            let item = match *value {
                ItemValue::NotObject => PackedItem {
                    dataset: DatasetRef::NotObject,
                    bucket: BucketRef::Absent,
                },
                ItemValue::Object { dataset, bucket } => PackedItem {
                    dataset: match dataset {
                        DatasetValue::Str(s) => {
                            DatasetRef::Index(intern(&mut packed.datasets, &mut dataset_ids, s))
                        }
                        DatasetValue::Missing => DatasetRef::Missing,
                        DatasetValue::NotString => DatasetRef::NotString,
                    },
                    bucket: match bucket {
                        BucketValue::Str(s) => {
                            BucketRef::Index(intern(&mut packed.buckets, &mut bucket_ids, s))
                        }
                        BucketValue::Absent => BucketRef::Absent,
                        BucketValue::NotString => BucketRef::NotString,
                    },
                },
            };
            packed.items.push(item);
        }
        packed
    }

    /// Packs well-formed items.
    ///
    /// # Examples
    /// ```
    /// use partkit::imports::{PackedItems, ImportItem};
    /// let p = PackedItems::from_items(&[ImportItem::new("a", None), ImportItem::new("b", None)]);
    /// assert_eq!(p.datasets, vec!["a", "b"]);
    /// ```
    pub fn from_items(items: &[ImportItem<'a>]) -> Self {
        let values: Vec<ItemValue<'a>> = items.iter().map(|&i| i.into()).collect();
        Self::from_values(&values)
    }
}

fn intern<'a>(table: &mut Vec<&'a str>, ids: &mut HashMap<&'a str, u32>, s: &'a str) -> u32 {
    if let Some(&id) = ids.get(s) {
        return id;
    }
    // A batch never holds 2^32 distinct strings (JS arrays are shorter than that).
    let id = u32::try_from(table.len()).unwrap_or(u32::MAX);
    table.push(s);
    ids.insert(s, id);
    id
}

/// The result of an assignment: a table of distinct buckets and, per input item, the index of its
/// bucket in that table.
///
/// # Examples
/// ```
/// use partkit::imports::{assign_packed, PackedItems, ImportItem, ImportOptions, OsRandom};
/// let batch = PackedItems::from_items(&[ImportItem::new("a", None)]);
/// let a = assign_packed(&batch, &ImportOptions::default(), &mut OsRandom)?;
/// assert_eq!(a.buckets.len(), 1);
/// assert_eq!(a.item_buckets, vec![0]);
/// assert_eq!(a.bucket_of(0), Some(a.buckets[0]));
/// # Ok::<(), partkit::imports::ImportBucketError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Assignment {
    /// Distinct buckets, pre-assigned and new, in order of first use.
    pub buckets: Vec<Uuid>,
    /// Per input item, an index into `buckets`.
    pub item_buckets: Vec<u32>,
}

impl Assignment {
    /// The bucket of item `i`, or `None` when `i` is out of range.
    ///
    /// # Examples
    /// ```
    /// assert_eq!(partkit::imports::Assignment::default().bucket_of(0), None);
    /// ```
    pub fn bucket_of(&self, i: usize) -> Option<Uuid> {
        let idx = *self.item_buckets.get(i)?;
        self.buckets.get(usize::try_from(idx).ok()?).copied()
    }
}

/// What validation learns about a batch.
struct Resolved {
    /// Per item, its dataset (an index into the batch's `datasets`).
    item_dataset: Vec<u32>,
    /// Per item, its pre-assigned bucket if any.
    item_bucket: Vec<Option<Uuid>>,
}

fn out_of_range(what: &str, index: u32, len: usize) -> ImportBucketError {
    ImportBucketError::invalid_argument(format!(
        "packed batch: {what} index {index} out of range (table has {len} entries)"
    ))
}

/// Validates every item of `batch`, in input order; the first problem found is returned.
fn resolve(
    batch: &PackedItems<'_>,
    fields: &FieldNames<'_>,
    require_bucket: bool,
) -> Result<Resolved, ImportBucketError> {
    let parsed: Vec<Option<Uuid>> = batch.buckets.iter().map(|s| Uuid::parse(s)).collect();

    let mut item_dataset = Vec::with_capacity(batch.items.len());
    let mut item_bucket = Vec::with_capacity(batch.items.len());
    for (i, item) in batch.items.iter().enumerate() {
        let at = At::Index(i);
        let missing = |problem| {
            ImportBucketError(ErrorKind::DatasetMissing {
                at,
                field: fields.dataset.to_owned(),
                problem,
            })
        };
        let d = match item.dataset {
            DatasetRef::NotObject => {
                return Err(ImportBucketError(ErrorKind::ItemNotObject { at }))
            }
            DatasetRef::Missing => return Err(missing(DatasetProblem::Missing)),
            DatasetRef::NotString => return Err(missing(DatasetProblem::NotString)),
            DatasetRef::Index(d) => d,
        };
        let Some(name) = usize::try_from(d).ok().and_then(|s| batch.datasets.get(s)) else {
            return Err(out_of_range("dataset", d, batch.datasets.len()));
        };
        if name.is_empty() {
            return Err(missing(DatasetProblem::Empty));
        }
        let bucket = match item.bucket {
            BucketRef::Absent if require_bucket => {
                return Err(ImportBucketError(ErrorKind::BucketMissing {
                    at,
                    field: fields.bucket.to_owned(),
                }))
            }
            BucketRef::Absent => None,
            BucketRef::NotString => {
                return Err(ImportBucketError(ErrorKind::BucketNotString {
                    at,
                    field: fields.bucket.to_owned(),
                }))
            }
            BucketRef::Index(b) => {
                let slot = usize::try_from(b).ok();
                let (Some(p), Some(raw)) = (
                    slot.and_then(|s| parsed.get(s)),
                    slot.and_then(|s| batch.buckets.get(s)),
                ) else {
                    return Err(out_of_range("bucket", b, batch.buckets.len()));
                };
                match p {
                    Some(u) => Some(*u),
                    None => {
                        return Err(ImportBucketError(ErrorKind::BucketNotUuid {
                            at,
                            field: fields.bucket.to_owned(),
                            value: (*raw).to_owned(),
                        }))
                    }
                }
            }
        };
        item_dataset.push(d);
        item_bucket.push(bucket);
    }
    Ok(Resolved {
        item_dataset,
        item_bucket,
    })
}

/// A table of distinct UUIDs with their indices.
#[derive(Default)]
struct Table {
    list: Vec<Uuid>,
    index: HashMap<Uuid, u32>,
}

impl Table {
    fn id(&mut self, u: Uuid) -> u32 {
        if let Some(&i) = self.index.get(&u) {
            return i;
        }
        let i = u32::try_from(self.list.len()).unwrap_or(u32::MAX);
        self.list.push(u);
        self.index.insert(u, i);
        i
    }
}

/// Assigns buckets to a packed batch (see the [module docs](self) for the rule).
///
/// `rng` is used only when `options.import_id` is `None`, and then called exactly once (for
/// `16 × Σk` bytes) if any item needs a bucket.
///
/// # Errors
/// - `IMPORT_ID_INVALID`: `options.import_id` is `Some("")`.
/// - `ITEM_NOT_OBJECT`, `DATASET_MISSING` (missing, not a string, or empty), `BUCKET_NOT_UUID`
///   (a pre-assigned bucket that is not a string or not a UUID): the first offending item in
///   input order, checked in that order within an item.
/// - `INVALID_ARGUMENT`: an index out of range in `batch`.
/// - `RANDOM_UNAVAILABLE`: `rng` failed.
///
/// # Examples
/// ```
/// use partkit::imports::{assign_packed, PackedItems, ImportItem, ImportOptions, OsRandom, NIL_UUID};
/// let items = [ImportItem::new("a", Some("00000000-0000-0000-0000-000000000000")), ImportItem::new("a", None)];
/// let a = assign_packed(&PackedItems::from_items(&items), &ImportOptions::default(), &mut OsRandom)?;
/// assert_eq!(a.bucket_of(0), Some(NIL_UUID));
/// assert_eq!(a.bucket_of(1).map(|u| u.version()), Some(4));
/// # Ok::<(), partkit::imports::ImportBucketError>(())
/// ```
pub fn assign_packed(
    batch: &PackedItems<'_>,
    options: &ImportOptions<'_>,
    rng: &mut dyn RandomSource,
) -> Result<Assignment, ImportBucketError> {
    if let Some(id) = options.import_id {
        check_import_id(id)?;
    }
    let resolved = resolve(batch, &options.fields, false)?;

    // Bucketless items per dataset, and datasets in order of first bucketless item.
    let mut counts: Vec<usize> = vec![0; batch.datasets.len()];
    let mut order: Vec<u32> = Vec::new();
    for (d, b) in resolved.item_dataset.iter().zip(&resolved.item_bucket) {
        if b.is_none() {
            if let Some(c) = counts.get_mut(usize::try_from(*d).unwrap_or(usize::MAX)) {
                if *c == 0 {
                    order.push(*d);
                }
                *c += 1;
            }
        }
    }

    let n = usize::try_from(options.buckets.get()).unwrap_or(1);
    let k_of = |d: u32| -> usize {
        let count = counts
            .get(usize::try_from(d).unwrap_or(usize::MAX))
            .copied()
            .unwrap_or(0);
        count.min(n).max(1)
    };

    // New buckets per dataset, in `order`.
    let mut new_buckets: Vec<Vec<Uuid>> = Vec::with_capacity(order.len());
    match options.import_id {
        Some(import_id) => {
            for &d in &order {
                let name = batch
                    .datasets
                    .get(usize::try_from(d).unwrap_or(usize::MAX))
                    .copied()
                    .unwrap_or("");
                let k = k_of(d);
                let mut list = Vec::with_capacity(k);
                for j in 0..k {
                    let j = u32::try_from(j).unwrap_or(u32::MAX);
                    list.push(Uuid::new_v5(
                        &IMPORT_BUCKET_NAMESPACE,
                        import_bucket_name(import_id, name, j).as_bytes(),
                    ));
                }
                new_buckets.push(list);
            }
        }
        None => {
            let total: usize = order.iter().map(|&d| k_of(d)).sum();
            let mut bytes = vec![0u8; total * 16];
            if total > 0 {
                rng.fill(&mut bytes)?;
            }
            let mut chunks = bytes.chunks_exact(16);
            for &d in &order {
                let mut list = Vec::with_capacity(k_of(d));
                for _ in 0..k_of(d) {
                    let mut raw = [0u8; 16];
                    if let Some(chunk) = chunks.next() {
                        raw.copy_from_slice(chunk);
                    }
                    list.push(Uuid::new_v4_from_random_bytes(raw));
                }
                new_buckets.push(list);
            }
        }
    }

    // Table ids: per dataset the ids of its new buckets.
    let mut table = Table::default();
    let mut new_ids: Vec<Vec<u32>> = vec![Vec::new(); batch.datasets.len()];
    for (&d, list) in order.iter().zip(&new_buckets) {
        if let Some(slot) = new_ids.get_mut(usize::try_from(d).unwrap_or(usize::MAX)) {
            *slot = list.iter().map(|u| table.id(*u)).collect();
        }
    }
    // Pre-assigned buckets go into the table in order of first use, after the new ones.
    let mut seen: Vec<usize> = vec![0; batch.datasets.len()];
    let mut item_buckets = Vec::with_capacity(resolved.item_dataset.len());
    for (d, b) in resolved.item_dataset.iter().zip(&resolved.item_bucket) {
        let id = match b {
            Some(u) => table.id(*u),
            None => {
                let slot = usize::try_from(*d).unwrap_or(usize::MAX);
                let ids = new_ids.get(slot).map(Vec::as_slice).unwrap_or(&[]);
                let i = seen.get_mut(slot).map(|s| {
                    let i = *s;
                    *s += 1;
                    i
                });
                match (i, ids.len()) {
                    (Some(i), k) if k > 0 => ids.get(i % k).copied().unwrap_or(0),
                    // Unreachable: every bucketless item's dataset got k ≥ 1 new buckets.
                    _ => {
                        return Err(ImportBucketError::invalid_argument(
                            "internal: dataset without buckets",
                        ))
                    }
                }
            }
        };
        item_buckets.push(id);
    }
    Ok(Assignment {
        buckets: table.list,
        item_buckets,
    })
}

/// Assigns buckets to well-formed items and returns each item's bucket, in input order.
///
/// # Errors
/// As [`assign_packed`].
///
/// # Examples
/// ```
/// use partkit::imports::{assign_import_buckets, ImportItem, ImportOptions, OsRandom};
/// let items = [ImportItem::new("a", None), ImportItem::new("b", None)];
/// let b = assign_import_buckets(&items, &ImportOptions::default(), &mut OsRandom)?;
/// assert_eq!(b.len(), 2);
/// assert_ne!(b[0], b[1]);
/// # Ok::<(), partkit::imports::ImportBucketError>(())
/// ```
pub fn assign_import_buckets(
    items: &[ImportItem<'_>],
    options: &ImportOptions<'_>,
    rng: &mut dyn RandomSource,
) -> Result<Vec<Uuid>, ImportBucketError> {
    let a = assign_packed(&PackedItems::from_items(items), options, rng)?;
    Ok(a.item_buckets
        .iter()
        .map(|&i| {
            a.buckets
                .get(usize::try_from(i).unwrap_or(usize::MAX))
                .copied()
                .unwrap_or(NIL_UUID)
        })
        .collect())
}

/// A partition key `[dataset, bucket]` of a [`Grouping`]: the dataset as an index into the
/// batch's `datasets` table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PackedKey {
    /// Index into [`PackedItems::datasets`].
    pub dataset: u32,
    /// The normalised bucket.
    pub bucket: Uuid,
}

/// Items grouped by partition key: the keys in order of first appearance and, per item, its
/// group's index.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Grouping {
    /// Distinct partition keys in order of first appearance.
    pub keys: Vec<PackedKey>,
    /// Per input item, an index into `keys`.
    pub item_groups: Vec<u32>,
}

/// Groups a packed batch by partition key `[dataset, normalised bucket]`.
///
/// # Errors
/// `ITEM_NOT_OBJECT`, `DATASET_MISSING`, `BUCKET_MISSING` (an item without bucket),
/// `BUCKET_NOT_UUID`, `INVALID_ARGUMENT`: the first offending item in input order.
///
/// # Examples
/// ```
/// use partkit::imports::{group_packed, PackedItems, ImportItem, FieldNames};
/// let nil = "00000000-0000-0000-0000-000000000000";
/// let items = [ImportItem::new("a", Some(nil)), ImportItem::new("b", Some(nil)), ImportItem::new("a", Some(nil))];
/// let g = group_packed(&PackedItems::from_items(&items), &FieldNames::default())?;
/// assert_eq!(g.keys.len(), 2);
/// assert_eq!(g.item_groups, vec![0, 1, 0]);
/// # Ok::<(), partkit::imports::ImportBucketError>(())
/// ```
pub fn group_packed(
    batch: &PackedItems<'_>,
    fields: &FieldNames<'_>,
) -> Result<Grouping, ImportBucketError> {
    let resolved = resolve(batch, fields, true)?;
    let mut index: HashMap<PackedKey, u32> = HashMap::new();
    let mut grouping = Grouping::default();
    grouping.item_groups.reserve(resolved.item_dataset.len());
    for (d, b) in resolved.item_dataset.iter().zip(&resolved.item_bucket) {
        let key = PackedKey {
            dataset: *d,
            bucket: b.unwrap_or(NIL_UUID),
        };
        let g = match index.get(&key) {
            Some(&g) => g,
            None => {
                let g = u32::try_from(grouping.keys.len()).unwrap_or(u32::MAX);
                grouping.keys.push(key);
                index.insert(key, g);
                g
            }
        };
        grouping.item_groups.push(g);
    }
    Ok(grouping)
}

/// The partition key `(dataset, normalised bucket)` of one item.
///
/// # Errors
/// `ITEM_NOT_OBJECT`, `DATASET_MISSING`, `BUCKET_MISSING`, `BUCKET_NOT_UUID`.
///
/// # Examples
/// ```
/// use partkit::imports::{partition_key, ItemValue, DatasetValue, BucketValue, FieldNames, NIL_UUID};
/// let item = ItemValue::Object { dataset: DatasetValue::Str("faq"), bucket: BucketValue::Str("00000000-0000-0000-0000-000000000000") };
/// assert_eq!(partition_key(&item, &FieldNames::default())?, ("faq", NIL_UUID));
/// let item = ItemValue::Object { dataset: DatasetValue::Str("faq"), bucket: BucketValue::Absent };
/// assert_eq!(partition_key(&item, &FieldNames::default()).unwrap_err().code(), "BUCKET_MISSING");
/// # Ok::<(), partkit::imports::ImportBucketError>(())
/// ```
pub fn partition_key<'a>(
    item: &ItemValue<'a>,
    fields: &FieldNames<'_>,
) -> Result<(&'a str, Uuid), ImportBucketError> {
    let at = At::Single;
    let ItemValue::Object { dataset, bucket } = *item else {
        return Err(ImportBucketError(ErrorKind::ItemNotObject { at }));
    };
    let missing = |problem| {
        ImportBucketError(ErrorKind::DatasetMissing {
            at,
            field: fields.dataset.to_owned(),
            problem,
        })
    };
    let name = match dataset {
        DatasetValue::Str("") => return Err(missing(DatasetProblem::Empty)),
        DatasetValue::Str(s) => s,
        DatasetValue::Missing => return Err(missing(DatasetProblem::Missing)),
        DatasetValue::NotString => return Err(missing(DatasetProblem::NotString)),
    };
    let uuid = match bucket {
        BucketValue::Absent => {
            return Err(ImportBucketError(ErrorKind::BucketMissing {
                at,
                field: fields.bucket.to_owned(),
            }))
        }
        BucketValue::NotString => {
            return Err(ImportBucketError(ErrorKind::BucketNotString {
                at,
                field: fields.bucket.to_owned(),
            }))
        }
        BucketValue::Str(s) => Uuid::parse(s).ok_or_else(|| {
            ImportBucketError(ErrorKind::BucketNotUuid {
                at,
                field: fields.bucket.to_owned(),
                value: s.to_owned(),
            })
        })?,
    };
    Ok((name, uuid))
}
