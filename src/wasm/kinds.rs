//! The one numbering of the kinds of JS values that cross the boundary as a kind byte: a value
//! the JS layer read once and classified by `typeof` (and, where a binding needs it, by
//! `Array.isArray`) before entering wasm. `KIND` in `js/kit/args.mjs` is the same table
//! (`tests/kinds.test.js` checks that they agree); bucketing's configs and the imports'
//! `options.buckets` and item fields use it.

/// `undefined` (or a missing property).
pub(crate) const UNDEFINED: u8 = 0;
/// `null`.
pub(crate) const NULL: u8 = 1;
/// `false`.
pub(crate) const FALSE: u8 = 2;
/// `true`.
pub(crate) const TRUE: u8 = 3;
/// A number; its value crosses beside the kind.
pub(crate) const NUMBER: u8 = 4;
/// A string; its text crosses beside the kind.
pub(crate) const STRING: u8 = 5;
/// A bigint.
pub(crate) const BIGINT: u8 = 6;
/// An array; in bucketing's encoding its item count crosses beside the kind and its items follow.
pub(crate) const ARRAY: u8 = 7;
/// Any other object.
pub(crate) const OBJECT: u8 = 8;
/// A symbol or a function.
pub(crate) const OTHER: u8 = 9;
