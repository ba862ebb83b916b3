// Object-store key partitioning with exact parity with Go (Bacalhau's S3 partitioner).
// Type checks of JS values happen here; every value rule lives in the Rust core.
import * as wasm from '#wasm/objects';
import {PartitionError, PartkitError, WasmObject, call as callWasm, describe, freeWasm, freedOnTrap, live, tooLarge} from './errors.mjs';
// partkit/objects exports its error classes too (the same classes as the root's).
export {PartkitError, PartitionError} from './errors.mjs';
import {MAX_BATCH_ITEMS, MAX_CHUNK_BYTES, MAX_LISTING_BYTES, MAX_STRING} from './limits.mjs';
import {packedFor} from './packed.mjs';
import {argumentKit, isPlainObject} from './kit/args.mjs';

const {mapPacked} = packedFor({PackedStrings: wasm.PackedStrings, reserveMemory: wasm.reserveMemory, wasmMemory: wasm.wasmMemory});

/** `indexOf`/`indexMany` value of a directory key: in no partition. */
export const DIRECTORY = -1;
/** `indexOf`/`indexMany` value when nothing is partitioned (type `''`/`'none'`, or one partition). */
export const ALL_PARTITIONS = -2;

const MAX_LISTED_PARTITIONS = 1 << 24;
const FILE = 0;
const DIR = 1;
const AUTO = 2; // a directory when the key ends in '/'

const NO_FLAGS = new Uint8Array(0); // every key: AUTO

const kit = argumentKit(PartitionError, {base: PartkitError, maxString: MAX_STRING});
/** `reading(read, name)` runs `read` (reads of caller values); a foreign exception becomes INVALID_ARGUMENT. */
const {fail: argError, reading, requireString, requireInteger} = kit;
const call = (fn) => callWasm(fn, PartitionError);

/** The keys of a partition config (Go's PartitionConfig, as JSON). */
const CONFIG_KEYS = ['type', 'pattern', 'startIndex', 'endIndex', 'dateFormat'];
/** The keys of a source (Go's SourceSpec, as JSON: partkit reads bucket, key and partition). */
const SOURCE_KEYS = ['bucket', 'key', 'partition', 'filter', 'region', 'endpoint', 'versionId', 'checksumSHA256'];

/** A config field: absent or null is Go's zero value, as with encoding/json. */
function field(config, name, kind, zero, base) {
  const value = config[name];
  if (value === undefined || value === null) return zero;
  if (kind === 'string') requireString(value, `${base}.${name}`);
  else requireInteger(value, `${base}.${name}`);
  return value;
}

/** The five config fields as a fresh plain object (src/wasm/objects.rs `ConfigArgs`). */
function readConfig(config, name = 'config') {
  return reading(() => readConfigFields(config, name), name);
}

function readConfigFields(config, name) {
  if (config === undefined || config === null) return {type: '', pattern: '', startIndex: 0, endIndex: 0, dateFormat: ''};
  if (!isPlainObject(config)) throw argError(`${name} must be an object, got ${describe(config)}`);
  kit.knownKeys(config, CONFIG_KEYS, name);
  return {
    type: field(config, 'type', 'string', '', name),
    pattern: field(config, 'pattern', 'string', '', name),
    startIndex: field(config, 'startIndex', 'integer', 0, name),
    endIndex: field(config, 'endIndex', 'integer', 0, name),
    dateFormat: field(config, 'dateFormat', 'string', '', name),
  };
}

/** `[prefix, config fields]` of a SourceSpec. */
function readSource(source) {
  return reading(() => readSourceFields(source), 'source');
}

function readSourceFields(source) {
  if (!isPlainObject(source)) throw argError(`source must be an object, got ${describe(source)}`);
  kit.knownKeys(source, SOURCE_KEYS, 'source');
  const {bucket, key, partition} = source;
  if (bucket !== undefined && bucket !== null) requireString(bucket, 'source.bucket');
  if (key !== undefined && key !== null) requireString(key, 'source.key');
  return [key ?? '', readConfig(partition, 'source.partition')];
}

/**
 * Keys and directory flags of `objects` (strings or ObjectSummary objects). When every object
 * is a string, `keys` is `objects` itself and `dirs` is empty (every key AUTO).
 */
function readObjects(objects, name = 'objects') {
  return reading(() => readObjectList(copyList(objects, name), name), name);
}

/** `objects` (an array) read once into a bounded copy. */
function copyList(objects, name) {
  return reading(() => {
    if (!Array.isArray(objects)) throw argError(`${name} must be an array, got ${describe(objects)}`);
    const n = objects.length;
    if (n > MAX_BATCH_ITEMS) throw tooLarge(PartitionError, name, n, MAX_BATCH_ITEMS, 'items');
    return Array.prototype.slice.call(objects);
  }, name);
}

/** Keys and flags of a copied list; `list` is returned too (the objects as read). */
function readObjectList(objects, name) {
  const n = objects.length;
  let strings = 0;
  while (strings < n && typeof objects[strings] === 'string') strings++;
  if (strings === n) return {keys: objects, dirs: NO_FLAGS, list: objects};
  const keys = new Array(n);
  const dirs = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const o = objects[i];
    if (typeof o === 'string') {
      keys[i] = o;
      dirs[i] = AUTO;
    } else if (isPlainObject(o)) {
      const {key, isDir} = o;
      if (typeof key !== 'string') throw argError(`${name}[${i}].key must be a string, got ${describe(key)}`);
      keys[i] = key;
      if (isDir === undefined || isDir === null) dirs[i] = AUTO;
      else if (typeof isDir === 'boolean') dirs[i] = isDir ? DIR : FILE;
      else throw argError(`${name}[${i}].isDir must be a boolean, got ${describe(isDir)}`);
    } else {
      throw argError(`${name}[${i}] must be a string or an object with a string key, got ${describe(o)}`);
    }
  }
  return {keys, dirs, list: objects};
}

/** Runs `fn(packed, dirs)` over packed keys, chunk by chunk (see packed.mjs). */
function packed(keys, dirs, Out, fn) {
  return mapPacked(keys, 'keys', kit, Out, (p, start, end) =>
    fn(p, dirs.length === 0 ? NO_FLAGS : dirs.subarray(start, end)));
}

/**
 * Go's `PartitionConfig.Validate`: throws PartitionError with Go's message (code
 * `PARTITION_CONFIG_INVALID`), or INVALID_ARGUMENT for a value of the wrong type.
 */
export function validatePartitionConfig(config) {
  const c = reading(() => {
    if (!isPlainObject(config)) throw argError(`config must be an object, got ${describe(config)}`);
    return readConfigFields(config, 'config');
  }, 'config');
  call(() => wasm.validatePartitionConfig(c));
}

/**
 * Go's `PartitionObjects`: the objects partition `partitionIndex` (0-based) of
 * `totalPartitions` selects, as the same references, in input order.
 */
export function partitionObjects(objects, totalPartitions, partitionIndex, source) {
  const list = copyList(objects, 'objects');
  requireInteger(totalPartitions, 'totalPartitions');
  requireInteger(partitionIndex, 'partitionIndex');
  const [prefix, c] = readSource(source);
  // Go validates config, total and index (in that order) before looking at the objects.
  const selector = call(() => new wasm.PartitionSelector({totalPartitions, partitionIndex, sourceKey: prefix, partition: c}));
  try {
    const {keys, dirs} = reading(() => readObjectList(list, 'objects'), 'objects');
    const out = [];
    mapPacked(keys, 'keys', kit, Uint32Array, (p, start, end) => {
      const picked = call(() => selector.select(p, dirs.length === 0 ? NO_FLAGS : dirs.subarray(start, end)));
      for (let i = 0; i < picked.length; i++) out.push(list[start + picked[i]]);
      return new Uint32Array(end - start);
    });
    return out;
  } finally {
    freeWasm(selector);
  }
}

/** A partitioner for one total and source: the config is validated and compiled once. */
export class ObjectPartitioner extends WasmObject {
  #total;

  constructor(totalPartitions, source) {
    requireInteger(totalPartitions, 'totalPartitions');
    const [prefix, c] = readSource(source);
    super(call(() => new wasm.ObjectPartitioner({totalPartitions, sourceKey: prefix, partition: c})), PartitionError, 'ObjectPartitioner');
    this.#total = totalPartitions;
  }

  /** The number of partitions. */
  get totalPartitions() {
    return this.#total;
  }

  /** The listing prefix trimmed from keys (Go: TrimSuffix(TrimSpace(source.key), "*")). */
  get prefix() {
    return call(() => live(this).prefix());
  }

  /**
   * What is almost surely a mistake in the source although Go accepts it (a date layout with no
   * Go layout element, such as 'YYYY-MM-DD': every key falls back to partition 0), each in a
   * sentence; the partitioning is Go's all the same.
   */
  get warnings() {
    return call(() => live(this).warnings());
  }

  /** False when every partition gets every object (type '' or 'none', or one partition). */
  get isPartitioned() {
    return call(() => live(this).isPartitioned());
  }

  /**
   * The 0-based partition of `key`: DIRECTORY (-1) for a key ending in '/', ALL_PARTITIONS (-2)
   * when nothing is partitioned.
   */
  indexOf(key) {
    live(this);
    requireString(key, 'key');
    return call(() => live(this).indexOf(key, AUTO));
  }

  /** indexOf of every key, in one call: an Int32Array. */
  indexMany(keys) {
    live(this);
    reading(() => {
      if (!Array.isArray(keys)) throw argError(`keys must be an array of strings, got ${describe(keys)}`);
    }, 'keys');
    return mapPacked(keys, 'keys', kit, Int32Array, (p) => call(() => live(this).indexPacked(p, NO_FLAGS)));
  }

  /** The objects of partition `partitionIndex`, as the same references, in input order. */
  select(objects, partitionIndex) {
    live(this);
    const list = copyList(objects, 'objects');
    requireInteger(partitionIndex, 'partitionIndex');
    call(() => live(this).checkIndex(partitionIndex));
    const idx = this.#indices(list);
    const out = [];
    for (let i = 0; i < idx.length; i++) {
      if (idx[i] === partitionIndex || idx[i] === ALL_PARTITIONS) out.push(list[i]);
    }
    return out;
  }

  /** Every partition's objects at once, in one pass: `plan(objects)[i]` = `select(objects, i)`. */
  plan(objects) {
    live(this);
    const list = copyList(objects, 'objects');
    this.#checkListed();
    const idx = this.#indices(list);
    const n = idx.length;
    // Counted first, so each partition's array is allocated once at its final size.
    const counts = new Uint32Array(this.#total);
    let all = 0;
    for (let i = 0; i < n; i++) {
      const p = idx[i];
      if (p >= 0) counts[p]++;
      else if (p === ALL_PARTITIONS) all++;
    }
    if (all > 0) {
      const every = [];
      for (let i = 0; i < n; i++) if (idx[i] === ALL_PARTITIONS) every.push(list[i]);
      return Array.from({length: this.#total}, () => every.slice());
    }
    const parts = Array.from(counts, (c) => new Array(c));
    const filled = new Uint32Array(this.#total);
    for (let i = 0; i < n; i++) {
      const p = idx[i];
      if (p >= 0) parts[p][filled[p]++] = list[i];
    }
    return parts;
  }

  /**
   * How `keys` (strings or objects) spread over the partitions: counts per partition, how many
   * fell back to partition 0 (no regex match, unparsable date, key too short), directories; and
   * `warnings` (see the `warnings` getter) when there are any.
   */
  stats(keys) {
    live(this);
    this.#checkListed();
    const {keys: k, dirs} = readObjects(keys, 'keys');
    let fallback = 0;
    let directories = 0;
    const counts = new Array(this.#total).fill(0);
    packed(k, dirs, Uint32Array, (p, d) => {
      const s = call(() => live(this).statsPacked(p, d));
      fallback += s[0];
      directories += s[1];
      for (let i = 2; i < s.length; i++) counts[i - 2] += s[i];
      return new Uint32Array(0);
    });
    const warnings = this.warnings;
    return warnings.length ? {counts, fallback, directories, warnings} : {counts, fallback, directories};
  }

  /**
   * A streaming selector of partition `partitionIndex` over a listing given as bytes
   * (newline-separated UTF-8 keys: a file, stdin, a response body), fed chunk by chunk.
   */
  lineSelector(partitionIndex) {
    live(this);
    requireInteger(partitionIndex, 'partitionIndex');
    call(() => live(this).checkIndex(partitionIndex));
    return new LineSelector(call(() => live(this).lineSplitter(partitionIndex)));
  }

  /** A streaming indexer over a listing given as bytes: every key line's partition, chunk by chunk. */
  lineIndexer() {
    live(this);
    return new LineIndexer(call(() => live(this).lineSplitter(-1)));
  }

  /**
   * The partition of every key line of a whole listing given as bytes (`indexMany` of its lines):
   * an Int32Array (DIRECTORY, ALL_PARTITIONS as in `indexOf`).
   */
  partitionLines(bytes) {
    live(this);
    const view = readBytes(bytes, 'bytes', MAX_LISTING_BYTES);
    const indexer = this.lineIndexer();
    try {
      return bySlices(view, Int32Array, (slice, final) => indexer.indexLines(slice, {final}));
    } finally {
      indexer.free();
    }
  }

  /**
   * The key lines of a whole listing given as bytes that partition `partitionIndex` keeps: a
   * Uint32Array of `[start, end)` byte ranges into `bytes` (without the `\r\n` or `\n`).
   */
  selectLines(bytes, partitionIndex) {
    live(this);
    const view = readBytes(bytes, 'bytes', MAX_LISTING_BYTES);
    const selector = this.lineSelector(partitionIndex);
    try {
      return bySlices(view, Uint32Array, (slice, final, at) => {
        const {ranges, head} = selector.selectLines(slice, {final});
        // A line begun in an earlier slice starts `head.length` bytes before this one.
        if (head.length > 0) ranges[0] = at - head.length;
        for (let i = head.length > 0 ? 1 : 0; i < ranges.length; i++) ranges[i] += at;
        return ranges;
      });
    } finally {
      selector.free();
    }
  }

  /** Indices of a list already copied by `copyList`. */
  #indices(list) {
    const {keys, dirs} = reading(() => readObjectList(list, 'objects'), 'objects');
    return packed(keys, dirs, Int32Array, (p, d) => call(() => live(this).indexPacked(p, d)));
  }

  #checkListed() {
    if (this.#total > MAX_LISTED_PARTITIONS) {
      throw argError(`plan and stats support at most ${MAX_LISTED_PARTITIONS} partitions`);
    }
  }
}

/** Go's sanitizeKeyForPatternMatching: `key` without `prefix`, then without ONE leading '/'. */
export function sanitizeKeyForPatternMatching(key, prefix) {
  requireString(key, 'key');
  requireString(prefix, 'prefix');
  return call(() => wasm.sanitizeKeyForPatternMatching(key, prefix));
}

/** The prefix Go trims from keys: TrimSuffix(TrimSpace(sourceKey), "*") (Go's Unicode spaces). */
export function listingPrefix(sourceKey) {
  requireString(sourceKey, 'sourceKey');
  return call(() => wasm.listingPrefix(sourceKey));
}

/** 32-bit FNV-1a of the UTF-8 bytes of `text` (lone surrogates as U+FFFD), as Go's hash/fnv. */
export function fnv1a32(text) {
  requireString(text, 'text');
  return call(() => wasm.fnv1a32(text));
}

// ---- The bytes path: listings as newline-separated UTF-8 keys (src/objects/lines.rs) ----

/** Bytes per wasm call when a whole listing is given at once. */
const SLICE_BYTES = 1 << 20;
const TYPED_ARRAY = Object.getPrototypeOf(Uint8Array.prototype);
const getter = (name) => Object.getOwnPropertyDescriptor(TYPED_ARRAY, name).get;
const TAG = getter(Symbol.toStringTag);
const BUFFER = getter('buffer');
const BYTE_OFFSET = getter('byteOffset');
const BYTE_LENGTH = getter('byteLength');
const apply = Reflect.apply;
const EMPTY = new Uint8Array(0);

/**
 * A plain Uint8Array view of the caller's bytes (a Uint8Array or Buffer, read through the
 * intrinsic getters: no caller code runs), bounded by `bound` bytes.
 */
function readBytes(value, name, bound) {
  return reading(() => {
    if (apply(TAG, value, []) !== 'Uint8Array') {
      throw argError(`${name} must be a Uint8Array or Buffer, got ${describe(value)}`);
    }
    const length = apply(BYTE_LENGTH, value, []);
    if (length > bound) throw tooLarge(PartitionError, name, length, bound, 'bytes');
    return new Uint8Array(apply(BUFFER, value, []), apply(BYTE_OFFSET, value, []), length);
  }, name);
}

/** `{final}`: whether the stream ends with this chunk (default false). */
function readFinal(options) {
  return reading(() => {
    if (options === undefined || options === null) return false;
    if (!isPlainObject(options)) throw argError(`options must be an object, got ${describe(options)}`);
    kit.knownKeys(options, ['final'], 'options');
    const {final} = options;
    if (final === undefined || final === null) return false;
    if (typeof final !== 'boolean') throw argError(`options.final must be a boolean, got ${describe(final)}`);
    return final;
  }, 'options');
}

/**
 * `feed(slice, final, at)` over `view` in slices of SLICE_BYTES (`at`: where the slice starts;
 * an empty view is one empty final slice), the typed arrays it returns joined into one `Out`.
 */
function bySlices(view, Out, feed) {
  const parts = [];
  let n = 0;
  for (let at = 0; at < view.length || at === 0; at += SLICE_BYTES) {
    const end = Math.min(view.length, at + SLICE_BYTES);
    const part = feed(view.subarray(at, end), end === view.length, at);
    parts.push(part);
    n += part.length;
    if (end === view.length) break;
  }
  return concat(Out, parts, n);
}

function concat(Out, parts, n) {
  if (parts.length === 1) return parts[0];
  const out = new Out(n);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** The wasm splitter shared by LineSelector and LineIndexer. */
class LineStream extends WasmObject {
  constructor(inner, name) {
    super(inner, PartitionError, name);
  }

  /** Copies `chunk` into the splitter's input buffer, then runs `method` over it. */
  feed(chunk, options, method) {
    live(this);
    const view = readBytes(chunk, 'chunk', MAX_CHUNK_BYTES);
    const final = readFinal(options);
    const inner = live(this);
    return call(() => freedOnTrap(this, () => {
      const ptr = inner.reserve(view.length);
      new Uint8Array(wasm.wasmMemory().buffer, ptr, view.length).set(view);
      return {out: method(inner, view.length, final), inner};
    }));
  }

  /** Bytes of an unfinished line carried to the next chunk. */
  get carried() {
    return call(() => live(this).carried());
  }

  /** Forgets any carried line: the next chunk starts a new stream. */
  reset() {
    call(() => live(this).reset());
  }
}

/**
 * One partition's key lines of a listing given as bytes, chunk by chunk (from
 * `ObjectPartitioner#lineSelector`). A key split between chunks is carried inside, in wasm.
 */
class LineSelector extends LineStream {
  constructor(inner) {
    super(inner, 'LineSelector');
  }

  /**
   * The kept key lines that `chunk` completes: `ranges`, `[start, end)` byte pairs into `chunk`
   * (without `\r\n`/`\n`), and `head`: the bytes from earlier chunks of the line of
   * `ranges[0..2]` (then `ranges[0]` is 0), empty when it began in this chunk.
   */
  selectLines(chunk, options) {
    const {out, inner} = this.feed(chunk, options, (w, len, final) => w.select(len, final));
    const head = out.length > 0 && out[0] === 0 && inner.headLen() > 0 ? inner.head() : EMPTY;
    return {ranges: out, head};
  }

  /**
   * The kept key lines that `chunk` completes, as bytes, each followed by `\n` (a line begun
   * in earlier chunks whole): what `partkit objects` writes.
   */
  selectBytes(chunk, options) {
    return this.feed(chunk, options, (w, len, final) => w.selectBytes(len, final)).out;
  }
}

/** Every key line's partition of a listing given as bytes, chunk by chunk (`ObjectPartitioner#lineIndexer`). */
class LineIndexer extends LineStream {
  constructor(inner) {
    super(inner, 'LineIndexer');
  }

  /** The partition of every key line `chunk` completes, in order: an Int32Array. */
  indexLines(chunk, options) {
    return this.feed(chunk, options, (w, len, final) => w.index(len, final)).out;
  }
}
