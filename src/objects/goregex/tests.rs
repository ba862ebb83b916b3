//! Unit tests of the translation of Go's `regexp/syntax`: Go's own test tables of invalid and
//! valid patterns, literal semantics, and a property.

use crate::objects::goregex;
use proptest::prelude::*;

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
}
