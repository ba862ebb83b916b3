// UUID buckets for bulk imports: the shipped service's cases, determinism across calls and
// processes, name-based UUIDs checked against an independent implementation (Node's crypto),
// v4 bits, every validation error, no mutation, fast-check properties, and the CLI.
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const {execFileSync, spawnSync} = require('node:child_process');
const fc = require('fast-check');
const partkit = require('partkit');

const {
  NIL_UUID,
  assignImportBuckets,
  importBucketsDefault,
  partitionKeyOf,
  groupByPartitionKey,
  isUuid,
  normalizeUuid,
  ImportBucketError,
  PartkitError,
} = partkit;

const ROOT = path.join(__dirname, '..');
const DIST = path.join(ROOT, 'dist', 'index.cjs');
const CLI = path.join(ROOT, 'js', 'cli.mjs');

// ---------------------------------------------------------------- independent UUID helpers

const CANONICAL = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const hexBytes = (u) => Buffer.from(u.replace(/-/g, ''), 'hex');
const format = (b) => {
  const h = Buffer.from(b).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
};
/** RFC 9562 v5, written from the RFC with Node's SHA-1. */
function uuidV5(namespace, name) {
  const digest = crypto.createHash('sha1').update(hexBytes(namespace)).update(Buffer.from(name, 'utf8')).digest();
  const b = digest.subarray(0, 16);
  b[6] = (b[6] & 0x0f) | 0x50;
  b[8] = (b[8] & 0x3f) | 0x80;
  return format(b);
}
const NAMESPACE_URL = '6ba7b811-9dad-11d1-80b4-00c04fd430c8';
const IMPORT_NS = uuidV5(NAMESPACE_URL, 'urn:partkit:import-bucket:v1');
/** The documented derivation: v5 of "<bytes(id)>:<id>,<bytes(d)>:<d>,<j>" in IMPORT_NS. */
const derived = (importId, dataset, j) =>
  uuidV5(IMPORT_NS, `${Buffer.byteLength(importId)}:${importId},${Buffer.byteLength(dataset)}:${dataset},${j}`);
const version = (u) => parseInt(u[14], 16);
const variantIsRfc = (u) => (parseInt(u[19], 16) & 0xc) === 0x8;

const items = (n, dataset = 'ds', extra = {}) =>
  Array.from({length: n}, (_, i) => ({id: `item-${i}`, datasetName: dataset, ...extra}));
const countBy = (list, key) => list.reduce((m, x) => m.set(key(x), (m.get(key(x)) ?? 0) + 1), new Map());
const deepFreeze = (list) => Object.freeze(list.map((x) => (x && typeof x === 'object' ? Object.freeze(x) : x)));

function expectError(fn, code, message) {
  let error;
  try {
    fn();
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(ImportBucketError);
  expect(error).toBeInstanceOf(PartkitError);
  expect(error.name).toBe('ImportBucketError');
  expect(error.code).toBe(code);
  if (message !== undefined) expect(error.message).toBe(message);
  return error;
}

// ---------------------------------------------------------------- the shipped service's cases

describe('assignImportBuckets: shipped service cases', () => {
  test('10 items, N=3: exactly 3 distinct valid UUIDs, counts differ by at most 1', () => {
    const out = assignImportBuckets(items(10), {buckets: 3});
    const counts = countBy(out, (x) => x.bucket);
    expect(counts.size).toBe(3);
    expect(Math.max(...counts.values()) - Math.min(...counts.values())).toBeLessThanOrEqual(1);
    for (const x of out) {
      expect(isUuid(x.bucket)).toBe(true);
      expect(x.bucket).toMatch(CANONICAL);
    }
    out.forEach((x, i) => expect(x.bucket).toBe(out[i % 3].bucket));
  });

  test('pre-assigned buckets, NIL included, survive (normalised)', () => {
    const upper = 'F47AC10B-58CC-4372-A567-0E02B2C3D479';
    const input = [
      {id: 'a', datasetName: 'ds', bucket: NIL_UUID},
      {id: 'b', datasetName: 'ds'},
      {id: 'c', datasetName: 'ds', bucket: upper},
      {id: 'd', datasetName: 'ds', bucket: null},
    ];
    const out = assignImportBuckets(input, {buckets: 5});
    expect(out[0].bucket).toBe(NIL_UUID);
    expect(out[2].bucket).toBe(upper.toLowerCase());
    expect(out[1].bucket).not.toBe(out[3].bucket);
    expect([out[1].bucket, out[3].bucket]).not.toContain(NIL_UUID);
  });

  test('fewer items than N get one bucket each; an empty import is empty', () => {
    const out = assignImportBuckets(items(3), {buckets: 50});
    expect(new Set(out.map((x) => x.bucket)).size).toBe(3);
    expect(assignImportBuckets(items(1), {buckets: 50})).toHaveLength(1);
    expect(assignImportBuckets([], {buckets: 2})).toEqual([]);
  });

  test('several datasets in one import are bucketed independently', () => {
    const input = [...items(7, 'a'), ...items(4, 'b'), ...items(1, 'c')].sort(() => Math.random() - 0.5);
    const out = assignImportBuckets(input, {buckets: 3});
    const per = new Map();
    for (const x of out) {
      if (!per.has(x.datasetName)) per.set(x.datasetName, []);
      per.get(x.datasetName).push(x.bucket);
    }
    expect(new Set(per.get('a')).size).toBe(3);
    expect(new Set(per.get('b')).size).toBe(3);
    expect(new Set(per.get('c')).size).toBe(1);
    for (const list of per.values()) {
      const k = new Set(list).size;
      list.forEach((b, i) => expect(b).toBe(list[i % k]));
    }
    const all = new Set(out.map((x) => x.bucket));
    expect(all.size).toBe(7);
  });

  test('random buckets are v4 with the RFC variant, and differ between calls', () => {
    const a = assignImportBuckets(items(200), {buckets: 50});
    const b = assignImportBuckets(items(200), {buckets: 50});
    for (const x of a) {
      expect(version(x.bucket)).toBe(4);
      expect(variantIsRfc(x.bucket)).toBe(true);
      // Independently of the helper above: byte 6 high nibble 4, byte 8 top bits 10.
      const bytes = hexBytes(x.bucket);
      expect(bytes[6] >> 4).toBe(4);
      expect(bytes[8] & 0xc0).toBe(0x80);
    }
    const setA = new Set(a.map((x) => x.bucket));
    expect(b.some((x) => setA.has(x.bucket))).toBe(false);
  });
});

// ---------------------------------------------------------------- determinism with importId

describe('importId: derived v5 buckets', () => {
  test('the same importId gives the same buckets across calls', () => {
    const input = [...items(10, 'a'), ...items(5, 'b')];
    const x = assignImportBuckets(input, {buckets: 3, importId: 'import-1'});
    const y = assignImportBuckets(input, {buckets: 3, importId: 'import-1'});
    expect(y).toEqual(x);
    for (const o of x) {
      expect(version(o.bucket)).toBe(5);
      expect(variantIsRfc(o.bucket)).toBe(true);
    }
  });

  test('bucket j of dataset d matches an independent v5 implementation', () => {
    expect(IMPORT_NS).toBe('04165046-af2f-57a0-b4b6-08b285f3f5e3');
    expect(derived('import-1', 'ds', 0)).toBe('99c96268-95f0-5e8f-9675-2ead558b2345');
    const input = [...items(10, 'a'), ...items(3, 'données'), ...items(2, '🎉,1:x')];
    const out = assignImportBuckets(input, {buckets: 4, importId: 'retry-ü'});
    const seen = new Map();
    for (const o of out) {
      const i = seen.get(o.datasetName) ?? 0;
      seen.set(o.datasetName, i + 1);
      const k = Math.min(4, input.filter((x) => x.datasetName === o.datasetName).length);
      expect(o.bucket).toBe(derived('retry-ü', o.datasetName, i % k));
    }
  });

  test('distinct importIds give distinct buckets', () => {
    const input = items(10);
    const a = new Set(assignImportBuckets(input, {buckets: 5, importId: 'a'}).map((x) => x.bucket));
    const b = new Set(assignImportBuckets(input, {buckets: 5, importId: 'b'}).map((x) => x.bucket));
    expect(a.size).toBe(5);
    expect([...a].some((u) => b.has(u))).toBe(false);
    // Tuples that would collide under naive concatenation do not.
    const c = assignImportBuckets([{datasetName: 'c'}], {importId: 'ab'})[0].bucket;
    const d = assignImportBuckets([{datasetName: 'bc'}], {importId: 'a'})[0].bucket;
    expect(c).not.toBe(d);
  });

  test('the same importId gives the same buckets in another process', () => {
    const input = [...items(10, 'a'), ...items(3, 'b')];
    const script = `
      const p = require(${JSON.stringify(DIST)});
      const input = JSON.parse(process.argv[1]);
      process.stdout.write(JSON.stringify(p.assignImportBuckets(input, {buckets: 3, importId: 'cross-process'})));
    `;
    const child = JSON.parse(execFileSync(process.execPath, ['-e', script, JSON.stringify(input)], {encoding: 'utf8'}));
    expect(child).toEqual(assignImportBuckets(input, {buckets: 3, importId: 'cross-process'}));
    const randomScript = script.replace(", importId: 'cross-process'", '');
    const random = JSON.parse(execFileSync(process.execPath, ['-e', randomScript, JSON.stringify(input)], {encoding: 'utf8'}));
    expect(random[0].bucket).not.toBe(assignImportBuckets(input, {buckets: 3})[0].bucket);
  });
});

// ---------------------------------------------------------------- copies, fields, options

describe('copies and options', () => {
  test('input items are never mutated; results are shallow copies', () => {
    const nested = {deep: true};
    const input = deepFreeze([{id: 1, datasetName: 'a', nested}, {id: 2, datasetName: 'a', bucket: NIL_UUID}]);
    const out = assignImportBuckets(input, {buckets: 2});
    expect(input[0]).toEqual({id: 1, datasetName: 'a', nested});
    expect(out[0]).not.toBe(input[0]);
    expect(out[0].nested).toBe(nested);
    expect(out[1]).toEqual({id: 2, datasetName: 'a', bucket: NIL_UUID});
  });

  test('custom field names', () => {
    const out = assignImportBuckets([{ds: 'x'}, {ds: 'x', pk: NIL_UUID.toUpperCase()}], {
      datasetField: 'ds',
      bucketField: 'pk',
      buckets: 2,
    });
    expect(out[0].pk).toMatch(CANONICAL);
    expect(out[1].pk).toBe(NIL_UUID);
    expect(out[0]).not.toHaveProperty('bucket');
  });

  test('a bucket field named __proto__ becomes an own property', () => {
    const [out] = assignImportBuckets([{datasetName: 'x'}], {bucketField: '__proto__'});
    expect(Object.getOwnPropertyNames(out)).toContain('__proto__');
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
  });

  test('an own __proto__ key (as JSON.parse makes) is copied as data, not as a prototype', () => {
    const [item] = JSON.parse('[{"datasetName": "x", "__proto__": {"polluted": true}}]');
    const [out] = assignImportBuckets([item], {buckets: 1});
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(out.polluted).toBeUndefined();
    expect(Object.getOwnPropertyNames(out)).toEqual(['datasetName', '__proto__', 'bucket']);
  });

  test('fields are own properties; class instances come back as plain-object copies', () => {
    class Doc {
      constructor(id) {
        this.id = id;
        this.datasetName = 'docs';
      }
      get extra() {
        return 'from the prototype';
      }
    }
    const [out] = assignImportBuckets([new Doc(1)], {buckets: 1});
    expect(out).toEqual({id: 1, datasetName: 'docs', bucket: expect.stringMatching(CANONICAL)});
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expectError(
      () => assignImportBuckets([{}], {datasetField: 'toString'}),
      'DATASET_MISSING',
      'item 0 has no dataset: field "toString" is missing',
    );
    const proto = {datasetName: 'inherited', bucket: 'not a uuid'};
    expectError(() => assignImportBuckets([Object.create(proto)]), 'DATASET_MISSING');
  });

  test('N defaults to GTC_IMPORT_BUCKETS_DEFAULT, else 5', () => {
    const saved = process.env.GTC_IMPORT_BUCKETS_DEFAULT;
    try {
      delete process.env.GTC_IMPORT_BUCKETS_DEFAULT;
      expect(importBucketsDefault()).toBe(5);
      expect(new Set(assignImportBuckets(items(20)).map((x) => x.bucket)).size).toBe(5);
      process.env.GTC_IMPORT_BUCKETS_DEFAULT = '2';
      expect(importBucketsDefault()).toBe(2);
      expect(new Set(assignImportBuckets(items(20)).map((x) => x.bucket)).size).toBe(2);
      process.env.GTC_IMPORT_BUCKETS_DEFAULT = '99';
      expectError(() => assignImportBuckets(items(2)), 'BUCKETS_INVALID');
      expect(assignImportBuckets(items(2), {buckets: 1})).toHaveLength(2);
    } finally {
      if (saved === undefined) delete process.env.GTC_IMPORT_BUCKETS_DEFAULT;
      else process.env.GTC_IMPORT_BUCKETS_DEFAULT = saved;
    }
  });

  test('importBucketsDefault(env)', () => {
    expect(importBucketsDefault({})).toBe(5);
    expect(importBucketsDefault({GTC_IMPORT_BUCKETS_DEFAULT: undefined})).toBe(5);
    expect(importBucketsDefault({GTC_IMPORT_BUCKETS_DEFAULT: ''})).toBe(5);
    expect(importBucketsDefault({GTC_IMPORT_BUCKETS_DEFAULT: ' 12 '})).toBe(12);
    expect(importBucketsDefault({GTC_IMPORT_BUCKETS_DEFAULT: '50'})).toBe(50);
    expect(importBucketsDefault({GTC_IMPORT_BUCKETS_DEFAULT: '1'})).toBe(1);
    for (const bad of ['0', '51', '-3', '2.5', 'five', '1e1', '+4']) {
      expectError(
        () => importBucketsDefault({GTC_IMPORT_BUCKETS_DEFAULT: bad}),
        'BUCKETS_INVALID',
        `GTC_IMPORT_BUCKETS_DEFAULT must be an integer in [1, 50], got ${JSON.stringify(bad)}`,
      );
    }
    expectError(() => importBucketsDefault('x'), 'INVALID_ARGUMENT');
  });
});

// ---------------------------------------------------------------- validation

describe('validation: nothing is assigned on error', () => {
  const cases = [
    [{buckets: 0}, items(1), 'BUCKETS_INVALID', 'bucket count must be an integer in [1, 50], got 0'],
    [{buckets: 51}, items(1), 'BUCKETS_INVALID', 'bucket count must be an integer in [1, 50], got 51'],
    [{buckets: 2.5}, items(1), 'BUCKETS_INVALID', 'bucket count must be an integer in [1, 50], got 2.5'],
    [{buckets: NaN}, items(1), 'BUCKETS_INVALID', 'bucket count must be an integer in [1, 50], got NaN'],
    [{buckets: Infinity}, items(1), 'BUCKETS_INVALID', 'bucket count must be an integer in [1, 50], got Infinity'],
    [{buckets: '3'}, items(1), 'BUCKETS_INVALID', 'bucket count must be an integer in [1, 50], got "3"'],
    [{buckets: null}, items(1), 'BUCKETS_INVALID', 'bucket count must be an integer in [1, 50], got null'],
    [{}, [{datasetName: 'a'}, 'nope'], 'ITEM_NOT_OBJECT', 'item 1 is not an object'],
    [{}, [{datasetName: 'a'}, null], 'ITEM_NOT_OBJECT', 'item 1 is not an object'],
    [{}, [{datasetName: 'a'}, [1]], 'ITEM_NOT_OBJECT', 'item 1 is not an object'],
    [{}, [{datasetName: 'a'}, {}], 'DATASET_MISSING', 'item 1 has no dataset: field "datasetName" is missing'],
    [{}, [{datasetName: 3}], 'DATASET_MISSING', 'item 0 has no dataset: field "datasetName" is not a string'],
    [{}, [{datasetName: null}], 'DATASET_MISSING', 'item 0 has no dataset: field "datasetName" is not a string'],
    [{}, [{datasetName: ''}], 'DATASET_MISSING', 'item 0 has no dataset: field "datasetName" is an empty string'],
    [
      {},
      [{datasetName: 'a', bucket: '12'}],
      'BUCKET_NOT_UUID',
      'item 0: bucket field "bucket" is "12", which is not a uuid (expected 8-4-4-4-12 hex digits)',
    ],
    [
      {},
      [{datasetName: 'a', bucket: 7}],
      'BUCKET_NOT_UUID',
      'item 0: bucket field "bucket" is not a string (expected a uuid string, null or no field)',
    ],
    [
      {},
      [{datasetName: 'a', bucket: `{${NIL_UUID}}`}],
      'BUCKET_NOT_UUID',
      `item 0: bucket field "bucket" is "{${NIL_UUID}}", which is not a uuid (expected 8-4-4-4-12 hex digits)`,
    ],
    [{importId: ''}, items(1), 'IMPORT_ID_INVALID', 'import id must be a non-empty string'],
    [{importId: 5}, items(1), 'INVALID_ARGUMENT', 'options.importId must be a string, got the number 5'],
    [{datasetField: 1}, items(1), 'INVALID_ARGUMENT', 'options.datasetField must be a string, got the number 1'],
  ];
  test.each(cases)('%j on %j → %s', (options, input, code, message) => {
    const frozen = deepFreeze(input);
    const before = JSON.stringify(frozen);
    expectError(() => assignImportBuckets(frozen, options), code, message);
    expect(JSON.stringify(frozen)).toBe(before);
  });

  test('non-array items and non-object options', () => {
    expectError(() => assignImportBuckets('x'), 'INVALID_ARGUMENT', 'items must be an array, got the string "x"');
    expectError(() => assignImportBuckets([], 3), 'INVALID_ARGUMENT', 'options must be an object, got the number 3');
  });

  test('the first offending item in input order is reported', () => {
    const e = expectError(
      () => assignImportBuckets([{datasetName: 'a'}, {datasetName: 'a', bucket: 'x'}, 5]),
      'BUCKET_NOT_UUID',
    );
    expect(e.message).toMatch(/^item 1: /);
  });
});

// ---------------------------------------------------------------- partition keys and grouping

describe('partitionKeyOf and groupByPartitionKey', () => {
  test('partitionKeyOf returns [dataset, normalised bucket]', () => {
    expect(partitionKeyOf({datasetName: 'faq', bucket: NIL_UUID})).toEqual(['faq', NIL_UUID]);
    expect(partitionKeyOf({d: 'x', b: 'ABCDEF01-2345-6789-ABCD-EF0123456789'}, {datasetField: 'd', bucketField: 'b'})).toEqual([
      'x',
      'abcdef01-2345-6789-abcd-ef0123456789',
    ]);
    expectError(() => partitionKeyOf(null), 'ITEM_NOT_OBJECT', 'the item is not an object');
    expectError(() => partitionKeyOf({bucket: NIL_UUID}), 'DATASET_MISSING', 'the item has no dataset: field "datasetName" is missing');
    expectError(
      () => partitionKeyOf({datasetName: 'a'}),
      'BUCKET_MISSING',
      'the item has no bucket: field "bucket" is missing (assign buckets first)',
    );
    expectError(() => partitionKeyOf({datasetName: 'a', bucket: 'zz'}), 'BUCKET_NOT_UUID');
    expectError(() => partitionKeyOf({datasetName: 'a', bucket: 1}), 'BUCKET_NOT_UUID');
  });

  test('groups by [dataset, bucket] in order of first appearance, items in order', () => {
    const assigned = assignImportBuckets([...items(6, 'a'), ...items(4, 'b')], {buckets: 2, importId: 'g'});
    const groups = groupByPartitionKey(assigned);
    expect(groups.map((g) => g.partitionKey)).toEqual([
      ['a', derived('g', 'a', 0)],
      ['a', derived('g', 'a', 1)],
      ['b', derived('g', 'b', 0)],
      ['b', derived('g', 'b', 1)],
    ]);
    expect(groups[0].items.map((x) => x.id)).toEqual(['item-0', 'item-2', 'item-4']);
    expect(groups[0].items[0]).toBe(assigned[0]);
    for (const g of groups) for (const x of g.items) expect(partitionKeyOf(x)).toEqual(g.partitionKey);
  });

  test('case variants of one bucket are one group; errors name the item', () => {
    const u = 'f47ac10b-58cc-4372-a567-0e02b2c3d479';
    const groups = groupByPartitionKey([
      {datasetName: 'a', bucket: u},
      {datasetName: 'a', bucket: u.toUpperCase()},
    ]);
    expect(groups).toHaveLength(1);
    expect(groups[0].partitionKey).toEqual(['a', u]);
    expectError(
      () => groupByPartitionKey([{datasetName: 'a', bucket: u}, {datasetName: 'a'}]),
      'BUCKET_MISSING',
      'item 1 has no bucket: field "bucket" is missing (assign buckets first)',
    );
    expect(groupByPartitionKey([])).toEqual([]);
  });
});

// ---------------------------------------------------------------- UUID helpers

describe('isUuid and normalizeUuid', () => {
  test('accepted forms', () => {
    expect(isUuid(NIL_UUID)).toBe(true);
    expect(isUuid('FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF')).toBe(true);
    expect(isUuid(crypto.randomUUID())).toBe(true);
    for (const bad of [
      '',
      'f47ac10b58cc4372a5670e02b2c3d479',
      `{${NIL_UUID}}`,
      `urn:uuid:${NIL_UUID}`,
      ` ${NIL_UUID}`,
      'g47ac10b-58cc-4372-a567-0e02b2c3d479',
      'f47ac10b-58cc-4372-a5670e02b2c3d479-',
      null,
      undefined,
      42,
      {},
    ]) {
      expect(isUuid(bad)).toBe(false);
    }
  });

  test('normalizeUuid', () => {
    expect(normalizeUuid('F47AC10B-58CC-4372-A567-0E02B2C3D479')).toBe('f47ac10b-58cc-4372-a567-0e02b2c3d479');
    expectError(() => normalizeUuid('nope'), 'UUID_INVALID', '"nope" is not a uuid (expected 8-4-4-4-12 hex digits)');
    expectError(() => normalizeUuid(5), 'INVALID_ARGUMENT');
  });

  test('property: isUuid agrees with a regular expression; normalizeUuid lower-cases', () => {
    const re = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
    fc.assert(
      fc.property(fc.oneof(fc.uuid(), fc.string(), fc.stringOf(fc.constantFrom(...'0123456789abcdefABCDEF-'), {minLength: 34, maxLength: 38})), (s) => {
        expect(isUuid(s)).toBe(re.test(s));
        if (re.test(s)) expect(normalizeUuid(s)).toBe(s.toLowerCase());
      }),
      {numRuns: 500},
    );
  });
});

// ---------------------------------------------------------------- properties

describe('properties', () => {
  const DATASETS = ['a', 'b', 'données', '\u{1F389}'];
  const item = fc.record({
    datasetName: fc.constantFrom(...DATASETS),
    bucket: fc.option(fc.uuid(), {freq: 4, nil: undefined}),
    n: fc.integer(),
  });

  test('per dataset: k = min(N, count) buckets, round-robin, balanced; pre-assigned kept', () => {
    fc.assert(
      fc.property(fc.array(item, {maxLength: 200}), fc.integer({min: 1, max: 50}), fc.option(fc.string({minLength: 1}), {nil: undefined}), (input, n, importId) => {
        const frozen = deepFreeze(input.map((x) => (x.bucket === undefined ? {datasetName: x.datasetName, n: x.n} : x)));
        const before = JSON.stringify(frozen);
        const out = assignImportBuckets(frozen, {buckets: n, importId});
        expect(JSON.stringify(frozen)).toBe(before);
        expect(out).toHaveLength(frozen.length);
        for (const d of DATASETS) {
          const mine = out.filter((x, i) => x.datasetName === d && frozen[i].bucket === undefined).map((x) => x.bucket);
          if (mine.length === 0) continue;
          const k = Math.min(n, mine.length);
          const counts = countBy(mine, (b) => b);
          expect(counts.size).toBe(k);
          expect(Math.max(...counts.values()) - Math.min(...counts.values())).toBeLessThanOrEqual(1);
          mine.forEach((b, i) => {
            expect(b).toBe(mine[i % k]);
            expect(version(b)).toBe(importId === undefined ? 4 : 5);
            if (importId !== undefined) expect(b).toBe(derived(importId, d, i % k));
          });
        }
        out.forEach((x, i) => {
          const {bucket, ...rest} = x;
          expect(rest).toEqual({datasetName: frozen[i].datasetName, n: frozen[i].n});
          if (frozen[i].bucket !== undefined) expect(bucket).toBe(frozen[i].bucket.toLowerCase());
        });
        if (importId !== undefined) expect(assignImportBuckets(frozen, {buckets: n, importId})).toEqual(out);
      }),
      {numRuns: 200},
    );
  });

  test('grouping partitions the items exactly', () => {
    fc.assert(
      fc.property(fc.array(item, {maxLength: 100}), (input) => {
        const assigned = assignImportBuckets(input, {buckets: 3});
        const groups = groupByPartitionKey(assigned);
        expect(groups.reduce((s, g) => s + g.items.length, 0)).toBe(assigned.length);
        const keys = new Set(groups.map((g) => JSON.stringify(g.partitionKey)));
        expect(keys.size).toBe(groups.length);
        const flat = groups.flatMap((g) => g.items.map((x) => assigned.indexOf(x)));
        for (const g of groups) {
          const idx = g.items.map((x) => assigned.indexOf(x));
          expect(idx).toEqual([...idx].sort((p, q) => p - q));
        }
        expect(new Set(flat).size).toBe(assigned.length);
      }),
      {numRuns: 100},
    );
  });

  test('never throws anything but ImportBucketError on arbitrary input', () => {
    fc.assert(
      fc.property(fc.array(fc.anything(), {maxLength: 20}), fc.anything(), (input, buckets) => {
        try {
          assignImportBuckets(input, {buckets});
        } catch (e) {
          expect(e).toBeInstanceOf(ImportBucketError);
        }
        try {
          groupByPartitionKey(input);
        } catch (e) {
          expect(e).toBeInstanceOf(ImportBucketError);
        }
      }),
      {numRuns: 300},
    );
  });
});

test('100k items in one call', () => {
  const input = Array.from({length: 100000}, (_, i) => ({id: i, datasetName: `ds-${i % 7}`}));
  const out = assignImportBuckets(input, {buckets: 5, importId: 'big'});
  expect(out).toHaveLength(100000);
  expect(new Set(out.map((x) => x.bucket)).size).toBe(35);
  expect(groupByPartitionKey(out)).toHaveLength(35);
});

// ---------------------------------------------------------------- CLI

describe('partkit import-buckets', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'partkit-imports-'));
  afterAll(() => fs.rmSync(tmp, {recursive: true, force: true}));
  const cli = (args, input) => spawnSync(process.execPath, [CLI, 'import-buckets', ...args], {input, encoding: 'utf8'});

  test('JSON array in, JSON array out; deterministic with --import-id', () => {
    const file = path.join(tmp, 'items.json');
    fs.writeFileSync(file, JSON.stringify([...items(4, 'a'), {id: 'x', datasetName: 'b', bucket: NIL_UUID}]));
    const r = cli(['--buckets', '2', '--import-id', 'cli-1', file]);
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.map((x) => x.bucket)).toEqual([
      derived('cli-1', 'a', 0),
      derived('cli-1', 'a', 1),
      derived('cli-1', 'a', 0),
      derived('cli-1', 'a', 1),
      NIL_UUID,
    ]);
  });

  test('JSON lines in (stdin), JSON lines out', () => {
    const r = cli(['--buckets', '3', '-'], items(3, 'a').map((x) => JSON.stringify(x)).join('\n') + '\n');
    expect(r.status).toBe(0);
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(lines).toHaveLength(3);
    expect(new Set(lines.map((x) => x.bucket)).size).toBe(3);
  });

  test('errors: exit 1 with the code', () => {
    const r = cli(['--buckets', '0', '-'], '[]');
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('[BUCKETS_INVALID]');
    const bad = cli(['-'], '[{"datasetName": "a", "bucket": "x"}]');
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('[BUCKET_NOT_UUID] item 0');
  });
});
