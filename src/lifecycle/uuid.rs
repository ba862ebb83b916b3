//! Deterministic partition UUIDs: a version-8 [`uuid::Uuid`] built by the `uuid` crate from a
//! SHA-256 of the job run and the partition ref; text in the hyphenated form only.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sha2::{Digest, Sha256};

/// The identity of one partition instance: a UUIDv8 (RFC 9562) derived from the job run that
/// builds the instance and the partition ref it builds (see [`derive_partition_uuid`]).
///
/// Displays and serializes as the lowercase hyphenated form
/// (`xxxxxxxx-xxxx-8xxx-[89ab]xxx-xxxxxxxxxxxx`); parses any-case hyphenated form.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(test, derive(ts_rs::TS), ts(type = "string"))]
pub struct PartitionUuid(uuid::Uuid);

impl PartitionUuid {
    /// The 16 bytes of the UUID, most significant first.
    pub fn as_bytes(&self) -> &[u8; 16] {
        self.0.as_bytes()
    }

    /// Wraps 16 bytes as they are (no version or variant bits are changed).
    pub fn from_bytes(bytes: [u8; 16]) -> Self {
        PartitionUuid(uuid::Uuid::from_bytes(bytes))
    }

    /// The `uuid` crate's value.
    pub fn as_uuid(&self) -> &uuid::Uuid {
        &self.0
    }
}

/// Derives the UUID of the partition instance that job run `job_run_id` builds for
/// `partition_ref`.
///
/// The hash input is unambiguous: the UTF-8 length of `job_run_id` as an 8-byte big-endian
/// integer, then the UTF-8 bytes of `job_run_id`, then the UTF-8 bytes of `partition_ref`:
///
/// ```text
/// digest = SHA-256( be_u64(len(job_run_id)) || job_run_id || partition_ref )
/// uuid   = digest[0..16], then byte 6 = (byte 6 & 0x0f) | 0x80   (version 8)
///                          and  byte 8 = (byte 8 & 0x3f) | 0x80   (RFC 9562 variant)
/// ```
///
/// so `("ab", "c")` and `("a", "bc")` hash different inputs. The same pair always gives the
/// same UUID, which makes replay deterministic without storing UUIDs in the events.
///
/// # Examples
/// ```
/// use partkit::lifecycle::derive_partition_uuid;
/// let uuid = derive_partition_uuid("job-1", "data/beta");
/// assert_eq!(uuid.to_string(), "b9fdaee2-c421-8dda-b7ad-0d0b3b24b0d4");
/// assert_ne!(derive_partition_uuid("ab", "c"), derive_partition_uuid("a", "bc"));
/// ```
pub fn derive_partition_uuid(job_run_id: &str, partition_ref: &str) -> PartitionUuid {
    let mut hasher = Sha256::new();
    hasher.update((job_run_id.len() as u64).to_be_bytes());
    hasher.update(job_run_id.as_bytes());
    hasher.update(partition_ref.as_bytes());
    let digest = hasher.finalize();
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    PartitionUuid(uuid::Uuid::new_v8(bytes))
}

impl fmt::Display for PartitionUuid {
    /// The lower-case hyphenated form.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0.hyphenated(), f)
    }
}

impl fmt::Debug for PartitionUuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// The error of parsing a [`PartitionUuid`] from text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseUuidError(String);

impl fmt::Display for ParseUuidError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid uuid '{}': expected 8-4-4-4-12 hex digits",
            self.0
        )
    }
}

impl std::error::Error for ParseUuidError {}

impl FromStr for PartitionUuid {
    type Err = ParseUuidError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || ParseUuidError(s.chars().take(64).collect());
        // At 36 bytes the crate's parser takes only the hyphenated form (not braces,
        // `urn:uuid:` or 32 bare digits).
        if s.len() != uuid::fmt::Hyphenated::LENGTH {
            return Err(err());
        }
        uuid::Uuid::try_parse(s)
            .map(PartitionUuid)
            .map_err(|_| err())
    }
}

impl Serialize for PartitionUuid {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // The text written into a buffer on the stack, not through `fmt`.
        let mut buf = [0u8; uuid::fmt::Hyphenated::LENGTH];
        serializer.serialize_str(self.0.hyphenated().encode_lower(&mut buf))
    }
}

impl<'de> Deserialize<'de> for PartitionUuid {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = String::deserialize(deserializer)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_display_round_trip() {
        let u = derive_partition_uuid("job-1", "data/beta");
        let s = u.to_string();
        assert_eq!(s.parse::<PartitionUuid>().unwrap(), u);
        assert_eq!(s.to_uppercase().parse::<PartitionUuid>().unwrap(), u);
        assert!("not-a-uuid".parse::<PartitionUuid>().is_err());
        assert!("b9fdaee2-c421-8dda-b7ad-0d0b3b24b0d"
            .parse::<PartitionUuid>()
            .is_err());
        assert!("b9fdaee20c421-8dda-b7ad-0d0b3b24b0d4"
            .parse::<PartitionUuid>()
            .is_err());
        assert!("b9fdaee2-c421-8dda-b7ad-0d0b3b24b0dg"
            .parse::<PartitionUuid>()
            .is_err());
    }

    #[test]
    fn version_and_variant_bits() {
        for (j, r) in [
            ("a", "b"),
            ("", ""),
            ("job", ""),
            ("", "ref"),
            ("ü", "日本"),
        ] {
            let u = derive_partition_uuid(j, r);
            assert_eq!(u.as_bytes()[6] >> 4, 8);
            assert_eq!(u.as_bytes()[8] >> 6, 0b10);
        }
    }

    #[test]
    fn separator_is_unambiguous() {
        assert_ne!(
            derive_partition_uuid("ab", "c"),
            derive_partition_uuid("a", "bc")
        );
        assert_ne!(
            derive_partition_uuid("", "abc"),
            derive_partition_uuid("abc", "")
        );
    }
}
