//! The bytes path: a listing given as newline-separated UTF-8 keys (a file, stdin, a response
//! body), fed in chunks of any size, partitioned without ever building a string per key.
//!
//! Lines are what the CLI has always read as keys: the bytes between `\n`s, without one
//! trailing `\r`; lines that are then empty are not keys (skipped). A line ending in `/` is a
//! directory. A line that is not valid UTF-8 is partitioned as the key its decoding with
//! U+FFFD replacement gives (maximal subparts, as `TextDecoder` and Node's
//! `Buffer#toString` decode; a BOM stays part of the key), which is what
//! [`ObjectPartitioner::assign`] gives for that string: the bytes path and the string path
//! always agree. Go compares byte strings and would hash the raw bytes instead; such keys
//! cannot come out of an S3 listing (S3 keys are UTF-8), only out of a damaged file.
//!
//! A key split between two chunks is carried (copied) inside the [`LineSplitter`] until its
//! newline arrives, so the caller never joins chunks. Lines are bounded by [`MAX_LINE_BYTES`].
//!
//! # Examples
//! ```
//! use partkit::objects::{ObjectPartitioner, PartitionConfig};
//! use partkit::objects::lines::LineSplitter;
//! let p = ObjectPartitioner::new(2, "", &PartitionConfig::of_type("object")).unwrap();
//! let mut split = LineSplitter::new();
//! let mut scratch = p.scratch();
//! let mut got = Vec::new();
//! // "file2.txt" arrives in two chunks.
//! split.feed(&p, &mut scratch, b"file1.txt\r\nfile", false, |r, _| got.push(r)).unwrap();
//! split.feed(&p, &mut scratch, b"2.txt\n\ndir/\n", true, |r, _| got.push(r)).unwrap();
//! assert_eq!(got.len(), 3);
//! assert_eq!((got[0].start, got[0].end, got[0].head), (0, 9, 0));
//! assert_eq!((got[1].start, got[1].end, got[1].head), (0, 5, 4)); // "file" came before
//! assert_eq!(split.head(), b"file");
//! assert_eq!(got[1].assignment, p.assign("file2.txt", false));
//! assert_eq!(got[2].assignment, p.assign("dir/", true)); // a line ending in `/` is a directory
//! ```

use super::error::ErrorKind;
use super::fnv::{FNV1A32_OFFSET, FNV1A32_PRIME};
use super::{Assignment, ObjectPartitioner, PartitionError, Rule, Scratch};

/// The longest line accepted, in bytes, `\r` included (1 MiB: S3 keys have at most 1,024
/// bytes; any line within it decodes to a string `partitionObjects` accepts). A longer line
/// is `INPUT_TOO_LARGE`.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// One key line, as [`LineSplitter::feed`] reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineSpan {
    /// Where the line's bytes in this chunk begin (0 for a line begun in an earlier chunk).
    pub start: usize,
    /// Where they end: before the `\r\n` or `\n` (or at the chunk's end for the last line).
    pub end: usize,
    /// How many bytes of the line came in earlier chunks: [`LineSplitter::head`] after the
    /// call (only the first line of a chunk can have any).
    pub head: usize,
    /// Where the key goes.
    pub assignment: Assignment,
}

/// Splits a stream of bytes into key lines, chunk by chunk, carrying a line split between
/// chunks. Reusable: after a `last` chunk it starts a new stream.
#[derive(Clone, Debug, Default)]
pub struct LineSplitter {
    /// The unfinished line: bytes after the last newline of the chunks fed so far.
    carry: Vec<u8>,
    /// The whole of the carried line completed by the last call, for [`LineSplitter::head`].
    line: Vec<u8>,
    head: usize,
}

impl LineSplitter {
    /// A splitter at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Bytes of an unfinished line held from the chunks fed so far.
    pub fn carried(&self) -> usize {
        self.carry.len()
    }

    /// The bytes from earlier chunks of the first line the last [`LineSplitter::feed`]
    /// reported with a non-zero [`LineSpan::head`] (empty when none had one).
    pub fn head(&self) -> &[u8] {
        &self.line[..self.head.min(self.line.len())]
    }

    /// Reports every key line that `chunk` completes, in order, to `f` with the line's bytes
    /// (all of them, also of a line begun in an earlier chunk); `last`: the stream ends with
    /// this chunk (its final line needs no newline). Empty lines are skipped.
    ///
    /// # Errors
    /// `INPUT_TOO_LARGE` for a line over [`MAX_LINE_BYTES`]. The splitter is then as before
    /// the call (the lines already reported by this call are to be dropped): the caller may
    /// give up or start a new stream with [`LineSplitter::reset`].
    pub fn feed(
        &mut self,
        p: &ObjectPartitioner,
        scratch: &mut Scratch,
        chunk: &[u8],
        last: bool,
        mut f: impl FnMut(LineSpan, &[u8]),
    ) -> Result<(), PartitionError> {
        self.head = 0;
        let too_long = |len: usize| {
            Err(PartitionError(ErrorKind::LineTooLong {
                len,
                bound: MAX_LINE_BYTES,
            }))
        };
        let mut newlines = memchr::memchr_iter(b'\n', chunk);
        let first = newlines.next();
        let mut pos = 0;
        if !self.carry.is_empty() {
            let end = match first {
                Some(n) => n,
                None if last => chunk.len(),
                None => {
                    let len = self.carry.len() + chunk.len();
                    if len > MAX_LINE_BYTES {
                        return too_long(len);
                    }
                    self.carry.extend_from_slice(chunk);
                    return Ok(());
                }
            };
            let len = self.carry.len() + end;
            if len > MAX_LINE_BYTES {
                return too_long(len);
            }
            self.line.clear();
            self.line.extend_from_slice(&self.carry);
            self.line.extend_from_slice(&chunk[..end]);
            let in_chunk = if self.line.last() == Some(&b'\r') {
                self.line.pop();
                end.saturating_sub(1)
            } else {
                end
            };
            if !self.line.is_empty() {
                let head = self.line.len() - in_chunk;
                let span = LineSpan {
                    start: 0,
                    end: in_chunk,
                    head,
                    assignment: p.assign_line(&self.line, scratch),
                };
                f(span, &self.line);
                self.head = head;
            }
            pos = first.map_or(chunk.len(), |n| n + 1);
        } else if let Some(n) = first {
            self.emit(p, scratch, chunk, 0, n, &mut f)?;
            pos = n + 1;
        }
        if first.is_some() {
            for n in newlines {
                self.emit(p, scratch, chunk, pos, n, &mut f)?;
                pos = n + 1;
            }
        }
        // The rest has no newline: the stream's last line, or carried to the next chunk.
        let rest = chunk.len() - pos;
        if last {
            if rest > 0 {
                self.emit(p, scratch, chunk, pos, chunk.len(), &mut f)?;
            }
            self.carry.clear();
        } else {
            if rest > MAX_LINE_BYTES {
                return too_long(rest);
            }
            // Any carried line was completed above (or the call returned early).
            self.carry.clear();
            self.carry.extend_from_slice(&chunk[pos..]);
        }
        Ok(())
    }

    /// Forgets any carried line: the next chunk starts a new stream.
    pub fn reset(&mut self) {
        self.carry.clear();
        self.line.clear();
        self.head = 0;
    }

    /// Reports the line `chunk[start..end]` (a newline or the stream's end follows it).
    #[inline]
    fn emit(
        &self,
        p: &ObjectPartitioner,
        scratch: &mut Scratch,
        chunk: &[u8],
        start: usize,
        end: usize,
        f: &mut impl FnMut(LineSpan, &[u8]),
    ) -> Result<(), PartitionError> {
        if end - start > MAX_LINE_BYTES {
            return Err(PartitionError(ErrorKind::LineTooLong {
                len: end - start,
                bound: MAX_LINE_BYTES,
            }));
        }
        let end = if end > start && chunk[end - 1] == b'\r' {
            end - 1
        } else {
            end
        };
        if end > start {
            let line = &chunk[start..end];
            let span = LineSpan {
                start,
                end,
                head: 0,
                assignment: p.assign_line(line, scratch),
            };
            f(span, line);
        }
        Ok(())
    }
}

impl ObjectPartitioner {
    /// Where the key line `line` goes (no `\n`, no trailing `\r`): a directory when it ends
    /// in `/`; a line that is not UTF-8 as its decoding with U+FFFD replacement.
    ///
    /// # Examples
    /// ```
    /// use partkit::objects::{ObjectPartitioner, PartitionConfig};
    /// let p = ObjectPartitioner::new(7, "", &PartitionConfig::of_type("object")).unwrap();
    /// assert_eq!(p.assign_line(b"a\xFFb", &mut p.scratch()), p.assign("a\u{FFFD}b", false));
    /// ```
    pub fn assign_line(&self, line: &[u8], scratch: &mut Scratch) -> Assignment {
        if line.last() == Some(&b'/') {
            return Assignment::Directory;
        }
        match self.strategy {
            Rule::All => return Assignment::All,
            // The FNV-1a of the bytes and whether they are ASCII, in one pass; a UTF-8 key's
            // bytes are what is hashed.
            Rule::Object => {
                let (h, high) = line.iter().fold((FNV1A32_OFFSET, 0u8), |(h, high), &b| {
                    ((h ^ u32::from(b)).wrapping_mul(FNV1A32_PRIME), high | b)
                });
                if high < 0x80 || std::str::from_utf8(line).is_ok() {
                    return self.hashed(h);
                }
            }
            _ => {}
        }
        if line.is_ascii() || std::str::from_utf8(line).is_ok() {
            self.assign_utf8(line, scratch)
        } else {
            let key = String::from_utf8_lossy(line);
            self.assign_utf8(key.as_bytes(), scratch)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objects::{partition_objects, PartitionConfig};
    use proptest::prelude::*;

    /// The CLI's reading of a listing: decoded, split at `\n`, one `\r` dropped, empty skipped.
    fn cli_lines(bytes: &[u8]) -> Vec<String> {
        String::from_utf8_lossy(bytes)
            .split('\n')
            .map(|l| l.strip_suffix('\r').unwrap_or(l).to_owned())
            .filter(|l| !l.is_empty())
            .collect()
    }

    /// Every reported line as (its full bytes, assignment), feeding `bytes` cut at `cuts`.
    fn feed_all(
        p: &ObjectPartitioner,
        bytes: &[u8],
        cuts: &[usize],
    ) -> Result<Vec<(Vec<u8>, Assignment)>, PartitionError> {
        let mut split = LineSplitter::new();
        let mut scratch = p.scratch();
        let mut out = Vec::new();
        let mut bounds: Vec<usize> = cuts.iter().map(|&c| c.min(bytes.len())).collect();
        bounds.sort_unstable();
        bounds.push(bytes.len());
        let mut from = 0;
        for (i, &to) in bounds.iter().enumerate() {
            let chunk = &bytes[from..to];
            let mut spans = Vec::new();
            split.feed(p, &mut scratch, chunk, i + 1 == bounds.len(), |s, l| {
                spans.push((s, l.to_vec()))
            })?;
            for (s, full) in spans {
                let mut line = split.head()[..s.head].to_vec();
                assert!(s.head == 0 || s.start == 0);
                line.extend_from_slice(&chunk[s.start..s.end]);
                assert_eq!(line, full);
                out.push((line, s.assignment));
            }
            from = to;
        }
        Ok(out)
    }

    fn configs() -> Vec<PartitionConfig> {
        vec![
            PartitionConfig::of_type("object"),
            PartitionConfig::of_type("none"),
            PartitionConfig::regex(r"user(\d+)"),
            PartitionConfig::regex(r"[a-zé]+"),
            PartitionConfig::substring(1, 4),
            PartitionConfig::date("2006-01-02"),
        ]
    }

    #[test]
    fn crlf_empty_lines_and_split_keys() {
        let p = ObjectPartitioner::new(5, "logs/*", &PartitionConfig::of_type("object")).unwrap();
        let text = b"logs/a\r\n\r\n\nlogs/b/\nlogs/c\rx\nlast\r";
        for cut in 0..=text.len() {
            let got = feed_all(&p, text, &[cut]).unwrap();
            let lines: Vec<&[u8]> = got.iter().map(|(l, _)| l.as_slice()).collect();
            assert_eq!(
                lines,
                [&b"logs/a"[..], b"logs/b/", b"logs/c\rx", b"last"],
                "cut {cut}"
            );
            assert_eq!(got[1].1, Assignment::Directory);
            assert_eq!(got[0].1, p.assign("logs/a", false));
        }
    }

    #[test]
    fn a_cr_split_from_its_newline_is_dropped() {
        let p = ObjectPartitioner::new(3, "", &PartitionConfig::of_type("object")).unwrap();
        let mut split = LineSplitter::new();
        let mut s = p.scratch();
        let mut got = Vec::new();
        split
            .feed(&p, &mut s, b"ab\r", false, |r, _| got.push(r))
            .unwrap();
        assert!(got.is_empty());
        split
            .feed(&p, &mut s, b"\ncd", true, |r, _| got.push(r))
            .unwrap();
        assert_eq!(got[0].start..got[0].end, 0..0);
        assert_eq!(got[0].head, 2);
        assert_eq!(split.head(), b"ab");
        assert_eq!(got[0].assignment, p.assign("ab", false));
        assert_eq!(got[1].start..got[1].end, 1..3);
        // A line that is only "\r", split from its newline, is empty: skipped.
        let mut got = Vec::new();
        split
            .feed(&p, &mut s, b"\r", false, |r, _| got.push(r))
            .unwrap();
        split
            .feed(&p, &mut s, b"\nx", true, |r, _| got.push(r))
            .unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].start..got[0].end, 1..2);
    }

    #[test]
    fn long_lines_are_refused_and_nothing_changes() {
        let p = ObjectPartitioner::new(3, "", &PartitionConfig::of_type("object")).unwrap();
        let mut split = LineSplitter::new();
        let mut s = p.scratch();
        let big = vec![b'a'; MAX_LINE_BYTES];
        split.feed(&p, &mut s, &big, false, |_, _| {}).unwrap();
        assert_eq!(split.carried(), MAX_LINE_BYTES);
        let err = split
            .feed(&p, &mut s, b"b\n", false, |_, _| {})
            .unwrap_err();
        assert_eq!(err.code(), "INPUT_TOO_LARGE");
        assert_eq!(err.reason(), "line");
        assert_eq!(split.carried(), MAX_LINE_BYTES);
        split.reset();
        let mut whole = big.clone();
        whole.extend_from_slice(b"\nok\n");
        let mut n = 0;
        split.feed(&p, &mut s, &whole, true, |_, _| n += 1).unwrap();
        assert_eq!(n, 2);
        whole.insert(0, b'a');
        assert!(split.feed(&p, &mut s, &whole, true, |_, _| {}).is_err());
        assert_eq!(split.carried(), 0);
    }

    #[test]
    fn invalid_utf8_is_the_replaced_key() {
        for cfg in configs() {
            let p = ObjectPartitioner::new(7, "", &cfg).unwrap();
            let mut s = p.scratch();
            for line in [
                &b"a\xFFb"[..],
                b"\xE2\x82",
                b"2024-01-0\xC3",
                b"user1\xF0\x9F\x98/x",
            ] {
                let decoded = String::from_utf8_lossy(line);
                assert_eq!(p.assign_line(line, &mut s), p.assign(&decoded, false));
            }
        }
    }

    fn listing() -> impl Strategy<Value = Vec<u8>> {
        let piece = prop_oneof![
            Just(b"\n".to_vec()),
            Just(b"\r\n".to_vec()),
            Just(b"\r".to_vec()),
            Just(b"/".to_vec()),
            Just(b"logs/".to_vec()),
            Just(b"user12".to_vec()),
            Just(b"2024-02-29".to_vec()),
            Just("é文🎉".as_bytes().to_vec()),
            Just(b"\xFF\xC3".to_vec()),
            "[a-z0-9]{1,6}".prop_map(|s| s.into_bytes()),
            any::<u8>().prop_map(|b| vec![b]),
        ];
        proptest::collection::vec(piece, 0..40).prop_map(|v| v.concat())
    }

    proptest! {
        #[test]
        fn any_chunking_agrees_with_one_chunk_and_partition_objects(
            bytes in listing(),
            cuts in proptest::collection::vec(0usize..400, 0..8),
            cfg in 0usize..6,
            total in 1i64..6,
        ) {
            let cfg = &configs()[cfg];
            let p = ObjectPartitioner::new(total, "logs/*", cfg).unwrap();
            let whole = feed_all(&p, &bytes, &[]).unwrap();
            let chunked = feed_all(&p, &bytes, &cuts).unwrap();
            prop_assert_eq!(&whole, &chunked);
            let lines = cli_lines(&bytes);
            prop_assert_eq!(whole.len(), lines.len());
            for ((raw, a), line) in whole.iter().zip(&lines) {
                prop_assert_eq!(String::from_utf8_lossy(raw), line.as_str());
                prop_assert_eq!(*a, p.assign(line, line.ends_with('/')));
            }
            let objects = lines.iter().map(|l| (l.as_str(), l.ends_with('/')));
            for index in 0..total {
                let want = partition_objects(objects.clone(), total, index, "logs/*", cfg).unwrap();
                let got: Vec<usize> = whole.iter().enumerate()
                    .filter(|(_, (_, a))| a.selected_by(index)).map(|(i, _)| i).collect();
                prop_assert_eq!(got, want);
            }
        }
    }
}
