// Strings cross into wasm packed: JavaScript writes every string's UTF-16 code units, as they
// are, straight into a buffer in wasm memory, plus each string's length (see src/packed.rs
// and src/wasm/packed.rs); Rust encodes each string to UTF-8 on its own (lone surrogates as
// U+FFFD). Large batches go in chunks, so the buffer stays small and cache-resident.
// Each domain has its own wasm instance (js/wasm/load.mjs): `packedFor({PackedStrings, reserveMemory, wasmMemory})`, of its `#wasm/<domain>`, gives the helpers
// that write into that instance's memory.
import {describe, isTrap, outOfMemory, rethrow} from './errors.mjs';
import {MAX_BATCH_ITEMS, MAX_BATCH_UNITS, MAX_STRING} from './limits.mjs';

/** Code units per wasm call. */
const CHUNK_UNITS = 1 << 18;
/** Code units concatenated per `Buffer.write` (a young-generation string for V8). */
const GROUP_UNITS = 1 << 14;

/**
 * `items` read once (any proxy or getter runs here, in JS) into `list`, with every string's
 * length in `lens`, bounded: at most MAX_BATCH_ITEMS items of at most MAX_STRING code units,
 * MAX_BATCH_UNITS in all. `kit`: the argument kit of the caller's domain (js/kit/args.mjs), whose
 * errors refuse a non-array or a non-string.
 */
export function readStrings(items, name, kit) {
  const {fail, tooLarge} = kit;
  const list = kit.reading(() => {
    if (!Array.isArray(items)) throw fail(`${name} must be an array of strings, got ${describe(items)}`);
    const n = items.length;
    if (n > MAX_BATCH_ITEMS) throw tooLarge(name, n, MAX_BATCH_ITEMS, 'items');
    return Array.prototype.slice.call(items);
  }, name);
  const n = list.length;
  const lens = new Uint32Array(n);
  let units = 0;
  for (let i = 0; i < n; i++) {
    const s = list[i];
    if (typeof s !== 'string') throw fail(`${name}[${i}] must be a string, got ${describe(s)}`);
    if (s.length > MAX_STRING) throw tooLarge(`${name}[${i}]`, s.length, MAX_STRING, 'UTF-16 code units');
    units += s.length;
    lens[i] = s.length;
  }
  if (units > MAX_BATCH_UNITS) throw tooLarge(name, units, MAX_BATCH_UNITS, 'UTF-16 code units in all');
  return {list, lens, units};
}

/** Writes `items[start..end)` as UTF-16 code units into `units` (a Uint16Array). */
function writeUnits(items, start, end, units) {
  const NodeBuffer = globalThis.Buffer;
  let o = 0;
  if (typeof NodeBuffer === 'function' && typeof NodeBuffer.from === 'function') {
    // Node: concatenate a group of strings, then one native copy of its code units.
    const buf = NodeBuffer.from(units.buffer, units.byteOffset, units.byteLength);
    let i = start;
    while (i < end) {
      let s = items[i++];
      while (i < end && s.length < GROUP_UNITS) s += items[i++];
      o += buf.write(s, o * 2, 'utf16le') / 2;
    }
    return o;
  }
  for (let i = start; i < end; i++) {
    const s = items[i];
    for (let j = 0; j < s.length; j++) units[o++] = s.charCodeAt(j);
  }
  return o;
}

/** `mapPacked` and `reserveUnits` of a wasm instance, given three exports of its `#wasm/<domain>` (only these: a bundler keeps only the glue a page calls). */
export function packedFor(wasm) {
  let shared = null;

  /**
   * Makes sure wasm can take `units` more UTF-16 code units of string (UTF-8: at most 3 bytes
   * each) plus 1 MiB, so that passing them to a stateful object's method cannot trap; else
   * throws `OUT_OF_MEMORY` of `Class`.
   */
  function reserveUnits(Class, units) {
    if (!wasm.reserveMemory(units * 3 + (1 << 20))) throw outOfMemory(Class);
  }

  function dropShared() {
    const old = shared;
    shared = null;
    try {
      old?.free();
    } catch {
      // still borrowed by a trapped call: left to the garbage collector
    }
  }

  /**
   * Maps `items` (an array of strings) through `fn(packed, start, end)`, which returns one typed
   * array entry per item of `items[start..end)`, read from the wasm `PackedStrings` `packed`;
   * returns one typed array of class `Out`. `kit`: the argument kit of the caller's domain, whose
   * errors refuse a non-array or a non-string item.
   */
  function mapPacked(items, name, kit, Out, fn) {
    const {list, lens} = readStrings(items, name, kit);
    items = list;
    const n = list.length;
    if (shared === null) {
      try {
        shared = new wasm.PackedStrings();
      } catch (error) {
        rethrow(error, kit.Class);
      }
    }
    const packed = shared;
    let out = null;
    let start = 0;
    do {
      let end = start;
      let size = 0;
      while (end < n && (end === start || size + lens[end] <= CHUNK_UNITS)) size += lens[end++];
      try {
        packed.reset(size, end - start);
      } catch (error) {
        if (isTrap(error)) dropShared();
        rethrow(error, kit.Class);
      }
      const {buffer} = wasm.wasmMemory();
      new Uint32Array(buffer, packed.lensPtr(), end - start).set(lens.subarray(start, end));
      // `list` holds strings read once: their lengths cannot change between the two passes.
      if (writeUnits(items, start, end, new Uint16Array(buffer, packed.unitsPtr(), size)) !== size) {
        throw kit.fail(`${name}: the strings were not written whole`);
      }
      let res;
      try {
        res = fn(packed, start, end);
        if (size > CHUNK_UNITS) packed.shrink();
      } catch (error) {
        // A trap (out of memory) leaves the buffer borrowed in wasm-bindgen's bookkeeping: drop
        // it, the next call makes a new one.
        if (isTrap(error) || error?.code === 'OUT_OF_MEMORY') dropShared();
        throw error;
      }
      if (start === 0 && end === n) return res;
      if (out === null) out = new Out(n);
      out.set(res, start);
      start = end;
    } while (start < n);
    return out;
  }

  return {mapPacked, reserveUnits};
}

/**
 * Bucketing's format: one joined string (encoded to UTF-8 by wasm-bindgen) plus UTF-16 lengths,
 * split by `PackedSplitter` in src/packed.rs.
 */
const CHUNK_CHARS = 1 << 24;

/**
 * Maps `items` (an array of strings) through `fn(joined, lens)`, which returns one typed array
 * entry per item, chunk by chunk; returns one typed array of class `Out`. `kit`: the argument kit
 * of the caller's domain, whose errors refuse a non-array or a non-string item.
 */
export function mapJoined(items, name, kit, Out, fn) {
  const {list, lens, units: chars} = readStrings(items, name, kit);
  items = list;
  const n = list.length;
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
