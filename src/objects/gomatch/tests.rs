//! The matcher against the `regex` crate on the same translated pattern (the engine it
//! replaces, which Go's test vectors checked): same match, same groups, with the backtracker
//! and with the PikeVM.

use super::{Cache, Matcher};
use crate::objects::goregex;
use proptest::prelude::*;

/// Compares both engines of `m` with `re` on `hay`.
fn agree(pat: &str, m: &Matcher, re: &regex::Regex, hay: &str) -> Result<(), String> {
    let mut locs = re.capture_locations();
    let want = re.captures_read(&mut locs, hay).is_some();
    for pike in [false, true] {
        let mut c = Cache::default();
        let got = m.search(&mut c, hay, pike);
        if got != want {
            return Err(format!(
                "{pat:?} on {hay:?} (pike {pike}): {got}, regex {want}"
            ));
        }
        if want {
            if m.groups() != locs.len() {
                return Err(format!(
                    "{pat:?}: {} groups, regex {}",
                    m.groups(),
                    locs.len()
                ));
            }
            for i in 0..locs.len() {
                if m.group(&c, i) != locs.get(i) {
                    return Err(format!(
                        "{pat:?} on {hay:?} (pike {pike}): group {i} {:?}, regex {:?}",
                        m.group(&c, i),
                        locs.get(i)
                    ));
                }
            }
        }
    }
    Ok(())
}

fn reference(pat: &str) -> Option<(Matcher, regex::Regex)> {
    let tr = goregex::translate(pat).ok()?;
    let re = regex::RegexBuilder::new(&tr)
        .nest_limit(2000)
        .size_limit(64 << 20)
        .build()
        .unwrap();
    Some((goregex::compile(pat).unwrap(), re))
}

#[test]
fn fixed_patterns_agree_with_regex() {
    let patterns = [
        r"user(\d+)",
        r"(\d{4})-(\d{2})-(\d{2})",
        r"logs/(\w+)/",
        r"a(b)?c",
        r"(foo|bar)(\d*)",
        r"x(y|yz)",
        r"données (\d)",
        r"^data/(.*)\.json$",
        r"user(\d+)\b",
        r"(?i)USER(\d+)",
        r"ab|abc",
        r"(a)(b)?(c)?",
        r"id=([^/]+)",
        r"v(\d+)\.(\d+)",
        r"\.(csv|json)$",
        r"(a*)*",
        r"(a|)*b",
        r"(a*)+$",
        r"(a?){3,5}?",
        r"(?m)^(\w*)$",
        r"(?s).(.)",
        r"\B(.)\b",
        r"(?U)(a+)(a*)",
        r"\pL+(\p{Greek})",
        r"(?i)(ǅ|k)+",
        r"a|b|",
        r"[^\x00-\x{10FFFF}]",
        r"(x)(?:y(z)?)*",
        r"()",
        r"(a)(?:(b)){0}",
        r"(?:(b)){0}",
        r"(?:(b)){0}(a)",
    ];
    let keys = [
        "",
        "user",
        "user1",
        "xuser12/user3",
        "2024-03-05/user77/x.json",
        "foo7",
        "bar",
        "foobar9",
        "abc",
        "ac",
        "xyz",
        "xy",
        "données 5",
        "data/a/b.json",
        "data/x.json.gz",
        "user12x",
        "USER9",
        "uSeR42",
        "id=abc/def",
        "v1.2.3",
        "a.csv",
        "b.json",
        "ab",
        "ééuser5é",
        "user٣",
        "logs/abc/def",
        "logs/ab-c/",
        "aabc",
        "abab",
        "aaaa",
        "b",
        "aab",
        "a\nbc\n",
        "xyzyz",
        "Ǆǅǆ kK\u{212A}",
        "αβγ δ",
        "xyzyy",
    ];
    for p in patterns {
        let (m, re) = reference(p).unwrap();
        for k in keys {
            agree(p, &m, &re, k).unwrap();
        }
        // Longer than the backtracker's budget for most programs.
        let long = "user12 données aab xyz ".repeat(2000);
        agree(p, &m, &re, &long).unwrap();
    }
}

/// A random pattern of Go's syntax: literals (ASCII and not), classes, Perl and Unicode
/// classes, anchors, word boundaries, groups, alternation, every repetition, flags.
fn pattern() -> impl Strategy<Value = String> {
    let atom = prop::sample::select(vec![
        "a",
        "b",
        "ab",
        "é",
        "β",
        ".",
        "[a-c]",
        "[^b]",
        "[[:alpha:]]",
        r"\d",
        r"\w",
        r"\s",
        r"\W",
        r"\pL",
        r"\p{Greek}",
        "^",
        "$",
        r"\b",
        r"\B",
        r"\A",
        r"\z",
        "(?i)k",
        "(?i:ab)",
        "(?m:^)",
        "(?m:$)",
        "(?s:.)",
        "\n",
        "()",
        "x",
        "[é-ü]",
        r"\Qa.\E",
    ])
    .prop_map(str::to_owned);
    atom.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 1..4).prop_map(|v| v.concat()),
            prop::collection::vec(inner.clone(), 2..4).prop_map(|v| v.join("|")),
            inner.clone().prop_map(|s| format!("({s})")),
            inner.clone().prop_map(|s| format!("(?:{s})")),
            (
                inner,
                prop::sample::select(vec![
                    "*", "+", "?", "*?", "+?", "??", "{2}", "{0,2}", "{1,3}?", "{2,}", "{0}",
                ])
            )
                .prop_map(|(s, r)| format!("(?:{s}){r}")),
        ]
    })
}

fn key() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec![
            'a', 'b', 'k', 'K', 'x', '1', '_', ' ', '\n', '/', '-', 'é', 'β', 'Ω', '\u{212A}',
        ]),
        0..24,
    )
    .prop_map(|v| v.into_iter().collect())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn random_patterns_agree_with_regex(pat in pattern(), keys in prop::collection::vec(key(), 1..8)) {
        if let Some((m, re)) = reference(&pat) {
            for k in &keys {
                if let Err(e) = agree(&pat, &m, &re, k) {
                    return Err(TestCaseError::fail(e));
                }
            }
        }
    }
}
