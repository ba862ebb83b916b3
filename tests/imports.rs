//! Tests of the import-bucket core: the shipped service's cases, determinism, validation errors,
//! differential checks against the `uuid` crate, and proptest invariants.

use std::collections::{HashMap, HashSet};

use partkit::imports::*;
use proptest::prelude::*;

/// A seeded SplitMix64 generator: deterministic tests, never used for real buckets.
struct SeededRandom(u64);

impl RandomSource for SeededRandom {
    fn fill(&mut self, dest: &mut [u8]) -> Result<(), ImportBucketError> {
        for b in dest.iter_mut() {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            *b = (z ^ (z >> 31)) as u8;
        }
        Ok(())
    }
}

/// Counts the calls and bytes it was asked for.
#[derive(Default)]
struct Counting {
    calls: usize,
    bytes: usize,
}

impl RandomSource for Counting {
    fn fill(&mut self, dest: &mut [u8]) -> Result<(), ImportBucketError> {
        self.calls += 1;
        self.bytes += dest.len();
        OsRandom.fill(dest)
    }
}

struct Broken;

impl RandomSource for Broken {
    fn fill(&mut self, _: &mut [u8]) -> Result<(), ImportBucketError> {
        Err(ImportBucketError::random_unavailable("no entropy"))
    }
}

const NIL: &str = "00000000-0000-0000-0000-000000000000";

fn opts(n: u32) -> ImportOptions<'static> {
    ImportOptions {
        buckets: BucketCount::new(n).unwrap(),
        ..Default::default()
    }
}

fn with_id(n: u32, id: &'static str) -> ImportOptions<'static> {
    ImportOptions {
        import_id: Some(id),
        ..opts(n)
    }
}

fn counts(buckets: &[Uuid]) -> HashMap<Uuid, usize> {
    let mut m = HashMap::new();
    for b in buckets {
        *m.entry(*b).or_insert(0) += 1;
    }
    m
}

#[test]
fn shipped_case_ten_items_three_buckets() {
    let items: Vec<_> = (0..10).map(|_| ImportItem::new("ds", None)).collect();
    let buckets = assign_import_buckets(&items, &opts(3), &mut OsRandom).unwrap();
    let c = counts(&buckets);
    assert_eq!(c.len(), 3);
    let (min, max) = (c.values().min().unwrap(), c.values().max().unwrap());
    assert!(max - min <= 1, "{c:?}");
    for b in &buckets {
        assert!(is_uuid(&b.to_string()));
        assert_eq!((b.version(), b.is_rfc_variant()), (4, true));
    }
    // Round-robin in input order.
    for (i, b) in buckets.iter().enumerate() {
        assert_eq!(*b, buckets[i % 3]);
    }
}

#[test]
fn shipped_case_preassigned_buckets_survive() {
    let upper = "F47AC10B-58CC-4372-A567-0E02B2C3D479";
    let items = [
        ImportItem::new("ds", Some(NIL)),
        ImportItem::new("ds", None),
        ImportItem::new("ds", Some(upper)),
        ImportItem::new("ds", None),
    ];
    let b = assign_import_buckets(&items, &opts(5), &mut OsRandom).unwrap();
    assert_eq!(b[0], NIL_UUID);
    assert_eq!(b[2].to_string(), "f47ac10b-58cc-4372-a567-0e02b2c3d479");
    // Two bucketless items, N=5: k = 2 new buckets.
    assert_ne!(b[1], b[3]);
    assert!(b[1] != NIL_UUID && b[3] != NIL_UUID);
}

#[test]
fn fewer_items_than_n_and_single_item() {
    let items: Vec<_> = (0..3).map(|_| ImportItem::new("ds", None)).collect();
    let b = assign_import_buckets(&items, &opts(50), &mut OsRandom).unwrap();
    assert_eq!(counts(&b).len(), 3);
    let b = assign_import_buckets(&items[..1], &opts(50), &mut OsRandom).unwrap();
    assert_eq!(b.len(), 1);
    assert!(assign_import_buckets(&[], &opts(5), &mut OsRandom)
        .unwrap()
        .is_empty());
}

#[test]
fn several_datasets_are_independent() {
    let mut items = Vec::new();
    for i in 0..30 {
        items.push(ImportItem::new(["a", "b", "c"][i % 3], None));
    }
    items.push(ImportItem::new("d", None));
    let b = assign_import_buckets(&items, &opts(4), &mut OsRandom).unwrap();
    for ds in ["a", "b", "c"] {
        let mine: Vec<Uuid> = items
            .iter()
            .zip(&b)
            .filter(|(it, _)| it.dataset == ds)
            .map(|(_, u)| *u)
            .collect();
        let c = counts(&mine);
        assert_eq!(c.len(), 4, "{ds}");
        assert!(c.values().max().unwrap() - c.values().min().unwrap() <= 1);
        for (i, u) in mine.iter().enumerate() {
            assert_eq!(*u, mine[i % 4]);
        }
    }
    // No bucket shared between datasets.
    let per: HashMap<&str, HashSet<Uuid>> =
        items.iter().zip(&b).fold(HashMap::new(), |mut m, (it, u)| {
            m.entry(it.dataset).or_default().insert(*u);
            m
        });
    let all: HashSet<Uuid> = per.values().flatten().copied().collect();
    assert_eq!(all.len(), 4 * 3 + 1);
}

#[test]
fn randomness_is_drawn_once_per_call() {
    let items: Vec<_> = (0..100)
        .map(|i| ImportItem::new(if i % 2 == 0 { "a" } else { "b" }, None))
        .collect();
    let mut rng = Counting::default();
    assign_import_buckets(&items, &opts(5), &mut rng).unwrap();
    assert_eq!((rng.calls, rng.bytes), (1, 2 * 5 * 16));
    let mut rng = Counting::default();
    assign_import_buckets(&[ImportItem::new("a", Some(NIL))], &opts(5), &mut rng).unwrap();
    assert_eq!(rng.calls, 0);
    let mut rng = Counting::default();
    assign_import_buckets(&items, &with_id(5, "x"), &mut rng).unwrap();
    assert_eq!(rng.calls, 0);
}

#[test]
fn seeded_randomness_is_reproducible() {
    let items: Vec<_> = (0..20).map(|_| ImportItem::new("a", None)).collect();
    let a = assign_import_buckets(&items, &opts(5), &mut SeededRandom(7)).unwrap();
    let b = assign_import_buckets(&items, &opts(5), &mut SeededRandom(7)).unwrap();
    let c = assign_import_buckets(&items, &opts(5), &mut SeededRandom(8)).unwrap();
    assert_eq!(a, b);
    assert_ne!(a, c);
}

#[test]
fn import_id_is_deterministic_and_distinct() {
    let items: Vec<_> = (0..10)
        .map(|i| ImportItem::new(if i < 7 { "a" } else { "b" }, None))
        .collect();
    let x1 = assign_import_buckets(&items, &with_id(3, "import-1"), &mut OsRandom).unwrap();
    let x2 = assign_import_buckets(&items, &with_id(3, "import-1"), &mut OsRandom).unwrap();
    let y = assign_import_buckets(&items, &with_id(3, "import-2"), &mut OsRandom).unwrap();
    assert_eq!(x1, x2);
    let xs: HashSet<_> = x1.iter().collect();
    let ys: HashSet<_> = y.iter().collect();
    assert!(xs.is_disjoint(&ys));
    assert_eq!(xs.len(), 6);
    for u in &x1 {
        assert_eq!((u.version(), u.is_rfc_variant()), (5, true));
    }
    // Bucket j of dataset d is import_bucket_uuid(id, d, j).
    assert_eq!(x1[0], import_bucket_uuid("import-1", "a", 0).unwrap());
    assert_eq!(x1[4], import_bucket_uuid("import-1", "a", 1).unwrap());
    assert_eq!(x1[9], import_bucket_uuid("import-1", "b", 2).unwrap());
}

#[test]
fn derived_bucket_vectors_match_python_uuid5() {
    // Computed independently with Python: uuid.uuid5(NS, f"{len(i.encode())}:{i},{len(d.encode())}:{d},{j}")
    assert_eq!(
        IMPORT_BUCKET_NAMESPACE.to_string(),
        "04165046-af2f-57a0-b4b6-08b285f3f5e3"
    );
    let cases = [
        ("import-1", "ds", 0, "99c96268-95f0-5e8f-9675-2ead558b2345"),
        ("import-1", "ds", 1, "1e48ad0f-4dd6-5a23-940a-68acbb9ad6de"),
        (
            "import-1",
            "other",
            0,
            "5e440d7c-5372-5020-b29c-f069fbcf2f52",
        ),
        (
            "retry-ü",
            "données",
            49,
            "973d3dab-5da4-59eb-a491-c576fab0bb0a",
        ),
    ];
    for (id, d, j, want) in cases {
        assert_eq!(import_bucket_uuid(id, d, j).unwrap().to_string(), want);
    }
}

#[test]
fn name_encoding_cannot_be_confused_by_concatenation() {
    let pairs = [
        (("ab", "c"), ("a", "bc")),
        (("a,1:b", "c"), ("a", "b,1:c")),
        (("1:a,1:b", "x"), ("1", "a")),
    ];
    for ((i1, d1), (i2, d2)) in pairs {
        assert_ne!(import_bucket_name(i1, d1, 0), import_bucket_name(i2, d2, 0));
        assert_ne!(
            import_bucket_uuid(i1, d1, 0).unwrap(),
            import_bucket_uuid(i2, d2, 0).unwrap()
        );
    }
    assert_ne!(
        import_bucket_name("a", "b", 1),
        import_bucket_name("a", "b", 11)
    );
}

#[test]
fn v4_bits_and_uuid_crate_agree() {
    for seed in 0..200u64 {
        let mut raw = [0u8; 16];
        SeededRandom(seed).fill(&mut raw).unwrap();
        let ours = Uuid::new_v4_from_random_bytes(raw);
        let theirs = uuid::Builder::from_random_bytes(raw).into_uuid();
        assert_eq!(ours.to_string(), theirs.to_string());
        assert_eq!(ours.as_bytes()[6] >> 4, 4);
        assert_eq!(ours.as_bytes()[8] & 0xc0, 0x80);
    }
}

#[test]
fn v5_matches_uuid_crate_and_rfc_vector() {
    let dns = Uuid::parse("6ba7b810-9dad-11d1-80b4-00c04fd430c8").unwrap();
    assert_eq!(
        Uuid::new_v5(&dns, b"www.example.com").to_string(),
        "2ed6657d-e927-568b-95e1-2665a8aea6a2"
    );
    assert_eq!(
        Uuid::new_v5(&Uuid::NAMESPACE_URL, b"urn:partkit:import-bucket:v1"),
        IMPORT_BUCKET_NAMESPACE
    );
    let ns = uuid::Uuid::from_bytes(*IMPORT_BUCKET_NAMESPACE.as_bytes());
    let name = import_bucket_name("id", "ds", 3);
    assert_eq!(
        import_bucket_uuid("id", "ds", 3).unwrap().to_string(),
        uuid::Uuid::new_v5(&ns, name.as_bytes()).to_string()
    );
}

#[test]
fn uuid_forms() {
    assert!(is_uuid(NIL));
    assert!(is_uuid("ffffffff-ffff-ffff-ffff-ffffffffffff"));
    assert!(is_uuid("F47AC10B-58cc-4372-A567-0e02b2c3d479"));
    for bad in [
        "",
        "f47ac10b58cc4372a5670e02b2c3d479",
        "{f47ac10b-58cc-4372-a567-0e02b2c3d479}",
        "urn:uuid:f47ac10b-58cc-4372-a567-0e02b2c3d479",
        " f47ac10b-58cc-4372-a567-0e02b2c3d479",
        "f47ac10b-58cc-4372-a567-0e02b2c3d479 ",
        "f47ac10b-58cc-4372-a567-0e02b2c3d47g",
        "f47ac10b-58cc-4372-a5670-e02b2c3d479",
        "f47ac10b-58cc-4372-a567-0e02b2c3d4790",
        "f47ac10b_58cc_4372_a567_0e02b2c3d479",
        "f47ac10b-58cc-4372-a567-0e02b2c3d4é",
        "+47ac10b-58cc-4372-a567-0e02b2c3d479",
    ] {
        assert!(!is_uuid(bad), "{bad:?}");
        assert_eq!(normalize_uuid(bad).unwrap_err().code(), "UUID_INVALID");
    }
    assert_eq!(
        normalize_uuid("ABCDEF01-2345-6789-ABCD-EF0123456789").unwrap(),
        "abcdef01-2345-6789-abcd-ef0123456789"
    );
    assert_eq!(
        normalize_uuid("x").unwrap_err().to_string(),
        "\"x\" is not a uuid (expected 8-4-4-4-12 hex digits)"
    );
}

#[test]
fn bucket_count_bounds() {
    for n in [1, 5, 50] {
        assert_eq!(BucketCount::new(n).unwrap().get(), n);
        assert_eq!(BucketCount::from_f64(f64::from(n)).unwrap().get(), n);
    }
    for n in [0, 51, u32::MAX] {
        assert_eq!(BucketCount::new(n).unwrap_err().code(), "BUCKETS_INVALID");
    }
    for x in [
        0.0,
        -0.0,
        -1.0,
        0.5,
        2.5,
        50.5,
        51.0,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        1e300,
    ] {
        assert_eq!(
            BucketCount::from_f64(x).unwrap_err().code(),
            "BUCKETS_INVALID",
            "{x}"
        );
    }
    assert_eq!(
        BucketCount::from_f64(f64::NAN).unwrap_err().to_string(),
        "bucket count must be an integer in [1, 50], got NaN"
    );
    assert_eq!(
        BucketCount::from_f64(51.0).unwrap_err().to_string(),
        "bucket count must be an integer in [1, 50], got 51"
    );
}

#[test]
fn env_default_parsing() {
    assert_eq!(BucketCount::from_env_value(None).unwrap().get(), 5);
    assert_eq!(BucketCount::from_env_value(Some("")).unwrap().get(), 5);
    assert_eq!(BucketCount::from_env_value(Some("  ")).unwrap().get(), 5);
    assert_eq!(BucketCount::from_env_value(Some("7")).unwrap().get(), 7);
    assert_eq!(BucketCount::from_env_value(Some("050")).unwrap().get(), 50);
    assert_eq!(BucketCount::from_env_value(Some("\t1 ")).unwrap().get(), 1);
    for bad in [
        "0",
        "51",
        "-1",
        "+5",
        "5.0",
        "1e1",
        "five",
        "5 5",
        "0x10",
        "99999999999999999999",
        "٣",
    ] {
        let err = BucketCount::from_env_value(Some(bad)).unwrap_err();
        assert_eq!(err.code(), "BUCKETS_INVALID", "{bad}");
        assert!(err
            .to_string()
            .starts_with("GTC_IMPORT_BUCKETS_DEFAULT must be an integer in [1, 50], got "));
    }
    assert_eq!(BUCKETS_DEFAULT_ENV, "GTC_IMPORT_BUCKETS_DEFAULT");
}

fn assign_values(
    values: &[ItemValue],
    options: &ImportOptions,
) -> Result<Assignment, ImportBucketError> {
    assign_packed(&PackedItems::from_values(values), options, &mut OsRandom)
}

fn obj<'a>(dataset: DatasetValue<'a>, bucket: BucketValue<'a>) -> ItemValue<'a> {
    ItemValue::Object { dataset, bucket }
}

#[test]
fn every_validation_error() {
    let ok = obj(DatasetValue::Str("ds"), BucketValue::Absent);
    let cases: Vec<(ItemValue, &str, &str)> = vec![
        (ItemValue::NotObject, "ITEM_NOT_OBJECT", "item 1 is not an object"),
        (
            obj(DatasetValue::Missing, BucketValue::Absent),
            "DATASET_MISSING",
            "item 1 has no dataset: field \"datasetName\" is missing",
        ),
        (
            obj(DatasetValue::NotString, BucketValue::Absent),
            "DATASET_MISSING",
            "item 1 has no dataset: field \"datasetName\" is not a string",
        ),
        (
            obj(DatasetValue::Str(""), BucketValue::Absent),
            "DATASET_MISSING",
            "item 1 has no dataset: field \"datasetName\" is an empty string",
        ),
        (
            obj(DatasetValue::Str("ds"), BucketValue::Str("12")),
            "BUCKET_NOT_UUID",
            "item 1: bucket field \"bucket\" is \"12\", which is not a uuid (expected 8-4-4-4-12 hex digits)",
        ),
        (
            obj(DatasetValue::Str("ds"), BucketValue::NotString),
            "BUCKET_NOT_UUID",
            "item 1: bucket field \"bucket\" is not a string (expected a uuid string, null or no field)",
        ),
    ];
    for (bad, code, message) in cases {
        let err = assign_values(&[ok, bad, ok], &opts(3)).unwrap_err();
        assert_eq!(
            (err.code(), err.to_string().as_str(), err.item_index()),
            (code, message, Some(1))
        );
    }
    let err = assign_values(&[ok], &with_id(3, "")).unwrap_err();
    assert_eq!(
        (err.code(), err.to_string().as_str()),
        ("IMPORT_ID_INVALID", "import id must be a non-empty string")
    );
    assert_eq!(
        import_bucket_uuid("", "ds", 0).unwrap_err().code(),
        "IMPORT_ID_INVALID"
    );
    let err = assign_packed(
        &PackedItems::from_items(&[ImportItem::new("a", None)]),
        &opts(3),
        &mut Broken,
    )
    .unwrap_err();
    assert_eq!(err.code(), "RANDOM_UNAVAILABLE");
}

#[test]
fn first_error_in_input_order_wins_and_messages_use_field_names() {
    let values = [
        obj(DatasetValue::Str("ds"), BucketValue::Absent),
        obj(DatasetValue::Str("ds"), BucketValue::Str("nope")),
        ItemValue::NotObject,
    ];
    let options = ImportOptions {
        fields: FieldNames {
            dataset: "dataset",
            bucket: "pk",
        },
        ..opts(3)
    };
    let err = assign_values(&values, &options).unwrap_err();
    assert_eq!(err.to_string(), "item 1: bucket field \"pk\" is \"nope\", which is not a uuid (expected 8-4-4-4-12 hex digits)");
    // Within an item: dataset before bucket.
    let err = assign_values(
        &[obj(DatasetValue::Missing, BucketValue::NotString)],
        &options,
    )
    .unwrap_err();
    assert_eq!(err.code(), "DATASET_MISSING");
}

#[test]
fn long_and_control_values_are_quoted_and_cut() {
    let long = "x".repeat(1000);
    let err = assign_values(
        &[obj(DatasetValue::Str("ds"), BucketValue::Str(&long))],
        &opts(3),
    )
    .unwrap_err();
    let msg = err.to_string();
    assert!(msg.len() < 200, "{msg}");
    assert!(msg.contains("xxx\"…"), "{msg}");
    let err = assign_values(
        &[obj(DatasetValue::Str("ds"), BucketValue::Str("a\nb\"c"))],
        &opts(3),
    )
    .unwrap_err();
    assert!(err.to_string().contains(r#""a\nb\"c""#), "{err}");
}

#[test]
fn packed_indices_out_of_range_are_errors_not_panics() {
    let batch = PackedItems {
        datasets: vec!["a"],
        buckets: vec![],
        items: vec![PackedItem {
            dataset: DatasetRef::Index(1),
            bucket: BucketRef::Absent,
        }],
    };
    assert_eq!(
        assign_packed(&batch, &opts(3), &mut OsRandom)
            .unwrap_err()
            .code(),
        "INVALID_ARGUMENT"
    );
    let batch = PackedItems {
        datasets: vec!["a"],
        buckets: vec![NIL],
        items: vec![PackedItem {
            dataset: DatasetRef::Index(0),
            bucket: BucketRef::Index(u32::MAX),
        }],
    };
    assert_eq!(
        assign_packed(&batch, &opts(3), &mut OsRandom)
            .unwrap_err()
            .code(),
        "INVALID_ARGUMENT"
    );
    assert_eq!(
        group_packed(&batch, &FieldNames::default())
            .unwrap_err()
            .code(),
        "INVALID_ARGUMENT"
    );
}

#[test]
fn dataset_table_entries_are_datasets_even_if_names_repeat() {
    let batch = PackedItems {
        datasets: vec!["a", "a"],
        buckets: vec![],
        items: (0..6)
            .map(|i| PackedItem {
                dataset: DatasetRef::Index(i % 2),
                bucket: BucketRef::Absent,
            })
            .collect(),
    };
    let a = assign_packed(&batch, &opts(2), &mut OsRandom).unwrap();
    assert_eq!(a.buckets.len(), 4);
    assert_eq!(a.item_buckets, vec![0, 2, 1, 3, 0, 2]);
}

#[test]
fn grouping_preserves_order_and_normalises() {
    let upper = "F47AC10B-58CC-4372-A567-0E02B2C3D479";
    let lower = "f47ac10b-58cc-4372-a567-0e02b2c3d479";
    let items = [
        ImportItem::new("a", Some(upper)),
        ImportItem::new("b", Some(lower)),
        ImportItem::new("a", Some(lower)),
        ImportItem::new("a", Some(NIL)),
        ImportItem::new("b", Some(lower)),
    ];
    let batch = PackedItems::from_items(&items);
    let g = group_packed(&batch, &FieldNames::default()).unwrap();
    assert_eq!(g.item_groups, vec![0, 1, 0, 2, 1]);
    assert_eq!(g.keys.len(), 3);
    assert_eq!(batch.datasets[g.keys[1].dataset as usize], "b");
    assert_eq!(g.keys[0].bucket.to_string(), lower);
    let err = group_packed(
        &PackedItems::from_items(&[ImportItem::new("a", None)]),
        &FieldNames::default(),
    )
    .unwrap_err();
    assert_eq!(
        (err.code(), err.to_string().as_str()),
        (
            "BUCKET_MISSING",
            "item 0 has no bucket: field \"bucket\" is missing (assign buckets first)"
        )
    );
}

#[test]
fn partition_key_errors() {
    let f = FieldNames::default();
    let cases = [
        (ItemValue::NotObject, "ITEM_NOT_OBJECT", "the item is not an object"),
        (obj(DatasetValue::Missing, BucketValue::Str(NIL)), "DATASET_MISSING", "the item has no dataset: field \"datasetName\" is missing"),
        (obj(DatasetValue::Str("a"), BucketValue::Absent), "BUCKET_MISSING", "the item has no bucket: field \"bucket\" is missing (assign buckets first)"),
        (obj(DatasetValue::Str("a"), BucketValue::Str("1")), "BUCKET_NOT_UUID", "the item: bucket field \"bucket\" is \"1\", which is not a uuid (expected 8-4-4-4-12 hex digits)"),
    ];
    for (item, code, msg) in cases {
        let err = partition_key(&item, &f).unwrap_err();
        assert_eq!(
            (err.code(), err.to_string().as_str(), err.item_index()),
            (code, msg, None)
        );
    }
}

// ---------------------------------------------------------------- properties

fn arb_items() -> impl Strategy<Value = Vec<(usize, Option<u8>)>> {
    // (dataset index among 4 names, optional pre-assigned bucket seed)
    prop::collection::vec(
        (0usize..4, prop::option::weighted(0.2, any::<u8>())),
        0..300,
    )
}

const NAMES: [&str; 4] = ["a", "b", "données", "a,1:b"];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn assignment_invariants(spec in arb_items(), n in 1u32..=50, seed in any::<u64>(), derived in any::<bool>()) {
        let pre: Vec<String> = spec.iter().map(|(_, b)| match b {
            Some(s) => Uuid::from_bytes([*s; 16]).to_string().to_uppercase(),
            None => String::new(),
        }).collect();
        let items: Vec<ImportItem> = spec.iter().zip(&pre).map(|((d, b), p)| {
            ImportItem::new(NAMES[*d], b.map(|_| p.as_str()))
        }).collect();
        let options = ImportOptions { buckets: BucketCount::new(n).unwrap(), import_id: derived.then_some("imp"), ..Default::default() };
        let out = assign_import_buckets(&items, &options, &mut SeededRandom(seed)).unwrap();
        prop_assert_eq!(out.len(), items.len());
        for name in NAMES {
            let mine: Vec<Uuid> = items.iter().zip(&out)
                .filter(|(it, _)| it.dataset == name && it.bucket.is_none())
                .map(|(_, u)| *u).collect();
            if mine.is_empty() { continue; }
            let k = mine.len().min(n as usize).max(1);
            let c = counts(&mine);
            prop_assert_eq!(c.len(), k);
            prop_assert!(c.values().max().unwrap() - c.values().min().unwrap() <= 1);
            for (i, u) in mine.iter().enumerate() {
                prop_assert_eq!(*u, mine[i % k]);
                prop_assert_eq!(u.version(), if derived { 5 } else { 4 });
                prop_assert!(u.is_rfc_variant());
                if derived {
                    prop_assert_eq!(*u, import_bucket_uuid("imp", name, (i % k) as u32).unwrap());
                }
            }
        }
        for (it, u) in items.iter().zip(&out) {
            if let Some(b) = it.bucket {
                prop_assert_eq!(u.to_string(), b.to_lowercase());
            }
        }
        // Determinism: the same seed (or import id) gives the same result.
        prop_assert_eq!(&out, &assign_import_buckets(&items, &options, &mut SeededRandom(seed)).unwrap());
    }

    #[test]
    fn parse_matches_uuid_crate_on_hyphenated_input(bytes in any::<[u8; 16]>(), upper in any::<bool>()) {
        let text = uuid::Uuid::from_bytes(bytes).hyphenated().to_string();
        let text = if upper { text.to_uppercase() } else { text };
        let ours = Uuid::parse(&text).unwrap();
        prop_assert_eq!(ours.as_bytes(), &bytes);
        prop_assert_eq!(normalize_uuid(&text).unwrap(), text.to_lowercase());
    }

    #[test]
    fn parse_never_panics_and_accepts_only_canonical_shape(s in "\\PC{0,40}") {
        if let Some(u) = Uuid::parse(&s) {
            prop_assert_eq!(u.to_string(), s.to_lowercase());
        }
    }

    #[test]
    fn parse_of_near_uuid_strings(s in "[0-9a-fA-F-]{34,38}") {
        let ours = Uuid::parse(&s);
        let hyphen_ok = s.len() == 36 && s.char_indices().all(|(i, c)| (c == '-') == [8, 13, 18, 23].contains(&i));
        prop_assert_eq!(ours.is_some(), hyphen_ok);
        if hyphen_ok {
            prop_assert_eq!(ours.unwrap().to_string(), uuid::Uuid::parse_str(&s).unwrap().to_string());
        }
    }

    #[test]
    fn env_parsing_never_panics(s in "\\PC{0,12}") {
        match BucketCount::from_env_value(Some(&s)) {
            Ok(n) => prop_assert!((1..=50).contains(&n.get())),
            Err(e) => prop_assert_eq!(e.code(), "BUCKETS_INVALID"),
        }
    }

    #[test]
    fn from_f64_never_panics(x in any::<f64>()) {
        match BucketCount::from_f64(x) {
            Ok(n) => prop_assert_eq!(f64::from(n.get()), x),
            Err(e) => prop_assert_eq!(e.code(), "BUCKETS_INVALID"),
        }
    }

    #[test]
    fn arbitrary_packed_batches_never_panic(
        datasets in prop::collection::vec("\\PC{0,3}", 0..4),
        buckets in prop::collection::vec(prop_oneof!["\\PC{0,5}", Just(NIL.to_owned())], 0..4),
        refs in prop::collection::vec((0u32..6, 0u32..7), 0..40),
        n in 1u32..=50,
    ) {
        let batch = PackedItems {
            datasets: datasets.iter().map(String::as_str).collect(),
            buckets: buckets.iter().map(String::as_str).collect(),
            items: refs.iter().map(|&(d, b)| PackedItem {
                dataset: match d { 0 => DatasetRef::NotObject, 1 => DatasetRef::Missing, 2 => DatasetRef::NotString, d => DatasetRef::Index(d - 3) },
                bucket: match b { 0 => BucketRef::Absent, 1 => BucketRef::NotString, b => BucketRef::Index(b - 2) },
            }).collect(),
        };
        let options = ImportOptions { buckets: BucketCount::new(n).unwrap(), ..Default::default() };
        match assign_packed(&batch, &options, &mut SeededRandom(1)) {
            Ok(a) => {
                prop_assert_eq!(a.item_buckets.len(), batch.items.len());
                prop_assert!(a.item_buckets.iter().all(|&i| (i as usize) < a.buckets.len()));
            }
            Err(e) => prop_assert!(!e.to_string().is_empty()),
        }
        let _ = group_packed(&batch, &FieldNames::default());
    }

    #[test]
    fn grouping_invariants(spec in prop::collection::vec((0usize..4, 0u8..5, any::<bool>()), 0..200)) {
        let texts: Vec<String> = spec.iter().map(|(_, b, up)| {
            let t = Uuid::from_bytes([*b; 16]).to_string();
            if *up { t.to_uppercase() } else { t }
        }).collect();
        let items: Vec<ImportItem> = spec.iter().zip(&texts).map(|((d, _, _), t)| ImportItem::new(NAMES[*d], Some(t))).collect();
        let batch = PackedItems::from_items(&items);
        let g = group_packed(&batch, &FieldNames::default()).unwrap();
        prop_assert_eq!(g.item_groups.len(), items.len());
        // Each item's group key is its (dataset, normalised bucket); keys are distinct; first appearance order.
        let mut next = 0u32;
        for (it, &gi) in items.iter().zip(&g.item_groups) {
            let key = g.keys[gi as usize];
            prop_assert_eq!(batch.datasets[key.dataset as usize], it.dataset);
            prop_assert_eq!(key.bucket.to_string(), it.bucket.unwrap().to_lowercase());
            prop_assert!(gi <= next);
            if gi == next { next += 1; }
        }
        let distinct: HashSet<_> = g.keys.iter().collect();
        prop_assert_eq!(distinct.len(), g.keys.len());
    }
}
