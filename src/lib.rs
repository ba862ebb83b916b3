//! partkit: deterministic partitioning for data connectors.
//!
//! The domain modules are plain Rust with no knowledge of JavaScript; the `wasm` module (built
//! only for `wasm32`) is the single place that maps them to JS.
#![deny(missing_docs)]

pub mod bucketing;
pub mod imports;
pub mod lifecycle;
pub mod objects;
pub mod packed;
pub mod sync;

#[cfg(target_arch = "wasm32")]
mod wasm;
