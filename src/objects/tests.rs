//! Unit tests of the object partitioner: the reference page's vectors, Go's own test tables
//! for `time` and `regexp/syntax`, and properties.

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

// ---------------------------------------------------------------- Go time layouts

/// Go's test time: Thu Feb  4 21:00:57.0123456 PST 2009 (as formatted in zone PST).
fn go_test_time() -> gotime::Time {
    gotime::Time {
        unix: 1_233_810_057,
        nsec: 12_345_600,
        zone: gotime::Zone {
            name: "PST".into(),
            offset: -28_800,
        },
    }
}

#[test]
fn gotime_format_table() {
    // Go's formatTests (time/format_test.go), with the constants expanded.
    let t = go_test_time();
    for (layout, want) in [
        ("Mon Jan _2 15:04:05 2006", "Wed Feb  4 21:00:57 2009"),
        (
            "Mon Jan _2 15:04:05 MST 2006",
            "Wed Feb  4 21:00:57 PST 2009",
        ),
        (
            "Mon Jan 02 15:04:05 -0700 2006",
            "Wed Feb 04 21:00:57 -0800 2009",
        ),
        ("02 Jan 06 15:04 MST", "04 Feb 09 21:00 PST"),
        (
            "Monday, 02-Jan-06 15:04:05 MST",
            "Wednesday, 04-Feb-09 21:00:57 PST",
        ),
        (
            "Mon, 02 Jan 2006 15:04:05 MST",
            "Wed, 04 Feb 2009 21:00:57 PST",
        ),
        (
            "Mon, 02 Jan 2006 15:04:05 -0700",
            "Wed, 04 Feb 2009 21:00:57 -0800",
        ),
        ("2006-01-02T15:04:05Z07:00", "2009-02-04T21:00:57-08:00"),
        (
            "2006-01-02T15:04:05.999999999Z07:00",
            "2009-02-04T21:00:57.0123456-08:00",
        ),
        ("3:04PM", "9:00PM"),
        ("3pm", "9pm"),
        ("3PM", "9PM"),
        ("06 01 02", "09 02 04"),
        (
            "Hi Janet, the Month is January",
            "Hi Janet, the Month is February",
        ),
        ("Jan _2 15:04:05", "Feb  4 21:00:57"),
        ("Jan _2 15:04:05.000", "Feb  4 21:00:57.012"),
        ("Jan _2 15:04:05.000000", "Feb  4 21:00:57.012345"),
        ("Jan _2 15:04:05.000000000", "Feb  4 21:00:57.012345600"),
        ("2006-01-02 15:04:05", "2009-02-04 21:00:57"),
        ("2006-01-02", "2009-02-04"),
        ("15:04:05", "21:00:57"),
        ("Jan  2 002 __2 2", "Feb  4 035  35 4"),
        ("2006 6 06 _6 __6 ___6", "2009 6 09 _6 __6 ___6"),
        ("Jan January 1 01 _1", "Feb February 2 02 _2"),
        ("2 02 _2 __2", "4 04  4  35"),
        ("Mon Monday", "Wed Wednesday"),
        ("15 3 03 _3", "21 9 09 _9"),
        ("4 04 _4", "0 00 _0"),
        ("5 05 _5", "57 57 _57"),
        // TestFormatFractionalSecondSeparators
        ("15:04:05.000", "21:00:57.012"),
        ("15:04:05.999", "21:00:57.012"),
        ("15:04:05,000", "21:00:57,012"),
        ("15:04:05,999", "21:00:57,012"),
        // Zones.
        (
            "Z07 Z0700 Z070000 Z07:00:00 -07 -070000 -07:00:00",
            "-08 -0800 -080000 -08:00:00 -08 -080000 -08:00:00",
        ),
    ] {
        assert_eq!(t.format(layout), want, "layout {layout:?}");
    }
}

#[test]
fn gotime_format_misc() {
    // TestFormatSingleDigits, TestNoonIs12PM, TestMidnightIs12AM.
    assert_eq!(
        gotime::Time::utc(2001, 2, 3, 4, 5, 6, 700_000_000).format("3:4:5"),
        "4:5:6"
    );
    assert_eq!(
        gotime::Time::utc(0, 1, 1, 12, 0, 0, 0).format("3:04PM"),
        "12:00PM"
    );
    assert_eq!(
        gotime::Time::utc(0, 1, 1, 12, 0, 0, 0).format("03:04PM"),
        "12:00PM"
    );
    assert_eq!(
        gotime::Time::utc(0, 1, 1, 0, 0, 0, 0).format("3:04PM"),
        "12:00AM"
    );
    // TestFormatShortYear.
    for y in [
        -100_001i64,
        -10_000,
        -9999,
        -1001,
        -999,
        -101,
        -11,
        -10,
        -9,
        -1,
        0,
        1,
        9,
        99,
        999,
        9999,
        10_000,
        100_001,
    ] {
        let want = if y < 0 {
            format!("-{:04}.01.01", -y)
        } else {
            format!("{y:04}.01.01")
        };
        assert_eq!(
            gotime::Time::utc(y, 1, 1, 0, 0, 0, 0).format("2006.01.02"),
            want
        );
    }
    // UTC prints Z for ISO zones and "UTC" for MST.
    let t = gotime::Time::utc(2006, 1, 2, 15, 4, 5, 0);
    assert_eq!(t.format("Z07:00 Z0700 Z07 -0700 MST"), "Z Z Z +0000 UTC");
    // An unnamed zone prints a numeric MST.
    let t = gotime::Time {
        unix: 0,
        nsec: 0,
        zone: gotime::Zone {
            name: "".into(),
            offset: -(34 * 60 + 8),
        },
    };
    assert_eq!(t.format("MST Z07:00:00"), "-0034 -00:34:08");
    // .9 trims zeros; .0 keeps them; 0 digits after 4096 wrap (Go keeps n & 0xfff).
    let t = gotime::Time::utc(2006, 1, 2, 15, 4, 5, 500_000_000);
    assert_eq!(t.format(".000 .999 ,9 .0"), ".500 .5 ,5 .5");
    assert_eq!(
        gotime::Time::utc(2006, 1, 2, 15, 4, 5, 0).format("05.999"),
        "05"
    );
}

#[test]
fn gotime_seconds_zone_offsets() {
    // TestParseSecondsInTimeZone / TestFormatSecondsInTimeZone.
    for (layout, value, offset) in [
        (
            "2006-01-02T15:04:05-070000",
            "1871-01-01T05:33:02-003408",
            -(34 * 60 + 8),
        ),
        (
            "2006-01-02T15:04:05-07:00:00",
            "1871-01-01T05:33:02-00:34:08",
            -(34 * 60 + 8),
        ),
        (
            "2006-01-02T15:04:05-070000",
            "1871-01-01T05:33:02+003408",
            34 * 60 + 8,
        ),
        (
            "2006-01-02T15:04:05-07:00:00",
            "1871-01-01T05:33:02+00:34:08",
            34 * 60 + 8,
        ),
        (
            "2006-01-02T15:04:05Z070000",
            "1871-01-01T05:33:02-003408",
            -(34 * 60 + 8),
        ),
        (
            "2006-01-02T15:04:05Z07:00:00",
            "1871-01-01T05:33:02+00:34:08",
            34 * 60 + 8,
        ),
        ("2006-01-02T15:04:05-07", "1871-01-01T05:33:02+01", 3600),
        (
            "2006-01-02T15:04:05-07",
            "1871-01-01T05:33:02-02",
            -2 * 3600,
        ),
        (
            "2006-01-02T15:04:05Z07",
            "1871-01-01T05:33:02-02",
            -2 * 3600,
        ),
    ] {
        let t = gotime::parse(layout, value.as_bytes()).unwrap();
        assert_eq!(t.zone.offset, offset, "{value}");
        assert_eq!(t.format(layout), value);
    }
}

/// Go's parseTests: each value parses and formats back to Thu Feb 4 21:00:57 2010.
#[test]
fn gotime_parse_table() {
    for (layout, value, frac) in [
        ("Mon Jan _2 15:04:05 2006", "Thu Feb  4 21:00:57 2010", 0),
        (
            "Mon Jan _2 15:04:05 MST 2006",
            "Thu Feb  4 21:00:57 PST 2010",
            0,
        ),
        (
            "Mon Jan 02 15:04:05 -0700 2006",
            "Thu Feb 04 21:00:57 -0800 2010",
            0,
        ),
        (
            "Monday, 02-Jan-06 15:04:05 MST",
            "Thursday, 04-Feb-10 21:00:57 PST",
            0,
        ),
        (
            "Mon, 02 Jan 2006 15:04:05 MST",
            "Thu, 04 Feb 2010 21:00:57 PST",
            0,
        ),
        (
            "Mon, 02 Jan 2006 15:04:05 -0700",
            "Thu, 04 Feb 2010 21:00:57 -0800",
            0,
        ),
        ("2006-01-02T15:04:05Z07:00", "2010-02-04T21:00:57-08:00", 0),
        ("2006-01-02 15:04:05-07", "2010-02-04 21:00:57-08", 0),
        ("Mon Jan _2 15:04:05 2006", "Thu Feb  4 21:00:57.0 2010", 1),
        (
            "Mon Jan _2 15:04:05 MST 2006",
            "Thu Feb  4 21:00:57.01 PST 2010",
            2,
        ),
        (
            "Mon Jan 02 15:04:05 -0700 2006",
            "Thu Feb 04 21:00:57.012 -0800 2010",
            3,
        ),
        (
            "Monday, 02-Jan-06 15:04:05 MST",
            "Thursday, 04-Feb-10 21:00:57.0123 PST",
            4,
        ),
        (
            "Mon, 02 Jan 2006 15:04:05 MST",
            "Thu, 04 Feb 2010 21:00:57.01234 PST",
            5,
        ),
        (
            "2006-01-02T15:04:05Z07:00",
            "2010-02-04T21:00:57.012345678-08:00",
            9,
        ),
        ("2006-01-02 15:04:05", "2010-02-04 21:00:57.0", 0),
        ("Mon Jan _2 15:04:05 2006", "Thu Feb 4 21:00:57 2010", 0),
        (
            "Mon Jan _2 15:04:05 2006",
            "Thu      Feb     4     21:00:57     2010",
            0,
        ),
        ("Mon Jan _2 15:04:05 2006", "THU FEB 4 21:00:57 2010", 0),
        ("Mon Jan _2 15:04:05 2006", "thu feb 4 21:00:57 2010", 0),
        (
            "Mon Jan _2 15:04:05.000 2006",
            "Thu Feb  4 21:00:57.012 2010",
            3,
        ),
        (
            "Mon Jan _2 15:04:05.000000 2006",
            "Thu Feb  4 21:00:57.012345 2010",
            6,
        ),
        (
            "Mon Jan _2 15:04:05.000000000 2006",
            "Thu Feb  4 21:00:57.012345678 2010",
            9,
        ),
        (
            "Mon Jan _2 15:04:05,000 2006",
            "Thu Feb  4 21:00:57.012 2010",
            3,
        ),
        ("2006.01.02.15.04.05.0", "2010.02.04.21.00.57.0", 1),
        ("2006.01.02.15.04.05.00", "2010.02.04.21.00.57.01", 2),
        (
            "Hi Janet, the Month is January: Jan _2 15:04:05 2006",
            "Hi Janet, the Month is February: Feb  4 21:00:57 2010",
            0,
        ),
        (
            "2006-01-02 15:04:05.9999 -0700 MST",
            "2010-02-04 21:00:57 -0800 PST",
            0,
        ),
        (
            "2006-01-02 15:04:05.999999999 -0700 MST",
            "2010-02-04 21:00:57.0123 -0800 PST",
            4,
        ),
        (
            "2006-01-02 15:04:05,9999 -0700 MST",
            "2010-02-04 21:00:57.012345678 -0800 PST",
            9,
        ),
        ("2006-01-02 002 15:04:05", "2010-02-04 035 21:00:57", 0),
        ("2006-01 002 15:04:05", "2010-02 035 21:00:57", 0),
        ("2006-002 15:04:05", "2010-035 21:00:57", 0),
        ("200600201 15:04:05", "201003502 21:00:57", 0),
        ("200600204 15:04:05", "201003504 21:00:57", 0),
    ] {
        let t = gotime::parse(layout, value.as_bytes())
            .unwrap_or_else(|e| panic!("{layout:?} {value:?}: {e}"));
        // Wall clock in the parsed zone.
        assert_eq!(t.format("2006-01-02 15:04"), "2010-02-04 21:00", "{value}");
        assert_eq!(t.format("05"), "57", "{value}");
        let want_ns: i64 = format!("{:0<9}", &"012345678"[..frac]).parse().unwrap();
        assert_eq!(t.nsec, want_ns, "{value}");
        if value.contains("-08") {
            assert_eq!(t.zone.offset, -28_800);
        }
        // Weekday is checked for syntax only; Thu is right for 2010-02-04.
        assert_eq!(t.format("Mon"), "Thu");
    }
    // TestUnderscoreTwoThousand: "_2006" is "_" then the year.
    let t = gotime::parse("15:04_20060102", b"14:38_20150618").unwrap();
    assert_eq!(t.format("2006-01-02 15:04"), "2015-06-18 14:38");
    // GMT with an hour offset: the instant is NOT shifted, only the displayed zone.
    let t = gotime::parse(
        "Mon Jan _2 15:04:05 MST 2006",
        b"Fri Feb  5 05:00:57 GMT-8 2010",
    )
    .unwrap();
    assert_eq!(
        t.format("Mon Jan _2 15:04:05 MST 2006"),
        "Thu Feb  4 21:00:57 GMT-8 2010"
    );
    // An unknown abbreviation is a zone with offset 0 (time.Local = UTC).
    let t = gotime::parse("15:04 MST", b"21:00 PST").unwrap();
    assert_eq!(
        (t.format("15:04 MST -0700"), t.zone.offset),
        ("21:00 PST +0000".to_owned(), 0)
    );
    // +0000 with Local = UTC is Local: formats as UTC.
    let t = gotime::parse("15:04 -0700", b"21:00 +0000").unwrap();
    assert_eq!(t.format("MST Z07:00"), "UTC Z");
    // TestParseYday.
    for i in 1..=365 {
        let t = gotime::parse("2006-002", format!("2020-{i:03}").as_bytes()).unwrap();
        assert_eq!(t.format("2006 002"), format!("2020 {i:03}"));
    }
    // Year 0 is a leap year: day 366 exists.
    assert_eq!(
        gotime::parse("002", b"366").unwrap().format("2006-01-02"),
        "0000-12-31"
    );
    // 12PM is noon, 12AM is midnight.
    assert_eq!(
        gotime::parse("3:04PM", b"12:00PM").unwrap().format("15"),
        "12"
    );
    assert_eq!(
        gotime::parse("03:04PM", b"12:00AM").unwrap().format("15"),
        "00"
    );
    // Two-digit years: >= 69 is 19xx.
    assert_eq!(gotime::parse("06", b"68").unwrap().format("2006"), "2068");
    assert_eq!(gotime::parse("06", b"69").unwrap().format("2006"), "1969");
    // Go's atoi accepts a sign inside the two digits: "-1" is 1999.
    assert_eq!(gotime::parse("06", b"-1").unwrap().format("2006"), "1999");
    assert_eq!(gotime::parse("05.00", b"01.+5").unwrap().nsec, 50_000_000);
}

#[test]
fn gotime_parse_errors_exact() {
    for (layout, value, want) in [
        (
            "2006-01-02",
            "x",
            r#"parsing time "x" as "2006-01-02": cannot parse "x" as "2006""#,
        ),
        (
            "2006-01-02",
            "2023-13-01",
            r#"parsing time "2023-13-01": month out of range"#,
        ),
        (
            "2006-01-02",
            "2023-00-01",
            r#"parsing time "2023-00-01": month out of range"#,
        ),
        (
            "2006-01-02",
            "2023-02-29",
            r#"parsing time "2023-02-29": day out of range"#,
        ),
        (
            "2006-01-02",
            "2023-04-31",
            r#"parsing time "2023-04-31": day out of range"#,
        ),
        (
            "2006-01-02",
            "2023-01-00",
            r#"parsing time "2023-01-00": day out of range"#,
        ),
        (
            "2006-01-02",
            "2023-01-02-data",
            r#"parsing time "2023-01-02-data": extra text: "-data""#,
        ),
        (
            "2006-01-02",
            "2023-01-2",
            r#"parsing time "2023-01-2" as "2006-01-02": cannot parse "2" as "02""#,
        ),
        (
            "2006-01-02",
            "invalid-da",
            r#"parsing time "invalid-da" as "2006-01-02": cannot parse "invalid-da" as "2006""#,
        ),
        (
            "2006-01-02",
            "2023/01/02",
            r#"parsing time "2023/01/02" as "2006-01-02": cannot parse "/01/02" as "-""#,
        ),
        (
            "15:04",
            "24:00",
            r#"parsing time "24:00": hour out of range"#,
        ),
        (
            "15:04",
            "23:60",
            r#"parsing time "23:60": minute out of range"#,
        ),
        (
            "15:04:05",
            "23:59:60",
            r#"parsing time "23:59:60": second out of range"#,
        ),
        ("3PM", "13PM", r#"parsing time "13PM": hour out of range"#),
        (
            "3PM",
            "1XM",
            r#"parsing time "1XM" as "3PM": cannot parse "XM" as "PM""#,
        ),
        (
            "-0700",
            "+2500",
            r#"parsing time "+2500": time zone offset hour out of range"#,
        ),
        (
            "-0700",
            "+0061",
            r#"parsing time "+0061": time zone offset minute out of range"#,
        ),
        (
            "-0700",
            "*0100",
            r#"parsing time "*0100" as "-0700": cannot parse "*0100" as "-0700""#,
        ),
        (
            "2006 002",
            "2023 366",
            r#"parsing time "2023 366": day-of-year out of range"#,
        ),
        (
            "2006 002",
            "2020 367",
            r#"parsing time "2020 367": day-of-year out of range"#,
        ),
        (
            "Jan _2 002 2006",
            "Feb  4 034 2006",
            r#"parsing time "Feb  4 034 2006": day-of-year does not match day"#,
        ),
        (
            "Jan _2 002 2006",
            "Feb  4 004 2006",
            r#"parsing time "Feb  4 004 2006": day-of-year does not match month"#,
        ),
        (
            "Mon Jan _2 15:04:05.000 2006",
            "Thu Feb  4 23:00:59.-123 2010",
            r#"parsing time "Thu Feb  4 23:00:59.-123 2010": fractional second out of range"#,
        ),
        // Go's parseErrorTests with exact messages.
        (
            "2006-01-02T15:04:05Z07:00",
            "2006-01-02T15:04:05Z07:00",
            r#"parsing time "2006-01-02T15:04:05Z07:00": extra text: "07:00""#,
        ),
        (
            "2006-01-02T15:04:05Z07:00",
            "2006-01-02T15:04_abc",
            r#"parsing time "2006-01-02T15:04_abc" as "2006-01-02T15:04:05Z07:00": cannot parse "_abc" as ":""#,
        ),
        (
            "2006-01-02T15:04:05Z07:00",
            "2006-01-02T15:04:05_abc",
            r#"parsing time "2006-01-02T15:04:05_abc" as "2006-01-02T15:04:05Z07:00": cannot parse "_abc" as "Z07:00""#,
        ),
        (
            "2006-01-02T15:04:05Z07:00",
            "2006-01-02T15:04:05Z_abc",
            r#"parsing time "2006-01-02T15:04:05Z_abc": extra text: "_abc""#,
        ),
        (
            "\"2006-01-02T15:04:05Z07:00\"",
            "0",
            r#"parsing time "0" as "\"2006-01-02T15:04:05Z07:00\"": cannot parse "0" as "\"""#,
        ),
        (
            "2006-01-02T15:04:05Z07:00",
            "\"",
            r#"parsing time "\"" as "2006-01-02T15:04:05Z07:00": cannot parse "\"" as "2006""#,
        ),
        (
            "Mon Jan _2 15:04:05 2006",
            "Feb  4 21:00:60 2010",
            r#"parsing time "Feb  4 21:00:60 2010" as "Mon Jan _2 15:04:05 2006": cannot parse "Feb  4 21:00:60 2010" as "Mon""#,
        ),
        (
            "Mon Jan _2 15:04:05 2006",
            "Thu Feb  4 21:00:57 @2010",
            r#"parsing time "Thu Feb  4 21:00:57 @2010" as "Mon Jan _2 15:04:05 2006": cannot parse "@2010" as "2006""#,
        ),
        (
            "Jan _2 15:04:05.000000000",
            "Dec  7 11:22:01.000000",
            r#"parsing time "Dec  7 11:22:01.000000" as "Jan _2 15:04:05.000000000": cannot parse ".000000" as ".000000000""#,
        ),
        (
            "Jan _2 15:04:05.000000000",
            "Dec  7 11:22:01.0000000000",
            r#"parsing time "Dec  7 11:22:01.0000000000": extra text: "0""#,
        ),
        (
            "☺2006",
            "☺x",
            r#"parsing time "\xe2\x98\xbax" as "\xe2\x98\xba2006": cannot parse "x" as "2006""#,
        ),
        (
            "2006\x04",
            "2006",
            r#"parsing time "2006" as "2006\x04": cannot parse "" as "\x04""#,
        ),
    ] {
        let e = gotime::parse(layout, value.as_bytes()).expect_err(value);
        assert_eq!(e.to_string(), want, "{layout:?} {value:?}");
    }
}

#[test]
fn gotime_parse_errors_contain() {
    // Go's parseErrorTests whose expectation is a substring.
    for (layout, value, part) in [
        (
            "Mon Jan _2 15:04:05 2006",
            "Thu Feb  4 21:00:60 2010",
            "second out of range",
        ),
        (
            "Mon Jan _2 15:04:05 2006",
            "Thu Feb  4 21:61:57 2010",
            "minute out of range",
        ),
        (
            "Mon Jan _2 15:04:05 2006",
            "Thu Feb  4 24:00:60 2010",
            "hour out of range",
        ),
        (
            "Mon Jan _2 15:04:05.000 2006",
            "Thu Feb  4 23:00:59x01 2010",
            "cannot parse",
        ),
        (
            "Mon Jan _2 15:04:05.000 2006",
            "Thu Feb  4 23:00:59.xxx 2010",
            "cannot parse",
        ),
        (
            "2006-01-02T15:04:05Z07:00",
            "2010-02-04T21:00:67.012345678-08:00",
            "second out of range",
        ),
        ("_2 Jan 06 15:04 MST", "4 --- 00 00:00 GMT", "cannot parse"),
        (
            "_2 January 06 15:04 MST",
            "4 --- 00 00:00 GMT",
            "cannot parse",
        ),
        ("01 MST", "0 MST", "cannot parse \"0 MST\""),
        ("01 MST", "1 MST", "cannot parse \"1 MST\""),
        (
            "Monday, 02-Jan-06 15:04:05 MST",
            "Thursday, 04-Feb-1 21:00:57 PST",
            "cannot parse \"1 21",
        ),
    ] {
        let e = gotime::parse(layout, value.as_bytes())
            .expect_err(value)
            .to_string();
        assert!(e.contains(part), "{layout:?} {value:?}: {e}");
    }
    // dayOutOfRangeTests (ANSIC).
    for (date, ok) in [
        ("Thu Jan 99 21:00:57 2010", false),
        ("Thu Jan 31 21:00:57 2010", true),
        ("Thu Jan 32 21:00:57 2010", false),
        ("Thu Feb 28 21:00:57 2012", true),
        ("Thu Feb 29 21:00:57 2012", true),
        ("Thu Feb 29 21:00:57 2010", false),
        ("Thu Mar 32 21:00:57 2010", false),
        ("Thu Apr 30 21:00:57 2010", true),
        ("Thu Apr 31 21:00:57 2010", false),
        ("Thu Jun 31 21:00:57 2010", false),
        ("Thu Sep 31 21:00:57 2010", false),
        ("Thu Nov 31 21:00:57 2010", false),
        ("Thu Dec 31 21:00:57 2010", true),
        ("Thu Dec 00 21:00:57 2010", false),
        ("Thu Feb 29 21:00:57 1900", false),
        ("Thu Feb 29 21:00:57 2000", true),
    ] {
        match gotime::parse("Mon Jan _2 15:04:05 2006", date.as_bytes()) {
            Ok(_) => assert!(ok, "{date}"),
            Err(e) => {
                assert!(!ok, "{date}: {e}");
                assert!(e.to_string().contains("day out of range"), "{e}");
            }
        }
    }
    // monthOutOfRangeTests.
    assert!(gotime::parse("01-02", b"00-01")
        .unwrap_err()
        .to_string()
        .contains("month out of range"));
    assert!(gotime::parse("01-02", b"13-01")
        .unwrap_err()
        .to_string()
        .contains("month out of range"));
    assert!(gotime::parse("01-02", b"01-01").is_ok());
}

#[test]
fn gotime_time_zone_abbreviations() {
    // Go's parseTimeZoneTests, through the MST token.
    for (value, len) in [
        ("gmt hi there", 0),
        ("GMT hi there", 3),
        ("GMT+12 hi there", 6),
        ("GMT+00 hi there", 6),
        ("GMT+", 3),
        ("GMT+3", 5),
        ("GMT+a", 3),
        ("GMT+3a", 5),
        ("GMT-5 hi there", 5),
        ("GMT-51 hi there", 3),
        ("ChST hi there", 4),
        ("MeST hi there", 4),
        ("MSDx", 3),
        ("MSDY", 0),
        ("ESAST hi", 5),
        ("ESASTT hi", 0),
        ("ESATY hi", 0),
        ("WITA hi", 4),
        ("+03 hi", 3),
        ("-04 hi", 3),
        ("+00", 3),
        ("-23", 3),
        ("-24", 0),
        ("+24", 0),
    ] {
        let got = gotime::parse("MST", value.as_bytes());
        if len == 0 {
            assert!(
                got.unwrap_err().to_string().contains("cannot parse"),
                "{value}"
            );
        } else if len == value.len() {
            assert_eq!(got.unwrap().zone.name, value);
        } else {
            let e = got.unwrap_err().to_string();
            assert!(e.contains("extra text"), "{value}: {e}");
            assert!(
                e.ends_with(&format!("extra text: \"{}\"", &value[len..])),
                "{value}: {e}"
            );
        }
    }
}

#[test]
fn gotime_next_std_chunk_boundaries() {
    // Go's nextStdChunkTests: formatting the reference time shows the chunking.
    let r = gotime::Time::utc(2006, 1, 2, 15, 4, 5, 0);
    assert_eq!(
        r.format("2006-01-02 002 15:04:05"),
        "2006-01-02 002 15:04:05"
    );
    assert_eq!(r.format("2006002 01"), "2006002 01");
    let t = gotime::Time::utc(2010, 2, 4, 21, 0, 57, 0);
    assert_eq!(
        t.format("(2006)(002)(01) (15):(04):(05)"),
        "(2010)(035)(02) (21):(00):(57)"
    );
    assert_eq!(
        t.format("(2006)(002)(04) (15):(04):(05)"),
        "(2010)(035)(00) (21):(00):(57)"
    );
    // Jan/Mon not followed by a lower-case letter; "_2006" is "_" + year.
    assert_eq!(
        t.format("Janx Jany JanX Monz MonZ _2006"),
        "Janx Jany FebX Monz ThuZ _2010"
    );
    // A run of fraction digits followed by a digit is not a fraction.
    // ".001": "00" then '1' is not a fraction; then "01" is the month.
    assert_eq!(t.format(".001"), ".002");
}

#[test]
fn gotime_validate_layout_matches_go() {
    for ok in [
        "2006-01-02",
        "2006-01-02T15:04:05Z07:00",
        "2006-01-02T15:04:05.999999999Z07:00",
        "Mon Jan _2 15:04:05 MST 2006",
        "02 Jan 06 15:04 -0700",
        "__2 2006",
        "Monday January 2 3:04:05.000 PM",
        "20060102",
        "2006/01/02/15",
        "plain text",
        "",
    ] {
        assert!(gotime::validate_layout(ok).is_ok(), "{ok:?}");
    }
    for ok in ["1502", "01 2", "3 15", "2_2", "Jan2006", ".001"] {
        assert!(gotime::validate_layout(ok).is_ok(), "{ok:?}");
    }
    // "22" formats as "22", which reads back as day 22 and then no second day.
    for bad in ["12006", "22", "05.0000000000", "3 4 5 15 4 5 1 2 22"] {
        assert!(gotime::validate_layout(bad).is_err(), "{bad:?}");
    }
}

// ---------------------------------------------------------------- Go regexp syntax

#[test]
fn goregex_invalid_patterns_from_go_tests() {
    let deep = "(".repeat(1000) + &")".repeat(1000);
    let deep_star = "(?:".repeat(1000) + &")*".repeat(1000);
    let long1 = "(".to_owned() + &"(xx?)".repeat(1000) + "){1000}";
    let long2 = "(xx?){1000}".repeat(1000);
    let cases: Vec<(&str, &str)> = vec![
        ("(", "missing closing ): `(`"),
        (")", "unexpected ): `)`"),
        ("(a", "missing closing ): `(a`"),
        ("a)", "unexpected ): `a)`"),
        ("(a))", "unexpected ): `(a))`"),
        ("(a|b|", "missing closing ): `(a|b|`"),
        ("a|b|)", "unexpected ): `a|b|)`"),
        ("(a|b|))", "unexpected ): `(a|b|))`"),
        ("[a-z", "missing closing ]: `[a-z`"),
        ("([a-z)", "missing closing ]: `[a-z)`"),
        ("[a-z)", "missing closing ]: `[a-z)`"),
        ("([a-z]))", "unexpected ): `([a-z]))`"),
        ("x{1001}", "invalid repeat count: `{1001}`"),
        ("x{9876543210}", "invalid repeat count: `{9876543210}`"),
        ("x{2,1}", "invalid repeat count: `{2,1}`"),
        ("x{1,9876543210}", "invalid repeat count: `{1,9876543210}`"),
        ("(?P<name>a", "missing closing ): `(?P<name>a`"),
        ("(?P<name>", "missing closing ): `(?P<name>`"),
        ("(?P<name", "invalid named capture: `(?P<name`"),
        ("(?P<x y>a)", "invalid named capture: `(?P<x y>`"),
        ("(?P<>a)", "invalid named capture: `(?P<>`"),
        ("(?<name>a", "missing closing ): `(?<name>a`"),
        ("(?<name", "invalid named capture: `(?<name`"),
        ("(?<x y>a)", "invalid named capture: `(?<x y>`"),
        ("(?<>a)", "invalid named capture: `(?<>`"),
        ("[a-Z]", "invalid character class range: `a-Z`"),
        ("(?i)[a-Z]", "invalid character class range: `a-Z`"),
        (r"\Q\E*", "missing argument to repetition operator: `*`"),
        ("a{100000}", "invalid repeat count: `{100000}`"),
        ("a{100000,}", "invalid repeat count: `{100000,}`"),
        (
            "((((((((((x{2}){2}){2}){2}){2}){2}){2}){2}){2}){2})",
            "invalid repeat count: `{2}`",
        ),
        (&deep, "expression nests too deeply"),
        (&deep_star, "expression nests too deeply"),
        (&long1, "expression too large"),
        (&long2, "expression too large"),
        // onlyPOSIX: invalid with Perl flags.
        ("a++", "invalid nested repetition operator: `++`"),
        ("a**", "invalid nested repetition operator: `**`"),
        ("a?*", "invalid nested repetition operator: `?*`"),
        ("a+*", "invalid nested repetition operator: `+*`"),
        ("a{1}*", "invalid nested repetition operator: `{1}*`"),
        (
            ".{1}{2}.{3}",
            "invalid nested repetition operator: `{1}{2}`",
        ),
        ("a*?+", "invalid nested repetition operator: `*?+`"),
        // More of Go's errors.
        ("*", "missing argument to repetition operator: `*`"),
        ("a|*", "missing argument to repetition operator: `*`"),
        ("(*)", "missing argument to repetition operator: `*`"),
        ("(?i)*", "missing argument to repetition operator: `*`"),
        ("{2}", "missing argument to repetition operator: `{2}`"),
        ("??", "missing argument to repetition operator: `??`"),
        (r"a\", "trailing backslash at end of expression: ``"),
        (r"\1", r"invalid escape sequence: `\1`"),
        (r"\8", r"invalid escape sequence: `\8`"),
        (r"\q", r"invalid escape sequence: `\q`"),
        (r"\é", r"invalid escape sequence: `\é`"),
        (r"\C", r"invalid escape sequence: `\C`"),
        (r"\Z", r"invalid escape sequence: `\Z`"),
        (r"\x", r"invalid escape sequence: `\x`"),
        (r"\xg0", r"invalid escape sequence: `\xg0`"),
        (r"\x{", r"invalid escape sequence: `\x{`"),
        (r"\x{}", r"invalid escape sequence: `\x{}`"),
        (r"\x{110000}", r"invalid escape sequence: `\x{110000`"),
        (r"\x{12g}", r"invalid escape sequence: `\x{12g`"),
        (r"[\b]", r"invalid escape sequence: `\b`"),
        (r"[a-\d]", r"invalid escape sequence: `\d`"),
        (r"\p", r"invalid character class range: `\p`"),
        (r"\pX", r"invalid character class range: `\pX`"),
        (r"\p{Foo}", r"invalid character class range: `\p{Foo}`"),
        (
            r"\p{Letter}",
            r"invalid character class range: `\p{Letter}`",
        ),
        (r"\p{Greek", r"invalid character class range: `\p{Greek`"),
        (r"[[:foo:]]", "invalid character class range: `[:foo:]`"),
        (r"[[:a]b:]]", "invalid character class range: `[:a]b:]`"),
        ("(?x)a", "invalid or unsupported Perl syntax: `(?x`"),
        ("(?u)a", "invalid or unsupported Perl syntax: `(?u`"),
        ("(?P=name)", "invalid or unsupported Perl syntax: `(?P`"),
        ("(?=a)", "invalid or unsupported Perl syntax: `(?=`"),
        ("(?!a)", "invalid or unsupported Perl syntax: `(?!`"),
        ("(?<=a)", "invalid named capture: `(?<=a)`"),
        ("(?-)", "invalid or unsupported Perl syntax: `(?-)`"),
        ("(?i-)", "invalid or unsupported Perl syntax: `(?i-)`"),
        ("(?i--s)", "invalid or unsupported Perl syntax: `(?i--`"),
        ("(?i", "invalid or unsupported Perl syntax: `(?i`"),
        ("(?", "invalid or unsupported Perl syntax: `(?`"),
    ];
    for (pat, want) in cases {
        let e = goregex::compile(pat).expect_err(pat);
        let want = if want.starts_with("expression") {
            format!("error parsing regexp: {want}: `{pat}`")
        } else {
            format!("error parsing regexp: {want}")
        };
        assert_eq!(e.to_string(), want, "{pat:?}");
    }
    // Too many runes: Go reports "expression too large"; Rust's size limit trips first.
    let runes = r"\pL".repeat(27_000);
    assert_eq!(
        goregex::compile(&runes).unwrap_err().code,
        "expression too large"
    );
}

#[test]
fn goregex_valid_patterns() {
    for ok in [
        r"[a-b-c]",
        r"\Qabc\E",
        r"\Q*+?{[\E",
        r"\Q\\E",
        r"\Q\\\E",
        r"(?:a)",
        r"(?P<name>a)",
        r"(?<name>a)",
        r"(?P<n>a)(?P<n>b)", // Go does not reject duplicate names
        r"(?)",
        r"(?i)(?-i)(?i-s:x)(?U)(?m)(?s)",
        r"^*$+",
        r"(?:)*",
        r"\b*",
        r"a*(?i)*",
        r"x{1000}",
        r"(x{10}){100}",
        r"[]a]",
        r"[^]a]",
        r"[a-]",
        r"[-a]",
        r"[\d\D]",
        r"[^\x00-\x{10FFFF}]",
        r"[\x{D800}-\x{DFFF}]",
        r"\x{D800}",
        r"[[:^alpha:][:word:]]",
        r"\pL\PL\p{^L}\P{^Greek}\p{Any}\pC\p{Cs}",
        r"[\p{Han}\P{Latin}]",
        r"\A\z\B",
        r"\{\}\[\]\(\)\.\*\+\?\|\^\$\\\-\_\<\>\'\`\~\!\@\#\%\&\=\:\;\,\/\ ",
        r"\a\f\n\r\t\v\x41\x{263a}\0\07\077\0777",
        "é+漢字",
    ] {
        let re = goregex::compile(ok);
        assert!(
            re.is_ok(),
            "{ok:?}: {:?} -> {:?}",
            re.err(),
            goregex::translate(ok)
        );
    }
    // Go allows 1000 levels; partkit stops at 250 (see the module docs). Deep patterns need
    // a big stack in debug builds.
    std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(|| {
            let ok = "(".repeat(240) + "a" + &")".repeat(240);
            assert!(goregex::compile(&ok).unwrap().is_match("a"));
            let ok = "(?:".repeat(240) + "a" + &")*".repeat(240);
            assert!(goregex::compile(&ok).unwrap().is_match("a"));
            let deep = "(".repeat(999) + &")".repeat(999);
            assert_eq!(
                goregex::compile(&deep).unwrap_err().code,
                "expression nests too deeply"
            );
        })
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn goregex_literal_semantics() {
    let m = |pat: &str, hay: &str| {
        goregex::compile(pat)
            .unwrap()
            .find(hay)
            .map(|m| m.as_str().to_owned())
    };
    assert_eq!(m(r"\Q\\E", r"x\y").as_deref(), Some(r"\"));
    assert_eq!(m(r"\0777", "\u{3f}7").as_deref(), Some("\u{3f}7")); // \077 then literal 7
    assert_eq!(m(r"[]a]+", "x]a]").as_deref(), Some("]a]"));
    assert_eq!(m(r"[^]a]+", "]a]bc").as_deref(), Some("bc"));
    assert_eq!(m(r"[a-b-c]+", "x-cab").as_deref(), Some("-cab"));
    assert_eq!(
        m(r"[\x{D800}-\x{E000}]", "a\u{E000}").as_deref(),
        Some("\u{E000}")
    );
    assert_eq!(m(r"\pC", "a\u{378}\u{1}").as_deref(), Some("\u{1}")); // U+0378 is unassigned
    assert_eq!(m(r"[[:word:]]+", "é_x1").as_deref(), Some("_x1"));
    assert_eq!(m(r"(?i)[k]", "\u{212A}").as_deref(), Some("\u{212A}"));
    assert_eq!(m(r"(?i)\W", "\u{212A}!").as_deref(), Some("!"));
    assert_eq!(m(r"a{2}{", "aa{").as_deref(), Some("aa{"));
    assert_eq!(m(r"x{2,}?", "xxxx").as_deref(), Some("xx"));
    assert_eq!(m(r"(?U)x{2,}?", "xxxx").as_deref(), Some("xxxx"));
    assert_eq!(m(r"(?m)^b", "a\nb").as_deref(), Some("b"));
    assert_eq!(m(r"^b", "a\nb"), None);
    assert_eq!(m(r"a|b|", "c").as_deref(), Some(""));
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

    #[test]
    fn gotime_never_panics(layout in "[0-9A-Za-z_ :.,+-]{0,16}|\\PC{0,8}", value in prop::collection::vec(any::<u8>(), 0..24)) {
        if let Ok(t) = gotime::parse_bytes(layout.as_bytes(), &value) {
            let _ = t.format_bytes(layout.as_bytes());
        }
        let _ = gotime::validate_layout(&layout);
    }

    #[test]
    fn gotime_round_trips(
        secs in 0i64..253_402_300_799, // years 1970..9999
        nsec in 0i64..1_000_000_000,
        layout in prop::sample::select(vec![
            "2006-01-02T15:04:05.999999999Z07:00",
            "2006-01-02 15:04:05.000000000",
            "Mon Jan _2 15:04:05 2006",
            "Monday, 02-January-2006 03:04:05.000PM",
            "2006 002 15 04 05 .000000000",
            "20060102150405,000000000",
        ]),
    ) {
        let t = gotime::Time { unix: secs, nsec, zone: gotime::Zone::utc() };
        let s = t.format(layout);
        let back = gotime::parse(layout, s.as_bytes()).unwrap();
        prop_assert_eq!(back.format(layout), s);
        if layout.contains("000000000") || layout.contains("999999999") {
            prop_assert_eq!(back.unix, t.unix);
        }
    }

    #[test]
    fn goregex_never_panics(pat in "[a-z()|*?+.\\\\\\[\\]{}0-9,^$:PpQEdswbB<>-]{0,16}|\\PC{0,10}") {
        // Go accepts => Rust compiles (or reports Go's "too large").
        if let Ok(t) = goregex::translate(&pat) {
            let r = regex::RegexBuilder::new(&t).nest_limit(4000).size_limit(64 << 20).build();
            prop_assert!(r.is_ok(), "{:?} -> {:?}: {:?}", pat, t, r.err());
        }
    }
}
