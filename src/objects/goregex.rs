//! Go `regexp` syntax (RE2 as Go's `regexp/syntax` parses it with `syntax.Perl` flags), parsed
//! and built into `regex-syntax`'s `Hir` ([`compile`]; Unicode classes from the tables in
//! `goregex/tables.rs`, case folding by `regex-syntax`), which [`super::gomatch`] compiles and
//! runs. [`translate`] writes the same pattern in the dialect of Rust's `regex` crate: the tests
//! check that `regex-syntax` makes the same `Hir` of it, and match with the `regex` crate as
//! the reference.
//!
//! Why hand-written: no crate parses Go's syntax — `regex-syntax` parses Rust's dialect, which
//! differs from Go's in the ways below — and Go's exact errors are part of the contract.
//!
//! Go and Rust both implement RE2-family, leftmost-first, linear-time matching, but their
//! *syntax* differs in ways that would silently change which keys match:
//!
//! | Go | Rust `regex` | handled by |
//! | --- | --- | --- |
//! | `\d` `\s` `\w` `\b` are ASCII | Unicode-aware by default | explicit ASCII classes, `(?-u:\b)` |
//! | `\s` is `[\t\n\f\r ]` (no `\v`) | includes `\v` and Unicode spaces | explicit class |
//! | `\<` `\>` are the literals `<` `>` | word-boundary assertions | every literal is emitted escaped |
//! | `[[a]]`, `[a&&b]`, `[a--b]`, `[a~~b]` are plain characters | nested classes / set operations | class items are emitted one by one |
//! | `\Q…\E` quotes | unsupported | expanded to literals |
//! | `\0`, `\012`, `\12` are octal | errors | decoded |
//! | `a{01}`, `{,5}` are literal text | repetition / error | emitted as literals |
//! | `\x{D800}` (surrogate) is valid, never matches | error | a never-matching class |
//! | `\p{C}` excludes unassigned code points | includes `Cn` | `[\p{Cc}\p{Cf}\p{Co}]` |
//! | `(?x)`, `(?u)`, `(?R)`, `\pN` names Go lacks, `a**`, `x{1001}` | accepted | Go's error |
//! | repetition counts up to 1000 (Go's product rule) | no such rule | Go's check, Go's error |
//! | nesting up to 1000 levels | recursion per level | **rejected beyond 250 levels** with Go's nesting error |
//!
//! The parser is a port of Go's `parse.go` control flow, so a pattern Go rejects is rejected
//! here with Go's error text (`error parsing regexp: missing closing ): `(a``), and a pattern
//! Go accepts compiles to a Rust pattern with the same meaning.
//!
//! Remaining, documented differences:
//! - patterns nesting more than 250 levels (Go: 1000) are rejected with Go's `expression nests
//!   too deeply` error: the matcher's compiler recurses per level and the WebAssembly stack is
//!   small;
//! - more than 2000 copies of Unicode classes (counted repetitions expanded: `\pL{1000}` is
//!   1000) are rejected as `expression too large` (Go allows about 26 000 `\pL`): a bound on
//!   compile time and memory kept from the general `regex` engine this crate used before;
//! - Go's other size limits are approximated: Go's instruction-count estimate is computed, and
//!   the compiled program holds at most 4 Mi instructions; beyond either, Go's `expression too
//!   large` is reported;
//! - Unicode tables: Go 1.21+ uses Unicode 15.0, this crate 16.0 (`regex-syntax`'s tables; characters
//!   first assigned in 16.0 differ for `\pL`-style classes and case folding);
//! - Go 1.25's loose class names (`\p{Letter}`, `\p{Assigned}`, `\p{ASCII}`) are rejected, as
//!   Go ≤ 1.24 rejects them.

use std::fmt;

use super::gomatch::Matcher;

mod hir;
mod tables;

use hir::to_hir;

/// Go's `regexp/syntax` error: `Display` is Go's `Error()` verbatim.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    /// Go's error code text, e.g. `missing closing )`.
    pub code: &'static str,
    /// The offending part of the expression.
    pub expr: String,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "error parsing regexp: {}: `{}`", self.code, self.expr)
    }
}

impl std::error::Error for SyntaxError {}

const ERR_INVALID_CHAR_CLASS_RANGE: &str = "invalid character class range";
const ERR_INVALID_ESCAPE: &str = "invalid escape sequence";
const ERR_INVALID_NAMED_CAPTURE: &str = "invalid named capture";
const ERR_INVALID_PERL_OP: &str = "invalid or unsupported Perl syntax";
const ERR_INVALID_REPEAT_OP: &str = "invalid nested repetition operator";
const ERR_INVALID_REPEAT_SIZE: &str = "invalid repeat count";
const ERR_MISSING_BRACKET: &str = "missing closing ]";
const ERR_MISSING_PAREN: &str = "missing closing )";
const ERR_MISSING_REPEAT_ARGUMENT: &str = "missing argument to repetition operator";
const ERR_TRAILING_BACKSLASH: &str = "trailing backslash at end of expression";
const ERR_UNEXPECTED_PAREN: &str = "unexpected )";
const ERR_NESTING_DEPTH: &str = "expression nests too deeply";
const ERR_LARGE: &str = "expression too large";

fn err(code: &'static str, expr: &str) -> SyntaxError {
    SyntaxError {
        code,
        expr: expr.to_owned(),
    }
}

const MAX_REPEAT: i64 = 1000;
const MAX_HEIGHT: usize = 1000;
/// Deepest nesting built into a `Hir` and handed to the matcher (the `regex` crate's default nest
/// limit): the matcher's compiler recurses per level, and in WebAssembly the stack is 1 MiB.
/// Go allows 1000.
const RUST_MAX_HEIGHT: usize = 250;
/// Most copies of Unicode classes (`\pL`, `\p{Greek}`…) in a pattern, counting counted
/// repetitions: bounds compile time and memory (each class written out is parsed and stored as
/// its own table).
const RUST_MAX_UNICODE_CLASSES: i64 = 2000;
const MAX_SIZE: i64 = (128 << 20) / 40;
const MAX_RUNE: u32 = 0x10FFFF;

/// Parse flags (the subset of Go's that `syntax.Perl` parsing can change).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Flags {
    fold_case: bool,
    dot_nl: bool,
    one_line: bool,
    non_greedy: bool,
}

const PERL: Flags = Flags {
    fold_case: false,
    dot_nl: false,
    one_line: true,
    non_greedy: false,
};

/// One piece of a character class.
#[derive(Clone, Debug, PartialEq, Eq)]
enum ClassItem {
    Range(u32, u32),
    /// A Perl or POSIX group: ranges, negated?
    Group(&'static [(u32, u32)], bool),
    /// A Unicode class: Go name, negated?
    Unicode(&'static str, bool),
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum RepOp {
    Star,
    Plus,
    Quest,
    Counted(i64, i64), // min, max (-1 = unbounded)
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Node {
    Empty,
    Lit(u32, bool),
    Class {
        items: Vec<ClassItem>,
        negated: bool,
        fold: bool,
    },
    AnyChar,
    AnyCharNotNL,
    BeginLine,
    EndLine,
    BeginText,
    EndText,
    WordBoundary,
    NoWordBoundary,
    Capture(Box<Node>),
    Repeat {
        op: RepOp,
        greedy: bool,
        sub: Box<Node>,
    },
    Concat(Vec<Node>),
    Alternate(Vec<Node>),
}

/// An open group on the parse stack.
struct Frame {
    /// Completed alternatives.
    alts: Vec<Node>,
    /// The current concatenation.
    items: Vec<Node>,
    /// Capturing?
    capture: bool,
    /// Flags to restore at `)`.
    saved: Flags,
}

impl Frame {
    fn new(capture: bool, saved: Flags) -> Self {
        Frame {
            alts: Vec::new(),
            items: Vec::new(),
            capture,
            saved,
        }
    }

    fn finish(mut self) -> Node {
        let concat = take_concat(&mut self.items);
        if self.alts.is_empty() {
            concat
        } else {
            self.alts.push(concat);
            Node::Alternate(self.alts)
        }
    }
}

fn take_concat(items: &mut Vec<Node>) -> Node {
    match items.len() {
        0 => Node::Empty,
        1 => items.pop().unwrap_or(Node::Empty),
        _ => Node::Concat(std::mem::take(items)),
    }
}

/// Decodes the first character of `s` (which is never empty when called).
fn next_rune(s: &str) -> (u32, &str) {
    match s.chars().next() {
        Some(c) => (c as u32, &s[c.len_utf8()..]),
        None => (0, s),
    }
}

fn is_alnum(c: u32) -> bool {
    char::from_u32(c).is_some_and(|c| c.is_ascii_alphanumeric())
}

fn unhex(c: u32) -> Option<u32> {
    char::from_u32(c).and_then(|c| c.to_digit(16))
}

/// Go checks the height of every node it builds (`checkHeight`): so do we, which also keeps
/// every tree this module builds (and recurses over) at most `MAX_HEIGHT + 1` deep.
fn checked(node: Node, s: &str) -> Result<Node, SyntaxError> {
    if height(&node) > MAX_HEIGHT {
        return Err(err(ERR_NESTING_DEPTH, s));
    }
    Ok(node)
}

/// Parses a Go pattern and returns the equivalent Rust `regex` pattern.
///
/// # Errors
/// Go's syntax error for any pattern Go's `regexp.Compile` rejects.
///
/// # Examples
/// ```
/// use partkit::objects::goregex::translate;
/// let rust = regex::Regex::new(&translate(r"user(\d+)").unwrap()).unwrap();
/// assert_eq!(&rust.captures("user42/x").unwrap()[1], "42");
/// assert!(rust.captures("user٤٢").is_none()); // Go's \d is ASCII; Rust's would match "٤٢"
/// assert_eq!(
///     translate("(a").unwrap_err().to_string(),
///     "error parsing regexp: missing closing ): `(a`"
/// );
/// ```
pub fn translate(pattern: &str) -> Result<String, SyntaxError> {
    let node = parse_bounded(pattern)?;
    let mut out = String::with_capacity(pattern.len() * 2);
    emit(&node, &mut out);
    Ok(out)
}

/// Compiles a Go pattern into a [`Matcher`] with Go's meaning: the parsed pattern is built into
/// `regex-syntax`'s `Hir` (Unicode classes from `goregex/tables.rs`, case folding by `regex-syntax`),
/// the same `Hir` that `regex-syntax` makes of the [`translate`]d pattern (a test checks it),
/// and compiled by [`super::gomatch`].
///
/// # Errors
/// Go's syntax error for any pattern Go rejects; Go's "expression too large" error when the
/// compiled program exceeds its bound.
pub fn compile(pattern: &str) -> Result<Matcher, SyntaxError> {
    let node = parse_bounded(pattern)?;
    let hir = to_hir(&node, &mut 0);
    Matcher::new(&hir).map_err(|_| err(ERR_LARGE, pattern))
}

/// [`parse`], with the bounds this crate adds to Go's (nesting, size, Unicode class copies).
fn parse_bounded(pattern: &str) -> Result<Node, SyntaxError> {
    let node = parse(pattern)?;
    if height(&node) > RUST_MAX_HEIGHT {
        return Err(err(ERR_NESTING_DEPTH, pattern));
    }
    if size(&node) > MAX_SIZE || unicode_copies(&node) > RUST_MAX_UNICODE_CLASSES {
        return Err(err(ERR_LARGE, pattern));
    }
    Ok(node)
}

fn parse(s: &str) -> Result<Node, SyntaxError> {
    let mut flags = PERL;
    let mut stack: Vec<Frame> = vec![Frame::new(false, PERL)];
    let mut t = s;
    let mut last_repeat: &str = "";
    while let Some(&c0) = t.as_bytes().first() {
        let mut repeat: &str = "";
        let top = stack.len() - 1;
        match c0 {
            b'(' => {
                if t.len() >= 2 && t.as_bytes()[1] == b'?' {
                    t = parse_perl_flags(t, &mut flags, &mut stack)?;
                } else {
                    stack.push(Frame::new(true, flags));
                    t = &t[1..];
                }
            }
            b'|' => {
                let f = &mut stack[top];
                let concat = take_concat(&mut f.items);
                f.alts.push(concat);
                t = &t[1..];
            }
            b')' => {
                if stack.len() < 2 {
                    return Err(err(ERR_UNEXPECTED_PAREN, s));
                }
                let frame = stack.pop().ok_or_else(|| err(ERR_UNEXPECTED_PAREN, s))?;
                flags = frame.saved;
                let capture = frame.capture;
                let node = frame.finish();
                let node = checked(
                    if capture {
                        Node::Capture(Box::new(node))
                    } else {
                        node
                    },
                    s,
                )?;
                let top = stack.len() - 1;
                stack[top].items.push(node);
                t = &t[1..];
            }
            b'^' => {
                stack[top].items.push(if flags.one_line {
                    Node::BeginText
                } else {
                    Node::BeginLine
                });
                t = &t[1..];
            }
            b'$' => {
                stack[top].items.push(if flags.one_line {
                    Node::EndText
                } else {
                    Node::EndLine
                });
                t = &t[1..];
            }
            b'.' => {
                stack[top].items.push(if flags.dot_nl {
                    Node::AnyChar
                } else {
                    Node::AnyCharNotNL
                });
                t = &t[1..];
            }
            b'[' => {
                let (node, rest) = parse_class(t, flags)?;
                stack[top].items.push(node);
                t = rest;
            }
            b'*' | b'+' | b'?' => {
                let op = match c0 {
                    b'*' => RepOp::Star,
                    b'+' => RepOp::Plus,
                    _ => RepOp::Quest,
                };
                let before = t;
                t = apply_repeat(
                    op,
                    before,
                    &t[1..],
                    last_repeat,
                    flags,
                    &mut stack[top].items,
                    s,
                )?;
                repeat = before;
            }
            b'{' => {
                let before = t;
                match parse_repeat(t) {
                    None => {
                        stack[top]
                            .items
                            .push(Node::Lit('{' as u32, flags.fold_case));
                        t = &t[1..];
                    }
                    Some((min, max, after)) => {
                        if !(0..=MAX_REPEAT).contains(&min)
                            || max > MAX_REPEAT
                            || (max >= 0 && min > max)
                        {
                            return Err(err(
                                ERR_INVALID_REPEAT_SIZE,
                                &before[..before.len() - after.len()],
                            ));
                        }
                        t = apply_repeat(
                            RepOp::Counted(min, max),
                            before,
                            after,
                            last_repeat,
                            flags,
                            &mut stack[top].items,
                            s,
                        )?;
                        repeat = before;
                    }
                }
            }
            b'\\' => {
                let b = t.as_bytes();
                let mut handled = true;
                if b.len() >= 2 {
                    match b[1] {
                        b'A' => stack[top].items.push(Node::BeginText),
                        b'b' => stack[top].items.push(Node::WordBoundary),
                        b'B' => stack[top].items.push(Node::NoWordBoundary),
                        b'z' => stack[top].items.push(Node::EndText),
                        b'C' => return Err(err(ERR_INVALID_ESCAPE, &t[..2])),
                        b'Q' => {
                            let rest = &t[2..];
                            let (lit, after) = match rest.find("\\E") {
                                Some(i) => (&rest[..i], &rest[i + 2..]),
                                None => (rest, ""),
                            };
                            for ch in lit.chars() {
                                stack[top].items.push(Node::Lit(ch as u32, flags.fold_case));
                            }
                            t = after;
                            last_repeat = repeat;
                            continue;
                        }
                        _ => handled = false,
                    }
                } else {
                    handled = false;
                }
                if handled {
                    t = &t[2..];
                } else if let Some((item, rest)) = parse_unicode_class(t)? {
                    stack[top].items.push(Node::Class {
                        items: vec![item],
                        negated: false,
                        fold: flags.fold_case,
                    });
                    t = rest;
                } else if let Some((item, rest)) = parse_perl_class_escape(t) {
                    stack[top].items.push(Node::Class {
                        items: vec![item],
                        negated: false,
                        fold: flags.fold_case,
                    });
                    t = rest;
                } else {
                    let (c, rest) = parse_escape(t)?;
                    stack[top].items.push(Node::Lit(c, flags.fold_case));
                    t = rest;
                }
            }
            _ => {
                let (c, rest) = next_rune(t);
                stack[top].items.push(Node::Lit(c, flags.fold_case));
                t = rest;
            }
        }
        last_repeat = repeat;
    }
    if stack.len() != 1 {
        return Err(err(ERR_MISSING_PAREN, s));
    }
    checked(stack.pop().map(Frame::finish).unwrap_or(Node::Empty), s)
}

/// Go's `parser.repeat`: applies a repetition to the last item of the current concatenation.
fn apply_repeat<'a>(
    op: RepOp,
    before: &'a str,
    after: &'a str,
    last_repeat: &'a str,
    flags: Flags,
    items: &mut Vec<Node>,
    whole: &str,
) -> Result<&'a str, SyntaxError> {
    let mut after = after;
    let mut non_greedy = flags.non_greedy;
    if after.as_bytes().first() == Some(&b'?') {
        after = &after[1..];
        non_greedy = !non_greedy;
    }
    if !last_repeat.is_empty() {
        return Err(err(
            ERR_INVALID_REPEAT_OP,
            &last_repeat[..last_repeat.len() - after.len()],
        ));
    }
    let Some(sub) = items.pop() else {
        return Err(err(
            ERR_MISSING_REPEAT_ARGUMENT,
            &before[..before.len() - after.len()],
        ));
    };
    let node = checked(
        Node::Repeat {
            op: op.clone(),
            greedy: !non_greedy,
            sub: Box::new(sub),
        },
        whole,
    )?;
    if let RepOp::Counted(min, max) = op {
        if (min >= 2 || max >= 2) && !repeat_is_valid(&node, MAX_REPEAT) {
            return Err(err(
                ERR_INVALID_REPEAT_SIZE,
                &before[..before.len() - after.len()],
            ));
        }
    }
    items.push(node);
    Ok(after)
}

/// Go's `repeatIsValid`: nested counted repetitions may not exceed `n` copies in total.
fn repeat_is_valid(re: &Node, mut n: i64) -> bool {
    if let Node::Repeat {
        op: RepOp::Counted(min, max),
        ..
    } = re
    {
        let mut m = *max;
        if m == 0 {
            return true;
        }
        if m < 0 {
            m = *min;
        }
        if m > n {
            return false;
        }
        if m > 0 {
            n /= m;
        }
    }
    children(re).iter().all(|sub| repeat_is_valid(sub, n))
}

fn children(re: &Node) -> Vec<&Node> {
    match re {
        Node::Capture(sub) | Node::Repeat { sub, .. } => vec![sub],
        Node::Concat(subs) | Node::Alternate(subs) => subs.iter().collect(),
        _ => Vec::new(),
    }
}

/// Go's `parseRepeat`: `{min}`, `{min,}` or `{min,max}`; `None` when `{` is a literal.
fn parse_repeat(s: &str) -> Option<(i64, i64, &str)> {
    let s = s.strip_prefix('{')?;
    let (mut min, s) = parse_int(s)?;
    let max;
    let s = if let Some(rest) = s.strip_prefix(',') {
        if rest.is_empty() {
            return None;
        }
        if rest.starts_with('}') {
            max = -1;
            rest
        } else {
            let (m, rest) = parse_int(rest)?;
            max = m;
            if m < 0 {
                min = -1;
            }
            rest
        }
    } else {
        if s.is_empty() {
            return None;
        }
        max = min;
        s
    };
    let rest = s.strip_prefix('}')?;
    Some((min, max, rest))
}

/// Go's `parseInt`: decimal, no leading zeros; -1 when too big.
fn parse_int(s: &str) -> Option<(i64, &str)> {
    let b = s.as_bytes();
    if b.is_empty() || !b[0].is_ascii_digit() {
        return None;
    }
    if b.len() >= 2 && b[0] == b'0' && b[1].is_ascii_digit() {
        return None;
    }
    let end = b
        .iter()
        .position(|c| !c.is_ascii_digit())
        .unwrap_or(b.len());
    let mut n: i64 = 0;
    for &c in &b[..end] {
        if n >= 100_000_000 {
            n = -1;
            break;
        }
        n = n * 10 + i64::from(c - b'0');
    }
    Some((n, &s[end..]))
}

/// Go's `parsePerlFlags`: `(?P<name>`, `(?<name>`, `(?flags)`, `(?flags:`.
fn parse_perl_flags<'a>(
    s: &'a str,
    flags: &mut Flags,
    stack: &mut Vec<Frame>,
) -> Result<&'a str, SyntaxError> {
    let t = s;
    let b = t.as_bytes();
    let starts_with_p = t.len() > 4 && b[2] == b'P' && b[3] == b'<';
    let starts_with_name = t.len() > 3 && b[2] == b'<';
    if starts_with_p || starts_with_name {
        let expr_start = if starts_with_p { 4 } else { 3 };
        let Some(end) = t.find('>') else {
            return Err(err(ERR_INVALID_NAMED_CAPTURE, s));
        };
        let capture = &t[..end + 1];
        let name = &t[expr_start..end];
        if name.is_empty() || !name.chars().all(|c| c == '_' || c.is_ascii_alphanumeric()) {
            return Err(err(ERR_INVALID_NAMED_CAPTURE, capture));
        }
        stack.push(Frame::new(true, *flags));
        return Ok(&t[end + 1..]);
    }
    let mut t = &t[2..];
    let mut nf = *flags;
    let mut negated = false;
    let mut saw_flag = false;
    while !t.is_empty() {
        let (c, rest) = next_rune(t);
        t = rest;
        match char::from_u32(c).unwrap_or('\u{FFFD}') {
            'i' => {
                nf.fold_case = !negated;
                saw_flag = true;
            }
            'm' => {
                nf.one_line = negated;
                saw_flag = true;
            }
            's' => {
                nf.dot_nl = !negated;
                saw_flag = true;
            }
            'U' => {
                nf.non_greedy = !negated;
                saw_flag = true;
            }
            '-' => {
                if negated {
                    break;
                }
                negated = true;
                saw_flag = false;
            }
            c @ (':' | ')') => {
                if negated && !saw_flag {
                    break;
                }
                if c == ':' {
                    stack.push(Frame::new(false, *flags));
                }
                *flags = nf;
                return Ok(t);
            }
            _ => break,
        }
    }
    Err(err(ERR_INVALID_PERL_OP, &s[..s.len() - t.len()]))
}

/// Go's `parseEscape`: a single-character escape at the start of `s` (`s[0] == '\\'`).
fn parse_escape(s: &str) -> Result<(u32, &str), SyntaxError> {
    let t = &s[1..];
    if t.is_empty() {
        return Err(err(ERR_TRAILING_BACKSLASH, ""));
    }
    let (c, mut t) = next_rune(t);
    let bad = |t: &str| err(ERR_INVALID_ESCAPE, &s[..s.len() - t.len()]);
    let is_oct = |t: &str| {
        t.as_bytes()
            .first()
            .is_some_and(|b| (b'0'..=b'7').contains(b))
    };
    match char::from_u32(c).unwrap_or('\u{FFFD}') {
        '1'..='7' if !is_oct(t) => Err(bad(t)),
        '0'..='7' => {
            let mut r = c - '0' as u32;
            for _ in 1..3 {
                if !is_oct(t) {
                    break;
                }
                r = r * 8 + u32::from(t.as_bytes()[0] - b'0');
                t = &t[1..];
            }
            Ok((r, t))
        }
        'x' => {
            if t.is_empty() {
                return Err(bad(t));
            }
            let (c, rest) = next_rune(t);
            t = rest;
            if c == '{' as u32 {
                let mut nhex = 0;
                let mut r: u32 = 0;
                loop {
                    if t.is_empty() {
                        return Err(bad(t));
                    }
                    let (c, rest) = next_rune(t);
                    t = rest;
                    if c == '}' as u32 {
                        break;
                    }
                    let Some(v) = unhex(c) else {
                        return Err(bad(t));
                    };
                    r = r * 16 + v;
                    if r > MAX_RUNE {
                        return Err(bad(t));
                    }
                    nhex += 1;
                }
                if nhex == 0 {
                    return Err(bad(t));
                }
                return Ok((r, t));
            }
            let x = unhex(c);
            if t.is_empty() {
                // Go's nextRune on "" yields RuneError with an empty rest: not a hex digit.
                return Err(bad(t));
            }
            let (c2, rest) = next_rune(t);
            t = rest;
            match (x, unhex(c2)) {
                (Some(x), Some(y)) => Ok((x * 16 + y, t)),
                _ => Err(bad(t)),
            }
        }
        'a' => Ok((7, t)),
        'f' => Ok((12, t)),
        'n' => Ok((10, t)),
        'r' => Ok((13, t)),
        't' => Ok((9, t)),
        'v' => Ok((11, t)),
        _ if c < 0x80 && !is_alnum(c) => Ok((c, t)),
        _ => Err(bad(t)),
    }
}

const PERL_D: &[(u32, u32)] = &[(0x30, 0x39)];
const PERL_S: &[(u32, u32)] = &[(0x9, 0xA), (0xC, 0xD), (0x20, 0x20)];
const PERL_W: &[(u32, u32)] = &[(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)];

fn perl_group(c: u8) -> Option<(&'static [(u32, u32)], bool)> {
    Some(match c {
        b'd' => (PERL_D, false),
        b'D' => (PERL_D, true),
        b's' => (PERL_S, false),
        b'S' => (PERL_S, true),
        b'w' => (PERL_W, false),
        b'W' => (PERL_W, true),
        _ => return None,
    })
}

fn posix_group(name: &str) -> Option<(&'static [(u32, u32)], bool)> {
    let (neg, base) = match name.strip_prefix("[:^") {
        Some(rest) => (true, rest),
        None => (false, name.strip_prefix("[:")?),
    };
    let ranges: &'static [(u32, u32)] = match base {
        "alnum:]" => &[(0x30, 0x39), (0x41, 0x5A), (0x61, 0x7A)],
        "alpha:]" => &[(0x41, 0x5A), (0x61, 0x7A)],
        "ascii:]" => &[(0x0, 0x7F)],
        "blank:]" => &[(0x9, 0x9), (0x20, 0x20)],
        "cntrl:]" => &[(0x0, 0x1F), (0x7F, 0x7F)],
        "digit:]" => &[(0x30, 0x39)],
        "graph:]" => &[(0x21, 0x7E)],
        "lower:]" => &[(0x61, 0x7A)],
        "print:]" => &[(0x20, 0x7E)],
        "punct:]" => &[(0x21, 0x2F), (0x3A, 0x40), (0x5B, 0x60), (0x7B, 0x7E)],
        "space:]" => &[(0x9, 0xD), (0x20, 0x20)],
        "upper:]" => &[(0x41, 0x5A)],
        "word:]" => &[(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)],
        "xdigit:]" => &[(0x30, 0x39), (0x41, 0x46), (0x61, 0x66)],
        _ => return None,
    };
    Some((ranges, neg))
}

fn parse_perl_class_escape(s: &str) -> Option<(ClassItem, &str)> {
    let b = s.as_bytes();
    if b.len() < 2 || b[0] != b'\\' {
        return None;
    }
    let (ranges, neg) = perl_group(b[1])?;
    Some((ClassItem::Group(ranges, neg), &s[2..]))
}

/// Go's Unicode general categories (`unicode.Categories` keys, Go ≤ 1.24).
const CATEGORIES: &[&str] = &[
    "C", "Cc", "Cf", "Co", "Cs", "L", "Ll", "Lm", "Lo", "Lt", "Lu", "M", "Mc", "Me", "Mn", "N",
    "Nd", "Nl", "No", "P", "Pc", "Pd", "Pe", "Pf", "Pi", "Po", "Ps", "S", "Sc", "Sk", "Sm", "So",
    "Z", "Zl", "Zp", "Zs",
];

fn unicode_table(name: &str) -> Option<&'static str> {
    if name == "Any" {
        return Some("Any");
    }
    // The scripts are the tables' other names.
    CATEGORIES
        .iter()
        .copied()
        .chain(tables::UNICODE.iter().map(|&(n, _)| n))
        .find(|n| *n == name)
}

/// Go's `parseUnicodeClass`: `\pL`, `\p{Greek}`, `\P{^Greek}` at the start of `s`.
fn parse_unicode_class(s: &str) -> Result<Option<(ClassItem, &str)>, SyntaxError> {
    let b = s.as_bytes();
    if b.len() < 2 || b[0] != b'\\' || (b[1] != b'p' && b[1] != b'P') {
        return Ok(None);
    }
    let mut negated = b[1] == b'P';
    let t = &s[2..];
    if t.is_empty() {
        // Go decodes "" as RuneError of width 0 (no error): the name is empty, so unknown.
        return Err(err(ERR_INVALID_CHAR_CLASS_RANGE, s));
    }
    let (c, rest) = next_rune(t);
    let (seq, mut name, rest) = if c != '{' as u32 {
        let seq = &s[..s.len() - rest.len()];
        (seq, &seq[2..], rest)
    } else {
        let Some(end) = s.find('}') else {
            return Err(err(ERR_INVALID_CHAR_CLASS_RANGE, s));
        };
        (&s[..end + 1], &s[3..end], &s[end + 1..])
    };
    if let Some(n) = name.strip_prefix('^') {
        negated = !negated;
        name = n;
    }
    let Some(table) = unicode_table(name) else {
        return Err(err(ERR_INVALID_CHAR_CLASS_RANGE, seq));
    };
    Ok(Some((ClassItem::Unicode(table, negated), rest)))
}

/// Go's `parseClass`: a bracketed class at the start of `s` (`s[0] == '['`).
fn parse_class(s: &str, flags: Flags) -> Result<(Node, &str), SyntaxError> {
    let mut t = &s[1..];
    let mut negated = false;
    if t.starts_with('^') {
        negated = true;
        t = &t[1..];
    }
    let mut items = Vec::new();
    let mut first = true;
    while t.is_empty() || !t.starts_with(']') || first {
        first = false;
        if t.len() > 2 && t.starts_with("[:") {
            if let Some(i) = t[2..].find(":]") {
                let name = &t[..i + 4];
                let Some((ranges, neg)) = posix_group(name) else {
                    return Err(err(ERR_INVALID_CHAR_CLASS_RANGE, name));
                };
                items.push(ClassItem::Group(ranges, neg));
                t = &t[i + 4..];
                continue;
            }
        }
        if let Some((item, rest)) = parse_unicode_class(t)? {
            items.push(item);
            t = rest;
            continue;
        }
        if let Some((item, rest)) = parse_perl_class_escape(t) {
            items.push(item);
            t = rest;
            continue;
        }
        let rng = t;
        let (lo, rest) = parse_class_char(t, s)?;
        t = rest;
        let mut hi = lo;
        if t.len() >= 2 && t.starts_with('-') && !t[1..].starts_with(']') {
            let (h, rest) = parse_class_char(&t[1..], s)?;
            t = rest;
            hi = h;
            if hi < lo {
                return Err(err(
                    ERR_INVALID_CHAR_CLASS_RANGE,
                    &rng[..rng.len() - t.len()],
                ));
            }
        }
        items.push(ClassItem::Range(lo, hi));
    }
    Ok((
        Node::Class {
            items,
            negated,
            fold: flags.fold_case,
        },
        &t[1..],
    ))
}

fn parse_class_char<'a>(s: &'a str, whole_class: &str) -> Result<(u32, &'a str), SyntaxError> {
    if s.is_empty() {
        return Err(err(ERR_MISSING_BRACKET, whole_class));
    }
    if s.starts_with('\\') {
        return parse_escape(s);
    }
    Ok(next_rune(s))
}

/// Tree height as Go's `calcHeight` counts it (literal strings merged, groups transparent).
fn height(re: &Node) -> usize {
    match re {
        Node::Concat(subs) => {
            // Adjacent literals form one node in Go.
            1 + subs.iter().map(height).max().unwrap_or(0)
        }
        Node::Alternate(subs) => 1 + subs.iter().map(height).max().unwrap_or(0),
        Node::Capture(sub) | Node::Repeat { sub, .. } => 1 + height(sub),
        _ => 1,
    }
}

/// Go's `calcSize` estimate of compiled instructions.
fn size(re: &Node) -> i64 {
    let s = match re {
        Node::Lit(..) => 1,
        Node::Capture(sub) => 2 + size(sub),
        Node::Repeat { op, sub, .. } => {
            let sub = size(sub);
            match op {
                RepOp::Star => 2 + sub,
                RepOp::Plus | RepOp::Quest => 1 + sub,
                RepOp::Counted(min, max) => {
                    if *max == -1 {
                        if *min == 0 {
                            2 + sub
                        } else {
                            1 + min.saturating_mul(sub)
                        }
                    } else {
                        max.saturating_mul(sub).saturating_add(max - min)
                    }
                }
            }
        }
        Node::Concat(subs) => subs.iter().map(size).fold(0i64, i64::saturating_add),
        Node::Alternate(subs) => {
            subs.iter().map(size).fold(0i64, i64::saturating_add) + (subs.len() as i64 - 1).max(0)
        }
        _ => 1,
    };
    s.max(1)
}

/// Copies of Unicode classes Rust's compiler builds (counted repetitions expand).
fn unicode_copies(re: &Node) -> i64 {
    match re {
        Node::Class { items, .. } => items
            .iter()
            .filter(|i| matches!(i, ClassItem::Unicode(n, _) if *n != "Any" && *n != "Cs"))
            .count() as i64,
        Node::Repeat {
            op: RepOp::Counted(min, max),
            sub,
            ..
        } => {
            let copies = if *max == -1 { min + 1 } else { *max };
            unicode_copies(sub).saturating_mul(copies.max(1))
        }
        other => children(other)
            .into_iter()
            .map(unicode_copies)
            .fold(0i64, i64::saturating_add),
    }
}

fn push_char(out: &mut String, c: u32) {
    use std::fmt::Write;
    match char::from_u32(c) {
        Some(ch) if ch.is_ascii_alphanumeric() => out.push(ch),
        _ => {
            let _ = write!(out, "\\x{{{c:X}}}");
        }
    }
}

const NEVER: &str = r"[^\x{0}-\x{10FFFF}]";

fn emit(re: &Node, out: &mut String) {
    match re {
        Node::Empty => out.push_str("(?:)"),
        Node::Lit(c, fold) => {
            if (0xD800..=0xDFFF).contains(c) {
                out.push_str(NEVER); // a surrogate never occurs in valid UTF-8 text
            } else if *fold && char::from_u32(*c).is_some_and(has_case) {
                out.push_str("(?i:");
                push_char(out, *c);
                out.push(')');
            } else {
                push_char(out, *c);
            }
        }
        Node::Class {
            items,
            negated,
            fold,
        } => emit_class(items, *negated, *fold, out),
        Node::AnyChar => out.push_str("(?s:.)"),
        Node::AnyCharNotNL => out.push_str("[^\\n]"),
        Node::BeginLine => out.push_str("(?m:^)"),
        Node::EndLine => out.push_str("(?m:$)"),
        Node::BeginText => out.push_str("\\A"),
        Node::EndText => out.push_str("\\z"),
        Node::WordBoundary => out.push_str("(?-u:\\b)"),
        Node::NoWordBoundary => out.push_str("(?-u:\\B)"),
        Node::Capture(sub) => {
            out.push('(');
            emit(sub, out);
            out.push(')');
        }
        Node::Repeat { op, greedy, sub } => {
            out.push_str("(?:");
            emit(sub, out);
            out.push(')');
            match op {
                RepOp::Star => out.push('*'),
                RepOp::Plus => out.push('+'),
                RepOp::Quest => out.push('?'),
                RepOp::Counted(min, max) => {
                    out.push('{');
                    out.push_str(&min.to_string());
                    if *max != *min {
                        out.push(',');
                        if *max >= 0 {
                            out.push_str(&max.to_string());
                        }
                    }
                    out.push('}');
                }
            }
            if !greedy {
                out.push('?');
            }
        }
        Node::Concat(subs) => {
            for sub in subs {
                emit(sub, out);
            }
        }
        Node::Alternate(subs) => {
            out.push_str("(?:");
            for (i, sub) in subs.iter().enumerate() {
                if i > 0 {
                    out.push('|');
                }
                emit(sub, out);
            }
            out.push(')');
        }
    }
}

/// Whether a character may have other case variants (so `(?i:…)` changes its meaning): an
/// ASCII letter, or any non-ASCII character. (Not `char::to_lowercase`/`to_uppercase`: for
/// ASCII they change exactly the letters, and their tables were 27 KB of the module.)
fn has_case(c: char) -> bool {
    !c.is_ascii() || c.is_ascii_alphabetic()
}

/// The parts of `lo..=hi` outside the surrogates, which are not scalar values in Rust and never
/// occur in valid UTF-8 text: at most two, the empty ones left out.
fn scalar_parts(lo: u32, hi: u32) -> impl Iterator<Item = (u32, u32)> {
    [(lo, hi.min(0xD7FF)), (lo.max(0xE000), hi)]
        .into_iter()
        .filter(|(l, h)| l <= h)
}

fn emit_ranges(ranges: &[(u32, u32)], out: &mut String) {
    for &(lo, hi) in ranges {
        for (l, h) in scalar_parts(lo, hi) {
            push_char(out, l);
            if h != l {
                out.push('-');
                push_char(out, h);
            }
        }
    }
}

fn emit_class(items: &[ClassItem], negated: bool, fold: bool, out: &mut String) {
    let mut body = String::new();
    for item in items {
        match item {
            ClassItem::Range(lo, hi) => emit_ranges(&[(*lo, *hi)], &mut body),
            ClassItem::Group(ranges, neg) => {
                body.push_str(if *neg { "[^" } else { "[" });
                emit_ranges(ranges, &mut body);
                body.push(']');
            }
            ClassItem::Unicode(name, neg) => match *name {
                // Go's C is Cc|Cf|Co|Cs: unassigned code points are not in it.
                "C" => body.push_str(if *neg {
                    r"[^\p{Cc}\p{Cf}\p{Co}]"
                } else {
                    r"[\p{Cc}\p{Cf}\p{Co}]"
                }),
                // Surrogates never occur in valid UTF-8 text.
                "Cs" => body.push_str(if *neg { r"[\x{0}-\x{10FFFF}]" } else { NEVER }),
                _ => {
                    body.push_str(if *neg { "\\P{" } else { "\\p{" });
                    body.push_str(name);
                    body.push('}');
                }
            },
        }
    }
    if body.is_empty() {
        // An empty class matches nothing; its negation matches everything.
        body.push_str(NEVER);
    }
    if fold {
        out.push_str("(?i:");
    }
    out.push('[');
    if negated {
        out.push('^');
    }
    out.push_str(&body);
    out.push(']');
    if fold {
        out.push(')');
    }
}

#[cfg(test)]
mod tests;
