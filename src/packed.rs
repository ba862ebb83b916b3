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
