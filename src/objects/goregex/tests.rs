//! Unit tests of the translation of Go's `regexp/syntax`: Go's own test tables of invalid and
//! valid patterns, literal semantics, and a property.

use crate::objects::goregex;
use proptest::prelude::*;
use regex_syntax::hir::{Class, ClassUnicodeRange, Hir, HirKind};

use super::{hir, parse_bounded, CATEGORIES};

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
            .map(|(a, b)| hay[a..b].to_owned())
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
fn has_case_is_the_case_mappings_or_non_ascii() {
    for c in (0..=0x10FFFF).filter_map(char::from_u32) {
        let mapped = c.to_lowercase().ne(std::iter::once(c))
            || c.to_uppercase().ne(std::iter::once(c))
            || !c.is_ascii();
        assert_eq!(super::has_case(c), mapped, "{c:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn goregex_never_panics(pat in "[a-z()|*?+.\\\\\\[\\]{}0-9,^$:PpQEdswbB<>-]{0,16}|\\PC{0,10}") {
        // Go accepts => Rust compiles (or reports Go's "too large").
        if let Ok(t) = goregex::translate(&pat) {
            let r = regex::RegexBuilder::new(&t).nest_limit(4000).size_limit(64 << 20).build();
            prop_assert!(r.is_ok(), "{:?} -> {:?}: {:?}", pat, t, r.err());
        }
    }

    #[test]
    fn goregex_builds_regex_syntax_s_hir(pat in "[a-z()|*?+.\\\\\\[\\]{}0-9,^$:PpQEdswbBLUi<>-]{0,20}|\\PC{0,10}") {
        prop_assert!(same_hir(&pat).is_ok(), "{}", same_hir(&pat).unwrap_err());
    }
}

/// Go's Unicode scripts (`unicode.Scripts` keys, Unicode 15.0): the names the tables are written for.
const SCRIPTS: &[&str] = &[
    "Adlam",
    "Ahom",
    "Anatolian_Hieroglyphs",
    "Arabic",
    "Armenian",
    "Avestan",
    "Balinese",
    "Bamum",
    "Bassa_Vah",
    "Batak",
    "Bengali",
    "Bhaiksuki",
    "Bopomofo",
    "Brahmi",
    "Braille",
    "Buginese",
    "Buhid",
    "Canadian_Aboriginal",
    "Carian",
    "Caucasian_Albanian",
    "Chakma",
    "Cham",
    "Cherokee",
    "Chorasmian",
    "Common",
    "Coptic",
    "Cuneiform",
    "Cypriot",
    "Cypro_Minoan",
    "Cyrillic",
    "Deseret",
    "Devanagari",
    "Dives_Akuru",
    "Dogra",
    "Duployan",
    "Egyptian_Hieroglyphs",
    "Elbasan",
    "Elymaic",
    "Ethiopic",
    "Georgian",
    "Glagolitic",
    "Gothic",
    "Grantha",
    "Greek",
    "Gujarati",
    "Gunjala_Gondi",
    "Gurmukhi",
    "Han",
    "Hangul",
    "Hanifi_Rohingya",
    "Hanunoo",
    "Hatran",
    "Hebrew",
    "Hiragana",
    "Imperial_Aramaic",
    "Inherited",
    "Inscriptional_Pahlavi",
    "Inscriptional_Parthian",
    "Javanese",
    "Kaithi",
    "Kannada",
    "Katakana",
    "Kawi",
    "Kayah_Li",
    "Kharoshthi",
    "Khitan_Small_Script",
    "Khmer",
    "Khojki",
    "Khudawadi",
    "Lao",
    "Latin",
    "Lepcha",
    "Limbu",
    "Linear_A",
    "Linear_B",
    "Lisu",
    "Lycian",
    "Lydian",
    "Mahajani",
    "Makasar",
    "Malayalam",
    "Mandaic",
    "Manichaean",
    "Marchen",
    "Masaram_Gondi",
    "Medefaidrin",
    "Meetei_Mayek",
    "Mende_Kikakui",
    "Meroitic_Cursive",
    "Meroitic_Hieroglyphs",
    "Miao",
    "Modi",
    "Mongolian",
    "Mro",
    "Multani",
    "Myanmar",
    "Nabataean",
    "Nag_Mundari",
    "Nandinagari",
    "New_Tai_Lue",
    "Newa",
    "Nko",
    "Nushu",
    "Nyiakeng_Puachue_Hmong",
    "Ogham",
    "Ol_Chiki",
    "Old_Hungarian",
    "Old_Italic",
    "Old_North_Arabian",
    "Old_Permic",
    "Old_Persian",
    "Old_Sogdian",
    "Old_South_Arabian",
    "Old_Turkic",
    "Old_Uyghur",
    "Oriya",
    "Osage",
    "Osmanya",
    "Pahawh_Hmong",
    "Palmyrene",
    "Pau_Cin_Hau",
    "Phags_Pa",
    "Phoenician",
    "Psalter_Pahlavi",
    "Rejang",
    "Runic",
    "Samaritan",
    "Saurashtra",
    "Sharada",
    "Shavian",
    "Siddham",
    "SignWriting",
    "Sinhala",
    "Sogdian",
    "Sora_Sompeng",
    "Soyombo",
    "Sundanese",
    "Syloti_Nagri",
    "Syriac",
    "Tagalog",
    "Tagbanwa",
    "Tai_Le",
    "Tai_Tham",
    "Tai_Viet",
    "Takri",
    "Tamil",
    "Tangsa",
    "Tangut",
    "Telugu",
    "Thaana",
    "Thai",
    "Tibetan",
    "Tifinagh",
    "Tirhuta",
    "Toto",
    "Ugaritic",
    "Vai",
    "Vithkuqi",
    "Wancho",
    "Warang_Citi",
    "Yezidi",
    "Yi",
    "Zanabazar_Square",
];

/// What `regex-syntax` (its parser and Unicode tables) makes of `pattern` in Rust's syntax.
fn rust_hir(pattern: &str) -> Hir {
    regex_syntax::ParserBuilder::new()
        .nest_limit(2000)
        .build()
        .parse(pattern)
        .unwrap_or_else(|e| panic!("{pattern:?}: {e}"))
}

/// The `Hir` partkit builds of a Go pattern, and the one `regex-syntax` makes of its
/// translation: the same.
fn same_hir(go: &str) -> Result<(), String> {
    let Ok(node) = parse_bounded(go) else {
        return Ok(());
    };
    let ours = hir::to_hir(&node, &mut 0);
    let translated = goregex::translate(go).map_err(|e| e.to_string())?;
    let theirs = rust_hir(&translated);
    if ours == theirs {
        Ok(())
    } else {
        Err(format!(
            "{go:?} -> {translated:?}:\n ours {ours:?}\n theirs {theirs:?}"
        ))
    }
}

/// Go's names the tables hold: the two-letter categories but `Cs`, and the scripts, in order.
fn table_names() -> Vec<&'static str> {
    let mut names: Vec<&str> = CATEGORIES
        .iter()
        .copied()
        .filter(|n| n.len() == 2 && *n != "Cs")
        .chain(SCRIPTS.iter().copied())
        .collect();
    names.sort_unstable();
    names
}

fn render_tables() -> String {
    let mut out = String::from(
        "//! Go's Unicode classes: the two-letter general categories but `Cs`, and the scripts, as\n\
         //! `regex-syntax`'s Unicode 16.0 tables have them, each range as two LEB128 numbers (its\n\
         //! distance from the end of the previous range, its length less one: `hir::decode`).\n\
         //! Written by a test (`UPDATE_TABLES=1 cargo test --lib unicode_tables`); do not edit.\n\n\
         #[rustfmt::skip]\n\
         pub(super) const UNICODE: &[(&str, &[u8])] = &[\n",
    );
    for name in table_names() {
        let ranges: Vec<ClassUnicodeRange> = match rust_hir(&format!("\\p{{{name}}}")).into_kind() {
            HirKind::Class(Class::Unicode(c)) => c.ranges().to_vec(),
            HirKind::Literal(lit) => {
                let c = std::str::from_utf8(&lit.0).unwrap().chars().next().unwrap();
                vec![ClassUnicodeRange::new(c, c)]
            }
            other => panic!("{name}: {other:?}"),
        };
        let bytes = hir::encode(&ranges);
        let mut decoded = Vec::new();
        hir::decode(&bytes, &mut decoded);
        assert_eq!(decoded, ranges, "{name}");
        out.push_str(&format!("    (\n        \"{name}\",\n        b\""));
        let mut col = 11;
        for b in bytes {
            let text = match b {
                b'"' | b'\\' => format!("\\{}", b as char),
                0x20..=0x7E => (b as char).to_string(),
                _ => format!("\\x{b:02x}"),
            };
            if col + text.len() > 98 {
                out.push_str("\\\n          ");
                col = 10;
            }
            col += text.len();
            out.push_str(&text);
        }
        out.push_str("\",\n    ),\n");
    }
    out.push_str("];\n");
    out
}

/// The committed tables are the ones `regex-syntax` gives (`UPDATE_TABLES=1` rewrites them).
#[test]
fn unicode_tables_are_up_to_date() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/objects/goregex/tables.rs");
    let text = render_tables();
    if std::env::var_os("UPDATE_TABLES").is_some_and(|v| !v.is_empty() && v != "0") {
        std::fs::write(&path, &text).unwrap();
    }
    assert!(
        std::fs::read_to_string(&path).unwrap() == text,
        "src/objects/goregex/tables.rs is not what regex-syntax's tables give: run UPDATE_TABLES=1 cargo test --lib unicode_tables"
    );
}

#[test]
fn every_unicode_class_builds_regex_syntax_s_hir() {
    for name in CATEGORIES.iter().chain(SCRIPTS).chain(&["Any"]) {
        for pattern in [
            format!(r"\p{{{name}}}"),
            format!(r"\P{{{name}}}"),
            format!(r"(?i)\p{{^{name}}}"),
            format!(r"[^\p{{{name}}}a-z\d]"),
            format!(r"(?i)[\P{{{name}}}[:^alpha:]k]"),
        ] {
            same_hir(&pattern).unwrap();
        }
    }
}

#[test]
fn patterns_build_regex_syntax_s_hir() {
    for go in [
        r"user(\d+)",
        r"(?i)USER(\d+)|(é+)漢字?",
        r"(a)(?:b(c)|(d))*?(?P<n>e){2,5}x{3}y{2,}z??",
        r"[^\x00-\x{10FFFF}]\x{D800}[\x{D800}-\x{E000}]",
        r"(?s).(?-s).(?m)^$(?-m)^$\A\z\b\B",
        r"(?i)[k][^k]\W\w[[:^word:]]ß",
        r"a|b|",
        r"(?:)*a{0}b{1}c{0,1}",
        r"(?U)x{2,}?y*z+?",
        r"\pC\PC\p{Cs}\P{Cs}(?i)\pL",
    ] {
        same_hir(go).unwrap();
    }
}
