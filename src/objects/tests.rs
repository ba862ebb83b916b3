//! Unit tests of the object partitioner: the reference page's vectors and properties (Go's
//! `time` and `regexp/syntax` tables are beside their ports, `gotime/tests.rs`, `goregex/tests.rs`).

use super::*;
use crate::packed::Utf16Batch;
use proptest::prelude::*;

fn keys_of<'a>(keys: &'a [&'a str]) -> Vec<(&'a str, bool)> {
    keys.iter().map(|k| (*k, k.ends_with('/'))).collect()
}

/// Every partition's keys, via `select` (Go's entry point) for each index.
fn partitions(keys: &[&str], total: i64, prefix: &str, cfg: &PartitionConfig) -> Vec<Vec<String>> {
    (0..total)
        .map(|i| {
            partition_objects(keys_of(keys), total, i, prefix, cfg)
                .unwrap()
                .into_iter()
                .map(|j| keys[j].to_owned())
                .collect()
        })
        .collect()
}

fn sorted(mut v: Vec<Vec<String>>) -> Vec<Vec<String>> {
    v.iter_mut().for_each(|p| p.sort());
    v
}

fn expect(parts: &[&[&str]]) -> Vec<Vec<String>> {
    sorted(
        parts
            .iter()
            .map(|p| p.iter().map(|s| (*s).to_owned()).collect())
            .collect(),
    )
}

fn prefixed(prefix: &str, keys: &[&str]) -> Vec<String> {
    keys.iter().map(|k| format!("{prefix}{k}")).collect()
}

// ---------------------------------------------------------------- hash & key handling

#[test]
fn fnv_vectors() {
    assert_eq!(fnv1a32(b""), 2_166_136_261);
    assert_eq!(fnv1a32(b"a"), 3_826_002_220);
    assert_eq!(fnv1a32(b"hello"), 1_335_831_723);
    assert_eq!(fnv1a32("prefix/文件1.txt".as_bytes()), 2_459_005_073);
    assert_eq!(fnv1a32("🦄🌈".as_bytes()), 2_868_248_295);
}

#[test]
fn prefix_trimming_tables() {
    let p = listing_prefix("data/users/*");
    assert_eq!(p, "data/users/");
    for (key, want) in [
        ("data/users/2024/file.csv", "2024/file.csv"),
        ("data/users/archived/2023.csv", "archived/2023.csv"),
        ("other/data/users/file.csv", "other/data/users/file.csv"),
    ] {
        assert_eq!(sanitize_key_for_pattern_matching(key, p), want);
    }
    assert_eq!(
        sanitize_key_for_pattern_matching("data/users//extra/file.csv", p),
        "extra/file.csv"
    );
    // Go trims ONE slash (its documentation says "slashes").
    assert_eq!(
        sanitize_key_for_pattern_matching("data/users///extra/file.csv", p),
        "/extra/file.csv"
    );

    let p = listing_prefix("logs/");
    for (key, want) in [
        ("logs/2024-01-15/server.log", "2024-01-15/server.log"),
        ("logs/error.log", "error.log"),
        ("archive/logs/old.log", "archive/logs/old.log"),
        ("logs//app/debug.log", "app/debug.log"),
        ("logs///app/debug.log", "/app/debug.log"),
    ] {
        assert_eq!(sanitize_key_for_pattern_matching(key, p), want);
    }
    let p = listing_prefix("");
    for (key, want) in [
        ("data.csv", "data.csv"),
        ("folder/file.txt", "folder/file.txt"),
        ("/root/file.bin", "root/file.bin"),
    ] {
        assert_eq!(sanitize_key_for_pattern_matching(key, p), want);
    }
}

#[test]
fn prefix_uses_go_trim_space_and_one_star() {
    assert_eq!(listing_prefix("\u{85}\u{a0} a/b/**\t\n"), "a/b/*");
    assert_eq!(listing_prefix("\u{feff}a/"), "\u{feff}a/"); // U+FEFF is not Go whitespace
    assert_eq!(listing_prefix("\u{3000}a/*\u{2029}"), "a/");
    assert_eq!(listing_prefix("*"), "");
}

// ---------------------------------------------------------------- reference vectors

#[test]
fn vector_object_two_partitions() {
    let keys = ["file1.txt", "file2.txt", "dir/", "file3.txt", "file4.txt"];
    let got = partitions(&keys, 2, "", &PartitionConfig::of_type("object"));
    assert_eq!(
        sorted(got),
        expect(&[&["file1.txt", "file3.txt"], &["file2.txt", "file4.txt"]])
    );
}

#[test]
fn vector_object_five_partitions() {
    let keys = ["file1.txt", "file2.txt", "file3.txt"];
    let got = partitions(&keys, 5, "", &PartitionConfig::of_type("object"));
    assert_eq!(
        sorted(got),
        expect(&[&[], &["file1.txt"], &[], &["file2.txt"], &["file3.txt"]])
    );
}

#[test]
fn vector_object_unicode_with_prefix() {
    let keys = ["prefix/文件1.txt", "prefix/文件2.txt", "prefix/文件dir/"];
    let got = partitions(&keys, 2, "prefix/", &PartitionConfig::of_type("object"));
    assert_eq!(
        sorted(got),
        expect(&[&["prefix/文件2.txt"], &["prefix/文件1.txt"]])
    );
}

#[test]
fn vector_regex_single_group() {
    let raw = [
        "user123/file1.txt",
        "user123/file2.txt",
        "user123/another.txt",
        "user456/file3.txt",
        "user789/file4.txt",
        "invalid/file5.txt",
        "userdir/",
    ];
    let owned = prefixed("prefix/", &raw);
    let keys: Vec<&str> = owned.iter().map(String::as_str).collect();
    let got = partitions(&keys, 4, "prefix/", &PartitionConfig::regex(r"user(\d+)"));
    let p = |k: &str| format!("prefix/{k}");
    let want = sorted(vec![
        vec![p("user456/file3.txt"), p("invalid/file5.txt")],
        vec![p("user789/file4.txt")],
        vec![],
        vec![
            p("user123/file1.txt"),
            p("user123/file2.txt"),
            p("user123/another.txt"),
        ],
    ]);
    assert_eq!(sorted(got), want);
}

#[test]
fn vector_regex_two_groups() {
    let keys = [
        "user123-group456.txt",
        "user789-group012.txt",
        "user123-group999.txt",
        "user123-group999.log",
        "invalid.txt",
    ];
    let got = partitions(
        &keys,
        3,
        "",
        &PartitionConfig::regex(r"user(\d+)-group(\d+)"),
    );
    assert_eq!(
        sorted(got),
        expect(&[
            &["invalid.txt"],
            &["user123-group999.txt", "user123-group999.log"],
            &["user123-group456.txt", "user789-group012.txt"],
        ])
    );
}

#[test]
fn vector_regex_no_groups() {
    let keys = ["001.txt", "002.txt", "003.txt", "abc.txt"];
    let got = partitions(&keys, 3, "", &PartitionConfig::regex(r"00\d"));
    assert_eq!(
        sorted(got),
        expect(&[&["abc.txt", "001.txt", "002.txt"], &["003.txt"], &[]])
    );
}

#[test]
fn vector_regex_empty_groups_fall_back() {
    let keys = ["data1.txt", "data2.txt"];
    let got = partitions(&keys, 2, "", &PartitionConfig::regex("()"));
    assert_eq!(sorted(got), expect(&[&["data1.txt", "data2.txt"], &[]]));
}

#[test]
fn vector_date() {
    let raw = [
        "2023-01-01-data.txt",
        "2023-01-02-data.txt",
        "2023-01-02-another.txt",
        "2023-01-02-more.txt",
        "2023-01-03-data.txt",
        "invalid-date.txt",
        "dates/",
    ];
    let owned = prefixed("prefix/", &raw);
    let keys: Vec<&str> = owned.iter().map(String::as_str).collect();
    let got = partitions(&keys, 2, "prefix/", &PartitionConfig::date("2006-01-02"));
    let p = |k: &str| format!("prefix/{k}");
    let want = sorted(vec![
        vec![
            p("2023-01-01-data.txt"),
            p("2023-01-03-data.txt"),
            p("invalid-date.txt"),
        ],
        vec![
            p("2023-01-02-data.txt"),
            p("2023-01-02-another.txt"),
            p("2023-01-02-more.txt"),
        ],
    ]);
    assert_eq!(sorted(got), want);
}

#[test]
fn vector_invalid_totals_and_indices() {
    let cfg = PartitionConfig::of_type("object");
    for total in [-1, 0] {
        let e = partition_objects(keys_of(&["a"]), total, 0, "", &cfg).unwrap_err();
        assert_eq!(e.to_string(), "job partitions/count must be greater than 0");
        assert_eq!(e.code(), "PARTITION_COUNT_INVALID");
    }
    for index in [-1, 2, 3] {
        let e = partition_objects(keys_of(&["a"]), 2, index, "", &cfg).unwrap_err();
        assert_eq!(e.to_string(), "partition index must be between 0 and 1");
        assert_eq!(e.code(), "PARTITION_INDEX_OUT_OF_RANGE");
    }
}

#[test]
fn config_is_validated_before_total() {
    let e = partition_objects(
        keys_of(&["a"]),
        0,
        0,
        "",
        &PartitionConfig::of_type("bogus"),
    )
    .unwrap_err();
    assert_eq!(e.to_string(), "unsupported partition key type bogus");
    // Even with one partition, as in Go.
    assert!(partition_objects(keys_of(&["a"]), 1, 0, "", &PartitionConfig::regex("(")).is_err());
}

#[test]
fn validation_messages() {
    let cases: Vec<(PartitionConfig, &str)> = vec![
        (
            PartitionConfig::of_type("Object"),
            "unsupported partition key type Object",
        ),
        (PartitionConfig::regex(""), "regex pattern cannot be empty"),
        (
            PartitionConfig::regex("a(b"),
            "invalid regex pattern: error parsing regexp: missing closing ): `a(b`",
        ),
        (
            PartitionConfig::regex("a**"),
            "invalid regex pattern: error parsing regexp: invalid nested repetition operator: `**`",
        ),
        (
            PartitionConfig::substring(-1, 3),
            "start index cannot be negative",
        ),
        (
            PartitionConfig::substring(2, 2),
            "end index must be greater than start index",
        ),
        (
            PartitionConfig::substring(5, 1),
            "end index must be greater than start index",
        ),
        (PartitionConfig::date(""), "date format cannot be empty"),
        (PartitionConfig::date("12006"), "invalid date format: 12006"),
        (
            PartitionConfig::date("15:04:05.0000000000"),
            "invalid date format: 15:04:05.0000000000",
        ),
    ];
    for (cfg, msg) in cases {
        let e = cfg.validate().unwrap_err();
        assert_eq!(e.to_string(), msg, "{cfg:?}");
        assert_eq!(e.code(), "PARTITION_CONFIG_INVALID");
    }
    for ok in [
        PartitionConfig::of_type(""),
        PartitionConfig::of_type("none"),
        PartitionConfig::of_type("object"),
        PartitionConfig::regex(".*"),
        PartitionConfig::substring(0, 1),
        PartitionConfig::date("2006-01-02"),
        PartitionConfig::date("no tokens at all: permissive"),
        PartitionConfig::date("2006-01-02T1"),
        // Fields of other types are ignored.
        PartitionConfig {
            pattern: "(".into(),
            start_index: -5,
            ..PartitionConfig::date("2006")
        },
    ] {
        assert!(ok.validate().is_ok(), "{ok:?}");
    }
}

#[test]
fn date_layout_tokens_apply_to_keys() {
    // In `2006-01-02T1`, the trailing 1 is Go's month token: `…T0` is month 0.
    let p = ObjectPartitioner::new(7, "", &PartitionConfig::date("2006-01-02T1")).unwrap();
    assert_eq!(p.assign("2024-01-15T0rest", false), Assignment::Fallback);
    assert!(matches!(
        p.assign("2024-01-15T1rest", false),
        Assignment::Hashed(_)
    ));
    // The re-formatted date is hashed, not the raw text: " 5" and "05" agree for `_2`.
    let p = ObjectPartitioner::new(1000, "", &PartitionConfig::date("Jan _2 2006")).unwrap();
    let t = gotime::parse("Jan _2 2006", b"feb  5 2024").unwrap();
    assert_eq!(t.format("Jan _2 2006"), "Feb  5 2024");
    assert_eq!(
        p.assign("feb  5 2024.log", false),
        Assignment::Hashed(fnv1a32(b"Feb  5 2024") % 1000)
    );
    assert_eq!(
        p.assign("FEB  5 2024.log", false),
        p.assign("Feb  5 2024.log", false)
    );
}

#[test]
fn date_prefix_is_bytes_and_may_split_a_character() {
    // Layout "2006-01-02x" is 11 bytes; the key's 11th byte is inside "é".
    let p = ObjectPartitioner::new(3, "", &PartitionConfig::date("2006-01-02é")).unwrap();
    assert_eq!(
        p.assign("2024-01-15é.txt", false),
        p.assign("2024-01-15é", false)
    );
    let p = ObjectPartitioner::new(3, "", &PartitionConfig::date("2006-01-02x")).unwrap();
    assert_eq!(p.assign("2024-01-15é", false), Assignment::Fallback);
    let e = gotime::parse("2006-01-02x", &"2024-01-15é".as_bytes()[..11]).unwrap_err();
    assert_eq!(
        e.to_string(),
        r#"parsing time "2024-01-15\xc3" as "2006-01-02x": cannot parse "\xc3" as "x""#
    );
}

#[test]
fn substring_counts_code_points() {
    let p = ObjectPartitioner::new(97, "logs/", &PartitionConfig::substring(0, 10)).unwrap();
    assert_eq!(
        p.assign("logs/2024-01-15-server.log", false),
        Assignment::Hashed(fnv1a32(b"2024-01-15") % 97)
    );
    let p = ObjectPartitioner::new(97, "", &PartitionConfig::substring(1, 3)).unwrap();
    assert_eq!(
        p.assign("a文件b", false),
        Assignment::Hashed(fnv1a32("文件".as_bytes()) % 97)
    );
    assert_eq!(p.assign("🦄🌈", false), Assignment::Fallback); // 2 code points < 3
    assert_eq!(
        p.assign("🦄🌈x", false),
        Assignment::Hashed(fnv1a32("🌈x".as_bytes()) % 97)
    );
    let p = ObjectPartitioner::new(97, "", &PartitionConfig::substring(0, i64::MAX)).unwrap();
    assert_eq!(p.assign("anything", false), Assignment::Fallback);
}

#[test]
fn object_hashes_untrimmed_key() {
    let p = ObjectPartitioner::new(1 << 20, "data/", &PartitionConfig::of_type("object")).unwrap();
    assert_eq!(
        p.assign("data/x", false),
        Assignment::Hashed(fnv1a32(b"data/x") % (1 << 20))
    );
}

#[test]
fn regex_semantics() {
    let total = 1u32 << 30;
    let p = |pat: &str| {
        ObjectPartitioner::new(i64::from(total), "", &PartitionConfig::regex(pat)).unwrap()
    };
    let h = |s: &str| Assignment::Hashed(fnv1a32(s.as_bytes()) % total);
    // Unmatched optional groups count as empty; non-empty groups joined with 0x1F.
    assert_eq!(p(r"(a)?(b)(c)?").assign("xbc", false), h("b\x1Fc"));
    assert_eq!(p(r"(a)?(b)(c)?").assign("xb", false), h("b"));
    // No non-empty group: the whole match.
    assert_eq!(p(r"x(a?)y").assign("xy", false), h("xy"));
    // Empty whole match falls back.
    assert_eq!(p(r"a*").assign("bbb", false), Assignment::Fallback);
    // Leftmost-first, not leftmost-longest.
    assert_eq!(p(r"(a|ab)").assign("ab", false), h("a"));
    // Go's \d is ASCII only.
    assert_eq!(p(r"\d+").assign("٤٢", false), Assignment::Fallback);
    // Go's \b is an ASCII word boundary: é is not a word character.
    assert_eq!(p(r"\bx").assign("éx", false), h("x"));
    // \< is the literal <.
    assert_eq!(p(r"\<(\w+)\>").assign("a<tag>b", false), h("tag"));
    // [[a]] is the class [[a] followed by ].
    assert_eq!(p(r"[[a]]").assign("a]", false), h("a]"));
    assert_eq!(p(r"[[a]]").assign("a", false), Assignment::Fallback);
    // \Q...\E quotes.
    assert_eq!(p(r"\Q.*\E").assign("x.*y", false), h(".*"));
    // Octal escapes.
    assert_eq!(p(r"\101\0").assign("A\0", false), h("A\0"));
    // {01} and {,5} are literal text.
    assert_eq!(p(r"a{01}").assign("a{01}", false), h("a{01}"));
    assert_eq!(p(r"a{,5}").assign("aa{,5}", false), h("a{,5}"));
    // (?i) folds, including Kelvin sign K for k.
    assert_eq!(p(r"(?i)k").assign("\u{212A}", false), h("\u{212A}"));
    // Case folding is scoped.
    assert_eq!(p(r"(?i:a)b").assign("AB", false), Assignment::Fallback);
    // $ is end of text without (?m); . excludes \n.
    assert_eq!(p(r"a$").assign("a\n", false), Assignment::Fallback);
    assert_eq!(p(r"(?m)a$").assign("a\n", false), h("a"));
    assert_eq!(p(r"a.b").assign("a\nb", false), Assignment::Fallback);
    assert_eq!(p(r"(?s)a.b").assign("a\nb", false), h("a\nb"));
    // \s has no \v in Go.
    assert_eq!(p(r"\s").assign("\u{b}", false), Assignment::Fallback);
    assert_eq!(p(r"[[:space:]]").assign("\u{b}", false), h("\u{b}"));
    // Non-greedy and (?U).
    assert_eq!(p(r"a+?").assign("aaa", false), h("a"));
    assert_eq!(p(r"(?U)a+").assign("aaa", false), h("a"));
    assert_eq!(p(r"(?U)a+?").assign("aaa", false), h("aaa"));
    // A surrogate escape is valid in Go and never matches.
    assert_eq!(p(r"x\x{D800}?").assign("x", false), h("x"));
    // \pN and scripts.
    assert_eq!(p(r"\p{Greek}+").assign("abγδ", false), h("γδ"));
    assert_eq!(p(r"\pN").assign("x٤", false), h("٤"));
}

#[test]
fn directories_never_selected_and_none_selects_all() {
    for ty in ["", "none"] {
        let cfg = PartitionConfig::of_type(ty);
        for i in 0..3 {
            let got = partition_objects(keys_of(&["a", "b/", "c"]), 3, i, "", &cfg).unwrap();
            assert_eq!(got, vec![0, 2]);
        }
    }
    let p = ObjectPartitioner::new(3, "", &PartitionConfig::of_type("none")).unwrap();
    assert_eq!(p.assign("a", false), Assignment::All);
    assert_eq!(p.index_of("a", false), None);
    let s = p.stats(keys_of(&["a", "b/", "c"]));
    assert_eq!(
        s,
        Stats {
            counts: vec![2, 2, 2],
            fallback: 0,
            directories: 1
        }
    );
    // An object flagged as a directory is one even without a trailing slash, and vice versa.
    let p = ObjectPartitioner::new(1, "", &PartitionConfig::of_type("object")).unwrap();
    assert_eq!(p.select([("x", true), ("y/", false)], 0).unwrap(), vec![1]);
}

#[test]
fn stats_counts_fallbacks() {
    let p = ObjectPartitioner::new(3, "", &PartitionConfig::regex(r"00\d")).unwrap();
    let s = p.stats(keys_of(&["001.txt", "002.txt", "003.txt", "abc.txt", "d/"]));
    assert_eq!(
        s,
        Stats {
            counts: vec![3, 1, 0],
            fallback: 1,
            directories: 1
        }
    );
}

#[test]
fn huge_totals_follow_go_uint32_truncation() {
    let cfg = PartitionConfig::of_type("object");
    let e = ObjectPartitioner::new(1 << 32, "", &cfg).unwrap_err();
    assert_eq!(e.code(), "PARTITION_COUNT_UNSUPPORTED");
    // uint32(2^32 + 5) = 5.
    let p = ObjectPartitioner::new((1 << 32) + 5, "", &cfg).unwrap();
    assert_eq!(
        p.assign("file1.txt", false),
        Assignment::Hashed(fnv1a32(b"file1.txt") % 5)
    );
    // No hashing: fine.
    assert!(ObjectPartitioner::new(1 << 32, "", &PartitionConfig::of_type("none")).is_ok());
}

#[test]
fn date_cache_is_exact() {
    // Many distinct prefixes through one scratch (slot collisions), long prefixes (not
    // cached), and one scratch shared by partitioners with different layouts.
    let a = ObjectPartitioner::new(7, "", &PartitionConfig::date("2006-01-02")).unwrap();
    let b = ObjectPartitioner::new(7, "", &PartitionConfig::date("2006-02-01")).unwrap();
    let long = "2006-01-02T15:04:05.000000000Z07:00 Monday January";
    let c = ObjectPartitioner::new(7, "", &PartitionConfig::date(long)).unwrap();
    let mut shared = Scratch::default();
    for round in 0..2 {
        for y in 1990..2030 {
            for md in ["01-31", "02-29", "02-30", "12-01", "13-01"] {
                let key = format!("{y}-{md}/x{round}");
                for p in [&a, &b, &a.clone()] {
                    let want = p.assign(&key, false);
                    assert_eq!(p.assign_with(&key, false, &mut shared), want, "{key}");
                }
                let key = format!("{y}-01-02T15:04:05.123456789+01:00 Monday January/{md}");
                assert_eq!(
                    c.assign_with(&key, false, &mut shared),
                    c.assign(&key, false)
                );
            }
        }
    }
    assert_eq!(a.assign("2024-02-30", false), Assignment::Fallback);
    assert!(matches!(
        a.assign("2024-02-29", false),
        Assignment::Hashed(_)
    ));
}

// ---------------------------------------------------------------- properties

fn arb_key() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z0-9/._-]{0,24}",
        "(pre/)?(user[0-9]{1,4}|20[0-9]{2}-[01][0-9]-[0-3][0-9])[-_/][a-z]{0,6}/?",
        any::<String>(),
        "[\\PC ]{0,12}",
    ]
}

fn arb_config() -> impl Strategy<Value = PartitionConfig> {
    prop_oneof![
        Just(PartitionConfig::of_type("")),
        Just(PartitionConfig::of_type("none")),
        Just(PartitionConfig::of_type("object")),
        prop_oneof![
            Just(r"user(\d+)".to_owned()),
            Just(r"(\d{4})-(\d{2})".to_owned()),
            Just(r"00\d".to_owned()),
            Just(r"([a-z]*)(x)?".to_owned()),
            Just(r"(?i)\p{L}+".to_owned()),
            "[a-z()|*?.\\\\\\[\\]{}0-9+^$]{1,8}",
        ]
        .prop_map(|p| PartitionConfig::regex(&p)),
        (0i64..6, 1i64..8).prop_map(|(s, l)| PartitionConfig::substring(s, s + l)),
        prop_oneof![
            Just("2006-01-02".to_owned()),
            Just("20060102".to_owned()),
            Just("Jan _2 2006".to_owned()),
            Just("2006-01-02T15:04:05Z07:00".to_owned()),
            Just("2006-002".to_owned()),
            "[0-9A-Za-z_ :.,-]{1,12}",
        ]
        .prop_map(|f| PartitionConfig::date(&f)),
        any::<(String, String, i64, i64, String)>().prop_map(|(t, p, s, e, d)| PartitionConfig {
            key_type: t,
            pattern: p,
            start_index: s,
            end_index: e,
            date_format: d
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn every_file_key_in_exactly_one_partition(
        keys in prop::collection::vec(arb_key(), 0..24),
        cfg in arb_config(),
        total in 1i64..7,
        prefix in prop_oneof![Just(String::new()), Just("pre/".to_owned()), Just(" pre/* ".to_owned())],
    ) {
        let objs: Vec<(&str, bool)> = keys.iter().map(|k| (k.as_str(), k.ends_with('/'))).collect();
        let Ok(p) = ObjectPartitioner::new(total, &prefix, &cfg) else { return Ok(()) };
        let plan = p.plan(objs.iter().copied());
        prop_assert_eq!(plan.len() as i64, total);
        for i in 0..total {
            let sel = p.select(objs.iter().copied(), i).unwrap();
            prop_assert_eq!(&sel, &plan[i as usize]);
            prop_assert!(sel.windows(2).all(|w| w[0] < w[1]));
            // Determinism.
            prop_assert_eq!(&sel, &partition_objects(objs.iter().copied(), total, i, &prefix, &cfg).unwrap());
        }
        for (j, (key, is_dir)) in objs.iter().enumerate() {
            let n = plan.iter().filter(|part| part.contains(&j)).count() as i64;
            if *is_dir {
                prop_assert_eq!(n, 0, "directory {:?} selected", key);
            } else if p.is_partitioned() {
                prop_assert_eq!(n, 1, "{:?} in {} partitions", key, n);
                let idx = p.index_of(key, false).unwrap() as i64;
                prop_assert!(plan[idx as usize].contains(&j));
            } else {
                prop_assert_eq!(n, total);
            }
        }
        let s = p.stats(objs.iter().copied());
        prop_assert_eq!(s.directories as usize, objs.iter().filter(|o| o.1).count());
        let counts: Vec<u64> = plan.iter().map(|part| part.len() as u64).collect();
        prop_assert_eq!(s.counts, counts);
    }

    #[test]
    fn utf16_batches_match_one_key_at_a_time(
        keys in prop::collection::vec(
            prop_oneof![
                arb_key().prop_map(|k| k.encode_utf16().collect::<Vec<u16>>()),
                // Raw code units: lone and paired surrogates anywhere.
                prop::collection::vec(
                    prop_oneof![Just(0x61u16), Just(0x2F), Just(0x31), Just(0xE9), Just(0xD83E), Just(0xDD84), 0xD800u16..0xE000, any::<u16>()],
                    0..12,
                ),
            ],
            0..24,
        ),
        flags in prop::collection::vec(0u8..4, 0..24),
        cfg in arb_config(),
        total in 1i64..7,
        prefix in prop_oneof![Just(String::new()), Just("pre/".to_owned()), Just("é/".to_owned()), Just("pre".to_owned())],
    ) {
        let Ok(p) = ObjectPartitioner::new(total, &prefix, &cfg) else { return Ok(()) };
        let units: Vec<u16> = keys.concat();
        let lens: Vec<u32> = keys.iter().map(|k| k.len() as u32).collect();
        let batch = Utf16Batch::new(&units, &lens).unwrap();
        // No flags (every key AUTO), or one flag per key.
        let flags: Vec<u8> = if flags.is_empty() { flags } else { (0..keys.len()).map(|i| flags[i % flags.len()]).collect() };
        let mut got = Vec::new();
        let mut scratch = p.scratch();
        p.assign_utf16(&batch, &flags, &mut scratch, |a| got.push(a));
        let want: Vec<Assignment> = keys.iter().enumerate().map(|(i, k)| {
            let key = String::from_utf16_lossy(k);
            let is_dir = match flags.get(i).copied().unwrap_or(DIR_FLAG_AUTO) {
                DIR_FLAG_FILE => false,
                DIR_FLAG_DIRECTORY => true,
                _ => key.ends_with('/'),
            };
            p.assign(&key, is_dir)
        }).collect();
        prop_assert_eq!(&got, &want);
        // The scratch (and its date cache) gives the same answers the second time.
        let mut again = Vec::new();
        p.assign_utf16(&batch, &flags, &mut scratch, |a| again.push(a));
        prop_assert_eq!(&again, &want);
    }

    #[test]
    fn config_never_panics(cfg in arb_config(), total in any::<i64>(), key in arb_key()) {
        let _ = cfg.validate();
        if let Ok(p) = ObjectPartitioner::new(total, &key, &cfg) {
            let _ = p.assign(&key, false);
        }
    }
}
