//! The binding layer: the only code that knows JavaScript. Each domain has one file of
//! one-line forwarding functions; every error leaves as a [`error::BoundaryError`] built by [`error::error_value`].

pub(crate) mod error;

mod alloc;

mod bucketing;
mod imports;
mod kinds;
mod lifecycle;
mod objects;
mod objects_bytes;
mod packed;
mod sync;
