//! 32-bit FNV-1a (Go's `hash/fnv` `New32a`), the one place objects hashes keys.
//!
//! Hand-written because the `fnv` crate has only the 64-bit variant (used by `sync`), and the
//! batch path needs what no crate offers: hashing a key straight from its UTF-16 code units
//! (each unit of an ASCII key taken as its byte) and four keys in lockstep.

/// The FNV-1a 32 offset basis.
pub(crate) const FNV1A32_OFFSET: u32 = 0x811C_9DC5;
/// The FNV-1a 32 prime.
pub(crate) const FNV1A32_PRIME: u32 = 0x0100_0193;

#[inline]
fn step(h: u32, b: u32) -> u32 {
    (h ^ b).wrapping_mul(FNV1A32_PRIME)
}

/// 32-bit FNV-1a (Go's `hash/fnv` `New32a`) of `bytes`.
///
/// # Examples
/// ```
/// use partkit::objects::fnv1a32;
/// assert_eq!(fnv1a32(b""), 2166136261);
/// assert_eq!(fnv1a32("prefix/文件1.txt".as_bytes()), 2459005073);
/// ```
#[inline]
pub fn fnv1a32(bytes: &[u8]) -> u32 {
    fnv1a32_update(FNV1A32_OFFSET, bytes)
}

/// Continues the hash `h` over `bytes`.
#[inline]
pub(crate) fn fnv1a32_update(h: u32, bytes: &[u8]) -> u32 {
    bytes.iter().fold(h, |h, &b| step(h, u32::from(b)))
}

/// [`fnv1a32`] of an ASCII key given as UTF-16 code units (each unit taken as one byte).
#[inline]
pub(crate) fn fnv1a32_units(units: &[u16]) -> u32 {
    units
        .iter()
        .fold(FNV1A32_OFFSET, |h, &u| step(h, u32::from(u)))
}

/// [`fnv1a32_units`] of four keys at once: four independent multiply chains instead of one,
/// over the common length, then each tail.
#[inline]
pub(crate) fn fnv1a32_x4(keys: [&[u16]; 4]) -> [u32; 4] {
    let m = keys.iter().map(|k| k.len()).min().unwrap_or(0);
    let (a, b, c, d) = (&keys[0][..m], &keys[1][..m], &keys[2][..m], &keys[3][..m]);
    let mut h = [FNV1A32_OFFSET; 4];
    for i in 0..m {
        h[0] = step(h[0], u32::from(a[i]));
        h[1] = step(h[1], u32::from(b[i]));
        h[2] = step(h[2], u32::from(c[i]));
        h[3] = step(h[3], u32::from(d[i]));
    }
    for (h, k) in h.iter_mut().zip(keys) {
        *h = k[m..].iter().fold(*h, |h, &u| step(h, u32::from(u)));
    }
    h
}
