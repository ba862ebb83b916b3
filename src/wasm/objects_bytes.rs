//! The bytes path of object partitioning (see `crate::objects::lines`): a listing as
//! newline-separated UTF-8 bytes, fed chunk by chunk. `js/objects.mjs` checks every chunk (a
//! real `Uint8Array`, at most `MAX_CHUNK_BYTES`) and copies it into the splitter's own input
//! buffer in wasm memory (`reserve` gives its address), then calls `select` or `index` with its
//! length: no caller value reaches Rust.

use wasm_bindgen::prelude::*;

use super::error::{headroom, out_of_memory, too_large, BoundaryError};
use super::objects::{code, int, WasmObjectPartitioner};
use crate::objects::lines::{LineSpan, LineSplitter, MAX_LINE_BYTES};
use crate::objects::{ObjectPartitioner, Scratch};

type Result<T> = std::result::Result<T, BoundaryError>;

/// The largest chunk one call takes, in bytes (`js/limits.mjs` `MAX_CHUNK_BYTES`).
const MAX_CHUNK_BYTES: usize = 1 << 26;

/// Chunks up to this size reserve their output for the worst case (a key line is at least two
/// bytes); larger ones count their newlines first and reserve exactly.
const RESERVE_WORST_CASE: usize = 1 << 20;

/// Lines of one chunk, at most: every reported line but the first and the last ends in a
/// newline after at least one byte.
fn max_lines(chunk: &[u8]) -> usize {
    if chunk.len() <= RESERVE_WORST_CASE {
        chunk.len() / 2 + 2
    } else {
        memchr::memchr_iter(b'\n', chunk).count() + 1
    }
}

fn oom() -> BoundaryError {
    out_of_memory("partition")
}

/// A streaming splitter over one compiled partitioner: the carried line, the scratch buffers
/// (regex caches, date cache) and the input buffer live across chunks.
#[wasm_bindgen]
pub struct LineSplitterHandle {
    p: ObjectPartitioner,
    /// The partition `select` keeps (-1: `index` only).
    index: i64,
    split: LineSplitter,
    scratch: Scratch,
    input: Vec<u8>,
}

#[wasm_bindgen(js_class = ObjectPartitioner)]
impl WasmObjectPartitioner {
    /// A splitter for this partitioner; `index`: the partition `select` keeps, or -1.
    #[wasm_bindgen(js_name = lineSplitter)]
    pub fn line_splitter(&self, index: f64) -> Result<LineSplitterHandle> {
        let index = int(index, "partitionIndex")?;
        if index != -1 {
            self.0.check_index(index)?;
        }
        Ok(LineSplitterHandle {
            scratch: self.0.scratch(),
            p: self.0.clone(),
            index,
            split: LineSplitter::new(),
            input: Vec::new(),
        })
    }
}

#[wasm_bindgen]
impl LineSplitterHandle {
    /// Sizes the input buffer for a chunk of `len` bytes and returns its address in wasm
    /// memory (memory may grow: views of it must be re-made). `OUT_OF_MEMORY` when it cannot.
    pub fn reserve(&mut self, len: usize) -> Result<usize> {
        if len > MAX_CHUNK_BYTES {
            return Err(too_large(
                "partition",
                "chunk",
                len,
                MAX_CHUNK_BYTES,
                "bytes",
            ));
        }
        self.input.clear();
        self.input.try_reserve_exact(len).map_err(|_| oom())?;
        self.input.resize(len, 0);
        Ok(self.input.as_ptr() as usize)
    }

    /// Gives the input buffer's memory back after an unusually large chunk.
    pub fn shrink(&mut self) {
        self.input = Vec::new();
    }

    /// `[start, end)` byte ranges, into the chunk, of the key lines the partition keeps, from
    /// the `len` bytes written at `reserve`'s address; `last`: the stream ends here.
    pub fn select(&mut self, len: usize, last: bool) -> Result<Vec<u32>> {
        let index = self.index;
        let mut out = Vec::new();
        self.feed(len, last, 2, &mut out, |s, _, out| {
            if s.assignment.selected_by(index) {
                out.push(s.start as u32);
                out.push(s.end as u32);
            }
        })?;
        Ok(out)
    }

    /// The key lines the partition keeps, each followed by `\n` (`\r\n` becomes `\n`), a line
    /// begun in earlier chunks whole: what `partkit objects` writes.
    #[wasm_bindgen(js_name = selectBytes)]
    pub fn select_bytes(&mut self, len: usize, last: bool) -> Result<Vec<u8>> {
        let index = self.index;
        let chunk_len = len.min(self.input.len());
        let carried = self.split.carried();
        let mut out: Vec<u8> = Vec::new();
        out.try_reserve_exact(chunk_len + carried + 1)
            .map_err(|_| oom())?;
        let mut lines = Vec::<()>::new();
        self.feed(len, last, 0, &mut lines, |s, line, _| {
            if s.assignment.selected_by(index) {
                out.extend_from_slice(line);
                out.push(b'\n');
            }
        })?;
        Ok(out)
    }

    /// The partition of every key line (-1 directory, -2 every partition), in order.
    pub fn index(&mut self, len: usize, last: bool) -> Result<Vec<i32>> {
        let mut out = Vec::new();
        self.feed(len, last, 1, &mut out, |s, _, out| {
            out.push(code(s.assignment))
        })?;
        Ok(out)
    }

    /// How many bytes of the first line the last call reported came in earlier chunks (0: it
    /// began in that chunk).
    #[wasm_bindgen(js_name = headLen)]
    pub fn head_len(&self) -> usize {
        self.split.head().len()
    }

    /// Those bytes.
    pub fn head(&self) -> Vec<u8> {
        self.split.head().to_vec()
    }

    /// Bytes of an unfinished line carried to the next chunk.
    pub fn carried(&self) -> usize {
        self.split.carried()
    }

    /// Forgets any carried line: the next chunk starts a new stream.
    pub fn reset(&mut self) {
        self.split.reset();
    }
}

impl LineSplitterHandle {
    fn feed<T>(
        &mut self,
        len: usize,
        last: bool,
        per_line: usize,
        out: &mut Vec<T>,
        mut f: impl FnMut(LineSpan, &[u8], &mut Vec<T>),
    ) -> Result<()> {
        let chunk = self
            .input
            .get(..len)
            .ok_or_else(|| too_large("partition", "chunk", len, self.input.len(), "bytes"))?;
        out.try_reserve_exact(max_lines(chunk).saturating_mul(per_line))
            .map_err(|_| oom())?;
        // The carried line and a key decoded with U+FFFD (3 bytes per invalid byte), the
        // regex's lazy DFA cache (at most `dfa_size_limit`), reserved up front.
        headroom("partition", 4 * MAX_LINE_BYTES + (24 << 20))?;
        // `max_lines` bounds the lines: `out` never grows past its reservation.
        let r = self
            .split
            .feed(&self.p, &mut self.scratch, chunk, last, |s, l| f(s, l, out));
        r.map_err(|e| {
            out.clear();
            e.into()
        })
    }
}
