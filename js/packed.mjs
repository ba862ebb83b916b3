// Strings cross into wasm packed: one joined string plus a Uint32Array of UTF-16 lengths
// (see src/packed.rs). Large batches go in chunks to bound wasm memory and string size.

const CHUNK_CHARS = 1 << 24;

/**
 * Maps `items` (an array of strings) through `fn(joined, lens)`, which returns one typed array
 * entry per item, chunk by chunk; returns one typed array of class `Out`.
 * `fail(message)` builds the error thrown for a non-array or a non-string item.
 */
export function mapPacked(items, name, fail, Out, fn) {
  if (!Array.isArray(items)) throw fail(`${name} must be an array of strings`);
  const n = items.length;
  const lens = new Uint32Array(n);
  let chars = 0;
  for (let i = 0; i < n; i++) {
    const s = items[i];
    if (typeof s !== 'string') throw fail(`${name}[${i}] must be a string`);
    lens[i] = s.length;
    chars += s.length;
  }
  if (chars <= CHUNK_CHARS) return fn(items.join(''), lens);
  const out = new Out(n);
  let start = 0;
  while (start < n) {
    let end = start;
    let size = 0;
    while (end < n && (end === start || size + lens[end] <= CHUNK_CHARS)) size += lens[end++];
    out.set(fn(items.slice(start, end).join(''), lens.subarray(start, end)), start);
    start = end;
  }
  return out;
}
