//! SHA-1 (FIPS 180-4) for version-5 UUIDs, written with rolled rounds: the `uuid` crate's `v5`
//! feature brings `sha1_smol`, whose unrolled rounds were 4 KB of the imports wasm. A derived
//! import hashes one short name per bucket (at most 50 per dataset per call), so the rounds'
//! speed does not matter. Checked against the `uuid` crate's `new_v5` (a dev-dependency).

/// SHA-1 of `a ‖ b`.
pub(super) fn sha1(a: &[u8], b: &[u8]) -> [u8; 20] {
    let mut h: [u32; 5] = [
        0x6745_2301,
        0xEFCD_AB89,
        0x98BA_DCFE,
        0x1032_5476,
        0xC3D2_E1F0,
    ];
    let len = a.len() as u64 + b.len() as u64;
    let mut block = [0u8; 64];
    let mut fill = 0;
    // The message, then 0x80, zeros to 56 mod 64, and the length in bits (big-endian).
    let bits = len.wrapping_mul(8).to_be_bytes();
    let padding = 1 + (119 - (len % 64) as usize) % 64;
    let tail = [0x80u8]
        .into_iter()
        .chain(std::iter::repeat_n(0, padding - 1));
    for byte in a.iter().chain(b).copied().chain(tail).chain(bits) {
        block[fill] = byte;
        fill += 1;
        if fill == 64 {
            compress(&mut h, &block);
            fill = 0;
        }
    }
    let mut out = [0u8; 20];
    for (chunk, word) in out.chunks_exact_mut(4).zip(h) {
        chunk.copy_from_slice(&word.to_be_bytes());
    }
    out
}

fn compress(h: &mut [u32; 5], block: &[u8; 64]) {
    let mut w = [0u32; 80];
    for (i, chunk) in block.chunks_exact(4).enumerate() {
        w[i] = u32::from_be_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
    }
    for i in 16..80 {
        w[i] = (w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]).rotate_left(1);
    }
    let [mut a, mut b, mut c, mut d, mut e] = *h;
    for (i, &wi) in w.iter().enumerate() {
        let (f, k) = match i / 20 {
            0 => ((b & c) | (!b & d), 0x5A82_7999),
            1 => (b ^ c ^ d, 0x6ED9_EBA1),
            2 => ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC),
            _ => (b ^ c ^ d, 0xCA62_C1D6),
        };
        let t = a
            .rotate_left(5)
            .wrapping_add(f)
            .wrapping_add(e)
            .wrapping_add(k)
            .wrapping_add(wi);
        e = d;
        d = c;
        c = b.rotate_left(30);
        b = a;
        a = t;
    }
    for (x, y) in h.iter_mut().zip([a, b, c, d, e]) {
        *x = x.wrapping_add(y);
    }
}

#[cfg(test)]
mod tests {
    use super::sha1;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn fips_vectors() {
        assert_eq!(
            hex(&sha1(b"", b"")),
            "da39a3ee5e6b4b0d3255bfef95601890afd80709"
        );
        assert_eq!(
            hex(&sha1(b"ab", b"c")),
            "a9993e364706816aba3e25717850c26c9cd0d89d"
        );
        assert_eq!(
            hex(&sha1(
                b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
                b""
            )),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1"
        );
        let million = vec![b'a'; 1_000_000];
        assert_eq!(
            hex(&sha1(&million[..3], &million[3..])),
            "34aa973cd4c4daa4f61eeb2bdbad27316534016f"
        );
    }

    /// Against the `uuid` crate's v5 (sha1_smol), every name length from 0 to 300 bytes (block
    /// boundaries at 39/40 and 103/104 with the 16-byte namespace) and random bytes.
    #[test]
    fn v5_matches_the_uuid_crate() {
        let mut x = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for len in 0..300 {
            let ns = uuid::Uuid::from_u64_pair(next(), next());
            let name: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            let ours = uuid::Builder::from_sha1_bytes(
                sha1(ns.as_bytes(), &name)[..16].try_into().unwrap(),
            )
            .into_uuid();
            assert_eq!(ours, uuid::Uuid::new_v5(&ns, &name), "{len}");
        }
    }
}
