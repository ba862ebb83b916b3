//! Injectable randomness: the core never picks a generator itself.

use super::error::ImportBucketError;

/// A source of random bytes for v4 bucket UUIDs.
///
/// The core asks for all the bytes of one call at once (16 per new bucket), so a generator that
/// crosses a boundary (Web Crypto) is called once per assignment, not once per bucket.
///
/// # Examples
/// ```
/// use partkit::imports::{ImportBucketError, RandomSource};
/// /// Not random at all: for tests only.
/// struct Zeros;
/// impl RandomSource for Zeros {
///     fn fill(&mut self, dest: &mut [u8]) -> Result<(), ImportBucketError> {
///         dest.fill(0);
///         Ok(())
///     }
/// }
/// let mut buf = [1u8; 4];
/// Zeros.fill(&mut buf).unwrap();
/// assert_eq!(buf, [0; 4]);
/// ```
pub trait RandomSource {
    /// Fills `dest` entirely with random bytes.
    ///
    /// # Errors
    /// `RANDOM_UNAVAILABLE` (see [`ImportBucketError::random_unavailable`]) when no bytes can be
    /// produced; the assignment then fails as a whole.
    fn fill(&mut self, dest: &mut [u8]) -> Result<(), ImportBucketError>;
}

impl<R: RandomSource + ?Sized> RandomSource for &mut R {
    fn fill(&mut self, dest: &mut [u8]) -> Result<(), ImportBucketError> {
        (**self).fill(dest)
    }
}

/// The platform's secure generator through `getrandom`: the OS generator natively, Web Crypto
/// (`crypto.getRandomValues`) in WebAssembly.
///
/// # Examples
/// ```
/// use partkit::imports::{OsRandom, RandomSource};
/// let mut buf = [0u8; 32];
/// OsRandom.fill(&mut buf).unwrap();
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct OsRandom;

impl RandomSource for OsRandom {
    fn fill(&mut self, dest: &mut [u8]) -> Result<(), ImportBucketError> {
        // Web Crypto refuses more than 65536 bytes per call; getrandom chunks internally, but
        // keep the requests small and explicit anyway.
        for chunk in dest.chunks_mut(65536) {
            getrandom::getrandom(chunk)
                .map_err(|e| ImportBucketError::random_unavailable(e.to_string()))?;
        }
        Ok(())
    }
}
