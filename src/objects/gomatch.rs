//! The matcher of the `regex` partition type: a small program compiled from a pattern's
//! [`Hir`] (built by [`super::goregex::compile`]) and run by a bounded backtracker, with a
//! PikeVM for searches too large for the backtracker's budget.
//!
//! Semantics are those of a Thompson NFA searched leftmost-first, which is what Go's `regexp`
//! (and the `regex` crate this replaces) computes: the program is laid out as
//! `regex-automata`'s Thompson compiler lays out the same `Hir` (alternatives in order,
//! `x{n,m}` as `n` copies then nested optional copies, `x*` as `(x+)?` when `x` can match the
//! empty string, as Go does), so the leftmost match and its groups are the same. Every
//! consuming instruction consumes one whole character of a `&str`, so no match starts or ends
//! inside a character (Go's and `regex::Regex`'s rule).
//!
//! - **Backtracker**: depth-first in priority order, with a visited set of (instruction,
//!   position) pairs shared by every start position, so a search costs at most
//!   instructions × (positions + 1) steps (`regex-automata`'s `BoundedBacktracker`). Used when
//!   that set fits in [`VISITED_BITS`] bits: every S3 key (≤ 1024 bytes) with a program of up
//!   to about 2,000 instructions.
//! - **PikeVM**: the same program run breadth-first, one thread per instruction, each with its
//!   own groups; linear time for any length.
//! - **Prefilter**: when every match begins with a literal (`user` in `user(\d+)`), start
//!   positions are found with `memchr::memmem`; when every match begins at the start of the
//!   text (`^…`), only position 0 is tried.

use memchr::memmem;
use regex_syntax::hir::{Class, Hir, HirKind, Look};

/// Bits of the backtracker's visited set (256 KiB, as `regex-automata`'s default).
const VISITED_BITS: usize = 256 * 1024 * 8;
/// Most instructions in a program (12 bytes each: 48 MiB).
const MAX_INSTS: usize = 4 << 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Inst {
    /// One character, as its UTF-8 bytes (`len` of them).
    Char {
        len: u8,
        bytes: [u8; 4],
    },
    /// One character of class `n`.
    Class(u32),
    /// Continue at `.0`, or (lower priority) at `.1`.
    Split(u32, u32),
    Jmp(u32),
    /// Record the position in slot `n`.
    Save(u32),
    Look(Look),
    Match,
}

/// A set of characters: a bitmap of ASCII, and sorted ranges of the rest.
#[derive(Clone, Debug, PartialEq, Eq)]
struct CharClass {
    ascii: u128,
    ranges: Box<[(u32, u32)]>,
}

impl CharClass {
    fn new(ranges: impl Iterator<Item = (u32, u32)>) -> CharClass {
        let mut ascii = 0u128;
        let mut rest = Vec::new();
        for (a, b) in ranges {
            for c in a..=b.min(0x7F) {
                ascii |= 1 << c;
            }
            if b >= 0x80 {
                rest.push((a.max(0x80), b));
            }
        }
        CharClass {
            ascii,
            ranges: rest.into_boxed_slice(),
        }
    }

    #[inline]
    fn contains(&self, c: u32) -> bool {
        if c < 0x80 {
            return self.ascii >> c & 1 == 1;
        }
        let r = &self.ranges;
        // Binary search for the last range starting at or before `c`.
        let (mut lo, mut hi) = (0, r.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            if r[mid].0 <= c {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo > 0 && c <= r[lo - 1].1
    }
}

/// The program does not fit [`MAX_INSTS`], or uses syntax no Go pattern translates to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unsupported;

/// A compiled pattern (see the module documentation).
#[derive(Clone, Debug)]
pub struct Matcher {
    insts: Box<[Inst]>,
    classes: Box<[CharClass]>,
    /// Capture slots: two per group, group 0 (the whole match) included.
    slots: usize,
    /// Every match begins with this literal.
    prefix: Option<memmem::Finder<'static>>,
    /// Every match begins at position 0.
    anchored: bool,
    /// Without `prefix`: the bytes a match can begin with (`None`: any, or the empty match).
    first: Option<Box<[bool; 256]>>,
    /// Instructions 1..=`skip.0` match the first `skip.1` bytes of `prefix`: the
    /// backtracker starts after them at a prefilter's candidate.
    skip: (u32, usize),
}

/// Per-search state of a [`Matcher`], reused between keys.
#[derive(Clone, Debug, Default)]
pub struct Cache {
    slots: Vec<Option<usize>>,
    visited: Vec<u64>,
    stack: Vec<Frame>,
    pike: Option<Pike>,
}

#[derive(Clone, Copy, Debug)]
enum Frame {
    Explore { pc: u32, at: usize },
    Restore { slot: u32, val: Option<usize> },
}

struct Compiler<'h> {
    insts: Vec<Inst>,
    classes: Vec<CharClass>,
    /// Classes already compiled, by address in the `Hir` (repetitions compile a sub-tree
    /// several times: one class each).
    seen: Vec<(*const Class, u32)>,
    /// The highest group index (groups removed by `{0}` still count, as Go counts them).
    groups: u32,
    _hir: std::marker::PhantomData<&'h Hir>,
}

impl<'h> Compiler<'h> {
    fn emit(&mut self, i: Inst) -> Result<u32, Unsupported> {
        if self.insts.len() >= MAX_INSTS {
            return Err(Unsupported);
        }
        self.insts.push(i);
        Ok((self.insts.len() - 1) as u32)
    }

    fn here(&self) -> u32 {
        self.insts.len() as u32
    }

    /// Sets the lower-priority target of the `Split` at `at` (or the target of a `Jmp`).
    fn patch(&mut self, at: u32, to: u32) {
        match &mut self.insts[at as usize] {
            Inst::Split(_, b) => *b = to,
            Inst::Jmp(t) => *t = to,
            _ => {}
        }
    }

    /// A split preferring the next instruction (greedy) or the patched target (lazy). Returns
    /// its index; [`Compiler::patch_split`] sets the other branch.
    fn split(&mut self, greedy: bool) -> Result<u32, Unsupported> {
        let next = self.here() + 1;
        self.emit(if greedy {
            Inst::Split(next, u32::MAX)
        } else {
            Inst::Split(u32::MAX, next)
        })
    }

    fn patch_split(&mut self, at: u32, to: u32) {
        if let Inst::Split(a, b) = &mut self.insts[at as usize] {
            if *b == u32::MAX {
                *b = to;
            } else {
                *a = to;
            }
        }
    }

    /// A split at `here` that prefers `back` (greedy) or the next instruction (lazy).
    fn split_back(&mut self, back: u32, greedy: bool) -> Result<u32, Unsupported> {
        let next = self.here() + 1;
        self.emit(if greedy {
            Inst::Split(back, next)
        } else {
            Inst::Split(next, back)
        })
    }

    fn class(&mut self, hir: &'h Class) -> Result<(), Unsupported> {
        let ranges: Vec<(u32, u32)> = match hir {
            Class::Unicode(u) => u
                .ranges()
                .iter()
                .map(|r| (r.start() as u32, r.end() as u32))
                .collect(),
            Class::Bytes(b) => {
                // In UTF-8 mode a byte class only holds ASCII.
                if b.ranges().iter().any(|r| r.end() >= 0x80) {
                    return Err(Unsupported);
                }
                b.ranges()
                    .iter()
                    .map(|r| (u32::from(r.start()), u32::from(r.end())))
                    .collect()
            }
        };
        if let [(a, b)] = ranges[..] {
            if a == b {
                if let Some(c) = char::from_u32(a) {
                    return self.char(c);
                }
            }
        }
        let key = hir as *const Class;
        let id = match self.seen.iter().find(|(k, _)| *k == key) {
            Some(&(_, id)) => id,
            None => {
                let id = self.classes.len() as u32;
                self.classes.push(CharClass::new(ranges.into_iter()));
                self.seen.push((key, id));
                id
            }
        };
        self.emit(Inst::Class(id)).map(|_| ())
    }

    fn char(&mut self, c: char) -> Result<(), Unsupported> {
        let mut bytes = [0u8; 4];
        let len = c.encode_utf8(&mut bytes).len() as u8;
        self.emit(Inst::Char { len, bytes }).map(|_| ())
    }

    fn c(&mut self, hir: &'h Hir) -> Result<(), Unsupported> {
        match hir.kind() {
            HirKind::Empty => Ok(()),
            HirKind::Literal(lit) => {
                let s = std::str::from_utf8(&lit.0).map_err(|_| Unsupported)?;
                for ch in s.chars() {
                    self.char(ch)?;
                }
                Ok(())
            }
            HirKind::Class(class) => self.class(class),
            HirKind::Look(look) => match look {
                Look::WordUnicode
                | Look::WordUnicodeNegate
                | Look::WordStartUnicode
                | Look::WordEndUnicode
                | Look::WordStartHalfUnicode
                | Look::WordEndHalfUnicode => Err(Unsupported),
                _ => self.emit(Inst::Look(*look)).map(|_| ()),
            },
            HirKind::Capture(cap) => {
                self.groups = self.groups.max(cap.index);
                self.emit(Inst::Save(cap.index * 2))?;
                self.c(&cap.sub)?;
                self.emit(Inst::Save(cap.index * 2 + 1)).map(|_| ())
            }
            HirKind::Concat(subs) => subs.iter().try_for_each(|s| self.c(s)),
            HirKind::Alternation(subs) => {
                let mut jumps = Vec::new();
                for (i, sub) in subs.iter().enumerate() {
                    if i + 1 == subs.len() {
                        self.c(sub)?;
                    } else {
                        let split = self.split(true)?;
                        self.c(sub)?;
                        jumps.push(self.emit(Inst::Jmp(u32::MAX))?);
                        let next = self.here();
                        self.patch(split, next);
                    }
                }
                let end = self.here();
                for j in jumps {
                    self.patch(j, end);
                }
                Ok(())
            }
            HirKind::Repetition(rep) => {
                let sub = &*rep.sub;
                match rep.max {
                    None if rep.min == 0 => {
                        if sub.properties().minimum_len().is_some_and(|n| n > 0) {
                            // L: split(body, out); body; jmp L
                            let l = self.split(rep.greedy)?;
                            self.c(sub)?;
                            self.emit(Inst::Jmp(l))?;
                            let out = self.here();
                            self.patch_split(l, out);
                        } else {
                            // (x+)?: the preference order Go and regex-automata give x*
                            // when x can match the empty string.
                            let q = self.split(rep.greedy)?;
                            let body = self.here();
                            self.c(sub)?;
                            self.split_back(body, rep.greedy)?;
                            let out = self.here();
                            self.patch_split(q, out);
                        }
                        Ok(())
                    }
                    None => {
                        for _ in 1..rep.min {
                            self.c(sub)?;
                        }
                        let body = self.here();
                        self.c(sub)?;
                        self.split_back(body, rep.greedy).map(|_| ())
                    }
                    Some(max) => {
                        for _ in 0..rep.min {
                            self.c(sub)?;
                        }
                        let mut splits = Vec::new();
                        for _ in rep.min..max {
                            splits.push(self.split(rep.greedy)?);
                            self.c(sub)?;
                        }
                        let end = self.here();
                        for s in splits {
                            self.patch_split(s, end);
                        }
                        Ok(())
                    }
                }
            }
        }
    }
}

/// The literal every match of `hir` begins with, if any.
fn prefix_literal(hir: &Hir) -> Option<&[u8]> {
    match hir.kind() {
        HirKind::Literal(lit) => Some(&lit.0[..]),
        HirKind::Capture(cap) => prefix_literal(&cap.sub),
        HirKind::Concat(subs) => subs.first().and_then(prefix_literal),
        HirKind::Repetition(rep) if rep.min > 0 => prefix_literal(&rep.sub),
        _ => None,
    }
    .filter(|l| !l.is_empty())
}

impl Matcher {
    /// Compiles `hir`, parsed in Unicode and UTF-8 mode (`regex-syntax`'s defaults).
    pub fn new(hir: &Hir) -> Result<Matcher, Unsupported> {
        let mut c = Compiler {
            insts: Vec::new(),
            classes: Vec::new(),
            seen: Vec::new(),
            groups: 0,
            _hir: std::marker::PhantomData,
        };
        c.emit(Inst::Save(0))?;
        c.c(hir)?;
        c.emit(Inst::Save(1))?;
        c.emit(Inst::Match)?;
        let groups = c.groups as usize + 1;
        let prefix = prefix_literal(hir);
        let mut skip = (0, 0);
        if let Some(lit) = prefix {
            for inst in &c.insts[1..] {
                match *inst {
                    Inst::Char { len, bytes }
                        if lit[skip.1..].starts_with(&bytes[..len as usize]) =>
                    {
                        skip = (skip.0 + 1, skip.1 + len as usize);
                    }
                    _ => break,
                }
            }
        }
        let first = if prefix.is_none() {
            first_bytes(&c.insts, &c.classes)
        } else {
            None
        };
        Ok(Matcher {
            first,
            skip,
            insts: c.insts.into_boxed_slice(),
            classes: c.classes.into_boxed_slice(),
            slots: 2 * groups,
            prefix: prefix.map(|l| memmem::Finder::new(l).into_owned()),
            anchored: hir.properties().look_set_prefix().contains(Look::Start),
        })
    }

    /// Number of groups, the whole match (group 0) included.
    pub fn groups(&self) -> usize {
        self.slots / 2
    }

    /// Fresh per-search state.
    pub fn cache(&self) -> Cache {
        Cache::default()
    }

    /// The leftmost-first match in `hay`, with its groups in `cache` (see
    /// [`Matcher::group`]).
    pub fn captures(&self, cache: &mut Cache, hay: &str) -> bool {
        let positions = hay.len() + 1;
        self.search(
            cache,
            hay,
            self.insts.len().saturating_mul(positions) > VISITED_BITS,
        )
    }

    /// [`Matcher::captures`] with the PikeVM (`pike`) or the backtracker (any size).
    fn search(&self, cache: &mut Cache, hay: &str, pike: bool) -> bool {
        cache.slots.clear();
        cache.slots.resize(self.slots, None);
        if pike {
            self.pike(cache, hay.as_bytes())
        } else {
            self.backtrack(cache, hay.as_bytes())
        }
    }

    /// The byte span of group `i` of the last successful [`Matcher::captures`].
    pub fn group(&self, cache: &Cache, i: usize) -> Option<(usize, usize)> {
        match (cache.slots.get(2 * i), cache.slots.get(2 * i + 1)) {
            (Some(&Some(a)), Some(&Some(b))) => Some((a, b)),
            _ => None,
        }
    }

    /// The span of the leftmost-first match.
    pub fn find(&self, hay: &str) -> Option<(usize, usize)> {
        let mut c = self.cache();
        if self.captures(&mut c, hay) {
            self.group(&c, 0)
        } else {
            None
        }
    }

    /// Whether `hay` holds a match.
    pub fn is_match(&self, hay: &str) -> bool {
        self.find(hay).is_some()
    }

    /// The next position, from `at`, where a match may begin.
    #[inline]
    fn next_start(&self, hay: &[u8], at: usize) -> Option<usize> {
        if at > hay.len() || (self.anchored && at > 0) {
            return None;
        }
        match (&self.prefix, &self.first) {
            (Some(f), _) => f.find(&hay[at..]).map(|i| at + i),
            (None, Some(first)) => hay[at..]
                .iter()
                .position(|&b| first[b as usize])
                .map(|i| at + i),
            (None, None) => Some(at),
        }
    }

    fn backtrack(&self, cache: &mut Cache, hay: &[u8]) -> bool {
        let positions = hay.len() + 1;
        let words = (self.insts.len() * positions).div_ceil(64);
        cache.visited.clear();
        cache.visited.resize(words, 0);
        let mut at = 0;
        while let Some(start) = self.next_start(hay, at) {
            cache.stack.clear();
            if self.skip.0 > 0 {
                // The prefilter found the prefix here: group 0 starts, its characters match.
                cache.slots[0] = Some(start);
                cache.stack.push(Frame::Explore {
                    pc: 1 + self.skip.0,
                    at: start + self.skip.1,
                });
            } else {
                cache.stack.push(Frame::Explore { pc: 0, at: start });
            }
            while let Some(frame) = cache.stack.pop() {
                match frame {
                    Frame::Explore { pc, at } => {
                        if self.explore(cache, hay, pc, at) {
                            return true;
                        }
                    }
                    Frame::Restore { slot, val } => cache.slots[slot as usize] = val,
                }
            }
            at = start + char_len(hay, start).max(1);
        }
        false
    }

    /// Follows `pc` at `at` depth-first, pushing the alternatives it leaves for later.
    #[inline]
    fn explore(&self, cache: &mut Cache, hay: &[u8], mut pc: u32, mut at: usize) -> bool {
        let positions = hay.len() + 1;
        loop {
            let bit = pc as usize * positions + at;
            let (w, b) = (bit / 64, 1u64 << (bit % 64));
            if cache.visited[w] & b != 0 {
                return false;
            }
            cache.visited[w] |= b;
            match self.insts[pc as usize] {
                Inst::Char { len, bytes } => {
                    let n = len as usize;
                    if hay.get(at..at + n) != Some(&bytes[..n]) {
                        return false;
                    }
                    at += n;
                    pc += 1;
                }
                Inst::Class(id) => match decode(hay, at) {
                    Some((c, n)) if self.classes[id as usize].contains(c) => {
                        at += n;
                        pc += 1;
                    }
                    _ => return false,
                },
                Inst::Split(a, b) => {
                    cache.stack.push(Frame::Explore { pc: b, at });
                    pc = a;
                }
                Inst::Jmp(t) => pc = t,
                Inst::Save(s) => {
                    let slot = &mut cache.slots[s as usize];
                    cache.stack.push(Frame::Restore {
                        slot: s,
                        val: *slot,
                    });
                    *slot = Some(at);
                    pc += 1;
                }
                Inst::Look(look) => {
                    if !look_at(look, hay, at) {
                        return false;
                    }
                    pc += 1;
                }
                Inst::Match => return true,
            }
        }
    }

    fn pike(&self, cache: &mut Cache, hay: &[u8]) -> bool {
        let mut p = cache.pike.take().unwrap_or_default();
        p.reset(self.insts.len());
        let mut matched = false;
        let mut pos = 0;
        loop {
            if !matched && p.cur.is_empty() {
                // Nothing in flight: skip to the next possible start.
                match self.next_start(hay, pos) {
                    Some(s) => pos = s,
                    None => break,
                }
            }
            if !matched && self.may_start(hay, pos) {
                // The start thread has the lowest priority of the list.
                let mut fresh = std::mem::take(&mut p.tmp);
                fresh.clear();
                fresh.resize(self.slots, None);
                p.seen.clear();
                for t in &p.cur.threads {
                    p.seen.insert(t.0);
                }
                self.add(&mut p, true, 0, hay, pos, &mut fresh);
                p.tmp = fresh;
            }
            if p.cur.is_empty() {
                if matched || pos >= hay.len() {
                    break;
                }
                pos += char_len(hay, pos);
                continue;
            }
            // Step every thread over the character at `pos`, in priority order.
            let ch = decode(hay, pos);
            p.seen.clear();
            for i in 0..p.cur.threads.len() {
                let (pc, off) = p.cur.threads[i];
                let off = off as usize;
                let k = match self.insts[pc as usize] {
                    Inst::Match => {
                        cache
                            .slots
                            .copy_from_slice(&p.cur.slots[off..off + self.slots]);
                        matched = true;
                        break; // lower-priority threads are cut
                    }
                    Inst::Char { len, bytes } => {
                        let k = len as usize;
                        if hay.get(pos..pos + k) != Some(&bytes[..k]) {
                            continue;
                        }
                        k
                    }
                    Inst::Class(id) => match ch {
                        Some((c, k)) if self.classes[id as usize].contains(c) => k,
                        _ => continue,
                    },
                    _ => continue,
                };
                let mut t = std::mem::take(&mut p.tmp);
                t.clear();
                t.extend_from_slice(&p.cur.slots[off..off + self.slots]);
                self.add(&mut p, false, pc + 1, hay, pos + k, &mut t);
                p.tmp = t;
            }
            std::mem::swap(&mut p.cur, &mut p.next);
            p.next.clear();
            match ch {
                Some((_, k)) => pos += k,
                None => break,
            }
        }
        cache.pike = Some(p);
        matched
    }

    /// Whether a match may begin at `pos` (see [`Matcher::next_start`]).
    fn may_start(&self, hay: &[u8], pos: usize) -> bool {
        if self.anchored {
            return pos == 0;
        }
        match &self.prefix {
            Some(f) => hay[pos..].starts_with(f.needle()),
            None => true,
        }
    }

    /// Adds the thread at `pc` (and what it reaches without consuming) to the current list
    /// (`cur`) or the next one, after those already there (lower priority), with groups `t`.
    fn add(
        &self,
        p: &mut Pike,
        cur: bool,
        pc: u32,
        hay: &[u8],
        at: usize,
        t: &mut [Option<usize>],
    ) {
        let mut stack = std::mem::take(&mut p.stack);
        stack.clear();
        stack.push(Frame::Explore { pc, at });
        let list = if cur { &mut p.cur } else { &mut p.next };
        while let Some(f) = stack.pop() {
            let mut pc = match f {
                Frame::Explore { pc, .. } => pc,
                Frame::Restore { slot, val } => {
                    t[slot as usize] = val;
                    continue;
                }
            };
            loop {
                if !p.seen.insert(pc) {
                    break;
                }
                match self.insts[pc as usize] {
                    Inst::Split(a, b) => {
                        stack.push(Frame::Explore { pc: b, at });
                        pc = a;
                    }
                    Inst::Jmp(x) => pc = x,
                    Inst::Save(s) => {
                        stack.push(Frame::Restore {
                            slot: s,
                            val: t[s as usize],
                        });
                        t[s as usize] = Some(at);
                        pc += 1;
                    }
                    Inst::Look(look) => {
                        if !look_at(look, hay, at) {
                            break;
                        }
                        pc += 1;
                    }
                    Inst::Char { .. } | Inst::Class(_) | Inst::Match => {
                        list.threads.push((pc, list.slots.len() as u32));
                        list.slots.extend_from_slice(t);
                        break;
                    }
                }
            }
        }
        p.stack = stack;
    }
}

/// The PikeVM's state: two thread lists, and the instructions already reached in the step
/// being built (a thread reaching one again has lower priority and is dropped).
#[derive(Clone, Debug, Default)]
struct Pike {
    cur: Threads,
    next: Threads,
    seen: Sparse,
    tmp: Vec<Option<usize>>,
    stack: Vec<Frame>,
}

impl Pike {
    fn reset(&mut self, n: usize) {
        self.cur.clear();
        self.next.clear();
        self.seen.reset(n);
    }
}

/// Threads in priority order: instruction and offset of its groups in `slots` (groups are
/// stored for live threads only).
#[derive(Clone, Debug, Default)]
struct Threads {
    threads: Vec<(u32, u32)>,
    slots: Vec<Option<usize>>,
}

impl Threads {
    fn clear(&mut self) {
        self.threads.clear();
        self.slots.clear();
    }

    fn is_empty(&self) -> bool {
        self.threads.is_empty()
    }
}

/// A sparse set of instructions.
#[derive(Clone, Debug, Default)]
struct Sparse {
    dense: Vec<u32>,
    sparse: Vec<u32>,
    len: usize,
}

impl Sparse {
    fn reset(&mut self, n: usize) {
        self.dense.clear();
        self.dense.resize(n, 0);
        self.sparse.clear();
        self.sparse.resize(n, 0);
        self.len = 0;
    }

    fn clear(&mut self) {
        self.len = 0;
    }

    fn insert(&mut self, pc: u32) -> bool {
        let i = self.sparse[pc as usize] as usize;
        if i < self.len && self.dense[i] == pc {
            return false;
        }
        self.dense[self.len] = pc;
        self.sparse[pc as usize] = self.len as u32;
        self.len += 1;
        true
    }
}

/// The first bytes of the characters a match can begin with, or `None` when a match may be
/// empty (every position is a candidate). Non-ASCII characters of a class count as every lead
/// byte.
fn first_bytes(insts: &[Inst], classes: &[CharClass]) -> Option<Box<[bool; 256]>> {
    let mut set = Box::new([false; 256]);
    let mut seen = vec![false; insts.len()];
    let mut stack = vec![0u32];
    while let Some(pc) = stack.pop() {
        if std::mem::replace(&mut seen[pc as usize], true) {
            continue;
        }
        match insts[pc as usize] {
            Inst::Char { bytes, .. } => set[bytes[0] as usize] = true,
            Inst::Class(id) => {
                let class = &classes[id as usize];
                for b in 0..0x80 {
                    set[b] |= class.ascii >> b & 1 == 1;
                }
                if !class.ranges.is_empty() {
                    set[0xC0..].iter_mut().for_each(|b| *b = true);
                }
            }
            Inst::Split(a, b) => stack.extend([a, b]),
            Inst::Jmp(t) => stack.push(t),
            Inst::Save(_) | Inst::Look(_) => stack.push(pc + 1),
            Inst::Match => return None,
        }
    }
    Some(set)
}

/// The character at `at` of valid UTF-8 and its length.
#[inline]
fn decode(hay: &[u8], at: usize) -> Option<(u32, usize)> {
    let b0 = *hay.get(at)?;
    if b0 < 0x80 {
        return Some((u32::from(b0), 1));
    }
    let n = char_len(hay, at);
    let s = std::str::from_utf8(hay.get(at..at + n)?).ok()?;
    s.chars().next().map(|c| (c as u32, n))
}

/// Length of the UTF-8 sequence starting at `at` (0 at the end).
#[inline]
fn char_len(hay: &[u8], at: usize) -> usize {
    match hay.get(at) {
        None => 0,
        Some(&b) if b < 0x80 => 1,
        Some(&b) if b >= 0xF0 => 4,
        Some(&b) if b >= 0xE0 => 3,
        Some(_) => 2,
    }
}

fn is_word(b: Option<&u8>) -> bool {
    b.is_some_and(|&b| b.is_ascii_alphanumeric() || b == b'_')
}

fn look_at(look: Look, hay: &[u8], at: usize) -> bool {
    let before = at.checked_sub(1).and_then(|i| hay.get(i));
    let after = hay.get(at);
    match look {
        Look::Start => at == 0,
        Look::End => at == hay.len(),
        Look::StartLF => at == 0 || before == Some(&b'\n'),
        Look::EndLF => at == hay.len() || after == Some(&b'\n'),
        Look::StartCRLF => {
            at == 0 || before == Some(&b'\n') || (before == Some(&b'\r') && after != Some(&b'\n'))
        }
        Look::EndCRLF => {
            at == hay.len()
                || after == Some(&b'\r')
                || (after == Some(&b'\n') && before != Some(&b'\r'))
        }
        Look::WordAscii => is_word(before) != is_word(after),
        Look::WordAsciiNegate => is_word(before) == is_word(after),
        Look::WordStartAscii => !is_word(before) && is_word(after),
        Look::WordEndAscii => is_word(before) && !is_word(after),
        Look::WordStartHalfAscii => !is_word(before),
        Look::WordEndHalfAscii => !is_word(after),
        // Rejected by `Compiler::c`.
        _ => false,
    }
}

#[cfg(test)]
mod tests;
