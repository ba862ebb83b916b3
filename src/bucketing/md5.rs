//! The batch path's HMAC-MD5 kernel: several short entity ids hashed in lockstep lanes (four
//! wasm SIMD128 lanes, or two interleaved scalar lanes natively), for ids of at most 55 bytes
//! (one MD5 block). Everything else — single ids, longer ids, the long-key digest — goes
//! through the `md-5` and `hmac` crates ([`super::hash::Bucketer`]).
//!
//! Why a hand-written kernel remains: no crate hashes several independent MD5 messages at
//! once, and MD5 is one serial dependency chain, so a single hash leaves the CPU idle between
//! steps. Measured with `npm run bench -- bucketing` (1M ids of 20–30 bytes, native, same
//! run, on a shared 2-core machine): this kernel's batch path takes 294–309 ns per id against
//! 562–575 ns for one `hmac`/`md-5` call per id (1.9×), so `bucketMany` keeps it, while a
//! single id ties the previous hand-written scalar code (500–575 ns vs 512–533 ns) and uses the
//! crates. Checked against the crates in tests and against Node's `crypto.createHmac('md5', …)`
//! in the jest suite.

const IV: [u32; 4] = [0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476];

/// The 64 steps of RFC 1321, shared by the scalar and SIMD kernels: `$step!(round_fn, a, b, c,
/// d, message_word, shift, constant)`.
macro_rules! md5_steps {
    ($step:ident, $f:ident, $g:ident, $h:ident, $i:ident, $a:ident, $b:ident, $c:ident, $d:ident) => {
        $step!($f, $a, $b, $c, $d, 0, 7, 0xd76a_a478);
        $step!($f, $d, $a, $b, $c, 1, 12, 0xe8c7_b756);
        $step!($f, $c, $d, $a, $b, 2, 17, 0x2420_70db);
        $step!($f, $b, $c, $d, $a, 3, 22, 0xc1bd_ceee);
        $step!($f, $a, $b, $c, $d, 4, 7, 0xf57c_0faf);
        $step!($f, $d, $a, $b, $c, 5, 12, 0x4787_c62a);
        $step!($f, $c, $d, $a, $b, 6, 17, 0xa830_4613);
        $step!($f, $b, $c, $d, $a, 7, 22, 0xfd46_9501);
        $step!($f, $a, $b, $c, $d, 8, 7, 0x6980_98d8);
        $step!($f, $d, $a, $b, $c, 9, 12, 0x8b44_f7af);
        $step!($f, $c, $d, $a, $b, 10, 17, 0xffff_5bb1);
        $step!($f, $b, $c, $d, $a, 11, 22, 0x895c_d7be);
        $step!($f, $a, $b, $c, $d, 12, 7, 0x6b90_1122);
        $step!($f, $d, $a, $b, $c, 13, 12, 0xfd98_7193);
        $step!($f, $c, $d, $a, $b, 14, 17, 0xa679_438e);
        $step!($f, $b, $c, $d, $a, 15, 22, 0x49b4_0821);
        $step!($g, $a, $b, $c, $d, 1, 5, 0xf61e_2562);
        $step!($g, $d, $a, $b, $c, 6, 9, 0xc040_b340);
        $step!($g, $c, $d, $a, $b, 11, 14, 0x265e_5a51);
        $step!($g, $b, $c, $d, $a, 0, 20, 0xe9b6_c7aa);
        $step!($g, $a, $b, $c, $d, 5, 5, 0xd62f_105d);
        $step!($g, $d, $a, $b, $c, 10, 9, 0x0244_1453);
        $step!($g, $c, $d, $a, $b, 15, 14, 0xd8a1_e681);
        $step!($g, $b, $c, $d, $a, 4, 20, 0xe7d3_fbc8);
        $step!($g, $a, $b, $c, $d, 9, 5, 0x21e1_cde6);
        $step!($g, $d, $a, $b, $c, 14, 9, 0xc337_07d6);
        $step!($g, $c, $d, $a, $b, 3, 14, 0xf4d5_0d87);
        $step!($g, $b, $c, $d, $a, 8, 20, 0x455a_14ed);
        $step!($g, $a, $b, $c, $d, 13, 5, 0xa9e3_e905);
        $step!($g, $d, $a, $b, $c, 2, 9, 0xfcef_a3f8);
        $step!($g, $c, $d, $a, $b, 7, 14, 0x676f_02d9);
        $step!($g, $b, $c, $d, $a, 12, 20, 0x8d2a_4c8a);
        $step!($h, $a, $b, $c, $d, 5, 4, 0xfffa_3942);
        $step!($h, $d, $a, $b, $c, 8, 11, 0x8771_f681);
        $step!($h, $c, $d, $a, $b, 11, 16, 0x6d9d_6122);
        $step!($h, $b, $c, $d, $a, 14, 23, 0xfde5_380c);
        $step!($h, $a, $b, $c, $d, 1, 4, 0xa4be_ea44);
        $step!($h, $d, $a, $b, $c, 4, 11, 0x4bde_cfa9);
        $step!($h, $c, $d, $a, $b, 7, 16, 0xf6bb_4b60);
        $step!($h, $b, $c, $d, $a, 10, 23, 0xbebf_bc70);
        $step!($h, $a, $b, $c, $d, 13, 4, 0x289b_7ec6);
        $step!($h, $d, $a, $b, $c, 0, 11, 0xeaa1_27fa);
        $step!($h, $c, $d, $a, $b, 3, 16, 0xd4ef_3085);
        $step!($h, $b, $c, $d, $a, 6, 23, 0x0488_1d05);
        $step!($h, $a, $b, $c, $d, 9, 4, 0xd9d4_d039);
        $step!($h, $d, $a, $b, $c, 12, 11, 0xe6db_99e5);
        $step!($h, $c, $d, $a, $b, 15, 16, 0x1fa2_7cf8);
        $step!($h, $b, $c, $d, $a, 2, 23, 0xc4ac_5665);
        $step!($i, $a, $b, $c, $d, 0, 6, 0xf429_2244);
        $step!($i, $d, $a, $b, $c, 7, 10, 0x432a_ff97);
        $step!($i, $c, $d, $a, $b, 14, 15, 0xab94_23a7);
        $step!($i, $b, $c, $d, $a, 5, 21, 0xfc93_a039);
        $step!($i, $a, $b, $c, $d, 12, 6, 0x655b_59c3);
        $step!($i, $d, $a, $b, $c, 3, 10, 0x8f0c_cc92);
        $step!($i, $c, $d, $a, $b, 10, 15, 0xffef_f47d);
        $step!($i, $b, $c, $d, $a, 1, 21, 0x8584_5dd1);
        $step!($i, $a, $b, $c, $d, 8, 6, 0x6fa8_7e4f);
        $step!($i, $d, $a, $b, $c, 15, 10, 0xfe2c_e6e0);
        $step!($i, $c, $d, $a, $b, 6, 15, 0xa301_4314);
        $step!($i, $b, $c, $d, $a, 13, 21, 0x4e08_11a1);
        $step!($i, $a, $b, $c, $d, 4, 6, 0xf753_7e82);
        $step!($i, $d, $a, $b, $c, 11, 10, 0xbd3a_f235);
        $step!($i, $c, $d, $a, $b, 2, 15, 0x2ad7_d2bb);
        $step!($i, $b, $c, $d, $a, 9, 21, 0xeb86_d391);
    };
}

/// One MD5 compression of a 64-byte block (RFC 1321).
#[inline(always)]
fn compress(state: &mut [u32; 4], block: &[u8; 64]) {
    let mut states = [*state];
    compress_lanes(&mut states, [block]);
    *state = states[0];
}

/// `L` independent MD5 compressions advanced in lockstep. MD5 is one long dependency chain, so
/// a single hash leaves the CPU idle between steps; two lanes give it two chains to overlap.
#[inline(always)]
fn compress_lanes<const L: usize>(states: &mut [[u32; 4]; L], blocks: [&[u8; 64]; L]) {
    let mut x = [[0u32; 16]; L];
    for l in 0..L {
        for (i, word) in x[l].iter_mut().enumerate() {
            let b = blocks[l];
            *word = u32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]]);
        }
    }
    let mut a = [0u32; L];
    let mut b = [0u32; L];
    let mut c = [0u32; L];
    let mut d = [0u32; L];
    for l in 0..L {
        [a[l], b[l], c[l], d[l]] = states[l];
    }
    macro_rules! step {
        ($f:expr, $a:ident, $b:ident, $c:ident, $d:ident, $k:expr, $s:expr, $t:expr) => {
            for l in 0..L {
                $a[l] = $b[l].wrapping_add(
                    $a[l]
                        .wrapping_add($f($b[l], $c[l], $d[l]))
                        .wrapping_add(x[l][$k])
                        .wrapping_add($t)
                        .rotate_left($s),
                );
            }
        };
    }
    let f = |b: u32, c: u32, d: u32| (b & c) | (!b & d);
    let g = |b: u32, c: u32, d: u32| (b & d) | (c & !d);
    let h = |b: u32, c: u32, d: u32| b ^ c ^ d;
    let i = |b: u32, c: u32, d: u32| c ^ (b | !d);
    md5_steps!(step, f, g, h, i, a, b, c, d);
    for l in 0..L {
        let st = &mut states[l];
        st[0] = st[0].wrapping_add(a[l]);
        st[1] = st[1].wrapping_add(b[l]);
        st[2] = st[2].wrapping_add(c[l]);
        st[3] = st[3].wrapping_add(d[l]);
    }
}

/// Four MD5 compressions in the four `i32x4` lanes of wasm SIMD128.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline(always)]
fn compress_x4(states: &mut [[u32; 4]; 4], blocks: [&[u8; 64]; 4]) {
    use core::arch::wasm32::*;
    let word = |b: &[u8; 64], k: usize| {
        u32::from_le_bytes([b[4 * k], b[4 * k + 1], b[4 * k + 2], b[4 * k + 3]])
    };
    let mut x = [u32x4_splat(0); 16];
    for (k, v) in x.iter_mut().enumerate() {
        *v = u32x4(
            word(blocks[0], k),
            word(blocks[1], k),
            word(blocks[2], k),
            word(blocks[3], k),
        );
    }
    let lane = |j: usize| u32x4(states[0][j], states[1][j], states[2][j], states[3][j]);
    let (a0, b0, c0, d0) = (lane(0), lane(1), lane(2), lane(3));
    let (mut a, mut b, mut c, mut d) = (a0, b0, c0, d0);
    let f = |b: v128, c: v128, d: v128| v128_bitselect(c, d, b);
    let g = |b: v128, c: v128, d: v128| v128_bitselect(b, c, d);
    let h = |b: v128, c: v128, d: v128| v128_xor(v128_xor(b, c), d);
    let i = |b: v128, c: v128, d: v128| v128_xor(c, v128_or(b, v128_not(d)));
    macro_rules! step {
        ($f:expr, $a:ident, $b:ident, $c:ident, $d:ident, $k:expr, $s:expr, $t:expr) => {
            let sum = i32x4_add(
                i32x4_add($a, $f($b, $c, $d)),
                i32x4_add(x[$k], u32x4_splat($t)),
            );
            $a = i32x4_add($b, v128_or(i32x4_shl(sum, $s), u32x4_shr(sum, 32 - $s)));
        };
    }
    md5_steps!(step, f, g, h, i, a, b, c, d);
    let (a, b, c, d) = (
        i32x4_add(a, a0),
        i32x4_add(b, b0),
        i32x4_add(c, c0),
        i32x4_add(d, d0),
    );
    macro_rules! store {
        ($($l:literal),*) => {$(
            states[$l] = [
                u32x4_extract_lane::<$l>(a),
                u32x4_extract_lane::<$l>(b),
                u32x4_extract_lane::<$l>(c),
                u32x4_extract_lane::<$l>(d),
            ];
        )*};
    }
    store!(0, 1, 2, 3);
}

/// `L` compressions: SIMD for four lanes where the target has it, interleaved scalar otherwise.
#[inline(always)]
fn compress_many<const L: usize>(states: &mut [[u32; 4]; L], blocks: [&[u8; 64]; L]) {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    if let (Ok(s4), Ok(b4)) = (
        <&mut [[u32; 4]; 4]>::try_from(&mut states[..]),
        <[&[u8; 64]; 4]>::try_from(&blocks[..]),
    ) {
        compress_x4(s4, b4);
        return;
    }
    compress_lanes(states, blocks);
}

/// How many entities the batch path hashes at once: four SIMD lanes in wasm with SIMD128, two
/// interleaved scalar lanes elsewhere.
pub(crate) const LANES: usize = if cfg!(all(target_arch = "wasm32", target_feature = "simd128")) {
    4
} else {
    2
};

/// The outer hash's only block: the 16-byte inner digest, padded.
#[inline(always)]
fn outer_block(inner: &[u32; 4]) -> [u8; 64] {
    let mut block = [0u8; 64];
    for (i, word) in inner.iter().enumerate() {
        block[4 * i..4 * i + 4].copy_from_slice(&word.to_le_bytes());
    }
    block[16] = 0x80;
    block[56..].copy_from_slice(&((64u64 + 16) * 8).to_le_bytes());
    block
}

/// The longest message the lanes take: one block less the padding byte and the length.
pub(crate) const MAX_LANE_BYTES: usize = 55;

/// HMAC-MD5 with the key schedule precomputed.
#[derive(Clone, Debug)]
pub(crate) struct HmacMd5 {
    inner: [u32; 4],
    outer: [u32; 4],
}

impl HmacMd5 {
    pub(crate) fn new(key: &[u8]) -> Self {
        use md5::Digest;
        let mut k = [0u8; 64];
        if key.len() > 64 {
            k[..16].copy_from_slice(&md5::Md5::digest(key));
        } else {
            k[..key.len()].copy_from_slice(key);
        }
        let pad = |byte: u8| {
            let mut block = [0u8; 64];
            for (b, kb) in block.iter_mut().zip(k.iter()) {
                *b = kb ^ byte;
            }
            let mut state = IV;
            compress(&mut state, &block);
            state
        };
        Self {
            inner: pad(0x36),
            outer: pad(0x5c),
        }
    }

    /// The first four digest bytes, read big-endian (the spec's "first 8 hex chars"), of `L`
    /// messages hashed in parallel lanes; `None` unless all fit one block (at most
    /// [`MAX_LANE_BYTES`]: the common case for entity ids).
    #[inline]
    pub(crate) fn first_u32_lanes<const L: usize>(&self, msgs: [&[u8]; L]) -> Option<[u32; L]> {
        if msgs.iter().any(|m| m.len() > MAX_LANE_BYTES) {
            return None;
        }
        let inner_blocks = msgs.map(|m| {
            let mut block = [0u8; 64];
            block[..m.len()].copy_from_slice(m);
            block[m.len()] = 0x80;
            block[56..].copy_from_slice(&((64 + m.len() as u64) * 8).to_le_bytes());
            block
        });
        let mut inner = [self.inner; L];
        compress_many(&mut inner, std::array::from_fn(|l| &inner_blocks[l]));
        let outer_blocks = inner.map(|st| outer_block(&st));
        let mut outer = [self.outer; L];
        compress_many(&mut outer, std::array::from_fn(|l| &outer_blocks[l]));
        Some(outer.map(|st| st[0].swap_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hmac::{Hmac, Mac};

    fn reference(key: &[u8], data: &[u8]) -> u32 {
        let mut mac = <Hmac<md5::Md5> as Mac>::new_from_slice(key).expect("any key length");
        mac.update(data);
        let d = mac.finalize().into_bytes();
        u32::from_be_bytes([d[0], d[1], d[2], d[3]])
    }

    #[test]
    fn lanes_match_the_hmac_crate_at_every_length() {
        let bytes: Vec<u8> = (0..300u32).map(|i| (i * 7 + 3) as u8).collect();
        for key_len in [0, 1, 16, 55, 63, 64, 65, 100, 200] {
            let key = &bytes[..key_len];
            let mac = HmacMd5::new(key);
            for data_len in 0..=MAX_LANE_BYTES {
                let msgs: [&[u8]; 4] = std::array::from_fn(|l| &bytes[50 + l..50 + l + data_len]);
                let want = msgs.map(|m| reference(key, m));
                assert_eq!(
                    mac.first_u32_lanes(msgs),
                    Some(want),
                    "key {key_len} data {data_len}"
                );
                assert_eq!(
                    mac.first_u32_lanes([msgs[0], msgs[1]]),
                    Some([want[0], want[1]])
                );
            }
            let long = &bytes[..MAX_LANE_BYTES + 1];
            assert_eq!(mac.first_u32_lanes([long, &[]]), None);
        }
    }

    #[test]
    fn rfc_2104_vector() {
        // RFC 2104 test 2: key "Jefe", data "what do ya want for nothing?" gives 750c783e….
        let got =
            HmacMd5::new(b"Jefe").first_u32_lanes([b"what do ya want for nothing?".as_slice()]);
        assert_eq!(got, Some([0x750c_783e]));
    }

    proptest::proptest! {
        #[test]
        fn lanes_match_the_hmac_crate(key in proptest::collection::vec(proptest::num::u8::ANY, 0..150),
                                      a in proptest::collection::vec(proptest::num::u8::ANY, 0..=55),
                                      b in proptest::collection::vec(proptest::num::u8::ANY, 0..=55)) {
            let got = HmacMd5::new(&key).first_u32_lanes([a.as_slice(), b.as_slice()]);
            proptest::prop_assert_eq!(got, Some([reference(&key, &a), reference(&key, &b)]));
        }
    }
}
