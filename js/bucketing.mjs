// Bucketing and round robin: a drop-in for faros-airbyte-common's RoundRobinConfig contract.
// Type checks of JS values happen here; every value rule lives in the Rust core.
import * as wasm from '#wasm/bucketing';
import {BucketingError, PartkitError, WasmObject, call, describe, live, rethrow, tooLarge} from './errors.mjs';
// partkit/bucketing exports its error classes too (the same classes as the root's).
export {PartkitError, BucketingError} from './errors.mjs';
import {MAX_BATCH_ITEMS, MAX_BATCH_UNITS, MAX_RANGE_ITEMS, MAX_STRING} from './limits.mjs';
import {packedFor} from './packed.mjs';
import {KIND, argumentKit, distance, isPlainObject, kindOf} from './kit/args.mjs';

const {mapPacked} = packedFor({PackedStrings: wasm.PackedStrings, reserveMemory: wasm.reserveMemory, wasmMemory: wasm.wasmMemory});

const STATE_KEY = '__bucket_execution_state';
const MAX_LISTED_BUCKETS = 10000000;

const kit = argumentKit(BucketingError, {base: PartkitError, maxString: MAX_STRING});
/** `reading(read, name)` runs `read` (reads of caller values); a foreign exception becomes INVALID_ARGUMENT. */
const {fail: argError, reading, requireString} = kit;
const totalError = () =>
  new BucketingError('bucket_total must be a positive integer', 'BUCKET_TOTAL_INVALID');
function requireTotal(value) {
  if (typeof value !== 'number') throw totalError();
}
function requireLogger(logger, name = 'logger') {
  if (logger !== undefined && logger !== null && typeof logger !== 'function') {
    throw argError(`${name} must be a function, got ${describe(logger)}`);
  }
}

/**
 * The four bucketing fields of a config, each read once, as plain values safe to hand to wasm:
 * primitives as they are; `bucket_ranges` as an array is copied here (any proxy or getter runs
 * here, in JS); any other object stays an object, which `encode` sends as its kind only.
 */
function readConfig(config) {
  return reading(() => {
    if (!isPlainObject(config)) throw argError(`config must be an object, got ${describe(config)}`);
    const rr = config.round_robin_bucket_execution;
    const id = config.bucket_id;
    const total = config.bucket_total;
    const ranges = config.bucket_ranges;
    return {rr, id, total, ranges, rangeList: Array.isArray(ranges) ? plainRanges(ranges) : null};
  }, 'config');
}

/** A copy of `bucket_ranges` as an array, bounded. */
function plainRanges(ranges) {
  const n = ranges.length;
  if (n > MAX_RANGE_ITEMS) throw tooLarge(BucketingError, 'bucket_ranges', n, MAX_RANGE_ITEMS, 'items');
  return Array.prototype.slice.call(ranges);
}


/**
 * `[kinds, nums, joined, lens]`: the plain encoding of `[round_robin_bucket_execution,
 * bucket_id, bucket_total, bucket_ranges, last_executed_bucket_id]` that wasm decodes without
 * reading any JS value (docs/ARCHITECTURE.md, "The boundary rule"). Only `typeof` is asked of
 * the values; an array other than `bucket_ranges` is sent as an object (the rules treat both
 * alike).
 */
function encode(c, last) {
  const kinds = [];
  const nums = [];
  const texts = [];
  const put = (v, name) => {
    const kind = kindOf(v);
    if (kind === KIND.STRING) {
      if (v.length > MAX_STRING) throw tooLarge(BucketingError, name, v.length, MAX_STRING, 'UTF-16 code units');
      texts.push(v);
    }
    kinds.push(kind);
    nums.push(kind === KIND.NUMBER ? v : 0);
  };
  put(c.rr, 'round_robin_bucket_execution');
  put(c.id, 'bucket_id');
  put(c.total, 'bucket_total');
  if (c.rangeList) {
    kinds.push(KIND.ARRAY);
    nums.push(c.rangeList.length);
    // By index: a hole is `undefined`, as `Array.from` reads it.
    for (let i = 0; i < c.rangeList.length; i++) {
      const item = c.rangeList[i];
      if (typeof item !== 'object' || item === null) {
        put(item, `bucket_ranges[${i}]`);
      } else {
        kinds.push(KIND.OBJECT); // nested arrays too: only strings are ranges
        nums.push(0);
      }
    }
  } else {
    put(c.ranges, 'bucket_ranges');
  }
  put(last, 'last_executed_bucket_id');
  const lens = new Uint32Array(texts.length);
  let units = 0;
  for (let i = 0; i < texts.length; i++) {
    lens[i] = texts[i].length;
    units += lens[i];
  }
  if (units > MAX_BATCH_UNITS) throw tooLarge(BucketingError, 'the config strings', units, MAX_BATCH_UNITS, 'UTF-16 code units in all');
  return [Uint8Array.from(kinds), Float64Array.from(nums), texts.join(''), lens];
}

/** `state?.__bucket_execution_state?.last_executed_bucket_id`, type-checked, read once. */
function readLast(state) {
  return reading(() => {
    if (state === undefined || state === null) return undefined;
    if (!isPlainObject(state)) {
      throw new BucketingError(`state must be an object, got ${describe(state)}`, 'BUCKET_STATE_INVALID');
    }
    const inner = state[STATE_KEY];
    if (inner === undefined || inner === null) return undefined;
    if (!isPlainObject(inner)) {
      throw new BucketingError(`${STATE_KEY} must be an object, got ${describe(inner)}`, 'BUCKET_STATE_INVALID');
    }
    return inner.last_executed_bucket_id;
  }, 'state');
}

/** A value for a log line; never throws. */
function printable(value) {
  if (value === undefined || value === null) return '';
  try {
    return String(value);
  } catch {
    try {
      return Object.prototype.toString.call(value);
    } catch {
      return '[object]';
    }
  }
}

/**
 * The 1-based bucket of `data`: HMAC-MD5(key, data), first 8 hex digits as an unsigned
 * 32-bit integer, modulo `bucketTotal`, plus 1.
 */
export function bucket(key, data, bucketTotal = 1) {
  requireString(key, 'key');
  requireString(data, 'data');
  requireTotal(bucketTotal);
  try {
    return wasm.bucket(key, data, bucketTotal);
  } catch (error) {
    rethrow(error, BucketingError);
  }
}

/** Buckets of every string in `data`, in one call: a Uint32Array. */
export function bucketMany(key, data, bucketTotal = 1) {
  requireString(key, 'key');
  requireTotal(bucketTotal);
  return mapPacked(data, 'data', kit, Uint32Array, (p) => call(() => wasm.bucketUtf16(key, bucketTotal, p), BucketingError));
}

/** A bucketer bound to one key and total that keeps its HMAC key state between calls. */
export class Bucketer extends WasmObject {
  #key;
  #total;

  constructor(key, bucketTotal = 1) {
    requireString(key, 'key');
    requireTotal(bucketTotal);
    super(call(() => new wasm.Bucketer(key, bucketTotal)), BucketingError, 'Bucketer');
    this.#key = key;
    this.#total = bucketTotal;
  }

  get key() {
    return this.#key;
  }

  get bucketTotal() {
    return this.#total;
  }

  bucket(data) {
    live(this);
    requireString(data, 'data');
    return call(() => live(this).bucket(data), BucketingError);
  }

  bucketMany(data) {
    live(this);
    return mapPacked(data, 'data', kit, Uint32Array, (p) => call(() => live(this).bucketUtf16(p), BucketingError));
  }
}

/** The four keys of a config that bucketing reads. */
const CONFIG_KEYS = ['round_robin_bucket_execution', 'bucket_id', 'bucket_total', 'bucket_ranges'];

/**
 * Keys of `config` that nearly match one of the four bucketing keys (case, `_` or camelCase,
 * an edit or two: `bucket_totl`, `bucketTotal`): faros ignores unknown keys (a connector config
 * has many), so these are warnings, never errors. Each is `{code: 'BUCKET_CONFIG_NEAR_MISS',
 * path: [key], key, suggestion, message}`.
 */
export function bucketingConfigWarnings(config) {
  const keys = reading(() => {
    if (!isPlainObject(config)) throw argError(`config must be an object, got ${describe(config)}`);
    return Object.keys(config);
  }, 'config');
  const warnings = [];
  for (const key of keys) {
    if (CONFIG_KEYS.includes(key) || key.length > 64) continue;
    const suggestion = nearMiss(key);
    if (suggestion === undefined) continue;
    warnings.push({
      code: 'BUCKET_CONFIG_NEAR_MISS',
      path: [key],
      key,
      suggestion,
      message: `config.${key} is not a bucketing key and is ignored: did you mean ${suggestion}?`,
    });
  }
  return warnings;
}

/**
 * The bucketing key `key` nearly matches, if any: case, `_`/`-` and camelCase aside, at most two
 * edits, one for `bucket_id` (so a connector's own `bucket`, an S3 bucket's name, is not taken for
 * a misspelt `bucket_id`).
 */
function nearMiss(key) {
  const fold = (s) => s.toLowerCase().replace(/[_-]/g, '');
  const k = fold(key);
  for (const name of CONFIG_KEYS) {
    const n = fold(name);
    const edits = n.length < 10 ? 1 : 2;
    if (k === n || (Math.abs(k.length - n.length) <= edits && distance(k, n) <= edits)) return name;
  }
  return undefined;
}

/**
 * Validates a config; throws BucketingError with faros' messages. With a logger, each key that
 * nearly matches a bucketing key (`bucketingConfigWarnings`) is logged as a warning first.
 */
export function validateBucketingConfig(config, logger) {
  requireLogger(logger);
  const c = readConfig(config);
  if (logger) for (const w of bucketingConfigWarnings(config)) logger(`Warning: ${w.message}`);
  const ignored = call(() => wasm.configCall(0, ...encode(c)), BucketingError)[0] === 1;
  if (ignored && logger) {
    const shown = c.rangeList ? c.rangeList.map(printable).join(',') : printable(c.ranges);
    logger(`bucket_ranges ${shown} ignored because round_robin_bucket_execution is not enabled`);
  }
}

/** The bucket to run next: round robin over all buckets, or over `bucket_ranges`. */
export function nextBucketId(config, state) {
  const c = readConfig(config);
  const last = readLast(state);
  return call(() => wasm.configCall(3, ...encode(c, last)), BucketingError)[0];
}

/**
 * With round robin on: `{config: {...config, bucket_id: next}, state: {...state,
 * __bucket_execution_state: {last_executed_bucket_id: next}}}`. Otherwise the inputs as-is.
 * Inputs are never mutated.
 */
export function applyRoundRobinBucketing(config, state, logger) {
  requireLogger(logger);
  const c = readConfig(config);
  if (!call(() => wasm.configCall(2, ...encode(c)), BucketingError)[0]) return {config, state};
  const last = readLast(state);
  const next = call(() => wasm.configCall(3, ...encode(c, last)), BucketingError)[0];
  const applied = reading(() => ({
    config: {...config, bucket_id: next},
    state: {...state, [STATE_KEY]: {last_executed_bucket_id: next}},
  }), 'config');
  if (logger) logger(`Using round robin bucket execution. Bucket id: ${next}`);
  return applied;
}

/** The bucket ids of the next `runs` runs, starting from `state`. */
export function roundRobinSchedule(config, state, runs) {
  if (typeof runs !== 'number') throw argError(`runs must be a number, got ${describe(runs)}`);
  const c = readConfig(config);
  const last = readLast(state);
  return Array.from(call(() => wasm.roundRobinSchedule(...encode(c, last), runs), BucketingError));
}

/** Per-bucket counts of a sample of entity ids, with min/max/mean and relative spread. */
export function bucketDistribution(key, data, bucketTotal) {
  requireString(key, 'key');
  requireTotal(bucketTotal);
  const packed = mapPacked(data, 'data', kit, Uint32Array, (p) => call(() => wasm.bucketUtf16(key, bucketTotal, p), BucketingError));
  // [min, max, mean, spread, count_1, …, count_total]
  const stats = call(() => wasm.distributionOf(bucketTotal, packed), BucketingError);
  const counts = Array.from(stats.subarray(4));
  return {
    bucketTotal,
    entities: packed.length,
    counts,
    min: stats[0],
    max: stats[1],
    mean: stats[2],
    spread: stats[3],
  };
}

/** The eligible buckets of `bucket_ranges` for a total. */
export class BucketSet extends WasmObject {
  constructor(bucketTotal, bucketRanges) {
    const c = reading(() => ({
      total: bucketTotal,
      ranges: bucketRanges,
      rangeList: Array.isArray(bucketRanges) ? plainRanges(bucketRanges) : null,
    }), 'bucketRanges');
    super(call(() => new wasm.BucketSet(...encode(c)), BucketingError), BucketingError, 'BucketSet');
  }

  /** The smallest eligible bucket greater than `bucketId`, wrapping to the smallest. */
  next(bucketId) {
    live(this);
    if (typeof bucketId !== 'number') {
      throw argError(`bucketId must be a number, got ${describe(bucketId)}`);
    }
    return call(() => live(this).next(bucketId), BucketingError);
  }

  /** The eligible buckets, ascending. */
  buckets() {
    live(this);
    return Array.from(call(() => live(this).buckets(MAX_LISTED_BUCKETS), BucketingError));
  }

  /** How many buckets are eligible. */
  get size() {
    return call(() => live(this).size(), BucketingError);
  }

  /** Whether `bucketId` is eligible. */
  has(bucketId) {
    const inner = live(this);
    return typeof bucketId === 'number' && call(() => inner.has(bucketId), BucketingError);
  }
}

const CREATE = Symbol('Bucketing.create');

/** Validation, round robin and filtering in one object, as in faros-airbyte-common. */
export class Bucketing {
  #partitionKey;
  #bucketId;
  #bucketTotal;
  #state;
  #bucketer;

  constructor(token, partitionKey, bucketId, bucketTotal, state) {
    if (token !== CREATE) throw argError('use Bucketing.create({partitionKey, config, state, logger})');
    this.#partitionKey = partitionKey;
    this.#bucketId = bucketId;
    this.#bucketTotal = bucketTotal;
    this.#state = state;
    this.#bucketer = new Bucketer(partitionKey, bucketTotal);
  }

  /** Validates the config, applies round robin, and keeps the active bucket. */
  static create(options) {
    const {partitionKey, config, state, logger} = reading(() => {
      if (!isPlainObject(options)) {
        throw argError(`options must be an object {partitionKey, config, state?, logger?}, got ${describe(options)}`);
      }
      kit.knownKeys(options, ['partitionKey', 'config', 'state', 'logger'], 'options');
      const {partitionKey, config, state, logger} = options;
      return {partitionKey, config, state, logger};
    }, 'options');
    requireString(partitionKey, 'partitionKey');
    validateBucketingConfig(config, logger);
    const applied = applyRoundRobinBucketing(config, state, logger);
    const c = readConfig(applied.config);
    const [id, total] = call(() => wasm.configCall(1, ...encode(c)), BucketingError);
    return new Bucketing(CREATE, partitionKey, id, total, applied.state ?? {});
  }

  /** The items whose key falls in the active bucket, in input order. */
  filter(items, getKey, options) {
    const {n, logger, entityName} = reading(() => {
      if (!Array.isArray(items)) throw argError(`items must be an array, got ${describe(items)}`);
      if (typeof getKey !== 'function') throw argError(`getKey must be a function, got ${describe(getKey)}`);
      if (options !== undefined && options !== null && !isPlainObject(options)) {
        throw argError(`options must be an object, got ${describe(options)}`);
      }
      if (options !== undefined && options !== null) kit.knownKeys(options, ['logger', 'entityName'], 'options');
      const logger = options?.logger;
      requireLogger(logger, 'options.logger');
      const entityName = options?.entityName ?? 'entities';
      if (typeof entityName !== 'string') {
        throw argError(`options.entityName must be a string, got ${describe(entityName)}`);
      }
      const n = items.length;
      if (n > MAX_BATCH_ITEMS) throw tooLarge(BucketingError, 'items', n, MAX_BATCH_ITEMS, 'items');
      return {n, logger, entityName};
    }, 'options');
    const list = reading(() => Array.prototype.slice.call(items, 0, n), 'items');
    const keys = new Array(n);
    for (let i = 0; i < n; i++) {
      const key = getKey(list[i]);
      if (typeof key !== 'string') {
        throw argError(`getKey must return a string, got ${describe(key)} for item ${i}`);
      }
      keys[i] = key;
    }
    const buckets = this.#bucketer.bucketMany(keys);
    const selected = [];
    const selectedKeys = [];
    for (let i = 0; i < n; i++) {
      if (buckets[i] === this.#bucketId) {
        selected.push(list[i]);
        selectedKeys.push(keys[i]);
      }
    }
    if (logger) {
      const prefix = `Bucketing (${this.#partitionKey} bucket ${this.#bucketId}/${this.#bucketTotal}):`;
      const show = (k) => (k.length ? k.join(', ') : '<none>');
      logger(`${prefix} visible ${entityName} (${keys.length}) -> ${show(keys)}`);
      logger(`${prefix} selected ${entityName} (${selectedKeys.length}) -> ${show(selectedKeys)}`);
    }
    return selected;
  }

  getState() {
    return this.#state;
  }

  getBucketId() {
    return this.#bucketId;
  }

  getBucketTotal() {
    return this.#bucketTotal;
  }
}

const SPEC_PROPERTIES = [
  ['round_robin_bucket_execution', {
    type: 'boolean',
    title: 'Round Robin Bucket Execution',
    description:
      'Enable round-robin execution of buckets. When enabled, the connector processes one bucket per run, automatically advancing the bucket between runs via state.',
    default: false,
  }],
  ['bucket_total', {
    type: 'integer',
    title: 'Total Number of Buckets',
    description:
      'Total number of buckets to partition entities for parallel processing. bucket_id should be less than or equal to this number.',
    minimum: 1,
    default: 1,
  }],
  ['bucket_id', {
    type: 'integer',
    title: 'Bucket Number',
    description:
      'Bucket number for partitioning and parallel processing. Used to distribute entities across multiple sync instances.',
    minimum: 1,
    default: 1,
  }],
  ['bucket_ranges', {
    type: 'array',
    items: {type: 'string'},
    title: 'Bucket Ranges',
    description:
      "Optional list of bucket ranges for round-robin execution (e.g., ['1-3', '5-7']). Only used when round_robin_bucket_execution is enabled.",
    examples: [['1-3', '5', '7-9']],
  }],
];

/**
 * The spec's four JSON-Schema properties in the recommended order, ready to merge into a
 * connector's spec.json `properties`. With `order`, they get `order`, `order + 1`, ….
 */
export function bucketingSpecProperties(options = {}) {
  const order = reading(() => {
    if (!isPlainObject(options)) throw argError(`options must be an object, got ${describe(options)}`);
    kit.knownKeys(options, ['order'], 'options');
    return options.order;
  }, 'options');
  if (order !== undefined && !Number.isSafeInteger(order)) {
    throw argError(`options.order must be an integer, got ${describe(order)}`);
  }
  const properties = {};
  SPEC_PROPERTIES.forEach(([name, schema], i) => {
    properties[name] = structuredClone(schema);
    if (order !== undefined) properties[name].order = order + i;
  });
  return properties;
}
