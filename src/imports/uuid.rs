//! A minimal UUID value: parsing, canonical formatting, v4 from supplied random bytes and v5
//! (name-based, SHA-1) as RFC 9562 defines them.

use std::fmt;

use sha1::{Digest, Sha1};

use super::error::{ErrorKind, ImportBucketError};

/// A 128-bit UUID.
///
/// Its text form ([`Display`](fmt::Display), [`Uuid::to_string`]) is always the canonical
/// lower-case hyphenated form `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`.
///
/// # Examples
/// ```
/// use partkit::imports::Uuid;
/// let u = Uuid::parse("6BA7B810-9DAD-11D1-80B4-00C04FD430C8").unwrap();
/// assert_eq!(u.to_string(), "6ba7b810-9dad-11d1-80b4-00c04fd430c8");
/// assert_eq!(u.version(), 1);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct Uuid([u8; 16]);

/// The NIL UUID `00000000-0000-0000-0000-000000000000`, used for dataset-level documents.
///
/// # Examples
/// ```
/// assert_eq!(partkit::imports::NIL_UUID.to_string(), "00000000-0000-0000-0000-000000000000");
/// ```
pub const NIL_UUID: Uuid = Uuid([0; 16]);

/// Positions of the hyphens in the canonical form.
const HYPHENS: [usize; 4] = [8, 13, 18, 23];

fn hex_value(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

impl Uuid {
    /// The NAMESPACE_URL UUID of RFC 9562 (`6ba7b811-9dad-11d1-80b4-00c04fd430c8`).
    pub const NAMESPACE_URL: Uuid = Uuid([
        0x6b, 0xa7, 0xb8, 0x11, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30,
        0xc8,
    ]);

    /// A UUID from its 16 bytes, as is (no version or variant bits are set).
    ///
    /// # Examples
    /// ```
    /// use partkit::imports::{Uuid, NIL_UUID};
    /// assert_eq!(Uuid::from_bytes([0; 16]), NIL_UUID);
    /// ```
    pub const fn from_bytes(bytes: [u8; 16]) -> Self {
        Uuid(bytes)
    }

    /// The 16 bytes of this UUID, in network order.
    ///
    /// # Examples
    /// ```
    /// use partkit::imports::NIL_UUID;
    /// assert_eq!(NIL_UUID.as_bytes(), &[0u8; 16]);
    /// ```
    pub const fn as_bytes(&self) -> &[u8; 16] {
        &self.0
    }

    /// Parses the hyphenated form `8-4-4-4-12` hex digits, in any case. Exactly 36 characters:
    /// no braces, no `urn:uuid:` prefix, no surrounding whitespace, no un-hyphenated 32-digit
    /// form. Any version and variant is accepted (the NIL and MAX UUIDs too).
    ///
    /// Returns `None` for anything else; [`normalize_uuid`](crate::imports::normalize_uuid)
    /// gives the error instead.
    ///
    /// # Examples
    /// ```
    /// use partkit::imports::{Uuid, NIL_UUID};
    /// assert_eq!(Uuid::parse("00000000-0000-0000-0000-000000000000"), Some(NIL_UUID));
    /// assert_eq!(Uuid::parse("{00000000-0000-0000-0000-000000000000}"), None);
    /// ```
    pub fn parse(text: &str) -> Option<Self> {
        let s = text.as_bytes();
        if s.len() != 36 {
            return None;
        }
        let mut out = [0u8; 16];
        let mut nibble = 0usize;
        for (pos, &c) in s.iter().enumerate() {
            if HYPHENS.contains(&pos) {
                if c != b'-' {
                    return None;
                }
                continue;
            }
            let v = hex_value(c)?;
            let byte = out.get_mut(nibble / 2)?;
            *byte = if nibble % 2 == 0 { v << 4 } else { *byte | v };
            nibble += 1;
        }
        Some(Uuid(out))
    }

    /// A version-4 (random) UUID from 16 random bytes: the version nibble is set to `4` and the
    /// variant bits to `10` (RFC 9562); the other 122 bits are taken from `random`.
    ///
    /// # Examples
    /// ```
    /// use partkit::imports::Uuid;
    /// let u = Uuid::new_v4_from_random_bytes([0xff; 16]);
    /// assert_eq!(u.to_string(), "ffffffff-ffff-4fff-bfff-ffffffffffff");
    /// assert_eq!((u.version(), u.is_rfc_variant()), (4, true));
    /// ```
    pub fn new_v4_from_random_bytes(random: [u8; 16]) -> Self {
        Uuid(random).with_version(4)
    }

    /// A version-5 (name-based, SHA-1) UUID of `name` in `namespace` (RFC 9562 §5.5): the first
    /// 16 bytes of `SHA-1(namespace ‖ name)` with version and variant bits set.
    ///
    /// # Examples
    /// ```
    /// use partkit::imports::Uuid;
    /// // RFC 9562 appendix A.4 test vector: "www.example.com" in the DNS namespace.
    /// let dns = Uuid::parse("6ba7b810-9dad-11d1-80b4-00c04fd430c8").unwrap();
    /// assert_eq!(
    ///     Uuid::new_v5(&dns, b"www.example.com").to_string(),
    ///     "2ed6657d-e927-568b-95e1-2665a8aea6a2"
    /// );
    /// ```
    pub fn new_v5(namespace: &Uuid, name: &[u8]) -> Self {
        let mut hasher = Sha1::new();
        hasher.update(namespace.0);
        hasher.update(name);
        let digest = hasher.finalize();
        let mut bytes = [0u8; 16];
        for (dst, src) in bytes.iter_mut().zip(digest.iter()) {
            *dst = *src;
        }
        Uuid(bytes).with_version(5)
    }

    fn with_version(mut self, version: u8) -> Self {
        self.0[6] = (self.0[6] & 0x0f) | (version << 4);
        self.0[8] = (self.0[8] & 0x3f) | 0x80;
        self
    }

    /// The version nibble (the high 4 bits of byte 6).
    ///
    /// # Examples
    /// ```
    /// assert_eq!(partkit::imports::NIL_UUID.version(), 0);
    /// ```
    pub fn version(&self) -> u8 {
        self.0[6] >> 4
    }

    /// Whether the variant bits are `10`, the RFC 9562 variant.
    ///
    /// # Examples
    /// ```
    /// assert!(!partkit::imports::NIL_UUID.is_rfc_variant());
    /// ```
    pub fn is_rfc_variant(&self) -> bool {
        self.0[8] & 0xc0 == 0x80
    }

    /// Whether this is the NIL UUID.
    ///
    /// # Examples
    /// ```
    /// assert!(partkit::imports::NIL_UUID.is_nil());
    /// ```
    pub fn is_nil(&self) -> bool {
        self.0 == [0; 16]
    }

    /// The canonical text as ASCII bytes.
    fn encode(&self) -> [u8; 36] {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut out = [b'-'; 36];
        let mut pos = 0usize;
        for (i, b) in self.0.iter().enumerate() {
            if matches!(i, 4 | 6 | 8 | 10) {
                pos += 1;
            }
            out[pos] = DIGITS[usize::from(b >> 4)];
            out[pos + 1] = DIGITS[usize::from(b & 0x0f)];
            pos += 2;
        }
        out
    }
}

impl fmt::Display for Uuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let buf = self.encode();
        for &c in &buf {
            fmt::Write::write_char(f, char::from(c))?;
        }
        Ok(())
    }
}

impl std::str::FromStr for Uuid {
    type Err = ImportBucketError;

    /// Same as [`Uuid::parse`], with a `UUID_INVALID` error.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Uuid::parse(s).ok_or_else(|| {
            ImportBucketError(ErrorKind::UuidInvalid {
                value: s.to_owned(),
            })
        })
    }
}

/// Whether `text` is a UUID in the accepted form (see [`Uuid::parse`]).
///
/// # Examples
/// ```
/// use partkit::imports::is_uuid;
/// assert!(is_uuid("00000000-0000-0000-0000-000000000000"));
/// assert!(is_uuid("F47AC10B-58CC-4372-A567-0E02B2C3D479"));
/// assert!(!is_uuid("f47ac10b58cc4372a5670e02b2c3d479"));
/// ```
pub fn is_uuid(text: &str) -> bool {
    Uuid::parse(text).is_some()
}

/// The canonical lower-case hyphenated form of a UUID string.
///
/// # Errors
/// `UUID_INVALID` when `text` is not in the accepted form (see [`Uuid::parse`]).
///
/// # Examples
/// ```
/// use partkit::imports::normalize_uuid;
/// assert_eq!(
///     normalize_uuid("F47AC10B-58CC-4372-A567-0E02B2C3D479").unwrap(),
///     "f47ac10b-58cc-4372-a567-0e02b2c3d479"
/// );
/// assert_eq!(normalize_uuid(" f47ac10b-58cc-4372-a567-0e02b2c3d479").unwrap_err().code(), "UUID_INVALID");
/// ```
pub fn normalize_uuid(text: &str) -> Result<String, ImportBucketError> {
    text.parse::<Uuid>().map(|u| u.to_string())
}
