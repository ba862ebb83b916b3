//! The binding layer: the only code that knows JavaScript. Each domain has one file of
//! one-line forwarding functions; every error leaves as a [`error::BoundaryError`] built by [`error::error_value`].

// One wasm per domain (cargo features, see Cargo.toml): a build with some domains left out does
// not use every shared helper.
#![cfg_attr(
    not(all(
        feature = "bucketing",
        feature = "objects",
        feature = "imports",
        feature = "lifecycle",
        feature = "sync"
    )),
    allow(dead_code, unused_imports)
)]

pub(crate) mod error;

mod alloc;

#[cfg(feature = "bucketing")]
mod bucketing;
#[cfg(feature = "imports")]
mod imports;
#[cfg(any(feature = "bucketing", feature = "imports"))]
mod kinds;
#[cfg(feature = "lifecycle")]
mod lifecycle;
#[cfg(feature = "objects")]
mod objects;
#[cfg(feature = "objects")]
mod objects_bytes;
mod packed;
#[cfg(feature = "sync")]
mod sync;
