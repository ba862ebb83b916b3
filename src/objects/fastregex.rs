//! A faster leftmost-first capture search for the `regex` partition type, with the same results
//! as [`regex::Regex::captures_read`] on the same (translated) pattern.
//!
//! Measured natively on the bench keys with `user(\d+)` (examples/regex_profile.rs), a capture
//! search costs about 2.3× a plain `find`: the lazy DFA finds the match end, a reverse DFA its
//! start, then a capture engine runs again over the match. When every match must begin with one
//! of a finite set of literals (the pattern's prefix literals, e.g. `user`) and the pattern is
//! one-pass, this instead looks for the literals with a prefilter (memchr/Teddy) and runs the
//! one-pass DFA *anchored* at each candidate, left to right: the first candidate where it
//! matches is the leftmost match, and the one-pass DFA's match there is the leftmost-first one,
//! with its groups — one forward pass over the match, no reverse scan, no second engine.
//! Patterns without such literals or not one-pass use `regex` as before.

use regex_automata::{
    dfa::onepass,
    nfa::thompson,
    util::{prefilter::Prefilter, primitives::NonMaxUsize, syntax},
    Anchored, Input, MatchKind, Span,
};
use regex_syntax::hir::literal::{ExtractKind, Extractor};

/// Bound on the one-pass DFA (bytes of heap); larger patterns use `regex`.
const ONEPASS_SIZE_LIMIT: usize = 8 << 20;
/// Bound on the NFA built for it.
const NFA_SIZE_LIMIT: usize = 64 << 20;

/// The prefilter and the one-pass DFA of a pattern (see the module documentation).
#[derive(Clone, Debug)]
pub struct FastRegex {
    prefilter: Prefilter,
    dfa: onepass::DFA,
}

/// Per-search state of a [`FastRegex`], reused between keys.
#[derive(Clone, Debug)]
pub struct FastCache {
    cache: onepass::Cache,
    slots: Vec<Option<NonMaxUsize>>,
}

impl FastRegex {
    /// The fast path of `translated` (the Rust syntax of a Go pattern, see
    /// [`super::goregex::translate`]), or `None` when the pattern does not qualify.
    pub fn new(translated: &str, nest_limit: u32) -> Option<FastRegex> {
        let cfg = syntax::Config::new().nest_limit(nest_limit);
        let hir = syntax::parse_with(translated, &cfg).ok()?;
        let mut seq = Extractor::new().kind(ExtractKind::Prefix).extract(&hir);
        seq.optimize_for_prefix_by_preference();
        let lits = seq.literals()?;
        if lits.is_empty() || lits.iter().any(|l| l.as_bytes().is_empty()) {
            return None;
        }
        let prefilter = Prefilter::new(MatchKind::LeftmostFirst, lits)?;
        let nfa = thompson::Compiler::new()
            .configure(thompson::Config::new().nfa_size_limit(Some(NFA_SIZE_LIMIT)))
            .build_from_hir(&hir)
            .ok()?;
        let dfa = onepass::Builder::new()
            .configure(onepass::Config::new().size_limit(Some(ONEPASS_SIZE_LIMIT)))
            .build_from_nfa(nfa)
            .ok()?;
        Some(FastRegex { prefilter, dfa })
    }

    /// Fresh per-search state.
    pub fn cache(&self) -> FastCache {
        FastCache {
            cache: self.dfa.create_cache(),
            slots: vec![None; self.dfa.get_nfa().group_info().slot_len()],
        }
    }

    /// The leftmost-first match in `hay`: `Some(true)` with the slots filled (see
    /// [`FastRegex::group`]), `Some(false)` for no match, `None` when the search could not run
    /// (the caller falls back to `regex`).
    pub fn captures(&self, c: &mut FastCache, hay: &str) -> Option<bool> {
        let bytes = hay.as_bytes();
        let mut at = 0;
        while at <= bytes.len() {
            let Some(cand) = self.prefilter.find(bytes, Span::from(at..bytes.len())) else {
                return Some(false);
            };
            let input = Input::new(bytes)
                .range(cand.start..)
                .anchored(Anchored::Yes);
            match self
                .dfa
                .try_search_slots(&mut c.cache, &input, &mut c.slots)
            {
                Ok(Some(_)) => return Some(true),
                Ok(None) => at = cand.start + 1,
                Err(_) => return None,
            }
        }
        Some(false)
    }

    /// Number of groups, the whole match (group 0) included.
    pub fn groups(&self) -> usize {
        self.dfa
            .get_nfa()
            .group_info()
            .group_len(regex_automata::PatternID::ZERO)
    }

    /// The byte span of group `i` of the last successful [`FastRegex::captures`].
    pub fn group(&self, c: &FastCache, i: usize) -> Option<(usize, usize)> {
        let s = c.slots.get(2 * i).copied().flatten()?;
        let e = c.slots.get(2 * i + 1).copied().flatten()?;
        Some((s.get(), e.get()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objects::goregex;

    /// Same match and groups as `regex` on the same pattern, over patterns and keys that
    /// exercise literals, alternations, classes, anchors, repetition and non-ASCII text.
    #[test]
    fn agrees_with_regex() {
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
        ];
        for p in patterns {
            let tr = goregex::translate(p).unwrap();
            let re = goregex::compile(p).unwrap();
            let Some(fast) = FastRegex::new(&tr, 1000) else {
                continue;
            };
            let mut c = fast.cache();
            let mut locs = re.capture_locations();
            for k in keys {
                let want = re.captures_read(&mut locs, k).is_some();
                assert_eq!(fast.captures(&mut c, k), Some(want), "{p} on {k:?}");
                if want {
                    assert_eq!(fast.groups(), locs.len(), "{p}");
                    for i in 0..locs.len() {
                        assert_eq!(fast.group(&c, i), locs.get(i), "{p} on {k:?}: group {i}");
                    }
                }
            }
        }
        assert!(FastRegex::new(&goregex::translate(r"user(\d+)").unwrap(), 1000).is_some());
    }
}
