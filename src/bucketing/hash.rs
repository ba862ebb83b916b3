//! Deterministic bucket assignment: HMAC-MD5, first four digest bytes big-endian, modulo total.
//! One id is hashed by the `hmac` and `md-5` crates; a packed batch by the multi-lane kernel of
//! [`super::md5`] (see there for why and by how much).

use hmac::{Hmac, Mac};
use md5::Md5;

use super::md5::{HmacMd5, LANES};
use super::BucketingError;
use crate::packed::{push_utf8, PackedSplitter, Utf16Batch};

/// A bucket assigner with its HMAC key schedule computed once.
///
/// Reusing one `Bucketer` for many entities skips re-keying HMAC per call, which is most of the
/// cost for short entity ids.
///
/// # Examples
/// ```
/// use partkit::bucketing::Bucketer;
/// let b = Bucketer::new("farosai/airbyte-github-source", 12).unwrap();
/// assert_eq!(b.bucket("facebook/react"), 9);
/// ```
#[derive(Clone)]
pub struct Bucketer {
    /// The crates' HMAC with the key absorbed: cloned per id.
    keyed: Hmac<Md5>,
    /// The same key schedule for the batch kernel.
    lanes: HmacMd5,
    total: u32,
}

impl std::fmt::Debug for Bucketer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bucketer")
            .field("total", &self.total)
            .finish_non_exhaustive()
    }
}

impl Bucketer {
    /// Creates a bucketer for `key` (the namespace, e.g. the connector name) and `total` buckets.
    ///
    /// # Errors
    /// [`BucketingError::TotalInvalid`] when `total` is 0.
    pub fn new(key: &str, total: u32) -> Result<Self, BucketingError> {
        if total == 0 {
            return Err(BucketingError::TotalInvalid);
        }
        // HMAC takes a key of any length (a long one is hashed first): this cannot fail.
        let keyed = <Hmac<Md5> as Mac>::new_from_slice(key.as_bytes())
            .map_err(|_| BucketingError::InvalidArgument("HMAC key".into()))?;
        Ok(Self {
            keyed,
            lanes: HmacMd5::new(key.as_bytes()),
            total,
        })
    }

    /// The number of buckets.
    pub fn total(&self) -> u32 {
        self.total
    }

    /// The 32-bit hash of `data`: the first four bytes of HMAC-MD5(key, data), big-endian.
    pub fn hash_bytes(&self, data: &[u8]) -> u32 {
        let mut mac = self.keyed.clone();
        mac.update(data);
        let digest = mac.finalize().into_bytes();
        u32::from_be_bytes([digest[0], digest[1], digest[2], digest[3]])
    }

    /// The 1-based bucket of `data` (UTF-8 bytes).
    pub fn bucket_bytes(&self, data: &[u8]) -> u32 {
        self.hash_bytes(data) % self.total + 1
    }

    /// The lanes' fallback for a group with an id longer than one block: kept out of line so
    /// that the crates' code does not crowd the batch loop.
    #[cold]
    #[inline(never)]
    fn bucket_each(&self, msgs: &[&[u8]], out: &mut Vec<u32>) {
        out.extend(msgs.iter().map(|m| self.bucket_bytes(m)));
    }

    /// The 1-based bucket of `data`.
    pub fn bucket(&self, data: &str) -> u32 {
        self.bucket_bytes(data.as_bytes())
    }

    /// Buckets every item of a packed batch and appends the results to `out`.
    ///
    /// `joined` is the concatenation of the items and `utf16_lens` holds each item's length in
    /// UTF-16 code units (JavaScript's `string.length`): this is how strings cross from JS in
    /// one copy. Lone surrogates have already become U+FFFD in `joined`, exactly as Node's
    /// `createHmac().update(string)` encodes them; when a high surrogate ending one item and a
    /// low surrogate starting the next were fused into one character by the concatenation,
    /// each item gets its own U+FFFD back.
    ///
    /// # Errors
    /// [`BucketingError::InvalidArgument`] when the lengths do not add up to `joined`.
    pub fn bucket_packed(
        &self,
        joined: &str,
        utf16_lens: &[u32],
        out: &mut Vec<u32>,
    ) -> Result<(), BucketingError> {
        let mut split = PackedSplitter::new(joined);
        let mut scratch: [Vec<u8>; LANES] = std::array::from_fn(|_| Vec::new());
        out.reserve(utf16_lens.len());
        let mut groups = utf16_lens.chunks_exact(LANES);
        for group in &mut groups {
            let mut msgs: [&[u8]; LANES] = [&[]; LANES];
            for ((msg, buf), &len) in msgs.iter_mut().zip(scratch.iter_mut()).zip(group) {
                *msg = split.next_item(len as usize, buf)?;
            }
            match self.lanes.first_u32_lanes(msgs) {
                Some(hashes) => out.extend(hashes.map(|h| h % self.total + 1)),
                None => self.bucket_each(&msgs, out),
            }
        }
        for &len in groups.remainder() {
            let item = split.next_item(len as usize, &mut scratch[0])?;
            out.push(self.bucket_bytes(item));
        }
        Ok(split.finish()?)
    }
}

impl Bucketer {
    /// Buckets every item of a batch given as UTF-16 code units (the other packed format, see
    /// `src/packed.rs`; each item encoded to UTF-8 here, lone surrogates as U+FFFD) and appends
    /// the results to `out`. Same results as [`Bucketer::bucket_packed`]; kept to measure the two
    /// formats against each other (`npm run bench -- bucketing`).
    pub fn bucket_utf16(&self, batch: &Utf16Batch<'_>, out: &mut Vec<u32>) {
        let mut scratch: [Vec<u8>; LANES] = std::array::from_fn(|_| Vec::new());
        out.reserve(batch.len());
        let mut items = batch.items();
        loop {
            let mut n = 0;
            for buf in scratch.iter_mut() {
                let Some(units) = items.next() else { break };
                buf.clear();
                push_utf8(units, buf);
                n += 1;
            }
            if n < LANES {
                out.extend(scratch[..n].iter().map(|m| self.bucket_bytes(m)));
                return;
            }
            let msgs: [&[u8]; LANES] = std::array::from_fn(|l| scratch[l].as_slice());
            match self.lanes.first_u32_lanes(msgs) {
                Some(hashes) => out.extend(hashes.map(|h| h % self.total + 1)),
                None => self.bucket_each(&msgs, out),
            }
        }
    }
}

/// The 1-based bucket of `data` under `key` with `total` buckets: the spec's `bucket()`.
///
/// # Examples
/// ```
/// assert_eq!(partkit::bucketing::bucket("test-key", "test-data", 5), Ok(2));
/// ```
///
/// # Errors
/// [`BucketingError::TotalInvalid`] when `total` is 0.
pub fn bucket(key: &str, data: &str, total: u32) -> Result<u32, BucketingError> {
    Ok(Bucketer::new(key, total)?.bucket(data))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utf16_len(s: &str) -> u32 {
        s.encode_utf16().count() as u32
    }

    #[test]
    fn spec_vectors() {
        let key = "farosai/airbyte-github-source";
        for (data, total, want) in [
            ("facebook/react", 12, 9),
            ("torvalds/linux", 12, 9),
            ("openai/gpt", 7, 3),
            ("openai/evals", 7, 1),
            ("vercel/next.js", 12, 7),
            ("octo-org/hello-world", 10, 6),
            ("octo-org/repo", 10, 4),
            ("myco/frontend", 10, 8),
            ("myco/backend", 10, 7),
        ] {
            assert_eq!(bucket(key, data, total), Ok(want), "{data}");
        }
        assert_eq!(bucket("test-key", "test-data", 5), Ok(2));
    }

    #[test]
    fn zero_total_is_an_error() {
        assert_eq!(bucket("k", "d", 0), Err(BucketingError::TotalInvalid));
    }

    #[test]
    fn packed_matches_single() {
        let items = [
            "",
            "a",
            "héllo",
            "日本語",
            "🎉x",
            "plain/ascii",
            "",
            "\u{FFFD}",
            "an entity id longer than one MD5 block: it leaves the lanes for the crates",
        ];
        let joined: String = items.concat();
        let lens: Vec<u32> = items.iter().map(|s| utf16_len(s)).collect();
        let b = Bucketer::new("k", 97).unwrap();
        let mut out = Vec::new();
        b.bucket_packed(&joined, &lens, &mut out).unwrap();
        let single: Vec<u32> = items.iter().map(|s| b.bucket(s)).collect();
        assert_eq!(out, single);
        let units: Vec<u16> = joined.encode_utf16().collect();
        let mut utf16 = Vec::new();
        b.bucket_utf16(&Utf16Batch::new(&units, &lens).unwrap(), &mut utf16);
        assert_eq!(utf16, single);
    }

    #[test]
    fn fused_lone_surrogates_are_split_back() {
        // JS items "a\uD83C" and "\uDF89b" join into "a🎉b"; each item alone encodes its lone
        // surrogate as U+FFFD.
        let b = Bucketer::new("k", 1000).unwrap();
        let mut out = Vec::new();
        b.bucket_packed("a🎉b", &[2, 2], &mut out).unwrap();
        assert_eq!(out, vec![b.bucket("a\u{FFFD}"), b.bucket("\u{FFFD}b")]);
    }

    #[test]
    fn bad_lengths_are_errors_not_panics() {
        let b = Bucketer::new("k", 3).unwrap();
        let mut out = Vec::new();
        assert!(b.bucket_packed("abc", &[5], &mut out).is_err());
        assert!(b.bucket_packed("abc", &[1], &mut out).is_err());
        assert!(b.bucket_packed("🎉", &[1], &mut out).is_err());
        assert!(b.bucket_packed("🎉", &[1, 0], &mut out).is_err());
        out.clear();
        b.bucket_packed("🎉", &[1, 0, 0, 1], &mut out).unwrap();
        let fffd = b.bucket("\u{FFFD}");
        assert_eq!(out, vec![fffd, b.bucket(""), b.bucket(""), fffd]);
        assert!(b.bucket_packed("a", &[u32::MAX], &mut out).is_err());
    }
}
