// Errors a UI can point at: every refusal carries `code` and `path` (js/kit/args.mjs `pathOf`),
// and no message grows with the input: a quote of caller input is cut to 100 characters, its
// full length stated (src/quote.rs, js/kit/args.mjs `quote`), and no message passes 1,000
// characters whatever is passed to any export (tests/hostile.js lists every call).
const p = require('partkit');
const {calls, fixtures} = require('./hostile');

const MB = 1 << 20;
const big = 'x'.repeat(MB - 16);
const HUGE = {
  'a 1 MB string': big,
  'a 1 MB token-like string with a dash': `${big.slice(0, MB / 2)}-${big.slice(0, MB / 2 - 64)}`,
  'an array of a 1 MB string': [big],
  'an object with a 1 MB key': {[big]: 1},
  'an object with a 1 MB value in every known field': {bucket_total: 3, bucket_ranges: big, partitionKey: big, token: big, wantId: big, type: big, taskId: big, key: big, pattern: big},
  'a config whose bucket_ranges is 1 MB of ranges': {round_robin_bucket_execution: true, bucket_total: 3, bucket_ranges: `${'1-2-3,'.repeat(MB / 6)}`},
};

/** Every refusal: a PartkitError with a string code, an array path of strings and numbers, a bounded message. */
function expectGoodRefusal(error, where) {
  if (!(error instanceof p.PartkitError)) throw new Error(`${where}: threw ${error?.constructor?.name}: ${String(error?.message).slice(0, 200)}`);
  expect([where, typeof error.code]).toEqual([where, 'string']);
  expect([where, Array.isArray(error.path) && error.path.every((s) => typeof s === 'string' || typeof s === 'number')]).toEqual([where, true]);
  expect([where, error.message.length <= 1000]).toEqual([where, true]);
}

describe('1 MB inputs at every export: bounded messages, a code and a path', () => {
  for (const [label, value] of Object.entries(HUGE)) {
    test(label, () => {
      const f = fixtures(p);
      for (const [name, fn] of calls(p, value, f)) {
        try {
          fn();
        } catch (error) {
          expectGoodRefusal(error, `${name} with ${label}`);
        }
      }
    });
  }
});

test('paths name the refused value, as keys and indexes', () => {
  const refusal = (fn) => {
    try {
      fn();
    } catch (error) {
      return {code: error.code, path: error.path};
    }
    throw new Error('no refusal');
  };
  expect(refusal(() => p.validateBucketingConfig({bucket_total: 4, bucket_id: 5}))).toEqual({code: 'BUCKET_ID_OUT_OF_RANGE', path: ['bucket_id']});
  expect(refusal(() => p.validateBucketingConfig({bucket_total: 0}))).toEqual({code: 'BUCKET_TOTAL_INVALID', path: ['bucket_total']});
  expect(refusal(() => p.validateBucketingConfig({round_robin_bucket_execution: true, bucket_total: 3, bucket_ranges: '1-2-3'}))).toEqual({code: 'BUCKET_RANGE_FORMAT', path: ['bucket_ranges']});
  expect(refusal(() => p.bucketMany('k', ['a', 7], 3))).toEqual({code: 'INVALID_ARGUMENT', path: ['data', 1]});
  expect(refusal(() => new p.SyncTask('t1', {rebalanceTimeOut: 5}))).toEqual({code: 'SYNC_INVALID_OPTIONS', path: ['options', 'rebalanceTimeOut']});
  const task = new p.SyncTask('t1');
  task.onRebalance({generation: 1, leader: true, members: ['t1']}, 1);
  expect(refusal(() => task.addPartitions([{token: 'a'}, {token: 'b', parents: ['b']}], 2))).toEqual({code: 'SYNC_INVALID_PARTITION', path: ['partitions', 1, 'parents', 0]});
  expect(refusal(() => task.addPartitions([{token: 'a', parents: 'x'}], 2))).toMatchObject({code: 'SYNC_INVALID_PARTITION', path: ['partitions', 0, 'parents']});
  expect(refusal(() => task.partitionStarted('nope', 3))).toEqual({code: 'SYNC_UNKNOWN_PARTITION', path: ['token']});
  expect(refusal(() => new p.BuildState().apply({type: 'WantCancel', timestamp: 1, wantId: 'w'}))).toEqual({code: 'UNKNOWN_WANT', path: ['event', 'wantId']});
  expect(refusal(() => p.BuildState.replay([{type: 'WantCreate', timestamp: 1, wantId: 'w', partitions: ['r']}, {type: 'WantCancel', timestamp: 2, wantId: 'v'}])))
    .toEqual({code: 'UNKNOWN_WANT', path: ['events', 1, 'wantId']});
  expect(refusal(() => p.validatePartitionConfig({type: 'date', date_format: 'x'}))).toEqual({code: 'INVALID_ARGUMENT', path: ['config', 'date_format']});
  expect(refusal(() => p.partitionObjects(['a'], 2, 5, {}))).toEqual({code: 'PARTITION_INDEX_OUT_OF_RANGE', path: ['partitionIndex']});
  const freed = new p.SyncTask('t2');
  freed.free();
  expect(refusal(() => freed.tick(1))).toEqual({code: 'OBJECT_FREED', path: []});
});

test('quotes of caller input are cut to 100 characters, with the full length', () => {
  const long = 'r'.repeat(300000);
  try {
    p.validateBucketingConfig({round_robin_bucket_execution: true, bucket_total: 3, bucket_ranges: `${long}-1-2`});
  } catch (error) {
    expect(error.code).toBe('BUCKET_RANGE_FORMAT');
    expect(error.message).toContain(`${'r'.repeat(100)}… (300004 characters)`);
    expect(error.message.length).toBeLessThan(300);
  }
  const task = new p.SyncTask('t1');
  const token = "t".repeat(MB - 64);
  expect(() => task.partitionStarted(token, 1)).toThrow(/t{100}… \(1048512 characters\)/);
  expect(() => new p.BuildState().apply({type: 'JobRunHeartbeat', timestamp: 1, jobRunId: 'j'.repeat(5000)}))
    .toThrow(/unknown job run 'j{100}… \(5000 characters\)'/);
});

test('a PartkitError built with an explicit path keeps it (the mechanism every domain uses)', () => {
  const e = new p.SyncError('partitions[0].extra is not a known key', 'SYNC_INVALID_PARTITION');
  expect(e.path).toEqual(['partitions', 0, 'extra']);
  expect(new p.SyncError('anything', 'SYNC_INVALID_PARTITION', ['partitions', 2, 'x']).path).toEqual(['partitions', 2, 'x']);
});

test('every class with free() has [Symbol.dispose]', () => {
  const f = fixtures(p);
  for (const [name, object] of Object.entries(f)) {
    if (typeof object?.free !== 'function') continue;
    expect([name, typeof object[Symbol.dispose]]).toEqual([name, 'function']);
  }
  const partitioner = new p.ObjectPartitioner(4, {partition: {type: 'regex', pattern: '(\\d+)'}});
  partitioner[Symbol.dispose]();
  expect(() => partitioner.indexOf('a1')).toThrow(expect.objectContaining({code: 'OBJECT_FREED'}));
});

test('near-miss keys of a bucketing config: warned of through the logger, never refused', () => {
  const logged = [];
  p.validateBucketingConfig({bucket_totl: 4, bucket_id: 1, start_date: 'x', BucketRanges: '1'}, (m) => logged.push(m));
  expect(logged).toEqual([
    'Warning: config.bucket_totl is not a bucketing key and is ignored: did you mean bucket_total?',
    'Warning: config.BucketRanges is not a bucketing key and is ignored: did you mean bucket_ranges?',
  ]);
  expect(p.bucketingConfigWarnings({bucket_total: 4, bucket_id: 2, connector_name: 'x'})).toEqual([]);
  // A connector's own keys a few letters from bucket_id are not near misses (an S3 connector's `bucket`).
  expect(p.bucketingConfigWarnings({bucket: 'my-bucket', buckets: ['a'], bucket_id: 1, bucket_total: 1})).toEqual([]);
  expect(p.bucketingConfigWarnings({bucket_i: 1}).map((w) => w.suggestion)).toEqual(['bucket_id']);
  expect(p.bucketingConfigWarnings({round_robin_bucket_executon: true})).toEqual([{
    code: 'BUCKET_CONFIG_NEAR_MISS', path: ['round_robin_bucket_executon'], key: 'round_robin_bucket_executon',
    suggestion: 'round_robin_bucket_execution',
    message: 'config.round_robin_bucket_executon is not a bucketing key and is ignored: did you mean round_robin_bucket_execution?',
  }]);
  const created = [];
  p.Bucketing.create({partitionKey: 'k', config: {bucket_total: 2, bucketId: 2}, logger: (m) => created.push(m)});
  expect(created).toEqual(['Warning: config.bucketId is not a bucketing key and is ignored: did you mean bucket_id?']);
});
