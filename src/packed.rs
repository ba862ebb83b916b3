//! Strings cross from JavaScript to wasm in one copy: the items concatenated into one string
//! plus each item's length in UTF-16 code units (JavaScript's `string.length`). This module
//! splits such a batch back into per-item UTF-8 bytes.
//!
//! Lone surrogates have already become U+FFFD in the concatenation (wasm-bindgen encodes with
//! `TextEncoder`, as Node's `Buffer.from(string)` does). When a high surrogate ending one item
//! and a low surrogate starting the next were fused into one character by the concatenation,
//! each item gets its own U+FFFD back, so every item's bytes equal what encoding it alone gives.

use std::fmt;

/// The lengths do not add up to the packed text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PackedError;

impl fmt::Display for PackedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("packed lengths do not match the packed text")
    }
}

impl std::error::Error for PackedError {}

const REPLACEMENT: &[u8] = "\u{FFFD}".as_bytes();

/// Walks a concatenation of strings given their UTF-16 lengths.
///
/// # Examples
/// ```
/// use partkit::packed::PackedSplitter;
/// let mut split = PackedSplitter::new("héllo🎉");
/// let mut scratch = Vec::new();
/// assert_eq!(split.next_item(5, &mut scratch).unwrap(), "héllo".as_bytes());
/// assert_eq!(split.next_item(2, &mut scratch).unwrap(), "🎉".as_bytes());
/// assert!(split.finish().is_ok());
/// ```
pub struct PackedSplitter<'a> {
    bytes: &'a [u8],
    pos: usize,
    /// The previous item ended inside a surrogate pair: the next item starts with U+FFFD.
    pending_low: bool,
}

fn bad_lengths() -> PackedError {
    PackedError
}

impl<'a> PackedSplitter<'a> {
    /// Starts at the beginning of `joined`.
    pub fn new(joined: &'a str) -> Self {
        Self {
            bytes: joined.as_bytes(),
            pos: 0,
            pending_low: false,
        }
    }

    /// The next item's UTF-8 bytes; `scratch` holds them when an item had to be repaired.
    pub fn next_item<'s>(
        &mut self,
        utf16_len: usize,
        scratch: &'s mut Vec<u8>,
    ) -> Result<&'s [u8], PackedError>
    where
        'a: 's,
    {
        let mut want = utf16_len;
        let repaired_start = self.pending_low && want > 0;
        if repaired_start {
            self.pending_low = false;
            want -= 1;
        } else if self.pending_low {
            // An empty item between the two halves of a fused pair (`['\uD800', '', '\uDC00']`).
            return Ok(&[]);
        }
        let start = self.pos;
        // Fast path: pure ASCII means one byte per UTF-16 unit.
        let end = start.checked_add(want).ok_or_else(bad_lengths)?;
        if !repaired_start && end <= self.bytes.len() && self.bytes[start..end].is_ascii() {
            self.pos = end;
            return Ok(&self.bytes[start..end]);
        }
        let mut i = start;
        let mut units = 0usize;
        let mut split_tail = false;
        while units < want {
            let b = *self.bytes.get(i).ok_or_else(bad_lengths)?;
            let (width, u) = match b {
                0x00..=0x7F => (1, 1),
                0xC0..=0xDF => (2, 1),
                0xE0..=0xEF => (3, 1),
                _ => (4, 2),
            };
            if units + u > want {
                // A supplementary character straddles the boundary: the concatenation fused a
                // lone high surrogate (ours) with a lone low surrogate (the next item's).
                split_tail = true;
                break;
            }
            units += u;
            i += width;
        }
        if i > self.bytes.len() {
            return Err(bad_lengths());
        }
        if !repaired_start && !split_tail {
            self.pos = i;
            return Ok(&self.bytes[start..i]);
        }
        scratch.clear();
        if repaired_start {
            scratch.extend_from_slice(REPLACEMENT);
        }
        scratch.extend_from_slice(&self.bytes[start..i]);
        if split_tail {
            scratch.extend_from_slice(REPLACEMENT);
            i += 4;
            if i > self.bytes.len() {
                return Err(bad_lengths());
            }
            self.pending_low = true;
        }
        self.pos = i;
        Ok(&scratch[..])
    }

    /// Checks that every byte was consumed.
    pub fn finish(&self) -> Result<(), PackedError> {
        if self.pos == self.bytes.len() && !self.pending_low {
            Ok(())
        } else {
            Err(bad_lengths())
        }
    }
}

/// A batch of strings as JavaScript holds them: every item's UTF-16 code units, concatenated,
/// and each item's length in code units (`string.length`). JavaScript writes the code units
/// verbatim (no encoding, so nothing is fused or replaced across items); each item becomes
/// UTF-8 here on its own, with every lone surrogate as U+FFFD, as `TextEncoder` and
/// `Buffer.from(string)` encode a string.
///
/// # Examples
/// ```
/// use partkit::packed::{push_utf8, Utf16Batch};
/// let units: Vec<u16> = "héllo🎉\u{0}".encode_utf16().chain([0xD800]).collect();
/// let batch = Utf16Batch::new(&units, &[5, 2, 1, 1]).unwrap();
/// let mut out = Vec::new();
/// let items: Vec<String> = batch
///     .items()
///     .map(|item| {
///         out.clear();
///         push_utf8(item, &mut out);
///         String::from_utf8(out.clone()).unwrap()
///     })
///     .collect();
/// assert_eq!(items, ["héllo", "🎉", "\0", "\u{FFFD}"]);
/// assert!(Utf16Batch::new(&units, &[5, 2]).is_err());
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Utf16Batch<'a> {
    units: &'a [u16],
    lens: &'a [u32],
}

impl<'a> Utf16Batch<'a> {
    /// Checks that the lengths add up to the code units.
    ///
    /// # Errors
    /// [`PackedError`] when they do not.
    pub fn new(units: &'a [u16], lens: &'a [u32]) -> Result<Self, PackedError> {
        let total: u64 = lens.iter().map(|&l| u64::from(l)).sum();
        if total != units.len() as u64 {
            return Err(PackedError);
        }
        Ok(Self { units, lens })
    }

    /// The number of items.
    pub fn len(&self) -> usize {
        self.lens.len()
    }

    /// Whether there are no items.
    pub fn is_empty(&self) -> bool {
        self.lens.is_empty()
    }

    /// Each item's code units, in order.
    pub fn items(&self) -> impl ExactSizeIterator<Item = &'a [u16]> + 'a {
        let mut rest = self.units;
        self.lens.iter().map(move |&len| {
            // `new` checked that the lengths add up: the split never runs short.
            let (item, tail) = rest.split_at(len as usize);
            rest = tail;
            item
        })
    }
}

/// Whether every code unit is ASCII (then the UTF-8 bytes are the code units).
#[inline]
pub fn is_ascii_utf16(units: &[u16]) -> bool {
    let mut chunks = units.chunks_exact(16);
    let mut acc = 0u16;
    for c in &mut chunks {
        acc |= c.iter().fold(0, |a, &u| a | u);
        if acc >= 0x80 {
            return false;
        }
    }
    chunks.remainder().iter().fold(acc, |a, &u| a | u) < 0x80
}

/// Appends the UTF-8 encoding of one JavaScript string's code units to `out`, each lone
/// surrogate as U+FFFD (what `TextEncoder` and `Buffer.from(string)` produce).
pub fn push_utf8(units: &[u16], out: &mut Vec<u8>) {
    if is_ascii_utf16(units) {
        out.extend(units.iter().map(|&u| u as u8));
        return;
    }
    // At most 3 bytes per code unit (a surrogate pair: 4 bytes for 2 units).
    let base = out.len();
    out.resize(base + 3 * units.len(), 0);
    let end = encode_utf8(units, &mut out[base..]);
    out.truncate(base + end);
}

/// Writes the UTF-8 of `units` to the start of `dst` (at least 3 bytes per code unit) and
/// returns the number of bytes written.
fn encode_utf8(units: &[u16], dst: &mut [u8]) -> usize {
    let n = units.len();
    let (mut i, mut w) = (0, 0);
    while i < n {
        // ASCII runs, 8 code units at a time.
        while let (Some(c), Some(d)) = (units.get(i..i + 8), dst.get_mut(w..w + 8)) {
            if c.iter().fold(0, |a, &u| a | u) >= 0x80 {
                break;
            }
            for (d, &u) in d.iter_mut().zip(c) {
                *d = u as u8;
            }
            i += 8;
            w += 8;
        }
        while let (Some(&u), Some(d)) = (units.get(i).filter(|&&u| u < 0x80), dst.get_mut(w)) {
            *d = u as u8;
            i += 1;
            w += 1;
        }
        let Some(&u) = units.get(i) else { break };
        let low = units
            .get(i + 1)
            .copied()
            .filter(|l| (0xDC00..0xE000).contains(l));
        let c = match (u, low) {
            (0xD800..=0xDBFF, Some(low)) => {
                i += 2;
                0x10000 + ((u32::from(u) - 0xD800) << 10) + (u32::from(low) - 0xDC00)
            }
            _ => {
                i += 1;
                u32::from(u)
            }
        };
        let c = char::from_u32(c).unwrap_or(char::REPLACEMENT_CHARACTER);
        let Some(d) = dst.get_mut(w..) else { break };
        if d.len() < c.len_utf8() {
            break;
        }
        w += c.encode_utf8(d).len();
    }
    w
}

#[cfg(test)]
mod utf16_tests {
    use super::*;

    fn units(s: &str) -> Vec<u16> {
        s.encode_utf16().collect()
    }

    fn utf8(u: &[u16]) -> Vec<u8> {
        let mut out = Vec::new();
        push_utf8(u, &mut out);
        out
    }

    #[test]
    fn valid_strings_round_trip() {
        for s in [
            "",
            "a",
            "héllo wörld, ascii tail",
            "日本語/ファイル",
            "🎉🦄x",
            "0123456789abcdef€",
        ] {
            assert_eq!(utf8(&units(s)), s.as_bytes(), "{s}");
            assert_eq!(is_ascii_utf16(&units(s)), s.is_ascii(), "{s}");
        }
    }

    #[test]
    fn lone_surrogates_are_replacement_characters() {
        let r = "\u{FFFD}";
        assert_eq!(utf8(&[0xD800]), r.as_bytes());
        assert_eq!(utf8(&[0xDC00, 0x61]), format!("{r}a").as_bytes());
        assert_eq!(
            utf8(&[0x61, 0xD800, 0xD800, 0xDC00]),
            format!("a{r}\u{10000}").as_bytes()
        );
        assert_eq!(utf8(&[0xDBFF, 0xDFFF]), "\u{10FFFF}".as_bytes());
        assert_eq!(utf8(&[0xDC00, 0xD800]), format!("{r}{r}").as_bytes());
    }

    #[test]
    fn matches_the_standard_lossy_decoder() {
        // Every pair of interesting code units, in every position of a short string.
        let pool = [
            0x61, 0x7F, 0x80, 0x7FF, 0x800, 0xD7FF, 0xD800, 0xDBFF, 0xDC00, 0xDFFF, 0xE000, 0xFFFF,
        ];
        for &a in &pool {
            for &b in &pool {
                for pad in 0..10 {
                    let mut u = vec![0x62; pad];
                    u.extend([a, b]);
                    u.extend(vec![0x63; 9 - pad]);
                    let want: String = char::decode_utf16(u.iter().copied())
                        .map(|r| r.unwrap_or(char::REPLACEMENT_CHARACTER))
                        .collect();
                    assert_eq!(utf8(&u), want.as_bytes(), "{u:x?}");
                }
            }
        }
    }

    #[test]
    fn batches_split_by_lengths() {
        let u = units("abcdé🎉");
        let b = Utf16Batch::new(&u, &[0, 2, 3, 2]).unwrap();
        assert_eq!(b.len(), 4);
        let items: Vec<&[u16]> = b.items().collect();
        assert_eq!(items, [&u[0..0], &u[0..2], &u[2..5], &u[5..7]]);
        assert!(Utf16Batch::new(&u, &[1]).is_err());
        assert!(Utf16Batch::new(&u, &[u32::MAX, 8]).is_err());
        assert!(Utf16Batch::new(&[], &[]).unwrap().is_empty());
    }
}
