// Hostile argument values and one call per export, shared by robustness.test.js and
// fuzz.test.js. Every call must answer or throw a PartkitError; none may throw anything else.

function revoked(target = {}) {
  const {proxy, revoke} = Proxy.revocable(target, {});
  revoke();
  return proxy;
}

/** A proxy every trap of which throws. */
function throwingProxy(target = {}) {
  const boom = () => {
    throw new Error('trap');
  };
  return new Proxy(target, {
    get: boom,
    has: boom,
    ownKeys: boom,
    getOwnPropertyDescriptor: boom,
    getPrototypeOf: boom,
    defineProperty: boom,
  });
}

/** An object whose `field` getter answers something different at each read. */
function shifting(values) {
  let i = 0;
  const next = () => values[i++ % values.length];
  return new Proxy({}, {
    get: (_, key) => (key === Symbol.toPrimitive || key === 'toJSON' ? undefined : next()),
    has: () => true,
    ownKeys: () => ['datasetName', 'bucket', 'key', 'type', 'pattern', 'bucket_total', 'bucket_ranges', 'round_robin_bucket_execution'],
    getOwnPropertyDescriptor: () => ({value: next(), enumerable: true, configurable: true, writable: true}),
  });
}

/** An array whose items change between reads (and whose length does too). */
function shiftingArray() {
  let n = 0;
  return new Proxy(['a', 'b', 'c'], {
    get(target, key) {
      if (key === 'length') return 2 + (n++ % 3);
      if (typeof key === 'string' && /^\d+$/.test(key)) return 'x'.repeat(1 + (n++ % 7));
      return Reflect.get(target, key);
    },
  });
}

const BIG = 'x'.repeat(10 << 20);

/** Named hostile values. */
function hostileValues() {
  const getterThrows = {};
  Object.defineProperty(getterThrows, 'bucket_total', {get() { throw new Error('getter'); }, enumerable: true});
  Object.defineProperty(getterThrows, 'partitionKey', {get() { throw new Error('getter'); }, enumerable: true});
  Object.defineProperty(getterThrows, 'type', {get() { throw new Error('getter'); }, enumerable: true});
  const arrayGetterThrows = ['1-2'];
  Object.defineProperty(arrayGetterThrows, 0, {get() { throw new Error('getter'); }});
  return {
    revokedObject: revoked({}),
    revokedArray: revoked([]),
    revokedFunction: revoked(() => {}),
    throwingProxy: throwingProxy({}),
    throwingArrayProxy: throwingProxy([]),
    getterThrows,
    arrayGetterThrows,
    toJSONThrows: {toJSON() { throw new Error('toJSON'); }},
    valueOfThrows: {valueOf() { throw new Error('valueOf'); }, toString() { throw new Error('toString'); }},
    toPrimitiveThrows: {[Symbol.toPrimitive]() { throw new Error('toPrimitive'); }},
    symbol: Symbol('s'),
    bigint: 10n,
    hugeSparse: new Array(2 ** 32 - 1),
    sparse: [, , 'a', , ], // eslint-disable-line no-sparse-arrays
    big: BIG,
    loneHigh: '\uD800',
    loneLow: 'a\uDC00b',
    shifting: shifting(['a', 1, undefined, {}, 'b']),
    shiftingArray: shiftingArray(),
    nan: NaN,
    negZero: -0,
    inf: Infinity,
    cyclic: (() => { const o = {}; o.self = o; return o; })(),
    deep: JSON.parse('['.repeat(5000) + ']'.repeat(5000)),
  };
}

/**
 * One call per export and per method of every class, taking one hostile value `v` in a
 * position chosen by `slot` (0..). Returns `[name, thunk]` pairs. `fixtures` holds live
 * objects to call methods on.
 */
function calls(p, v, fixtures) {
  const {bucketer, set, partitioner, lineSelector, lineIndexer, state, task, bucketing} = fixtures;
  return [
    ['bucket.key', () => p.bucket(v, 'x', 3)],
    ['bucket.data', () => p.bucket('k', v, 3)],
    ['bucket.total', () => p.bucket('k', 'x', v)],
    ['bucketMany', () => p.bucketMany('k', v, 3)],
    ['bucketMany.total', () => p.bucketMany('k', ['a'], v)],
    ['bucketDistribution', () => p.bucketDistribution('k', v, 3)],
    ['new Bucketer', () => new p.Bucketer(v, 3)],
    ['Bucketer#bucket', () => bucketer.bucket(v)],
    ['Bucketer#bucketMany', () => bucketer.bucketMany(v)],
    ['validateBucketingConfig', () => p.validateBucketingConfig(v)],
    ['validateBucketingConfig.rr', () => p.validateBucketingConfig({round_robin_bucket_execution: v})],
    ['validateBucketingConfig.id', () => p.validateBucketingConfig({bucket_total: 5, bucket_id: v})],
    ['validateBucketingConfig.total', () => p.validateBucketingConfig({bucket_total: v})],
    ['validateBucketingConfig.ranges', () => p.validateBucketingConfig({round_robin_bucket_execution: true, bucket_total: 5, bucket_ranges: v})],
    ['validateBucketingConfig.logger', () => p.validateBucketingConfig({bucket_ranges: '1'}, v)],
    ['nextBucketId', () => p.nextBucketId({round_robin_bucket_execution: true, bucket_total: v}, {})],
    ['nextBucketId.state', () => p.nextBucketId({round_robin_bucket_execution: true, bucket_total: 4}, v)],
    ['nextBucketId.last', () => p.nextBucketId({round_robin_bucket_execution: true, bucket_total: 4}, {__bucket_execution_state: {last_executed_bucket_id: v}})],
    ['applyRoundRobinBucketing', () => p.applyRoundRobinBucketing(v, {})],
    ['applyRoundRobinBucketing.ranges', () => p.applyRoundRobinBucketing({round_robin_bucket_execution: true, bucket_total: 4, bucket_ranges: v}, {})],
    ['roundRobinSchedule', () => p.roundRobinSchedule({round_robin_bucket_execution: true, bucket_total: 4, bucket_ranges: v}, {}, 3)],
    ['roundRobinSchedule.runs', () => p.roundRobinSchedule({bucket_total: 4}, {}, v)],
    ['new BucketSet.total', () => new p.BucketSet(v, '1-3')],
    ['new BucketSet.ranges', () => new p.BucketSet(5, v)],
    ['BucketSet#next', () => set.next(v)],
    ['BucketSet#has', () => set.has(v)],
    ['Bucketing.create', () => p.Bucketing.create(v)],
    ['Bucketing.create.config', () => p.Bucketing.create({partitionKey: 'k', config: v})],
    ['Bucketing.create.key', () => p.Bucketing.create({partitionKey: v, config: {}})],
    ['Bucketing#filter.items', () => bucketing.filter(v, (x) => (typeof x === 'string' ? x : 'k'))],
    ['Bucketing#filter.options', () => bucketing.filter(['a'], (x) => x, v)],
    ['Bucketing#filter.entityName', () => bucketing.filter(['a'], (x) => x, {logger: () => {}, entityName: v})],
    ['bucketingSpecProperties', () => p.bucketingSpecProperties(v)],
    ['validatePartitionConfig', () => p.validatePartitionConfig(v)],
    ['validatePartitionConfig.pattern', () => p.validatePartitionConfig({type: 'regex', pattern: v})],
    ['partitionObjects', () => p.partitionObjects(v, 2, 0, {})],
    ['partitionObjects.source', () => p.partitionObjects(['a'], 2, 0, v)],
    ['partitionObjects.total', () => p.partitionObjects(['a'], v, 0, {})],
    ['new ObjectPartitioner', () => new p.ObjectPartitioner(4, v)],
    ['new ObjectPartitioner.partition', () => new p.ObjectPartitioner(4, {partition: v})],
    ['ObjectPartitioner#indexOf', () => partitioner.indexOf(v)],
    ['ObjectPartitioner#indexMany', () => partitioner.indexMany(v)],
    ['ObjectPartitioner#select', () => partitioner.select(v, 0)],
    ['ObjectPartitioner#select.index', () => partitioner.select(['a'], v)],
    ['ObjectPartitioner#plan', () => partitioner.plan(v)],
    ['ObjectPartitioner#stats', () => partitioner.stats(v)],
    ['ObjectPartitioner#stats.object', () => partitioner.stats([{key: v, isDir: v}])],
    ['ObjectPartitioner#lineSelector', () => partitioner.lineSelector(v)],
    ['ObjectPartitioner#partitionLines', () => partitioner.partitionLines(v)],
    ['ObjectPartitioner#selectLines', () => partitioner.selectLines(v, 0)],
    ['ObjectPartitioner#selectLines.index', () => partitioner.selectLines(new TextEncoder().encode('a1\nb2'), v)],
    ['LineSelector#selectLines', () => lineSelector.selectLines(v)],
    ['LineSelector#selectLines.options', () => lineSelector.selectLines(new TextEncoder().encode('a1\nb'), v)],
    ['LineSelector#selectBytes', () => lineSelector.selectBytes(v, {final: true})],
    ['LineIndexer#indexLines', () => lineIndexer.indexLines(v)],
    ['LineIndexer#indexLines.options', () => lineIndexer.indexLines(new Uint8Array([49, 10, 50]), v)],
    ['sanitizeKeyForPatternMatching', () => p.sanitizeKeyForPatternMatching(v, '')],
    ['listingPrefix', () => p.listingPrefix(v)],
    ['fnv1a32', () => p.fnv1a32(v)],
    ['importBucketsDefault', () => p.importBucketsDefault(v)],
    ['importBucketsDefault.value', () => p.importBucketsDefault({GTC_IMPORT_BUCKETS_DEFAULT: v})],
    ['assignImportBuckets', () => p.assignImportBuckets(v)],
    ['assignImportBuckets.item', () => p.assignImportBuckets([v, {datasetName: 'd'}])],
    ['assignImportBuckets.options', () => p.assignImportBuckets([{datasetName: 'd'}], v)],
    ['assignImportBuckets.buckets', () => p.assignImportBuckets([{datasetName: 'd'}], {buckets: v})],
    ['assignImportBuckets.field', () => p.assignImportBuckets([{datasetName: v, bucket: v}])],
    ['partitionKeyOf', () => p.partitionKeyOf(v)],
    ['partitionKeyOf.field', () => p.partitionKeyOf({datasetName: v, bucket: v})],
    ['partitionKeyOf.options', () => p.partitionKeyOf({datasetName: 'd'}, v)],
    ['groupByPartitionKey', () => p.groupByPartitionKey(v)],
    ['groupByPartitionKey.item', () => p.groupByPartitionKey([v])],
    ['isUuid', () => p.isUuid(v)],
    ['normalizeUuid', () => p.normalizeUuid(v)],
    ['derivePartitionUuid', () => p.derivePartitionUuid(v, 'r')],
    ['BuildState.replay', () => p.BuildState.replay(v)],
    ['BuildState.replay.event', () => p.BuildState.replay([v])],
    ['BuildState.fromSnapshot', () => p.BuildState.fromSnapshot(v)],
    ['BuildState#apply', () => state.apply(v)],
    ['BuildState#apply.field', () => state.apply({type: 'WantCreate', timestamp: 1, wantId: v, partitions: v})],
    ['BuildState#canonicalPartition', () => state.canonicalPartition(v)],
    ['BuildState#partition', () => state.partition(v)],
    ['BuildState#partitionHistory', () => state.partitionHistory(v)],
    ['BuildState#want', () => state.want(v)],
    ['BuildState#wantsForPartition', () => state.wantsForPartition(v)],
    ['BuildState#jobRun', () => state.jobRun(v)],
    ['BuildState#taint', () => state.taint(v)],
    ['BuildState#schedulableWants', () => state.schedulableWants(v)],
    ['BuildState#wantsPastSla', () => state.wantsPastSla(v)],
    ['new SyncTask', () => new p.SyncTask(v)],
    ['new SyncTask.options', () => new p.SyncTask('t', v)],
    ['SyncTask#onRebalance', () => task.onRebalance(v, 1)],
    ['SyncTask#onRebalance.now', () => task.onRebalance({generation: 1, leader: true, members: ['t1']}, v)],
    ['SyncTask#onMessage', () => task.onMessage(v, 1)],
    ['SyncTask#addPartitions', () => task.addPartitions(v, 1)],
    ['SyncTask#addPartitions.item', () => task.addPartitions([v], 1)],
    ['SyncTask#partitionStarted', () => task.partitionStarted(v, 1)],
    ['SyncTask#partitionFinished', () => task.partitionFinished(v, 1)],
    ['SyncTask#tick', () => task.tick(v)],
    ['SyncTask#loadOf', () => task.loadOf(v)],
    ['syncLogStart', () => p.syncLogStart(v, {atLow: true, low: 0})],
    ['syncLogStart.record', () => p.syncLogStart([v], {atLow: true, low: 0})],
    ['syncLogStart.message', () => p.syncLogStart([{offset: 1, message: v}], {atLow: false, low: 0})],
    ['syncLogStart.where', () => p.syncLogStart([], v)],
    ['checkpointMessage', () => p.checkpointMessage(v)],
    ['checkpointMessage.item', () => p.checkpointMessage([v])],
    ['resolveSyncOptions', () => p.resolveSyncOptions(v)],
    ['resolveSyncOptions.stateRefreshInterval', () => p.resolveSyncOptions({stateRefreshInterval: v})],
    ['minSyncRetention', () => p.minSyncRetention(v)],
  ];
}

/** Messages of errors that mean the JS layer sent wasm inconsistent plain data: never allowed. */
const INTERNAL = /malformed encoding|not written whole|differ in length|packed batch/;

/** Calls that hand `v` to the caller's own code (a logger): its exceptions are the caller's. */
const CALLBACKS = new Set(['validateBucketingConfig.logger']);

/** Live objects the method calls use. */
function fixtures(p) {
  const state = p.BuildState.replay([{type: 'WantCreate', timestamp: 1, wantId: 'w1', partitions: ['data/a']}]);
  const task = new p.SyncTask('t1');
  task.onRebalance({generation: 1, leader: true, members: ['t1']}, 1);
  task.addPartitions([{token: 'p1'}], 2);
  const partitioner = new p.ObjectPartitioner(4, {partition: {type: 'regex', pattern: '(\\d+)'}});
  return {
    bucketer: new p.Bucketer('k', 7),
    set: new p.BucketSet(9, '2-4,7'),
    partitioner,
    lineSelector: partitioner.lineSelector(1),
    lineIndexer: partitioner.lineIndexer(),
    state,
    task,
    bucketing: p.Bucketing.create({partitionKey: 'k', config: {bucket_total: 3, bucket_id: 2}}),
  };
}

/** What the stateful fixtures hold, to check that refused inputs change nothing. */
function stateOf(f) {
  return JSON.stringify([
    f.state.snapshot(),
    f.task.ownedPartitions(),
    f.task.sharedPartitions(),
    f.task.knownTasks(),
    f.task.epoch() ?? null,
  ]);
}

/** Answers of a few calls through every domain, computed once on a fresh module. */
function canary(p) {
  const o = new p.ObjectPartitioner(4, {partition: {type: 'regex', pattern: '(\\d+)'}});
  const state = new p.BuildState();
  state.apply({type: 'WantCreate', timestamp: 1, wantId: 'w', partitions: ['r']});
  const task = new p.SyncTask('c1');
  const out = JSON.stringify([
    p.bucket('k', 'test-data', 5),
    Array.from(p.bucketMany('k', ['a', 'b', 'c'], 12)),
    new p.Bucketer('farosai', 12).bucket('facebook/react'),
    p.nextBucketId({round_robin_bucket_execution: true, bucket_total: 5, bucket_ranges: ['1-2', '4']}, {__bucket_execution_state: {last_executed_bucket_id: 2}}),
    p.roundRobinSchedule({round_robin_bucket_execution: true, bucket_total: 4}, {}, 5),
    Array.from(o.indexMany(['a1', 'b22', 'c/'])),
    Array.from(o.partitionLines(new TextEncoder().encode('a1\r\nb22\n\nc/\nd\xFF4'))),
    Array.from(o.selectLines(new TextEncoder().encode('a1\nb22\nc3'), 2)),
    o.plan(['x1', 'x2', 'x3']),
    o.stats(['a1', {key: 'b', isDir: true}]),
    p.partitionObjects(['a1', 'b2', 'c3'], 2, 1, {partition: {type: 'object'}}),
    p.fnv1a32('hello'),
    p.isUuid(p.NIL_UUID),
    p.normalizeUuid('AAAAAAAA-0000-0000-0000-000000000000'),
    p.partitionKeyOf({datasetName: 'd', bucket: p.NIL_UUID}),
    p.groupByPartitionKey([{datasetName: 'd', bucket: p.NIL_UUID}]).length,
    p.assignImportBuckets([{datasetName: 'd', bucket: p.NIL_UUID}], {buckets: 3}).length,
    p.importBucketsDefault({}),
    p.derivePartitionUuid('j', 'r'),
    state.stats(),
    task.taskId(),
    task.tick(1),
  ]);
  o.free?.();
  state.free();
  task.free();
  return out;
}

const kafka = {consumer() {}, producer() {}, admin() {}};
/** An S3 client whose every ListObjectsV2 page is empty. */
const client = {send: async () => ({Contents: [], IsTruncated: false, KeyCount: 0})};
const SOURCE = {bucket: 'b', key: 'logs/', partition: {type: 'object'}};
const BASE = {kafka, connectorName: 'c', taskId: 't'};
const SUBPATH_FIXTURES = {kafka, client, SOURCE, BASE};

/**
 * One call per export of partkit/kafka (`k`) and partkit/s3 (`s3`) and per argument position,
 * with `v` there: `[name, thunk]` pairs (a thunk may return a promise). No broker, no S3: an
 * in-memory kafkajs shape and an S3 client whose pages are empty.
 */
function subpathCalls(k, s3, v) {
  const assigner = () => k.taskSyncAssigner({taskId: 't'})({cluster: {}});
  return [
    ['kafkaTopicNames', () => k.kafkaTopicNames(v)],
    ['new KafkaTaskSync', () => new k.KafkaTaskSync(v)],
    ...['kafka', 'connectorName', 'taskId', 'syncOptions', 'topicCheckInterval', 'sessionTimeout', 'syncRetentionMs', 'clock', 'syncTopic', 'groupId', 'onStart', 'createSyncTask']
      .map((field) => [`new KafkaTaskSync.${field}`, () => new k.KafkaTaskSync({...BASE, [field]: v})]),
    ['new KafkaTaskSync.syncOptions.stateRefreshInterval', () => new k.KafkaTaskSync({...BASE, syncOptions: {stateRefreshInterval: v}})],
    ['taskSyncAssigner', () => k.taskSyncAssigner(v)],
    ['taskSyncAssigner.taskId', () => k.taskSyncAssigner({taskId: v})],
    ['taskSyncAssigner.onAssign', () => k.taskSyncAssigner({taskId: 't', onAssign: v})],
    ['taskSyncAssigner()(context)', () => k.taskSyncAssigner({taskId: 't'})(v)],
    ['assigner.protocol', () => assigner().protocol(v)],
    ['assigner.protocol.topics', () => assigner().protocol({topics: v})],
    ['assigner.protocol.topic', () => assigner().protocol({topics: [v]})],
    ['findEpochStart', () => k.findEpochStart(v, {atLow: true, low: 0})],
    ['findEpochStart.record', () => k.findEpochStart([v], {atLow: true, low: 0})],
    ['findEpochStart.message', () => k.findEpochStart([{offset: 0, message: v}], {atLow: true, low: 0})],
    ['findEpochStart.where', () => k.findEpochStart([], v)],
    ['new SyncLogReader', () => new k.SyncLogReader(v)],
    ...['topic', 'low', 'high', 'scanWindow', 'refetches'].map((field) => [
      `new SyncLogReader.${field}`,
      () => new k.SyncLogReader({topic: 't', low: 0, high: 5, scanWindow: 4, [field]: v}),
    ]),
    ['parseS3Url', () => s3.parseS3Url(v)],
    ['listPartition.client', () => s3.listPartition(v, SOURCE, 2, 0).next()],
    ['listPartition.source', () => s3.listPartition(client, v, 2, 0).next()],
    ['listPartition.source.bucket', () => s3.listPartition(client, {...SOURCE, bucket: v}, 2, 0).next()],
    ['listPartition.source.partition', () => s3.listPartition(client, {...SOURCE, partition: v}, 2, 0).next()],
    ['listPartition.total', () => s3.listPartition(client, SOURCE, v, 0).next()],
    ['listPartition.index', () => s3.listPartition(client, SOURCE, 2, v).next()],
    ['listPartition.options', () => s3.listPartition(client, SOURCE, 2, 0, v).next()],
    ['listPartition.options.pageSize', () => s3.listPartition(client, SOURCE, 2, 0, {pageSize: v}).next()],
    ['listPartition.options.signal', () => s3.listPartition(client, SOURCE, 2, 0, {signal: v}).next()],
    ['stats.source', () => s3.stats(client, v, 2)],
    ['stats.total', () => s3.stats(client, SOURCE, v)],
    ['stats.options', () => s3.stats(client, SOURCE, 2, v)],
  ];
}

module.exports = {INTERNAL, CALLBACKS, hostileValues, calls, subpathCalls, SUBPATH_FIXTURES, fixtures, stateOf, canary, revoked, throwingProxy};
