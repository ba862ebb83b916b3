// Issue 16, "Never abort, proven": one regression test per failure the hostile-input run found,
// the boundary rule (20,000 hostile calls through every export, then a canary), OBJECT_FREED,
// input bounds and INVALID_ARGUMENT for every export. docs/robustness.md explains the rules.
const p = require('partkit');
const {INTERNAL, CALLBACKS, calls, canary, fixtures, hostileValues, revoked, stateOf} = require('./hostile');
const {thrownIfAny: thrown} = require('./support/thrown');

const expected = canary(p);

/** The error `fn` throws; fails unless it is a PartkitError with `code`. */
function partkitError(fn, code) {
  const error = thrown(fn);
  expect(error).toBeInstanceOf(p.PartkitError);
  if (code) expect(error.code).toBe(code);
  return error;
}

describe('issue 16 failure 1: JS exceptions never unwind through wasm', () => {
  const proxy = revoked();
  const paths = {
    validateBucketingConfig: () => p.validateBucketingConfig({round_robin_bucket_execution: proxy}),
    'validateBucketingConfig (ranges)': () => p.validateBucketingConfig({round_robin_bucket_execution: true, bucket_ranges: proxy}),
    'new BucketSet (total)': () => new p.BucketSet(proxy, '1-3'),
    'new BucketSet (ranges)': () => new p.BucketSet(3, proxy),
    assignImportBuckets: () => p.assignImportBuckets([], {buckets: proxy}),
    nextBucketId: () => p.nextBucketId({bucket_total: proxy, round_robin_bucket_execution: true}),
    applyRoundRobinBucketing: () => p.applyRoundRobinBucketing({round_robin_bucket_execution: proxy}),
    roundRobinSchedule: () => p.roundRobinSchedule({bucket_id: proxy}, {}, 2),
    'Bucketing.create': () => p.Bucketing.create({partitionKey: 'k', config: {bucket_total: proxy}}),
  };

  test.each(Object.entries(paths))('8,000 revoked proxies through %s, then every export still works', (name, fn) => {
    for (let i = 0; i < 8000; i++) expect(thrown(fn)).toBeInstanceOf(p.PartkitError);
    expect(p.bucket('k', 'x', 12)).toBe(p.bucket('k', 'x', 12));
    expect(canary(p)).toBe(expected);
  });

  test('a revoked proxy or throwing getters as an argument give INVALID_ARGUMENT', () => {
    partkitError(() => p.validateBucketingConfig(proxy), 'INVALID_ARGUMENT');
    const getter = {};
    Object.defineProperty(getter, 'bucket_total', {get() { throw new Error('no'); }});
    partkitError(() => p.validateBucketingConfig(getter), 'INVALID_ARGUMENT');
    partkitError(() => p.assignImportBuckets(proxy), 'INVALID_ARGUMENT');
    partkitError(() => p.groupByPartitionKey([{}], proxy), 'INVALID_ARGUMENT');
    partkitError(() => new p.ObjectPartitioner(2, proxy), 'INVALID_ARGUMENT');
    partkitError(() => p.partitionObjects(proxy, 2, 0, {}), 'INVALID_ARGUMENT');
    partkitError(() => p.BuildState.replay(proxy), 'INVALID_ARGUMENT');
    partkitError(() => new p.BuildState().apply(proxy), 'INVALID_EVENT');
    partkitError(() => new p.SyncTask('t', proxy), 'INVALID_ARGUMENT');
    partkitError(() => p.bucketingSpecProperties(proxy), 'INVALID_ARGUMENT');
  });
});

describe('issue 16 failure 2: use after free()', () => {
  test('a freed SyncTask or BuildState throws OBJECT_FREED from JS, forever', () => {
    const task = new p.SyncTask('t1');
    const state = new p.BuildState();
    task.free();
    state.free();
    task.free(); // a second free() is a no-op
    state.free();
    for (let i = 0; i < 15000; i++) {
      expect(thrown(() => task.tick(i)).code).toBe('OBJECT_FREED');
      expect(thrown(() => state.stats()).code).toBe('OBJECT_FREED');
    }
    const methods = {
      task: ['taskId', 'ownedPartitions', 'sharedPartitions', 'knownTasks', 'epoch', 'epochMembers', 'isLeader',
        'sharingEnabled', 'isBehind', 'fenced', 'waitingFor', 'pollTimeout'],
      state: ['snapshot', 'checkInvariants', 'stats', 'schedulableWants'],
    };
    for (const m of methods.task) partkitError(() => task[m](), 'OBJECT_FREED');
    for (const m of methods.state) partkitError(() => state[m](), 'OBJECT_FREED');
    partkitError(() => task.onMessage({type: 'x'}, 1), 'OBJECT_FREED');
    partkitError(() => task.loadOf('t'), 'OBJECT_FREED');
    partkitError(() => state.apply({type: 'WantCreate', timestamp: 1, wantId: 'w', partitions: ['a']}), 'OBJECT_FREED');
    partkitError(() => state.want('w'), 'OBJECT_FREED');
    expect(thrown(() => task.tick(1))).toBeInstanceOf(p.SyncError);
    expect(thrown(() => state.stats())).toBeInstanceOf(p.LifecycleError);
    expect(canary(p)).toBe(expected);
  });
});

describe('issue 16 failure 3: a huge regex pattern', () => {
  const memory = () => p.PartkitError[Symbol.for('partkit.wasm')].objects.wasmMemory().buffer.byteLength;

  test('is refused before compiling, with the bound in the message, and memory does not grow', () => {
    const before = memory();
    for (const size of [(32 << 10) + 1, 1 << 20, 18e6]) {
      const t0 = Date.now();
      const error = partkitError(
        () => new p.ObjectPartitioner(4, {partition: {type: 'regex', pattern: 'a'.repeat(size)}}),
        'INPUT_TOO_LARGE',
      );
      expect(error).toBeInstanceOf(p.PartitionError);
      // Over the string bound (1 MiB), the JS layer refuses it before wasm sees it.
      expect(error.message).toMatch(size <= 1 << 20 ? /bound of 32768 bytes/ : /bound of 1048576/);
      expect(Date.now() - t0).toBeLessThan(2000);
    }
    partkitError(() => p.validatePartitionConfig({type: 'regex', pattern: 'a'.repeat(1 << 20)}), 'INPUT_TOO_LARGE');
    partkitError(() => p.validatePartitionConfig({type: 'date', dateFormat: '2006'.repeat(2000)}), 'INPUT_TOO_LARGE');
    expect(memory() - before).toBeLessThan(64 << 20);
    // At the bound, a pattern compiles.
    expect(new p.ObjectPartitioner(4, {partition: {type: 'regex', pattern: 'a'.repeat(32 << 10)}}).isPartitioned).toBe(true);
    expect(canary(p)).toBe(expected);
  });
});

describe('issue 16 failure 4: unbounded arrays in config fields', () => {
  test('bucket_id as a 6e7 or 1.3e8-item array answers at once, without copying it', () => {
    for (const n of [6e7, 1.3e8]) {
      const t0 = Date.now();
      partkitError(() => p.validateBucketingConfig({bucket_total: 5, bucket_id: new Array(n)}), 'BUCKET_ID_OUT_OF_RANGE');
      expect(Date.now() - t0).toBeLessThan(1000);
    }
  });

  test('every array-valued field has a bound: INPUT_TOO_LARGE names it', () => {
    const huge = new Array(2 ** 32 - 1);
    const cases = [
      () => p.validateBucketingConfig({round_robin_bucket_execution: true, bucket_total: 5, bucket_ranges: huge}),
      () => new p.BucketSet(5, huge),
      () => p.bucketMany('k', huge, 3),
      () => p.bucketDistribution('k', huge, 3),
      () => new p.Bucketer('k', 3).bucketMany(huge),
      () => p.Bucketing.create({partitionKey: 'k', config: {}}).filter(huge, (x) => x),
      () => p.partitionObjects(huge, 2, 0, {}),
      () => new p.ObjectPartitioner(3, {}).indexMany(huge),
      () => new p.ObjectPartitioner(3, {}).plan(huge),
      () => new p.ObjectPartitioner(3, {}).stats(huge),
      () => new p.ObjectPartitioner(3, {}).select(huge, 0),
      () => p.assignImportBuckets(huge),
      () => p.groupByPartitionKey(huge),
      () => p.BuildState.replay(huge),
      () => new p.SyncTask('t').addPartitions(huge, 1),
    ];
    for (const fn of cases) {
      const t0 = Date.now();
      const error = partkitError(fn, 'INPUT_TOO_LARGE');
      expect(error.message).toMatch(/bound of \d+/);
      expect(Date.now() - t0).toBeLessThan(1000);
    }
  });

  test('string bounds: ids, keys, tokens, items', () => {
    const big = 'x'.repeat((1 << 20) + 1);
    const cases = [
      () => p.bucket(big, 'x', 3),
      () => p.bucket('k', big, 3),
      () => p.bucketMany('k', ['a', big], 3),
      () => new p.ObjectPartitioner(3, {}).indexOf(big),
      () => new p.ObjectPartitioner(3, {}).indexMany([big]),
      () => p.assignImportBuckets([{datasetName: big}]),
      () => p.normalizeUuid(big),
      () => p.derivePartitionUuid(big, 'r'),
      () => new p.BuildState().want(big),
      () => new p.SyncTask(big),
      () => new p.SyncTask('t').partitionStarted(big, 1),
      () => p.validateBucketingConfig({bucket_ranges: big, round_robin_bucket_execution: true}),
      // In all: more than 256 Mi code units, which would not even join into one JS string.
      () => p.validateBucketingConfig({bucket_ranges: new Array(300).fill(big.slice(1)), round_robin_bucket_execution: true}),
      () => p.bucketMany('k', new Array(300).fill(big.slice(1)), 3),
    ];
    for (const fn of cases) partkitError(fn, 'INPUT_TOO_LARGE');
    expect(canary(p)).toBe(expected);
  });
});

describe('issue 16: every export validates its arguments', () => {
  test('the reported cases give INVALID_ARGUMENT, never a raw TypeError', () => {
    partkitError(() => p.importBucketsDefault({GTC_IMPORT_BUCKETS_DEFAULT: Symbol('x')}), 'INVALID_ARGUMENT');
    const bucketing = p.Bucketing.create({partitionKey: 'k', config: {}});
    partkitError(() => bucketing.filter(['a'], (x) => x, {logger: () => {}, entityName: Symbol('e')}), 'INVALID_ARGUMENT');
    const toStringThrows = {toString() { throw new Error('no'); }};
    partkitError(() => p.importBucketsDefault({GTC_IMPORT_BUCKETS_DEFAULT: toStringThrows}), 'INVALID_ARGUMENT');
  });

  test('sparse bucket_ranges: holes are refused as non-strings, as before', () => {
    const error = partkitError(
      () => p.validateBucketingConfig({round_robin_bucket_execution: true, bucket_total: 5, bucket_ranges: [, '1']}), // eslint-disable-line no-sparse-arrays
      'BUCKET_RANGES_TYPE',
    );
    expect(error.message).toBe('bucket_ranges must be a string or an array of strings');
  });

  test('indexMany over an array whose items change between reads reads each item once', () => {
    let n = 0;
    const keys = new Proxy(['a1', 'b2'], {
      get(target, key) {
        if (key === '0') return 'k'.repeat(++n);
        return Reflect.get(target, key);
      },
    });
    const o = new p.ObjectPartitioner(4, {partition: {type: 'regex', pattern: '(.)'}});
    const out = o.indexMany(keys);
    expect(out).toHaveLength(2);
    expect(n).toBe(1);
    expect(out[0]).toBe(o.indexOf('k'));
  });

  test('every export and method with every hostile value: an answer or a PartkitError', () => {
    const f = fixtures(p);
    const before = stateOf(f);
    const values = hostileValues();
    for (const [valueName, v] of Object.entries(values)) {
      for (const [name, fn] of calls(p, v, f)) {
        const error = thrown(fn);
        if (error !== undefined && INTERNAL.test(String(error.message))) throw new Error(`${name} with ${valueName}: ${error.message}`);
        if (error === undefined || error instanceof p.PartkitError) continue;
        if (CALLBACKS.has(name) && typeof v === 'function') continue;
        throw new Error(`${name} with ${valueName} threw ${error?.constructor?.name}: ${error?.message}`);
      }
    }
    expect(stateOf(f)).toBe(before);
    expect(canary(p)).toBe(expected);
  });
});

describe('issue 16: the boundary rule', () => {
  test('20,000 hostile calls through every export, then the canary answers as before', () => {
    const f = fixtures(p);
    const before = stateOf(f);
    const values = Object.values(hostileValues()).filter((v) => typeof v !== 'string' || v.length < 1000);
    let made = 0;
    while (made < 20000) {
      for (const v of values) {
        for (const [, fn] of calls(p, v, f)) {
          thrown(fn);
          made++;
        }
      }
    }
    expect(stateOf(f)).toBe(before);
    expect(canary(p)).toBe(expected);
  });
});

describe('issue 16: every wasm-backed class throws OBJECT_FREED after free()', () => {
  test('Bucketer, BucketSet, ObjectPartitioner', () => {
    const bucketer = new p.Bucketer('k', 7);
    const set = new p.BucketSet(9, '2-4');
    const partitioner = new p.ObjectPartitioner(4, {partition: {type: 'regex', pattern: '(\\d+)'}});
    for (const o of [bucketer, set, partitioner]) {
      o.free();
      o.free();
    }
    for (let i = 0; i < 5000; i++) {
      expect(thrown(() => bucketer.bucket('x')).code).toBe('OBJECT_FREED');
      expect(thrown(() => partitioner.indexOf('a1')).code).toBe('OBJECT_FREED');
    }
    partkitError(() => bucketer.bucketMany(['a']), 'OBJECT_FREED');
    partkitError(() => set.next(1), 'OBJECT_FREED');
    partkitError(() => set.buckets(), 'OBJECT_FREED');
    partkitError(() => set.size, 'OBJECT_FREED');
    partkitError(() => set.has(2), 'OBJECT_FREED');
    for (const m of ['indexMany', 'plan', 'stats']) partkitError(() => partitioner[m](['a1']), 'OBJECT_FREED');
    partkitError(() => partitioner.select(['a1'], 0), 'OBJECT_FREED');
    partkitError(() => partitioner.prefix, 'OBJECT_FREED');
    partkitError(() => partitioner.isPartitioned, 'OBJECT_FREED');
    expect(thrown(() => set.next(1))).toBeInstanceOf(p.BucketingError);
    expect(thrown(() => partitioner.indexOf('a'))).toBeInstanceOf(p.PartitionError);
    expect(canary(p)).toBe(expected);
  });
});
