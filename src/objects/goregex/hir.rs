//! A parsed Go pattern built into `regex-syntax`'s [`Hir`], which [`super::super::gomatch`]
//! compiles: the `Hir` that `regex-syntax` makes of the pattern [`super::translate`] writes
//! (the tests parse that pattern and compare), built directly, so that neither `regex-syntax`'s
//! parser nor its tables of Unicode property names and values are in the module.
//!
//! Every step is the one `regex-syntax`'s translator takes for the written pattern: adjacent
//! literals, nested concatenations and alternations are combined by `Hir`'s own constructors;
//! a class folds case and then negates, each nested class first, then the class around it.

use regex_syntax::hir::{Capture, Class, ClassUnicode, ClassUnicodeRange, Hir, Look, Repetition};

use super::{has_case, scalar_parts, tables, ClassItem, Node, RepOp};

/// The `Hir` of `re`; `captures` counts the capturing groups opened so far (numbered from 1 in
/// the order their `(` appears, as the parser numbers them).
pub(super) fn to_hir(re: &Node, captures: &mut u32) -> Hir {
    match re {
        Node::Empty => Hir::empty(),
        Node::Lit(c, fold) => match char::from_u32(*c) {
            // A surrogate never occurs in valid UTF-8 text.
            None => class(ClassUnicode::empty(), false, false),
            Some(ch) if *fold && has_case(ch) => class(ranges(&[(*c, *c)]), true, false),
            Some(ch) => Hir::literal(ch.encode_utf8(&mut [0; 4]).as_bytes()),
        },
        Node::Class {
            items,
            negated,
            fold,
        } => {
            // Plain ranges as one list (one sort), then each group or Unicode class.
            let mut plain = Vec::new();
            for item in items {
                if let ClassItem::Range(lo, hi) = item {
                    plain.push((*lo, *hi));
                }
            }
            let mut set = ranges(&plain);
            for item in items {
                match item {
                    ClassItem::Range(..) => {}
                    ClassItem::Group(group, negated) => {
                        set.union(&fold_negate(ranges(group), *fold, *negated));
                    }
                    ClassItem::Unicode(name, negated) => {
                        set.union(&fold_negate(unicode(name), *fold, *negated));
                    }
                }
            }
            class(set, *fold, *negated)
        }
        Node::AnyChar => class(ClassUnicode::empty(), false, true),
        Node::AnyCharNotNL => class(ranges(&[(0xA, 0xA)]), false, true),
        Node::BeginLine => Hir::look(Look::StartLF),
        Node::EndLine => Hir::look(Look::EndLF),
        Node::BeginText => Hir::look(Look::Start),
        Node::EndText => Hir::look(Look::End),
        Node::WordBoundary => Hir::look(Look::WordAscii),
        Node::NoWordBoundary => Hir::look(Look::WordAsciiNegate),
        Node::Capture(sub) => {
            *captures += 1;
            let index = *captures;
            Hir::capture(Capture {
                index,
                name: None,
                sub: Box::new(to_hir(sub, captures)),
            })
        }
        Node::Repeat { op, greedy, sub } => {
            let (min, max) = match *op {
                RepOp::Star => (0, None),
                RepOp::Plus => (1, None),
                RepOp::Quest => (0, Some(1)),
                // Bounded by Go's rules to 1000 (`-1`: no maximum).
                RepOp::Counted(min, max) => (min as u32, u32::try_from(max).ok()),
            };
            Hir::repetition(Repetition {
                min,
                max,
                greedy: *greedy,
                sub: Box::new(to_hir(sub, captures)),
            })
        }
        Node::Concat(subs) => Hir::concat(subs.iter().map(|s| to_hir(s, captures)).collect()),
        Node::Alternate(subs) => {
            Hir::alternation(subs.iter().map(|s| to_hir(s, captures)).collect())
        }
    }
}

/// The class of `ranges` (surrogates left out: they are not characters).
fn ranges(ranges: &[(u32, u32)]) -> ClassUnicode {
    let mut out = Vec::with_capacity(ranges.len());
    for &(lo, hi) in ranges {
        for (l, h) in scalar_parts(lo, hi) {
            if let (Some(l), Some(h)) = (char::from_u32(l), char::from_u32(h)) {
                out.push(ClassUnicodeRange::new(l, h));
            }
        }
    }
    ClassUnicode::new(out)
}

/// Case folded, then negated: what `regex-syntax` does with each bracketed or Unicode class.
fn fold_negate(mut set: ClassUnicode, fold: bool, negate: bool) -> ClassUnicode {
    if fold {
        set.case_fold_simple();
    }
    if negate {
        set.negate();
    }
    set
}

fn class(set: ClassUnicode, fold: bool, negate: bool) -> Hir {
    Hir::class(Class::Unicode(fold_negate(set, fold, negate)))
}

/// A Go Unicode class by name: `Any`; a category (one letter: every two-letter category of that
/// letter, so `C` is `Cc`, `Cf` and `Co`, without unassigned code points, as in Go); a script.
/// `Cs` (surrogates) is empty: surrogates never occur in valid UTF-8 text.
fn unicode(name: &str) -> ClassUnicode {
    if name == "Any" {
        return ClassUnicode::new([ClassUnicodeRange::new('\0', char::MAX)]);
    }
    let mut ranges = Vec::new();
    for &(table, encoded) in tables::UNICODE {
        let member = if name.len() == 1 {
            table.len() == 2 && table.starts_with(name)
        } else {
            table == name
        };
        if member {
            decode(encoded, &mut ranges);
        }
    }
    ClassUnicode::new(ranges)
}

/// Appends the ranges of one table of [`tables::UNICODE`] to `out`: per range, the table holds
/// the distance from the end of the previous one (from 0 for the first) and its length less one,
/// as LEB128 numbers.
pub(super) fn decode(encoded: &[u8], out: &mut Vec<ClassUnicodeRange>) {
    let mut numbers = encoded.split_inclusive(|b| b & 0x80 == 0).map(|bytes| {
        let mut n = 0u32;
        for (i, b) in bytes.iter().enumerate() {
            n |= u32::from(b & 0x7F) << (7 * i);
        }
        n
    });
    let mut next = 0u32;
    while let (Some(gap), Some(len)) = (numbers.next(), numbers.next()) {
        let lo = next + gap;
        next = lo + len + 1;
        if let (Some(lo), Some(hi)) = (char::from_u32(lo), char::from_u32(lo + len)) {
            out.push(ClassUnicodeRange::new(lo, hi));
        }
    }
}

/// [`decode`]'s inverse, which wrote [`tables::UNICODE`].
#[cfg(test)]
pub(super) fn encode(ranges: &[ClassUnicodeRange]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut next = 0u32;
    for r in ranges {
        let (lo, hi) = (u32::from(r.start()), u32::from(r.end()));
        for mut n in [lo - next, hi - lo] {
            while n >= 0x80 {
                out.push((n & 0x7F) as u8 | 0x80);
                n >>= 7;
            }
            out.push(n as u8);
        }
        next = hi + 1;
    }
    out
}
