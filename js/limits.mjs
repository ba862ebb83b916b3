// Bounds of every input, checked in JS before wasm is entered (docs/robustness.md lists them).
// Over a bound: a PartkitError with code INPUT_TOO_LARGE naming the bound.

/** Code units of any one string argument: a key, id, token, field name, range, bucket datum. */
export const MAX_STRING = 1 << 20;
/** Items of one batch call (bucketMany, indexMany, plan, stats, partitionObjects, imports, replay). */
export const MAX_BATCH_ITEMS = 1 << 24;
/** Code units of all the strings of one batch call together. */
export const MAX_BATCH_UNITS = 1 << 28;
/** Code units of the JSON text of one event, message, options object or partition list. */
export const MAX_JSON = 1 << 24;
/** Code units of the JSON text of a snapshot, or of one replay chunk. */
export const MAX_SNAPSHOT_JSON = 1 << 28;
/** Items of `bucket_ranges` as an array. */
export const MAX_RANGE_ITEMS = 100000;
/** Bytes of one chunk of a listing given as bytes (`LineSelector`, `LineIndexer`). */
export const MAX_CHUNK_BYTES = 1 << 26;
/** Bytes of a whole listing given as bytes at once (`selectLines`, `partitionLines`): ranges are 32-bit. */
export const MAX_LISTING_BYTES = 2 ** 32 - 1;
/** Bytes of one line (one key) of a listing given as bytes, `\r` included. */
export const MAX_LINE_BYTES = 1 << 20;
