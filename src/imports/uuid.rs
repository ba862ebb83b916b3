//! Import-bucket UUIDs: the `uuid` crate's [`uuid::Uuid`] (RFC 9562 parsing, formatting, and
//! the v4 and v5 builders), with one rule of ours on top: text is accepted only in the
//! 36-character hyphenated form (the crate also takes braces, `urn:uuid:` and 32 bare digits).

use std::fmt;

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
pub struct Uuid(uuid::Uuid);

/// The NIL UUID `00000000-0000-0000-0000-000000000000`, used for dataset-level documents.
///
/// # Examples
/// ```
/// assert_eq!(partkit::imports::NIL_UUID.to_string(), "00000000-0000-0000-0000-000000000000");
/// ```
pub const NIL_UUID: Uuid = Uuid(uuid::Uuid::nil());

/// The length of the hyphenated form, the only text form accepted.
const HYPHENATED_LEN: usize = uuid::fmt::Hyphenated::LENGTH;

impl Uuid {
    /// The NAMESPACE_URL UUID of RFC 9562 (`6ba7b811-9dad-11d1-80b4-00c04fd430c8`).
    pub const NAMESPACE_URL: Uuid = Uuid(uuid::Uuid::NAMESPACE_URL);

    /// A UUID from its 16 bytes, as is (no version or variant bits are set).
    ///
    /// # Examples
    /// ```
    /// use partkit::imports::{Uuid, NIL_UUID};
    /// assert_eq!(Uuid::from_bytes([0; 16]), NIL_UUID);
    /// ```
    pub const fn from_bytes(bytes: [u8; 16]) -> Self {
        Uuid(uuid::Uuid::from_bytes(bytes))
    }

    /// The 16 bytes of this UUID, in network order.
    ///
    /// # Examples
    /// ```
    /// use partkit::imports::NIL_UUID;
    /// assert_eq!(NIL_UUID.as_bytes(), &[0u8; 16]);
    /// ```
    pub const fn as_bytes(&self) -> &[u8; 16] {
        self.0.as_bytes()
    }

    /// The `uuid` crate's value.
    pub const fn as_uuid(&self) -> &uuid::Uuid {
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
        // At 36 bytes the crate's parser takes only the hyphenated form.
        if text.len() != HYPHENATED_LEN {
            return None;
        }
        uuid::Uuid::try_parse(text).ok().map(Uuid)
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
        Uuid(uuid::Builder::from_random_bytes(random).into_uuid())
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
        let hash = super::sha1::sha1(namespace.0.as_bytes(), name);
        let mut bytes = [0u8; 16];
        bytes.copy_from_slice(&hash[..16]);
        Uuid(uuid::Builder::from_sha1_bytes(bytes).into_uuid())
    }

    /// The version nibble (the high 4 bits of byte 6).
    ///
    /// # Examples
    /// ```
    /// assert_eq!(partkit::imports::NIL_UUID.version(), 0);
    /// ```
    pub fn version(&self) -> u8 {
        self.0.as_bytes()[6] >> 4
    }

    /// Whether the variant bits are `10`, the RFC 9562 variant.
    ///
    /// # Examples
    /// ```
    /// assert!(!partkit::imports::NIL_UUID.is_rfc_variant());
    /// ```
    pub fn is_rfc_variant(&self) -> bool {
        self.0.get_variant() == uuid::Variant::RFC4122
    }

    /// Whether this is the NIL UUID.
    ///
    /// # Examples
    /// ```
    /// assert!(partkit::imports::NIL_UUID.is_nil());
    /// ```
    pub fn is_nil(&self) -> bool {
        self.0.is_nil()
    }
}

impl From<uuid::Uuid> for Uuid {
    fn from(u: uuid::Uuid) -> Self {
        Uuid(u)
    }
}

impl From<Uuid> for uuid::Uuid {
    fn from(u: Uuid) -> Self {
        u.0
    }
}

impl fmt::Display for Uuid {
    /// The lower-case hyphenated form.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0.hyphenated(), f)
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
