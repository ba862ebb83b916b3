//! Property tests of the bucketing core against brute-force reference implementations.
use partkit::bucketing::{validate, BucketSet, Bucketer, RangesInput, RawConfig, Selector, Value};
use proptest::prelude::*;

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Missing),
        any::<bool>().prop_map(Value::Bool),
        any::<f64>().prop_map(Value::Number),
        (-5i64..50).prop_map(|n| Value::Number(n as f64)),
        ".{0,12}".prop_map(Value::Text),
        "[0-9 ,+-]{0,12}".prop_map(Value::Text),
        Just(Value::Other("object")),
    ];
    prop_oneof![
        leaf.clone(),
        proptest::collection::vec(leaf, 0..5).prop_map(Value::List)
    ]
}

proptest! {
    #[test]
    fn next_is_the_smallest_eligible_above_last_or_wraps(
        total in 1u32..60,
        ranges in proptest::collection::vec((1u32..60, 0u32..8), 1..6),
        last in -10i64..80,
    ) {
        let texts: Vec<String> = ranges
            .iter()
            .map(|&(s, len)| {
                let s = s.min(total);
                format!("{}-{}", s, (s + len).min(total))
            })
            .collect();
        let set = BucketSet::parse(total, &RangesInput::List(texts.iter().map(String::as_str).collect())).unwrap();
        let mut eligible: Vec<u32> = texts
            .iter()
            .flat_map(|t| {
                let (a, b) = t.split_once('-').unwrap();
                a.parse::<u32>().unwrap()..=b.parse::<u32>().unwrap()
            })
            .collect();
        eligible.sort_unstable();
        eligible.dedup();
        prop_assert_eq!(set.iter().collect::<Vec<_>>(), eligible.clone());
        let want = eligible.iter().copied().find(|&b| i64::from(b) > last).unwrap_or(eligible[0]);
        prop_assert_eq!(set.next(last), want);
    }

    #[test]
    fn packed_batches_equal_single_calls(items in proptest::collection::vec(".{0,70}", 0..40), total in 1u32..1000) {
        let b = Bucketer::new("k", total).unwrap();
        let joined: String = items.concat();
        let lens: Vec<u32> = items.iter().map(|s| s.encode_utf16().count() as u32).collect();
        let mut out = Vec::new();
        b.bucket_packed(&joined, &lens, &mut out).unwrap();
        prop_assert_eq!(out, items.iter().map(|s| b.bucket(s)).collect::<Vec<_>>());
    }

    #[test]
    fn validation_never_panics_and_valid_configs_select_in_range(
        rr in value(), id in value(), total in value(), ranges in value(), last in -100i64..100,
    ) {
        let raw = RawConfig { round_robin: rr, bucket_id: id, bucket_total: total, bucket_ranges: ranges };
        if validate(&raw).is_ok() {
            let selector = Selector::new(&raw).unwrap();
            let total = partkit::bucketing::bucket_total(&raw).unwrap();
            let next = selector.next(Some(last));
            prop_assert!((1..=total).contains(&next));
        }
    }
}
