//! The LZMA decoder of partkit's JavaScript: scripts/build.mjs compresses each domain's
//! WebAssembly with LZMA (20 to 25% smaller than the best DEFLATE of the same bytes), and
//! `js/wasm/load.mjs` unpacks it with this module, a few kilobytes of WebAssembly carried inline,
//! before compiling it. The data is one properties byte (lc, lp, pb as the .lzma format writes
//! them) followed by the range coder's stream, which ends at the output's size (the caller knows
//! it) or with an end marker there (the build's encoder writes one). It decodes only the build's
//! own bytes, but malformed data is an error (`decode` returns 0), never a read or write out of
//! bounds, and a stream with bytes left over or missing is malformed.
#![cfg_attr(target_arch = "wasm32", no_std)]

/// Offsets of the probability models in one table (LZMA's layout, as in the LZMA SDK's
/// specification decoder): the per-state bits, the two length coders, the distance coders, then
/// the literal coders.
const IS_MATCH: usize = 0; // 12 states x 16 position states
const IS_REP: usize = 192;
const IS_REP_G0: usize = 204;
const IS_REP_G1: usize = 216;
const IS_REP_G2: usize = 228;
const IS_REP0_LONG: usize = 240; // 12 x 16
/// A length coder: choice, choice2, low (16 x 8), mid (16 x 8), high (256).
const LEN_SIZE: usize = 2 + 128 + 128 + 256;
const MATCH_LEN: usize = 432;
const REP_LEN: usize = MATCH_LEN + LEN_SIZE;
const POS_SLOT: usize = MATCH_LEN + 2 * LEN_SIZE; // 4 x 64
const SPEC_POS: usize = POS_SLOT + 256; // 114: distance slots 4-13
const ALIGN: usize = SPEC_POS + 114; // 16
const LITERAL: usize = ALIGN + 16; // 0x300 << (lc + lp)
/// lc + lp of at most 4, as LZMA2 bounds them (the build's encoder writes lc 3, lp 0): 14,134
/// models, in a table of a power of two so that a masked index needs no bounds check.
pub const PROBS: usize = 1 << 14;
const _: () = assert!(LITERAL + (0x300 << 4) <= PROBS);

struct Decoder<'a> {
    input: &'a [u8],
    pos: usize,
    range: u32,
    code: u32,
    probs: &'a mut [u16; PROBS],
}

impl Decoder<'_> {
    #[inline(always)]
    fn normalize(&mut self) {
        if self.range < 1 << 24 {
            self.range <<= 8;
            // past the end, zero bytes; `decode` refuses a stream that needed them
            self.code = (self.code << 8) | u32::from(self.input.get(self.pos).copied().unwrap_or(0));
            self.pos += 1;
        }
    }

    /// Out of line: the module is half the size it was with every call inlined (2,259 against
    /// 4,285 bytes; every bundle and page carries it) and unpacks 10 to 25% slower.
    #[inline(never)]
    fn bit(&mut self, i: usize) -> usize {
        let i = i & (PROBS - 1);
        let p = self.probs[i];
        let bound = (self.range >> 11) * u32::from(p);
        let b = if self.code < bound {
            self.range = bound;
            self.probs[i] = p + ((2048 - p) >> 5);
            0
        } else {
            self.range -= bound;
            self.code -= bound;
            self.probs[i] = p - (p >> 5);
            1
        };
        self.normalize();
        b
    }

    /// `bits` bits of the bit tree at `base`, most significant first.
    #[inline(never)]
    fn tree(&mut self, base: usize, bits: u32) -> usize {
        let mut m = 1;
        for _ in 0..bits {
            m = (m << 1) | self.bit(base + m);
        }
        m - (1 << bits)
    }

    /// `bits` bits of the bit tree at `base`, least significant first.
    #[inline(never)]
    fn reverse(&mut self, base: usize, bits: u32) -> u32 {
        let (mut m, mut s) = (1, 0);
        for i in 0..bits {
            let b = self.bit(base + m);
            m = (m << 1) | b;
            s |= (b as u32) << i;
        }
        s
    }

    #[inline(never)]
    fn length(&mut self, base: usize, pos_state: usize) -> usize {
        if self.bit(base) == 0 {
            self.tree(base + 2 + pos_state * 8, 3)
        } else if self.bit(base + 1) == 0 {
            8 + self.tree(base + 130 + pos_state * 8, 3)
        } else {
            16 + self.tree(base + 258, 8)
        }
    }

    /// A match's distance minus one (`u32::MAX`: the end marker).
    #[inline(never)]
    fn distance(&mut self, len: usize) -> u32 {
        let slot = self.tree(POS_SLOT + len.min(3) * 64, 6) as u32;
        if slot < 4 {
            return slot;
        }
        let direct = (slot >> 1) - 1;
        let mut dist = (2 | (slot & 1)) << direct;
        if slot < 14 {
            return dist + self.reverse(SPEC_POS + dist as usize - slot as usize, direct);
        }
        for i in (4..direct).rev() {
            self.range >>= 1;
            if self.code >= self.range {
                self.code -= self.range;
                dist |= 1 << i;
            }
            self.normalize();
        }
        dist + self.reverse(ALIGN, 4)
    }
}

/// The byte at `i` (0 past the end: the decoder checks every distance before it copies, so this
/// only keeps the panic path, with its formatting code, out of the module).
#[inline(always)]
fn at(out: &[u8], i: usize) -> u8 {
    out.get(i).copied().unwrap_or(0)
}

#[inline(always)]
fn put(out: &mut [u8], i: usize, b: u8) {
    if let Some(slot) = out.get_mut(i) {
        *slot = b;
    }
}

/// Decodes `input` into `out`, with `probs` as the models' table (its contents are overwritten);
/// false if the data is malformed.
pub fn decode_into(input: &[u8], out: &mut [u8], probs: &mut [u16; PROBS]) -> bool {
    let Some(&props) = input.first() else { return false };
    let (lc, lp, pb) = (props % 9, props / 9 % 5, props / 45);
    if pb > 4 || lc + lp > 4 || input.len() < 6 || input.get(1) != Some(&0) {
        return false;
    }
    let (lc, lp_mask, pb_mask) = (u32::from(lc), (1usize << lp) - 1, (1usize << pb) - 1);
    let code = input.get(2..6).map_or(0, |b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
    probs.fill(1024);
    let d = &mut Decoder { input, pos: 6, range: u32::MAX, code, probs };
    let size = out.len();
    let (mut o, mut state) = (0, 0usize);
    let mut reps = [0u32; 4];
    loop {
        // a stream may end when the output is complete, with its last byte read and nothing
        // left of the code (as xz checks), or go on to its end marker
        if o >= size && (o > size || d.code == 0 && d.pos == input.len()) {
            return o == size;
        }
        let pos_state = o & pb_mask;
        if d.bit(IS_MATCH + (state << 4) + pos_state) == 0 {
            let prev = if o > 0 { at(out, o - 1) } else { 0 };
            let base = LITERAL + 0x300 * (((o & lp_mask) << lc) + (usize::from(prev) >> (8 - lc)));
            let mut s = 1usize;
            if state >= 7 {
                // after a match, the byte at rep0 predicts the literal's bits until one differs
                let mut matched = usize::from(at(out, o.wrapping_sub(reps[0] as usize + 1)));
                while s < 0x100 {
                    let m = (matched >> 7) & 1;
                    matched <<= 1;
                    let b = d.bit(base + ((1 + m) << 8) + s);
                    s = (s << 1) | b;
                    if m != b {
                        break;
                    }
                }
            }
            while s < 0x100 {
                s = (s << 1) | d.bit(base + s);
            }
            put(out, o, s as u8);
            o += 1;
            state = if state < 4 { 0 } else if state < 10 { state - 3 } else { state - 6 };
            continue;
        }
        let len;
        if d.bit(IS_REP + state) == 1 {
            if o == 0 {
                return false;
            }
            if d.bit(IS_REP_G0 + state) == 0 {
                if d.bit(IS_REP0_LONG + (state << 4) + pos_state) == 0 {
                    // one byte at rep0
                    state = if state < 7 { 9 } else { 11 };
                    put(out, o, at(out, o.wrapping_sub(reps[0] as usize + 1)));
                    o += 1;
                    continue;
                }
            } else {
                let i = if d.bit(IS_REP_G1 + state) == 0 {
                    1
                } else if d.bit(IS_REP_G2 + state) == 0 {
                    2
                } else {
                    3
                };
                reps[..=i].rotate_right(1);
            }
            len = d.length(REP_LEN, pos_state);
            state = if state < 7 { 8 } else { 11 };
        } else {
            reps.rotate_right(1);
            len = d.length(MATCH_LEN, pos_state);
            state = if state < 7 { 7 } else { 10 };
            reps[0] = d.distance(len);
            if reps[0] == u32::MAX {
                // the end marker: the output must be complete
                return o == size && d.code == 0 && d.pos == input.len();
            }
        }
        let (len, dist) = (len + 2, reps[0] as usize + 1);
        if dist > o || len > size - o {
            return false;
        }
        for i in o..o + len {
            put(out, i, at(out, i - dist));
        }
        o += len;
    }
}

// The JavaScript side (js/wasm/load.mjs): `input()` is where to write the packed bytes, in this
// module's memory (grown by the caller to hold them and the output after them); `decode(n, size)`
// unpacks the `n` bytes there into the `size` bytes right after them and returns 1, or 0 if the
// data is malformed. Memory from `__heap_base` on is the models' table (`PROBS` 16-bit numbers),
// then the input, then the output: the module has no allocator and nothing else lives there.
#[cfg(target_arch = "wasm32")]
mod js {
    use super::{decode_into, PROBS};

    extern "C" {
        static mut __heap_base: u8;
    }

    fn table() -> *mut [u16; PROBS] {
        core::ptr::addr_of_mut!(__heap_base) as *mut [u16; PROBS]
    }

    #[no_mangle]
    extern "C" fn input() -> *mut u8 {
        unsafe { table().add(1) as *mut u8 }
    }

    #[no_mangle]
    extern "C" fn decode(n: usize, size: usize) -> u32 {
        // SAFETY: the caller grew the memory past `input() + n + size`; the table, the input and
        // the output are apart, and nothing else refers to them.
        let (probs, input, out) = unsafe {
            let input = input();
            (
                &mut *table(),
                core::slice::from_raw_parts(input, n),
                core::slice::from_raw_parts_mut(input.add(n), size),
            )
        };
        u32::from(decode_into(input, out, probs))
    }
}

#[cfg(target_arch = "wasm32")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    core::arch::wasm32::unreachable()
}
