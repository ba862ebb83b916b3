// UUID buckets for bulk imports: which `[dataset, bucket]` partition each imported item goes to.
// Type checks of JS values happen here; every value rule lives in the Rust core (src/imports).
import * as wasm from '#wasm/imports';
import {ImportBucketError, PartkitError, call as callWasm, describe, tooLarge} from './errors.mjs';
// partkit/imports exports its error classes too (the same classes as the root's).
export {PartkitError, ImportBucketError} from './errors.mjs';
import {MAX_BATCH_ITEMS, MAX_BATCH_UNITS, MAX_STRING} from './limits.mjs';
import {KIND, argumentKit, isPlainObject, kindOf} from './kit/args.mjs';

/** The NIL UUID, the bucket of dataset-level documents. */
export const NIL_UUID = '00000000-0000-0000-0000-000000000000';

const ENV_VAR = 'GTC_IMPORT_BUCKETS_DEFAULT';
// Packed references (see src/wasm/imports.rs).
const DATASET_NOT_OBJECT = 0xffffffff;
const DATASET_MISSING = 0xfffffffe;
const DATASET_NOT_STRING = 0xfffffffd;
const BUCKET_ABSENT = 0;
const BUCKET_NOT_STRING = 1;
const UUID_LEN = 36;

const kit = argumentKit(ImportBucketError, {base: PartkitError, maxString: MAX_STRING});
/** `reading(read, name)` runs `read` (reads of caller values); a foreign exception becomes INVALID_ARGUMENT. */
const {fail: argError, reading, requireString} = kit;
/** The option keys of assignImportBuckets, and of partitionKeyOf and groupByPartitionKey. */
const ASSIGN_OPTIONS = ['buckets', 'importId', 'datasetField', 'bucketField'];
const FIELD_OPTIONS = ['datasetField', 'bucketField'];
const call = (fn) => callWasm(fn, ImportBucketError);

function bounded(value, name) {
  if (value.length > MAX_STRING) throw tooLarge(ImportBucketError, name, value.length, MAX_STRING, 'UTF-16 code units');
  return value;
}

/** `[kind, number, text]` of `options.buckets` for wasm (src/wasm/imports.rs); read inside `reading`. */
function bucketsKind(value) {
  const kind = kindOf(value) === KIND.OBJECT && Array.isArray(value) ? KIND.ARRAY : kindOf(value);
  return [kind, kind === KIND.NUMBER ? value : 0, kind === KIND.STRING ? value.slice(0, 82) : undefined];
}


const hasOwn = Object.prototype.hasOwnProperty;
/** An own property, as `{...item}` copies them: never one inherited from a prototype. */
const own = (item, field) => (hasOwn.call(item, field) ? item[field] : undefined);

function readOptions(options, forAssign) {
  const o = reading(() => {
    if (options === undefined || options === null) options = {};
    else if (!isPlainObject(options)) throw argError(`options must be an object, got ${describe(options)}`);
    kit.knownKeys(options, forAssign ? ASSIGN_OPTIONS : FIELD_OPTIONS, 'options');
    const {datasetField = 'datasetName', bucketField = 'bucket'} = options;
    // both types are checked before either length
    if (typeof datasetField !== 'string') requireString(datasetField, 'options.datasetField');
    if (typeof bucketField !== 'string') requireString(bucketField, 'options.bucketField');
    requireString(datasetField, 'options.datasetField');
    requireString(bucketField, 'options.bucketField');
    if (!forAssign) return {datasetField, bucketField};
    const {importId, buckets} = options;
    if (importId !== undefined) requireString(importId, 'options.importId');
    return {datasetField, bucketField, importId, buckets: buckets === undefined ? undefined : bucketsKind(buckets)};
  }, 'options');
  if (!forAssign) return o;
  o.buckets = o.buckets === undefined ? importBucketsDefault() : call(() => wasm.checkImportBuckets(...o.buckets));
  return o;
}

/** `items` read once into a bounded copy. */
function readItems(items) {
  return reading(() => {
    if (!Array.isArray(items)) throw argError(`items must be an array, got ${describe(items)}`);
    const n = items.length;
    if (n > MAX_BATCH_ITEMS) throw tooLarge(ImportBucketError, 'items', n, MAX_BATCH_ITEMS, 'items');
    return Array.prototype.slice.call(items);
  }, 'items');
}

/** One joined string plus UTF-16 lengths (src/packed.rs). */
function packStrings(list) {
  const lens = new Uint32Array(list.length);
  for (let i = 0; i < list.length; i++) lens[i] = list[i].length;
  return [list.join(''), lens];
}

/**
 * Reads each item's dataset and bucket once, interning both: the packed form of src/imports.
 * Distinct strings are compared as JavaScript strings.
 */
function pack(items, datasetField, bucketField) {
  return reading(() => packItems(items, datasetField, bucketField), 'items');
}

function packItems(items, datasetField, bucketField) {
  const n = items.length;
  let units = 0;
  const datasetRefs = new Uint32Array(n);
  const bucketRefs = new Uint32Array(n);
  const datasets = [];
  const datasetIds = new Map();
  const buckets = [];
  const bucketIds = new Map();
  for (let i = 0; i < n; i++) {
    const item = items[i];
    if (!isPlainObject(item)) {
      datasetRefs[i] = DATASET_NOT_OBJECT;
      continue;
    }
    const dataset = own(item, datasetField);
    if (typeof dataset === 'string') {
      let id = datasetIds.get(dataset);
      if (id === undefined) {
        units += bounded(dataset, `items[${i}].${datasetField}`).length;
        id = datasets.length;
        datasets.push(dataset);
        datasetIds.set(dataset, id);
      }
      datasetRefs[i] = id;
    } else {
      datasetRefs[i] = dataset === undefined ? DATASET_MISSING : DATASET_NOT_STRING;
    }
    const bucket = own(item, bucketField);
    if (typeof bucket === 'string') {
      let id = bucketIds.get(bucket);
      if (id === undefined) {
        units += bounded(bucket, `items[${i}].${bucketField}`).length;
        id = buckets.length + 2;
        buckets.push(bucket);
        bucketIds.set(bucket, id);
      }
      bucketRefs[i] = id;
    } else {
      bucketRefs[i] = bucket === undefined || bucket === null ? BUCKET_ABSENT : BUCKET_NOT_STRING;
    }
  }
  if (units > MAX_BATCH_UNITS) {
    throw tooLarge(ImportBucketError, 'items (distinct datasets and buckets)', units, MAX_BATCH_UNITS, 'UTF-16 code units in all');
  }
  const [datasetsJoined, datasetLens] = packStrings(datasets);
  const [bucketsJoined, bucketLens] = packStrings(buckets);
  // Plain data for wasm, in the order of src/wasm/imports.rs `BatchArgs` (an array: read by index,
  // no property names to pass per call).
  const batch = [datasetField, bucketField, datasetsJoined, datasetLens, datasetRefs, bucketsJoined, bucketLens, bucketRefs];
  return {datasets, batch};
}

function splitUuids(joined) {
  const out = new Array(joined.length / UUID_LEN);
  for (let i = 0; i < out.length; i++) out[i] = joined.slice(i * UUID_LEN, (i + 1) * UUID_LEN);
  return out;
}

/**
 * The default bucket count N: `GTC_IMPORT_BUCKETS_DEFAULT` from `env` (default `process.env`,
 * none in browsers), else 5. Unset or blank means 5; otherwise decimal digits in [1, 50].
 * @throws ImportBucketError `BUCKETS_INVALID` for any other value.
 */
export function importBucketsDefault(env) {
  const text = reading(() => {
    if (env === undefined) env = globalThis.process?.env ?? {};
    else if (env === null || typeof env !== 'object') throw argError(`env must be an object, got ${describe(env)}`);
    const value = env[ENV_VAR];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'string' && typeof value !== 'number') throw argError(`env.${ENV_VAR} must be a string, got ${describe(value)}`);
    return bounded(String(value), `env.${ENV_VAR}`);
  }, 'env');
  return call(() => wasm.importBucketsDefault(text));
}

/**
 * Shallow copies of `items`, each with its bucket set: per dataset, items without a bucket get
 * `k = max(1, min(N, count))` buckets round-robin in input order; items with a bucket keep it,
 * normalised. Random v4 buckets, or with `importId` derived v5 buckets (idempotent retries).
 * Validates everything first: on error nothing is assigned. Input items are never mutated.
 */
export function assignImportBuckets(items, options) {
  items = readItems(items);
  const {datasetField, bucketField, importId, buckets} = readOptions(options, true);
  const p = pack(items, datasetField, bucketField);
  const [tableJoined, indices] = call(() => wasm.assignImportBuckets([buckets, importId, p.batch]));
  const table = splitUuids(tableJoined);
  const protoField = bucketField === '__proto__';
  const out = new Array(items.length);
  reading(() => fill(out, items, table, indices, bucketField, protoField), 'items');
  return out;
}

function fill(out, items, table, indices, bucketField, protoField) {
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    // Object.assign is several times faster than spread in V8 but uses [[Set]]: an own
    // `__proto__` key (JSON.parse makes those) must be copied as data, as spread does.
    const copy = hasOwn.call(item, '__proto__') ? {...item} : Object.assign({}, item);
    if (protoField) Object.defineProperty(copy, '__proto__', {value: table[indices[i]], writable: true, enumerable: true, configurable: true});
    else copy[bucketField] = table[indices[i]];
    out[i] = copy;
  }
}

/**
 * The partition key `[dataset, bucket]` of an item, the bucket normalised.
 * @throws ImportBucketError `ITEM_NOT_OBJECT`, `DATASET_MISSING`, `BUCKET_MISSING`, `BUCKET_NOT_UUID`.
 */
export function partitionKeyOf(item, options) {
  const {datasetField, bucketField} = readOptions(options, false);
  const [object, dataset, bucket] = reading(() => {
    const object = isPlainObject(item);
    return [object, object ? own(item, datasetField) : undefined, object ? own(item, bucketField) : undefined];
  }, 'item');
  const kind = kindOf;
  const text = (v, name) => (typeof v === 'string' ? bounded(v, name) : undefined);
  const normalized = call(() =>
    wasm.partitionKeyOf(object, kind(dataset), text(dataset, datasetField), kind(bucket), text(bucket, bucketField), datasetField, bucketField),
  );
  return [dataset, normalized];
}

/**
 * Items grouped by partition key `[dataset, normalised bucket]` for bulk writes: groups in order
 * of first appearance, items in input order within each group (the items themselves, not copies).
 */
export function groupByPartitionKey(items, options) {
  items = readItems(items);
  const {datasetField, bucketField} = readOptions(options, false);
  const p = pack(items, datasetField, bucketField);
  const [keyDatasets, keyBucketsJoined, itemGroups] = call(() => wasm.groupByPartitionKey(p.batch));
  const keyBuckets = splitUuids(keyBucketsJoined);
  const groups = new Array(keyDatasets.length);
  for (let g = 0; g < groups.length; g++) {
    groups[g] = {partitionKey: [p.datasets[keyDatasets[g]], keyBuckets[g]], items: []};
  }
  for (let i = 0; i < items.length; i++) groups[itemGroups[i]].items.push(items[i]);
  return groups;
}

/**
 * Whether `value` is a UUID string in the 8-4-4-4-12 hyphenated form, any case (the NIL UUID
 * too); braces, `urn:uuid:`, 32 bare digits and surrounding whitespace are not accepted.
 */
export function isUuid(value) {
  return typeof value === 'string' && value.length === UUID_LEN && call(() => wasm.isUuid(value));
}

/**
 * The canonical lower-case form of a UUID string.
 * @throws ImportBucketError `UUID_INVALID` when it is not a UUID (see `isUuid`).
 */
export function normalizeUuid(value) {
  if (typeof value !== 'string') throw argError(`value must be a string, got ${describe(value)}`);
  bounded(value, 'value');
  return call(() => wasm.normalizeUuid(value));
}
