// Bucketing: spec vectors, faros reference behaviour, a differential test against Node's
// crypto, round robin, and robustness against arbitrary input.
const crypto = require('crypto');
const fc = require('fast-check');
const partkit = require('partkit');
const {thrown} = require('./support/thrown');

const {
  bucket, bucketMany, Bucketer, validateBucketingConfig, nextBucketId, applyRoundRobinBucketing,
  Bucketing, BucketSet, BucketingError, PartkitError, roundRobinSchedule, bucketingSpecProperties,
  bucketDistribution,
} = partkit;

const GITHUB = 'farosai/airbyte-github-source';

/** The faros algorithm, written independently over Node's crypto. */
function reference(key, data, total) {
  const hex = crypto.createHmac('md5', key).update(data).digest('hex').substring(0, 8);
  return (parseInt(hex, 16) % total) + 1;
}

describe('bucket()', () => {
  test.each([
    ['facebook/react', 12, 9],
    ['torvalds/linux', 12, 9],
    ['openai/gpt', 7, 3],
    ['openai/evals', 7, 1],
    ['vercel/next.js', 12, 7],
    ['octo-org/hello-world', 10, 6],
    ['octo-org/repo', 10, 4],
    ['myco/frontend', 10, 8],
    ['myco/backend', 10, 7],
  ])('spec vector %s / %i => %i', (data, total, want) => {
    expect(bucket(GITHUB, data, total)).toBe(want);
    expect(bucketMany(GITHUB, [data], total)[0]).toBe(want);
    expect(new Bucketer(GITHUB, total).bucket(data)).toBe(want);
  });

  test('reference page example and default total', () => {
    expect(bucket('test-key', 'test-data', 5)).toBe(2);
    expect(bucket('test-key', 'test-data')).toBe(1);
  });

  test('the key namespaces assignments', () => {
    const repos = Array.from({length: 200}, (_, i) => `org/repo-${i}`);
    const a = bucketMany('key-a', repos, 10);
    const b = bucketMany('key-b', repos, 10);
    expect(Array.from(a)).not.toEqual(Array.from(b));
  });

  test('stable across processes', () => {
    const {execFileSync} = require('child_process');
    const out = execFileSync(process.execPath, [
      '-e', `process.stdout.write(String(require(${JSON.stringify(require.resolve('partkit'))}).bucket('k', 'stable', 1000)))`,
    ]);
    expect(Number(out.toString())).toBe(bucket('k', 'stable', 1000));
  });

  test.each([[0], [-1], [2.5], [NaN], [Infinity], [-Infinity], [2 ** 53], ['5'], [null], [{}], [5n]])(
    'total %p throws bucket_total must be a positive integer',
    (total) => {
      const e = thrown(() => bucket('k', 'd', total));
      expect(e).toBeInstanceOf(BucketingError);
      expect(e).toBeInstanceOf(PartkitError);
      expect(e.code).toBe('BUCKET_TOTAL_INVALID');
      expect(e.message).toMatch(/^bucket_total must be (a positive integer|at most 4294967295)$/);
    },
  );

  test('totals up to 2^32 - 1 work like the reference', () => {
    for (const total of [1, 2, 3, 1000, 2 ** 31, 2 ** 32 - 1]) {
      expect(bucket('k', 'x', total)).toBe(reference('k', 'x', total));
    }
    expect(thrown(() => bucket('k', 'x', 2 ** 32)).message).toBe('bucket_total must be at most 4294967295');
  });

  test('non-string key or data', () => {
    for (const bad of [1, null, undefined, {}, [], Symbol('s')]) {
      expect(thrown(() => bucket(bad, 'd', 3)).code).toBe('INVALID_ARGUMENT');
      expect(thrown(() => bucket('k', bad, 3)).code).toBe('INVALID_ARGUMENT');
    }
    expect(thrown(() => bucketMany('k', 'abc', 3)).code).toBe('INVALID_ARGUMENT');
    expect(thrown(() => bucketMany('k', ['a', 1], 3)).message).toBe('data[1] must be a string, got the number 1');
  });
});

describe('differential against Node crypto', () => {
  function randomStrings(seed, n) {
    return fc.sample(
      fc.oneof(
        fc.constant(''),
        fc.string({maxLength: 40}),
        fc.string({unit: 'grapheme', maxLength: 20}),
        fc.string({unit: 'binary', maxLength: 20}),
        fc.string({unit: fc.constantFrom('é', '日', '🎉', '\u{1F600}', 'a', '/', '\uD800', '\uDC00'), maxLength: 12}),
      ),
      {seed, numRuns: n},
    );
  }

  test.each([
    ['farosai/airbyte-github-source', 12, 1],
    ['', 7, 2],
    ['ключ-🎉', 1000, 3],
    ['k'.repeat(100), 2 ** 32 - 1, 4],
    ['farosai/airbyte-jira-source', 1, 5],
  ])('10,000 strings, key %p, total %i', (key, total, seed) => {
    const data = randomStrings(seed, 10000);
    const want = data.map((d) => reference(key, d, total));
    expect(Array.from(bucketMany(key, data, total))).toEqual(want);
    expect(Array.from(new Bucketer(key, total).bucketMany(data))).toEqual(want);
    const single = data.slice(0, 2000).map((d) => bucket(key, d, total));
    expect(single).toEqual(want.slice(0, 2000));
  });

  test('lone surrogates split across adjacent items', () => {
    const data = ['a\uD83C', '\uDF89b', '\uD83C', '\uDF89', '\uDF89\uD83C', 'x'];
    expect(Array.from(bucketMany('k', data, 1000))).toEqual(data.map((d) => reference('k', d, 1000)));
  });
});

describe('validateBucketingConfig', () => {
  const msg = (config, logger) => thrown(() => validateBucketingConfig(config, logger));

  test('defaults are valid', () => {
    expect(() => validateBucketingConfig({})).not.toThrow();
    expect(() => validateBucketingConfig({bucket_total: 5, bucket_id: 5})).not.toThrow();
  });

  test.each([
    [{bucket_total: 0}, 'bucket_total must be a positive integer', 'BUCKET_TOTAL_INVALID'],
    [{bucket_total: -3}, 'bucket_total must be a positive integer', 'BUCKET_TOTAL_INVALID'],
    [{bucket_total: '2.7'}, 'bucket_total must be a positive integer', 'BUCKET_TOTAL_INVALID'],
    [{bucket_total: 2.5}, 'bucket_total must be a positive integer', 'BUCKET_TOTAL_INVALID'],
    [{bucket_total: NaN}, 'bucket_total must be a positive integer', 'BUCKET_TOTAL_INVALID'],
    [{bucket_id: 2}, 'bucket_id must be between 1 and 1', 'BUCKET_ID_OUT_OF_RANGE'],
    [{bucket_id: 0, bucket_total: 3}, 'bucket_id must be between 1 and 3', 'BUCKET_ID_OUT_OF_RANGE'],
    [{bucket_id: 4, bucket_total: 3}, 'bucket_id must be between 1 and 3', 'BUCKET_ID_OUT_OF_RANGE'],
    [{bucket_id: '3abc', bucket_total: 5}, 'bucket_id must be between 1 and 5', 'BUCKET_ID_OUT_OF_RANGE'],
    [{bucket_id: 2.5, bucket_total: 5}, 'bucket_id must be between 1 and 5', 'BUCKET_ID_OUT_OF_RANGE'],
    [{round_robin_bucket_execution: true, bucket_total: 5, bucket_ranges: []}, 'bucket_ranges cannot be empty', 'BUCKET_RANGES_EMPTY'],
    [{round_robin_bucket_execution: true, bucket_total: 5, bucket_ranges: ' , '}, 'bucket_ranges cannot be empty', 'BUCKET_RANGES_EMPTY'],
    [{round_robin_bucket_execution: true, bucket_total: 5, bucket_ranges: '1-2-3'},
      "Invalid range format: 1-2-3. Valid formats are: single number (e.g., '7') or number range (e.g., '3-5')", 'BUCKET_RANGE_FORMAT'],
    [{round_robin_bucket_execution: true, bucket_total: 5, bucket_ranges: '-1'}, 'Invalid number in range: ', 'BUCKET_RANGE_NUMBER'],
    [{round_robin_bucket_execution: true, bucket_total: 5, bucket_ranges: '1-'}, 'Invalid number in range: ', 'BUCKET_RANGE_NUMBER'],
    [{round_robin_bucket_execution: true, bucket_total: 5, bucket_ranges: '2.7'}, 'Invalid number in range: 2.7', 'BUCKET_RANGE_NUMBER'],
    [{round_robin_bucket_execution: true, bucket_total: 5, bucket_ranges: ['3abc']}, 'Invalid number in range: 3abc', 'BUCKET_RANGE_NUMBER'],
    [{round_robin_bucket_execution: true, bucket_total: 5, bucket_ranges: '1 2'}, 'Invalid number in range: 1 2', 'BUCKET_RANGE_NUMBER'],
    [{round_robin_bucket_execution: true, bucket_total: 5, bucket_ranges: '4-2'}, 'Invalid range 4-2: end cannot be less than start', 'BUCKET_RANGE_ORDER'],
    [{round_robin_bucket_execution: true, bucket_total: 5, bucket_ranges: '3-6'}, 'Invalid bucket range 3-6: values must be between 1 and 5', 'BUCKET_RANGE_BOUNDS'],
    [{round_robin_bucket_execution: true, bucket_total: 5, bucket_ranges: '0'}, 'Invalid bucket range 0: values must be between 1 and 5', 'BUCKET_RANGE_BOUNDS'],
    [{round_robin_bucket_execution: true, bucket_total: 5, bucket_ranges: ['1', 2]}, 'bucket_ranges must be a string or an array of strings', 'BUCKET_RANGES_TYPE'],
    [{round_robin_bucket_execution: 'false'}, 'round_robin_bucket_execution must be a boolean', 'BUCKET_CONFIG_INVALID'],
  ])('%j', (config, message, code) => {
    const e = msg(config);
    expect(e).toBeInstanceOf(BucketingError);
    expect(e.message).toBe(message);
    expect(e.code).toBe(code);
  });

  test('logs (not throws) when ranges are set without round robin', () => {
    const logs = [];
    validateBucketingConfig({bucket_total: 3, bucket_ranges: ['1-3', '5']}, (m) => logs.push(m));
    validateBucketingConfig({bucket_total: 3, bucket_ranges: '9-1'}, (m) => logs.push(m));
    expect(logs).toEqual([
      'bucket_ranges 1-3,5 ignored because round_robin_bucket_execution is not enabled',
      'bucket_ranges 9-1 ignored because round_robin_bucket_execution is not enabled',
    ]);
    validateBucketingConfig({bucket_total: 3, bucket_ranges: ''}, () => {
      throw new Error('empty string is falsy and not logged');
    });
  });

  test('numeric strings are accepted, like faros', () => {
    expect(() => validateBucketingConfig({bucket_total: '5', bucket_id: '3'})).not.toThrow();
  });

  test('a non-object config', () => {
    for (const bad of [null, undefined, 5, 'x', []]) {
      expect(msg(bad).code).toBe('INVALID_ARGUMENT');
    }
  });
});

describe('round robin', () => {
  const run = (config, state, n) => {
    const seq = [];
    for (let i = 0; i < n; i++) {
      ({state} = applyRoundRobinBucketing(config, state));
      seq.push(state.__bucket_execution_state.last_executed_bucket_id);
    }
    return seq;
  };

  test('cycles 1..N without ranges', () => {
    expect(run({round_robin_bucket_execution: true, bucket_total: 4}, undefined, 9)).toEqual([1, 2, 3, 4, 1, 2, 3, 4, 1]);
  });

  test('"2-3,5" with N=6 cycles 2,3,5 from any state', () => {
    const config = {round_robin_bucket_execution: true, bucket_total: 6, bucket_ranges: '2-3,5'};
    for (const last of [undefined, 0, 1, 2, 3, 4, 5, 6, 100, -5]) {
      const state = last === undefined ? undefined : {__bucket_execution_state: {last_executed_bucket_id: last}};
      const seq = run(config, state, 7);
      const start = seq.indexOf(2);
      expect(start).toBeLessThan(3);
      expect(seq.slice(start, start + 4)).toEqual([2, 3, 5, 2]);
    }
  });

  test('first run without state picks 1 or the smallest eligible bucket', () => {
    expect(nextBucketId({round_robin_bucket_execution: true, bucket_total: 5})).toBe(1);
    expect(nextBucketId({round_robin_bucket_execution: true, bucket_total: 9, bucket_ranges: ['7-8', '4']})).toBe(4);
    expect(nextBucketId({bucket_total: 5}, {})).toBe(1);
  });

  test('reference examples of nextBucketId', () => {
    const st = (n) => ({__bucket_execution_state: {last_executed_bucket_id: n}});
    expect(nextBucketId({bucket_total: 3}, st(0))).toBe(1);
    expect(nextBucketId({bucket_total: 3}, st(7))).toBe(2);
    const r = {round_robin_bucket_execution: true, bucket_total: 9, bucket_ranges: ['1-3', '5', '7-8']};
    expect([1, 2, 3, 5, 7, 8].map((n) => nextBucketId(r, st(n)))).toEqual([2, 3, 5, 7, 8, 1]);
    // Ranges only count with round robin on.
    expect(nextBucketId({bucket_total: 9, bucket_ranges: '5'}, st(1))).toBe(2);
  });

  test('applyRoundRobinBucketing keeps unknown keys, never mutates, logs', () => {
    const config = Object.freeze({round_robin_bucket_execution: true, bucket_total: 3, token: 't', bucket_id: 1});
    const state = Object.freeze({cursor: {a: 1}, __bucket_execution_state: Object.freeze({last_executed_bucket_id: 1})});
    const logs = [];
    const out = applyRoundRobinBucketing(config, state, (m) => logs.push(m));
    expect(out.config).toEqual({round_robin_bucket_execution: true, bucket_total: 3, token: 't', bucket_id: 2});
    expect(out.state).toEqual({cursor: {a: 1}, __bucket_execution_state: {last_executed_bucket_id: 2}});
    expect(out.state.cursor).toBe(state.cursor);
    expect(logs).toEqual(['Using round robin bucket execution. Bucket id: 2']);
  });

  test('round robin off returns the same objects', () => {
    const config = {bucket_total: 3};
    const state = {x: 1};
    const out = applyRoundRobinBucketing(config, state);
    expect(out.config).toBe(config);
    expect(out.state).toBe(state);
  });

  test('roundRobinSchedule', () => {
    expect(roundRobinSchedule({round_robin_bucket_execution: true, bucket_total: 6, bucket_ranges: '2-3,5'}, undefined, 6)).toEqual([2, 3, 5, 2, 3, 5]);
    expect(roundRobinSchedule({bucket_total: 6, bucket_id: 4}, undefined, 3)).toEqual([4, 4, 4]);
    expect(thrown(() => roundRobinSchedule({}, undefined, -1)).code).toBe('INVALID_ARGUMENT');
  });

  test('malformed state', () => {
    expect(thrown(() => nextBucketId({}, 5)).code).toBe('BUCKET_STATE_INVALID');
    expect(thrown(() => nextBucketId({}, {__bucket_execution_state: 'x'})).code).toBe('BUCKET_STATE_INVALID');
    expect(thrown(() => nextBucketId({}, {__bucket_execution_state: {last_executed_bucket_id: 2.5}})).code).toBe('BUCKET_STATE_INVALID');
  });
});

describe('BucketSet', () => {
  test('reference examples', () => {
    const s = new BucketSet(9, ['1-3', '5', '7-8']);
    expect([1, 2, 3, 5, 7, 8].map((n) => s.next(n))).toEqual([2, 3, 5, 7, 8, 1]);
    expect(new BucketSet(8, '2,4,6,8').next(8)).toBe(2);
    const one = new BucketSet(5, ['3']);
    expect([one.next(1), one.next(3)]).toEqual([3, 3]);
    expect(new BucketSet(10, ' 2 - 4 , 7 ').buckets()).toEqual([2, 3, 4, 7]);
    expect(new BucketSet(10, '1-3,2-5,9,9').buckets()).toEqual([1, 2, 3, 4, 5, 9]);
  });

  test('array items are not split on commas', () => {
    expect(thrown(() => new BucketSet(10, ['1,2'])).message).toBe('Invalid number in range: 1,2');
  });

  test('huge ranges stay cheap', () => {
    const s = new BucketSet(2 ** 32 - 1, '1-4294967295');
    expect(s.size).toBe(2 ** 32 - 1);
    expect(s.next(41)).toBe(42);
    expect(thrown(() => s.buckets()).code).toBe('INVALID_ARGUMENT');
  });
});

describe('Bucketing', () => {
  const repos = ['facebook/react', 'torvalds/linux', 'openai/gpt', 'vercel/next.js', 'myco/frontend'];

  test('create validates, applies round robin and filters', () => {
    const logs = [];
    const b = Bucketing.create({
      partitionKey: GITHUB,
      config: {round_robin_bucket_execution: true, bucket_total: 12, bucket_ranges: '7,9'},
      state: {__bucket_execution_state: {last_executed_bucket_id: 7}},
      logger: (m) => logs.push(m),
    });
    expect(b.getBucketId()).toBe(9);
    expect(b.getBucketTotal()).toBe(12);
    expect(b.getState()).toEqual({__bucket_execution_state: {last_executed_bucket_id: 9}});
    const items = repos.map((name) => ({name}));
    const selected = b.filter(items, (r) => r.name, {logger: (m) => logs.push(m), entityName: 'repos'});
    expect(selected).toEqual([items[0], items[1]]);
    expect(selected[0]).toBe(items[0]);
    expect(logs).toEqual([
      'Using round robin bucket execution. Bucket id: 9',
      `Bucketing (${GITHUB} bucket 9/12): visible repos (5) -> ${repos.join(', ')}`,
      `Bucketing (${GITHUB} bucket 9/12): selected repos (2) -> facebook/react, torvalds/linux`,
    ]);
  });

  test('defaults, empty lists and <none>', () => {
    const b = Bucketing.create({partitionKey: 'k', config: {}});
    expect([b.getBucketId(), b.getBucketTotal(), b.getState()]).toEqual([1, 1, {}]);
    const logs = [];
    expect(b.filter([], (x) => x, {logger: (m) => logs.push(m)})).toEqual([]);
    expect(logs).toEqual(['Bucketing (k bucket 1/1): visible entities (0) -> <none>', 'Bucketing (k bucket 1/1): selected entities (0) -> <none>']);
  });

  test('filter agrees with bucket()', () => {
    const b = Bucketing.create({partitionKey: GITHUB, config: {bucket_total: 3, bucket_id: 2}});
    const data = Array.from({length: 500}, (_, i) => `org/r${i}`);
    expect(b.filter(data, (x) => x)).toEqual(data.filter((d) => reference(GITHUB, d, 3) === 2));
  });

  test('bad input', () => {
    expect(thrown(() => Bucketing.create({partitionKey: 1, config: {}})).code).toBe('INVALID_ARGUMENT');
    expect(thrown(() => Bucketing.create({partitionKey: 'k', config: {bucket_id: 3}})).code).toBe('BUCKET_ID_OUT_OF_RANGE');
    const b = Bucketing.create({partitionKey: 'k', config: {}});
    expect(thrown(() => b.filter([1], (x) => x)).message).toBe('getKey must return a string, got the number 1 for item 0');
    expect(() => new Bucketing()).toThrow(BucketingError);
  });
});

describe('extras', () => {
  test('bucketingSpecProperties', () => {
    const props = bucketingSpecProperties({order: 10});
    expect(Object.keys(props)).toEqual(['round_robin_bucket_execution', 'bucket_total', 'bucket_id', 'bucket_ranges']);
    expect(Object.values(props).map((p) => p.order)).toEqual([10, 11, 12, 13]);
    expect(props.bucket_total).toMatchObject({type: 'integer', minimum: 1, default: 1, title: 'Total Number of Buckets'});
    expect(bucketingSpecProperties().bucket_id.order).toBeUndefined();
  });

  test('bucketDistribution', () => {
    const data = Array.from({length: 1000}, (_, i) => `e${i}`);
    const d = bucketDistribution('k', data, 4);
    const counts = [0, 0, 0, 0];
    data.forEach((x) => counts[reference('k', x, 4) - 1]++);
    expect(d.counts).toEqual(counts);
    expect(d.min).toBe(Math.min(...counts));
    expect(d.max).toBe(Math.max(...counts));
    expect(d.mean).toBe(250);
    expect(d.spread).toBeCloseTo((d.max - d.min) / 250);
  });
});

describe('robustness: arbitrary input never breaks the module', () => {
  const exports = [
    (a, b, c) => bucket(a, b, c),
    (a, b, c) => bucketMany(a, b, c),
    (a, b) => new Bucketer(a, b).bucketMany([String(a)]),
    (a, b) => validateBucketingConfig(a, b),
    (a, b) => nextBucketId(a, b),
    (a, b, c) => applyRoundRobinBucketing(a, b, c),
    (a, b, c) => roundRobinSchedule(a, b, c),
    (a) => Bucketing.create(a),
    (a, b) => new BucketSet(a, b).next(1),
    (a) => bucketingSpecProperties(a),
    (a, b, c) => bucketDistribution(a, b, c),
  ];
  const value = fc.oneof(
    fc.anything({withBigInt: true, withNullPrototype: true, withTypedArray: true, withSparseArray: true}),
    fc.string({unit: 'binary'}),
    fc.constantFrom(NaN, Infinity, -Infinity, 2 ** 53, -0, 0, 1, 3, 2 ** 32, '2.7', '3abc', '1-3,5', ['1-3'], []),
    fc.record({
      bucket_total: fc.oneof(fc.integer({min: -3, max: 40}), fc.string(), fc.double()),
      bucket_id: fc.oneof(fc.integer({min: -3, max: 40}), fc.string(), fc.constant(undefined)),
      round_robin_bucket_execution: fc.oneof(fc.boolean(), fc.anything()),
      bucket_ranges: fc.oneof(fc.string(), fc.array(fc.string()), fc.anything()),
    }, {requiredKeys: []}),
  );

  test('every export returns or throws an Error, and keeps working', () => {
    fc.assert(
      fc.property(fc.nat(exports.length - 1), value, value, value, (i, a, b, c) => {
        try {
          exports[i](a, b, c);
        } catch (error) {
          if (!(error instanceof Error)) throw new Error(`threw a non-Error: ${String(error)}`);
          if (error instanceof WebAssembly.RuntimeError) throw error;
        }
        return bucket(GITHUB, 'facebook/react', 12) === 9 && bucketMany('k', ['test-data'], 5)[0] === bucket('k', 'test-data', 5);
      }),
      {numRuns: 3000},
    );
  });

  test('lone surrogates and huge strings', () => {
    expect(bucket('\uD800', '\uDFFF', 7)).toBe(reference('\uD800', '\uDFFF', 7));
    const big = 'x'.repeat(1 << 20);
    expect(bucket('k', big, 9)).toBe(reference('k', big, 9));
    expect(() => validateBucketingConfig({round_robin_bucket_execution: true, bucket_ranges: '\uD800'})).toThrow('Invalid number in range: \uFFFD');
  });
});
