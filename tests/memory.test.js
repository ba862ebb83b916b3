// Issue 16 failure 5: near wasm32's 4 GiB, a failed allocation is an OUT_OF_MEMORY error, never
// an abort, and poisons nothing: once memory is freed, the same calls succeed, on the same
// objects. Each domain has its own wasm (and memory): for each, a child jest process fills that
// domain's memory to 4 GiB (about 4 GiB of RAM and 5-10 s each, one at a time), so it runs when
// PARTKIT_MEMORY_TEST=1 (.ci/run sets it); skipped otherwise.
const {execFileSync} = require('node:child_process');
const p = require('partkit');

const DOMAINS = ['bucketing', 'objects', 'imports', 'lifecycle', 'sync'];
const domain = process.env.PARTKIT_MEMORY_DOMAIN;
// The domain's raw wasm exports, the same instance as the package's (see scripts/build.mjs).
const raw = domain && p.PartkitError[Symbol.for('partkit.wasm')][domain];

const enabled = process.env.PARTKIT_MEMORY_TEST === '1';
const run = enabled && domain ? describe : describe.skip;
jest.setTimeout(120000);

(enabled && !domain ? describe : describe.skip)('near 4 GiB, one process per domain (PARTKIT_MEMORY_TEST=1)', () => {
  test.each(DOMAINS)('%s', (d) => {
    execFileSync(process.execPath, [require.resolve('jest/bin/jest'), '--ci', '--runTestsByPath', __filename], {
      env: {...process.env, PARTKIT_MEMORY_DOMAIN: d},
      stdio: 'inherit',
    });
  }, 300000);
});

const memory = () => raw.wasmMemory().buffer.byteLength;

/** Fills wasm memory with PackedStrings buffers, large ones first, until nothing fits. */
function fill() {
  const fillers = [];
  for (const units of [1 << 27, 1 << 23, 1 << 19, 1 << 15, 1 << 11, 1 << 7]) {
    for (;;) {
      let f;
      try {
        f = new raw.PackedStrings(); // (even the object itself may not fit any more)
        f.reset(units, 0);
        fillers.push(f);
      } catch (error) {
        expect(error.code).toBe('OUT_OF_MEMORY'); // a clean error, not a trap
        f?.free();
        break;
      }
    }
  }
  return fillers;
}

const ids = (n, prefix) => Array.from({length: n}, (_, i) => `${prefix}${i}`);

run(`near 4 GiB: ${domain}`, () => {
  test('every call fails cleanly with OUT_OF_MEMORY or answers; after free, all succeed on the same objects', () => {
    const state = new p.BuildState();
    state.apply({type: 'WantCreate', timestamp: 1, wantId: 'w0', partitions: ['r0']});
    const task = new p.SyncTask('t1');
    task.onRebalance({generation: 1, leader: true, members: ['t1']}, 1);
    // a task in records mode, given a large record's value as bytes
    const rtask = new p.SyncTask('t2', {publishAs: 'records'});
    rtask.onRebalance({generation: 1, leader: true, members: ['t2']}, 1);
    const partitions = ids(20000, 'q').map((token) => ({token, parents: [], state: 'Created'}));
    const state0 = {taskID: 'x', stateTimestamp: 1, stateVersion: 1, data: {partitions}, share: {partitions: []}};
    const record = Buffer.from(JSON.stringify({syncEpoch: '', taskID: 'x', messageTimestamp: 1, type: 'Regular', connectorState: [state0]}));
    const partitioner = new p.ObjectPartitioner(8, {partition: {type: 'regex', pattern: '(\\d+)'}});
    const bucketer = new p.Bucketer('k', 12);
    const big = {type: 'WantCreate', timestamp: 2, wantId: 'w1', partitions: ids(20000, 'data/')};
    const calls = {
      bucket: () => p.bucket('key-1', 'x'.repeat(1000), 12),
      bucketMany: () => p.bucketMany('k', ids(200000, 'id-'), 12),
      'Bucketer#bucketMany': () => bucketer.bucketMany(ids(200000, 'id-')),
      indexMany: () => partitioner.indexMany(ids(200000, 'k')),
      plan: () => partitioner.plan(ids(100000, 'k')),
      stats: () => new p.ObjectPartitioner(1 << 24, {}).stats(['a']),
      partitionObjects: () => p.partitionObjects(ids(100000, 'k'), 4, 1, {partition: {type: 'object'}}),
      assignImportBuckets: () => p.assignImportBuckets(ids(100000, '').map((i) => ({datasetName: `d${i % 10}`}))),
      'BuildState#apply': () => state.apply(big),
      'BuildState.replay': () => p.BuildState.replay([big]),
      'SyncTask#addPartitions': () => task.addPartitions(ids(20000, 'p').map((token) => ({token})), 2),
      'SyncTask#onMessage (bytes)': () => rtask.onMessage(record, 2),
      'SyncTask#addPartitions (records)': () => rtask.addPartitions(ids(20000, 'r').map((token) => ({token})), 2),
      validatePartitionConfig: () => p.validatePartitionConfig({type: 'regex', pattern: 'a'.repeat(30000)}),
    };

    const DOMAIN_OF = {
      bucket: 'bucketing', bucketMany: 'bucketing', 'Bucketer#bucketMany': 'bucketing',
      indexMany: 'objects', plan: 'objects', stats: 'objects', partitionObjects: 'objects', validatePartitionConfig: 'objects',
      assignImportBuckets: 'imports', 'BuildState#apply': 'lifecycle', 'BuildState.replay': 'lifecycle',
      'SyncTask#addPartitions': 'sync', 'SyncTask#onMessage (bytes)': 'sync', 'SyncTask#addPartitions (records)': 'sync',
    };
    for (const name of Object.keys(calls)) if (DOMAIN_OF[name] !== domain) delete calls[name];
    expect(Object.keys(calls).length).toBeGreaterThan(0);
    // Import buckets: one call with memory to spare first, so that the one-time initialisation of
    // the random source happens here, not under a full memory (a first-ever assignImportBuckets
    // under a full memory leaves the instance trapping: an open issue, not this test's).
    if (domain === 'imports') for (const fn of Object.values(calls)) fn();

    const fillers = fill();
    expect(memory()).toBeGreaterThan(4 * 1024 ** 3 - (64 << 20));
    const failed = [];
    for (const [name, fn] of Object.entries(calls)) {
      try {
        fn();
      } catch (error) {
        if (!(error instanceof p.PartkitError) || error.code !== 'OUT_OF_MEMORY') {
          throw new Error(`${name} threw ${error?.constructor?.name} ${error?.code}: ${error?.message}`);
        }
        failed.push(name);
      }
    }
    // The stateful objects were refused (and survive, below), as were the batches.
    expect(failed).toEqual(expect.arrayContaining(['BuildState#apply', 'SyncTask#addPartitions', 'SyncTask#onMessage (bytes)', 'SyncTask#addPartitions (records)', 'indexMany', 'bucketMany'].filter((n) => n in calls)));
    // The refused apply changed nothing.
    if (domain === 'lifecycle') expect(state.stats()).toEqual({partitions: 0, wants: 1, jobRuns: 0, refs: 1});

    for (const f of fillers) f.free();

    // Every export works again, and the calls that failed succeed, on the same objects.
    for (const [name, fn] of Object.entries(calls)) {
      try {
        fn();
      } catch (error) {
        throw new Error(`${name} after free: ${error?.constructor?.name} ${error?.code}: ${error?.message}`);
      }
    }
    if (domain === 'lifecycle') {
      expect(state.stats().wants).toBe(2);
      expect(state.want('w1').partitions).toHaveLength(20000);
    }
    state.checkInvariants();
    expect(p.bucket('farosai/airbyte-github-source', 'facebook/react', 12)).toBe(9);
    expect(Array.from(partitioner.indexMany(['a1', 'b2']))).toEqual([partitioner.indexOf('a1'), partitioner.indexOf('b2')]);
    expect(task.ownedPartitions()).toBeDefined();
    if (domain === 'sync') expect(rtask.ownedPartitions()).toHaveLength(20000);
  });
});
