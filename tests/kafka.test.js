// KafkaTaskSync pieces that need no broker: the partition assigner against kafkajs' own consumer
// protocol codec, where a new reader starts on the sync topic, argument checks, the retention
// rule, and the transport over an in-memory kafkajs stand-in driving partkit's SyncTask.
const {AssignerProtocol} = require('kafkajs');
const {SyncError} = require('partkit');
const {KafkaTaskSync, taskSyncAssigner, findEpochStart, kafkaTopicNames} = require('partkit/kafka');

const {MemberMetadata, MemberAssignment} = AssignerProtocol;

describe('taskSyncAssigner', () => {
  const cluster = (partitions) => ({
    findTopicPartitionMetadata: (topic) => (partitions[topic] ?? []).map((partitionId) => ({partitionId})),
  });

  test('announces the task id in metadata that kafkajs decodes', () => {
    const assigner = taskSyncAssigner({taskId: 'task-ü-1'})({cluster: cluster({})});
    expect(assigner.name).toBe('PartkitTaskSync');
    const {name, metadata} = assigner.protocol({topics: ['hb']});
    expect(name).toBe('PartkitTaskSync');
    const decoded = MemberMetadata.decode(metadata);
    expect(decoded.topics).toEqual(['hb']);
    expect(JSON.parse(decoded.userData.toString())).toEqual({taskId: 'task-ü-1'});
  });

  test('the leader learns the task ids; partitions are dealt round-robin by task id', async () => {
    let learned;
    const assigner = taskSyncAssigner({taskId: 'b', onAssign: (m) => (learned = m)})({cluster: cluster({hb: [2, 0, 1]})});
    const member = (memberId, taskId) => ({
      memberId,
      memberMetadata: MemberMetadata.encode({version: 1, topics: ['hb'], userData: Buffer.from(JSON.stringify({taskId}))}),
    });
    const foreign = {memberId: 'zz-other', memberMetadata: MemberMetadata.encode({version: 0, topics: ['hb']})};
    const out = await assigner.assign({members: [member('m-3', 'c'), member('m-1', 'a'), member('m-2', 'b'), foreign], topics: ['hb']});
    expect(learned).toEqual([
      {memberId: 'm-1', taskId: 'a'},
      {memberId: 'm-2', taskId: 'b'},
      {memberId: 'm-3', taskId: 'c'},
      {memberId: 'zz-other', taskId: 'zz-other'},
    ]);
    const byMember = Object.fromEntries(out.map((a) => [a.memberId, MemberAssignment.decode(a.memberAssignment).assignment]));
    expect(byMember).toEqual({'m-1': {hb: [0]}, 'm-2': {hb: [1]}, 'm-3': {hb: [2]}, 'zz-other': {}});
  });
});

describe('findEpochStart', () => {
  const rec = (offset, type, syncEpoch, baseEpoch) => ({offset, message: type ? {type, syncEpoch, baseEpoch, taskID: 't'} : null});

  test('starts at the first NewEpoch of the base of the latest NewEpoch', () => {
    const records = [
      rec(10, 'Regular', '1-a'),
      rec(11, 'NewEpoch', '2-a', '1-a'),
      rec(12, 'Regular', '2-a'),
      rec(13, 'NewEpoch', '2-a', '1-a'), // a re-publication
      rec(14, 'RebalanceAnswer', '2-a'),
      rec(15, 'NewEpoch', '3-b', '2-a'),
      rec(16, null),
    ];
    expect(findEpochStart(records, {atLow: false, low: 0})).toEqual({offset: '11'});
  });

  test('a stale latest NewEpoch still leads back to an epoch every task applied', () => {
    // 3-b was computed from 1-a while 2-a was in force: every reader ignores it
    const records = [rec(5, 'NewEpoch', '1-a', ''), rec(6, 'NewEpoch', '2-a', '1-a'), rec(7, 'NewEpoch', '3-b', '1-a')];
    expect(findEpochStart(records, {atLow: true, low: 5})).toEqual({offset: '5'});
  });

  test('asks for more of the log when the base is not in the window', () => {
    const records = [rec(100, 'Regular', '2-a'), rec(101, 'NewEpoch', '3-b', '2-a')];
    expect(findEpochStart(records, {atLow: false, low: 0})).toEqual({extend: true});
    // at the start of the retained log: the latest epoch itself is the best left
    expect(findEpochStart(records, {atLow: true, low: 100})).toEqual({offset: '101'});
  });

  test('the first epoch, or no epoch at all: the whole retained log', () => {
    expect(findEpochStart([rec(3, 'RebalanceAnswer', ''), rec(4, 'NewEpoch', '1-a', '')], {atLow: true, low: 3})).toEqual({offset: '3'});
    expect(findEpochStart([rec(3, 'RebalanceAnswer', '')], {atLow: false, low: 0})).toEqual({extend: true});
    expect(findEpochStart([rec(0, null), rec(1, 'Regular', '')], {atLow: true, low: 0})).toEqual({offset: '0'});
  });
});

describe('findEpochStart: checkpoints', () => {
  const rec = (offset, message) => ({offset, message});
  const regular = (taskID, messageSeq) => ({type: 'Regular', taskID, syncEpoch: '2-a', messageSeq});
  const epoch = (syncEpoch, baseEpoch, extra = {}) => ({type: 'NewEpoch', taskID: 'a', syncEpoch, baseEpoch, ...extra});
  const checkpoint = (afterTaskID, afterSeq, syncEpoch = '2-a') => epoch(syncEpoch, '1-a', {resend: true, checkpoint: {afterTaskID, afterSeq}});

  test('a chunked checkpoint whose sender field is missing, followed by an unreadable record, is passed over (no TypeError)', () => {
    const first = {...checkpoint('b', 4), taskID: undefined, messageSeq: 5, chunk: {index: 0, count: 2}};
    const records = [rec(10, epoch('1-a', '')), rec(11, epoch('2-a', '1-a')), rec(12, regular('b', 4)), rec(13, first), rec(14, null)];
    expect(findEpochStart(records, {atLow: true, low: 10})).toEqual({offset: '10'});
  });

  test('the latest clean checkpoint wins: the record right before it is the one it names', () => {
    const records = [
      rec(10, epoch('1-a', '')),
      rec(11, epoch('2-a', '1-a')),
      rec(12, regular('b', 4)),
      rec(13, checkpoint('b', 4)), // clean
      rec(14, regular('c', 9)),
      rec(15, checkpoint('b', 5)), // unclean: 14 is c's
      rec(16, regular('a', 3)),
    ];
    expect(findEpochStart(records, {atLow: false, low: 0})).toEqual({offset: '13'});
    // a later clean one wins over an earlier one
    expect(findEpochStart([...records, rec(17, checkpoint('a', 3))], {atLow: false, low: 0})).toEqual({offset: '17'});
  });

  test('a checkpoint followed by a newer NewEpoch still wins (the replay applies the newer one as the tasks did)', () => {
    const records = [rec(40, regular('b', 1)), rec(41, checkpoint('b', 1)), rec(42, epoch('3-b', '2-a')), rec(43, regular('b', 2))];
    expect(findEpochStart(records, {atLow: false, low: 0})).toEqual({offset: '41'});
  });

  test('an unclean checkpoint: start right after the record it names, the checkpoint applied first', () => {
    const records = [
      rec(20, epoch('2-a', '1-a')),
      rec(21, regular('b', 4)),
      rec(22, regular('c', 1)),
      rec(23, checkpoint('b', 4)), // names 21: 22 came between
    ];
    expect(findEpochStart(records, {atLow: false, low: 0})).toEqual({offset: '22', checkpoint: '23'});
    // a later clean one wins
    expect(findEpochStart([...records, rec(24, checkpoint('a', 1, '2-a')), rec(25, regular('a', 2))], {atLow: false, low: 0})).toEqual({offset: '22', checkpoint: '23'});
    expect(findEpochStart([...records, rec(24, regular('a', 1)), rec(25, checkpoint('a', 1))], {atLow: false, low: 0})).toEqual({offset: '25'});
    // the named record at its first place (a producer retry wrote it twice)
    const dup = [rec(30, regular('b', 7)), rec(31, regular('c', 1)), rec(32, regular('b', 7)), rec(33, checkpoint('b', 7))];
    expect(findEpochStart(dup, {atLow: false, low: 0})).toEqual({offset: '31', checkpoint: '33'});
  });

  test('a chunked checkpoint stands at its first chunk and counts only whole', () => {
    const part = (index, count, messageSeq) => ({...checkpoint('b', 4), taskID: 'a', messageSeq, chunk: {index, count}});
    const records = [rec(20, epoch('2-a', '1-a')), rec(21, regular('b', 4)), rec(22, part(0, 2, 7)), rec(23, part(1, 2, 8))];
    expect(findEpochStart(records, {atLow: false, low: 0})).toEqual({offset: '22'});
    // another record between its chunks: applied joined first, then read from after the named one
    const between = [rec(20, epoch('2-a', '1-a')), rec(21, regular('b', 4)), rec(22, part(0, 2, 7)), rec(23, regular('c', 1)), rec(24, part(1, 2, 8))];
    expect(findEpochStart(between, {atLow: false, low: 0})).toEqual({offset: '22', checkpoint: '22', chunks: ['22', '24']});
    // its last chunk never landed (its author died half-way): not a place to start
    expect(findEpochStart(records.slice(0, 3), {atLow: false, low: 0})).toEqual({extend: true});
  });

  test('checkpoints that cannot be used fall back to the base-epoch rule', () => {
    const records = [
      rec(20, epoch('2-a', '1-a')),
      rec(21, regular('b', 4)),
      rec(22, checkpoint('b', 3)), // names b's seq 3, which is not in the records
      rec(24, checkpoint('b', 4)), // 23 is not in the records
      rec(26, checkpoint('c', 1)), // names a record not in the records
    ];
    expect(findEpochStart(records, {atLow: false, low: 0})).toEqual({extend: true});
    expect(findEpochStart([rec(19, epoch('1-a', '')), ...records], {atLow: false, low: 0})).toEqual({offset: '19'});
    // a checkpoint at the window's first record cannot be checked
    expect(findEpochStart([rec(22, checkpoint('b', 3)), rec(23, regular('b', 5))], {atLow: false, low: 0})).toEqual({extend: true});
    // not a checkpoint: no resend, or no checkpoint field
    const notResent = {...checkpoint('b', 4), resend: false};
    expect(findEpochStart([rec(1, epoch('1-a', '')), rec(2, regular('b', 4)), rec(3, notResent)], {atLow: false, low: 0})).toEqual({offset: '1'});
  });

  test('a checkpoint written by a task still behind is passed over', () => {
    const g = (m, epochGeneration) => ({...m, epochGeneration});
    const records = [
      rec(50, g(epoch('5-a', '1-a', {resend: true, checkpoint: {afterTaskID: 'x', afterSeq: 1}}), 5)),
      rec(51, g(regular('b', 4), 5)), // b had applied epoch 5
      rec(52, g(checkpoint('b', 4, '1-a'), 1)), // clean, but written from epoch 1 by a task that missed 5
      rec(53, g(regular('c', 2), 5)),
    ];
    expect(findEpochStart(records, {atLow: false, low: 0})).toEqual({extend: true});
    // a fresh NewEpoch attempt computed from a stale view (its base is not the epoch in force)
    // does not count: every task ignored it
    const attempt = [rec(60, g(regular('b', 4), 1)), rec(61, g(epoch('5-a', '0-z'), 5)), rec(62, g(regular('c', 1), 1)), rec(63, g(checkpoint('c', 1, '1-a'), 1))];
    expect(findEpochStart(attempt, {atLow: false, low: 0})).toEqual({offset: '63'});
  });

  test('a checkpoint whose author missed a NewEpoch built on its epoch is passed over', () => {
    // 61 is a whole NewEpoch on 1-a, the epoch the checkpoint at 63 holds in force: every task
    // that read 61 applied it, so the author of 63, which names 62, missed it (a transport
    // without the offset check); the checkpoint before 61 is the place to start
    const g = (m, epochGeneration) => ({...m, epochGeneration});
    const records = [
      rec(58, g(regular('b', 3), 1)),
      rec(59, g(checkpoint('b', 3, '1-a'), 1)),
      rec(60, g(regular('b', 4), 1)),
      rec(61, g(epoch('5-a', '1-a'), 5)),
      rec(62, g(regular('c', 1), 1)),
      rec(63, g(checkpoint('c', 1, '1-a'), 1)),
    ];
    expect(findEpochStart(records, {atLow: false, low: 0})).toEqual({offset: '59'});
    // a NewEpoch whose last chunk never landed applied nowhere: 63 stays a place to start
    const part = {...g(epoch('5-a', '1-a'), 5), messageSeq: 9, chunk: {index: 0, count: 2}};
    const partial = [...records.slice(0, 3), rec(61, part), ...records.slice(4)];
    expect(findEpochStart(partial, {atLow: false, low: 0})).toEqual({offset: '63'});
  });

  test('wrong arguments are SyncErrors with code INVALID_ARGUMENT, never a TypeError', () => {
    const {proxy, revoke} = Proxy.revocable([], {});
    revoke();
    const {proxy: revokedObject, revoke: r2} = Proxy.revocable({}, {});
    r2();
    const throwing = {
      get offset() {
        throw new TypeError('boom');
      },
      message: null,
    };
    const cases = [
      [undefined, {atLow: true, low: 0}],
      [null, {atLow: true, low: 0}],
      ['records', {atLow: true, low: 0}],
      [proxy, {atLow: true, low: 0}],
      [[revokedObject], {atLow: true, low: 0}],
      [[throwing], {atLow: true, low: 0}],
      [[{offset: Symbol('x'), message: null}], {atLow: true, low: 0}],
      [[{offset: -1, message: null}], {atLow: true, low: 0}],
      [[{offset: 1.5, message: null}], {atLow: true, low: 0}],
      [[{offset: 'x', message: null}], {atLow: true, low: 0}],
      [[{offset: 2, message: null}, {offset: 1, message: null}], {atLow: true, low: 0}],
      [[{offset: 1, message: 'NewEpoch'}], {atLow: true, low: 0}],
      [[{offset: 1, message: [1]}], {atLow: true, low: 0}],
      [[{offset: 1, message: revokedObject}], {atLow: true, low: 0}],
      [[], undefined],
      [[], revokedObject],
      [[], {atLow: 'yes', low: 0}],
      [[], {atLow: true, low: Symbol('low')}],
      [[], {atLow: true, low: -3}],
    ];
    for (const [records, where] of cases) {
      let error;
      try {
        findEpochStart(records, where);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(SyncError);
      expect(error.code).toBe('INVALID_ARGUMENT');
    }
  });

  test('each value is read once', () => {
    let reads = 0;
    const record = {
      get offset() {
        reads++;
        return reads === 1 ? 5 : 'garbage';
      },
      message: {type: 'NewEpoch', syncEpoch: '1-a', baseEpoch: ''},
    };
    expect(findEpochStart([record], {atLow: true, low: 5n})).toEqual({offset: '5'});
    expect(reads).toBe(1);
  });

  test('messages of any shape from the log are not arguments errors: wrong-typed fields count as absent', () => {
    const odd = [rec(1, {type: 'NewEpoch', syncEpoch: 7, baseEpoch: {}}), rec(2, {type: 5}), rec(3, {type: 'NewEpoch', resend: true, checkpoint: 'x'})];
    expect(findEpochStart(odd, {atLow: true, low: 1})).toEqual({offset: '1'});
  });
});

describe('taskSyncAssigner arguments', () => {
  const {proxy, revoke} = Proxy.revocable({}, {});
  revoke();
  test.each([
    ['undefined', undefined],
    ['a string', 'a'],
    ['an empty taskId', {taskId: ''}],
    ['a Symbol taskId', {taskId: Symbol('t')}],
    ['an onAssign that is not a function', {taskId: 'a', onAssign: 5}],
    ['a revoked Proxy', proxy],
  ])('%s is refused with INVALID_ARGUMENT', (_, o) => {
    expect(() => taskSyncAssigner(o)).toThrow(expect.objectContaining({name: 'SyncError', code: 'INVALID_ARGUMENT'}));
  });

  test('the assigner factory and protocol() check theirs', () => {
    const factory = taskSyncAssigner({taskId: 'a'});
    expect(() => factory(proxy)).toThrow(expect.objectContaining({code: 'INVALID_ARGUMENT'}));
    expect(() => factory(5)).toThrow(expect.objectContaining({code: 'INVALID_ARGUMENT'}));
    const a = factory({cluster: {}});
    for (const bad of [undefined, proxy, {topics: 'hb'}, {topics: [Symbol('t')]}, {topics: [5]}]) {
      expect(() => a.protocol(bad)).toThrow(expect.objectContaining({name: 'SyncError', code: 'INVALID_ARGUMENT'}));
    }
    expect(AssignerProtocol.MemberMetadata.decode(a.protocol({topics: ['hb']}).metadata).topics).toEqual(['hb']);
  });
});

describe('the retention rule', () => {
  const kafka = {consumer() {}, producer() {}, admin() {}};
  const make = (o) => new KafkaTaskSync({kafka, connectorName: 'c1', taskId: 't1', ...o});

  test('syncRetentionMs defaults to 7 days; -1 or 4 × stateRefreshInterval and more are accepted', async () => {
    const {FakeKafka} = require('./support/fake-kafka');
    const fake = new FakeKafka();
    const s = new KafkaTaskSync({kafka: fake, connectorName: 'c1', taskId: 't1'});
    await s.start();
    expect(fake.topics.get('c1_connector_sync').configs['retention.ms']).toBe('604800000');
    await s.close();
    expect(() => make({syncRetentionMs: -1})).not.toThrow();
    expect(() => make({syncRetentionMs: 1200000})).not.toThrow();
  });

  test('a syncRetentionMs below 4 × stateRefreshInterval is refused, naming both numbers and the rule', () => {
    let error;
    try {
      make({syncRetentionMs: 1199999});
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SyncError);
    expect(error.code).toBe('KAFKA_RETENTION_TOO_SHORT');
    expect(error.message).toContain('1199999');
    expect(error.message).toContain('300000');
    expect(error.message).toContain('-1 (infinite) or at least 4 × stateRefreshInterval');
  });
});

describe('KafkaTaskSync arguments', () => {
  const kafka = {consumer() {}, producer() {}, admin() {}};
  const make = (o) => new KafkaTaskSync({kafka, connectorName: 'c1', taskId: 't1', ...o});

  test('topic names', () => {
    expect(kafkaTopicNames('orders')).toEqual({sync: 'orders_connector_sync', heartbeat: 'orders_connector_heartbeat'});
    const s = make();
    expect(s.syncTopic).toBe('c1_connector_sync');
    expect(s.groupId).toBe('c1');
  });

  test.each([
    [{kafka: {}}, 'options.kafka must be a kafkajs Kafka instance'],
    [{connectorName: ''}, 'options.connectorName must be a non-empty string'],
    [{connectorName: 'a b'}, 'options.connectorName must be a non-empty string'],
    [{taskId: 5}, 'options.taskId must be a non-empty string'],
    [{topicCheckInterval: 0}, 'options.topicCheckInterval must be a positive integer'],
    [{tickInterval: 1000}, 'options.tickInterval was removed'],
    [{syncRetentionMs: 0}, 'options.syncRetentionMs must be a positive integer or -1'],
    [{syncOptions: 5}, 'options.syncOptions must be an object'],
    [{heartbeatInterval: 10000, sessionTimeout: 10000}, 'options.heartbeatInterval must be lower than options.sessionTimeout'],
    [{createSyncTask: 5}, 'options.createSyncTask must be a function'],
  ])('%j is rejected', (o, message) => {
    expect(() => make(o)).toThrow(SyncError);
    expect(() => make(o)).toThrow(message);
  });

  test('inputs before start() throw KAFKA_BAD_STATE', () => {
    const s = make();
    expect(() => s.addPartitions([{token: 'p'}])).toThrow(expect.objectContaining({code: 'KAFKA_BAD_STATE'}));
  });
});

// The transport over an in-memory kafkajs stand-in, driving partkit's SyncTask (recording its
// inputs): order of operations, the rebalance assembled from the assigner, GROUP_JOIN and
// HEARTBEAT, publishing, events, the tick timer, the retention check, failures.
describe('KafkaTaskSync over an in-memory kafka', () => {
  const {FakeKafka, recordingSyncTask, EVENTS} = require('./support/fake-kafka');
  const tick = () => new Promise((r) => setTimeout(r, 5));
  const until = async (pred, what = 'a condition') => {
    for (let i = 0; i < 400; i++) {
      if (pred()) return;
      await tick();
    }
    throw new Error(`timed out waiting for ${what}`);
  };
  const state = (taskID, stateVersion) => ({taskID, stateTimestamp: 1, stateVersion, data: {partitions: []}, share: {partitions: []}});
  // valid SyncMessages of another task, 'x'
  const msg = (type, extra = {}) => JSON.stringify({type, taskID: 'x', syncEpoch: '', messageTimestamp: 1, epochGeneration: 0, connectorState: [state('x', (extra.n ?? 0) + 1)], ...extra});
  const epochMsg = (syncEpoch, baseEpoch, epochGeneration) => msg('NewEpoch', {syncEpoch, baseEpoch, epochGeneration});
  const SYNC_CONFIGS = {'retention.ms': '604800000', 'cleanup.policy': 'delete'};
  const topics = (kafka) => {
    kafka.createTopic('c_connector_sync', 1, SYNC_CONFIGS);
    kafka.createTopic('c_connector_heartbeat', 1);
  };
  let sync;

  function make(kafka, o = {}) {
    let task;
    sync = new KafkaTaskSync({kafka, connectorName: 'c', taskId: 'a', createSyncTask: (id, so) => (task = recordingSyncTask(id, so)), topicCheckInterval: 100000, ...o});
    const events = [];
    for (const e of ['start', 'stop', 'rebalance', 'warning', 'error']) sync.on(e, (x) => events.push([e, x]));
    return {task, events};
  }
  const hb = (kafka) => kafka.consumers.find((c) => c.groupId === 'c');
  // the group id of the task's sync-topic reader (its own group: <sync topic>_reader_<taskId>_<8 hex digits>)
  const readerGroup = (kafka) => kafka.consumers.find((c) => c.groupId.startsWith('c_connector_sync_reader_')).groupId;
  // the nonce the task announces in its JoinGroup metadata
  const nonceOf = (kafka) => {
    const {AssignerProtocol: {MemberMetadata: MM}} = require('kafkajs');
    return JSON.parse(Buffer.from(MM.decode(hb(kafka).assigner.protocol({topics: ['hb']}).metadata).userData).toString('utf8')).nonce;
  };
  const messages = (task) => task.inputs.filter(([k]) => k === 'message').map(([, m]) => m);

  /** A started task 'a', alone in the group and its leader, with epoch 1-a applied. */
  async function alone(kafka, o) {
    const made = make(kafka, o);
    await sync.start();
    const c = hb(kafka);
    await c.assign([['m-a', 'a']]);
    c.fire(EVENTS.GROUP_JOIN, {memberId: 'm-a', isLeader: true});
    c.fire(EVENTS.HEARTBEAT, {memberId: 'm-a', groupGenerationId: 0});
    await until(() => sync.epoch() === '1-a', 'epoch 1-a');
    return made;
  }

  afterEach(async () => {
    if (sync) await sync.close();
    sync = null;
  });

  test('creates the topics, replays the sync topic from the epoch start, and only then joins the group', async () => {
    const kafka = new FakeKafka();
    topics(kafka);
    for (let i = 0; i < 100; i++) kafka.append('c_connector_sync', msg('Regular', {n: i}));
    kafka.append('c_connector_sync', epochMsg('1-x', '', 1)); // 100
    for (let i = 101; i < 400; i++) kafka.append('c_connector_sync', msg('Regular', {n: i}));
    kafka.append('c_connector_sync', epochMsg('2-x', '1-x', 2)); // 400
    for (let i = 401; i < 600; i++) kafka.append('c_connector_sync', msg('Regular', {n: i}));
    const {task, events} = make(kafka, {scanWindow: 100});
    await sync.start();
    // windows of 100, 400, then the whole log: the base epoch 1-x starts at offset 100
    expect(kafka.calls.filter((c) => c.startsWith('seek'))).toEqual([`seek ${readerGroup(kafka)} 500`, `seek ${readerGroup(kafka)} 200`, `seek ${readerGroup(kafka)} 0`]);
    const got = messages(task);
    expect(got.length).toBe(500);
    expect(got[0]).toMatchObject({type: 'NewEpoch', syncEpoch: '1-x'});
    expect(got[499]).toMatchObject({n: 599});
    // the heartbeat group is joined after the replay
    const joinedAt = kafka.calls.indexOf('connect c');
    expect(joinedAt).toBeGreaterThan(kafka.calls.lastIndexOf(`seek ${readerGroup(kafka)} 0`));
    expect(sync.state).toBe('running');
    expect(events.filter(([e]) => e === 'warning')).toEqual([]);
  });

  test('missing topics are created (the sync topic with one partition, retention.ms and cleanup.policy delete); a sync topic with 2 partitions is refused', async () => {
    const kafka = new FakeKafka();
    const {events} = make(kafka);
    await sync.start();
    expect(kafka.calls.filter((c) => c.startsWith('createTopic'))).toEqual(['createTopic c_connector_sync 1', 'createTopic c_connector_heartbeat 1']);
    expect(kafka.topics.get('c_connector_sync').configs).toEqual({'retention.ms': '604800000', 'cleanup.policy': 'delete'});
    expect(events).toEqual([]);
    await sync.close();
    const k2 = new FakeKafka();
    k2.createTopic('c_connector_sync', 2);
    make(k2);
    await expect(sync.start()).rejects.toMatchObject({code: 'KAFKA_SYNC_TOPIC_PARTITIONS'});
    expect(sync.state).toBe('failed');
    sync = null;
  });

  test('a sync topic whose retention breaks the rule (or that is compacted) is refused at start', async () => {
    const kafka = new FakeKafka();
    kafka.createTopic('c_connector_sync', 1, {'retention.ms': '600000', 'cleanup.policy': 'delete'});
    make(kafka);
    const started = sync.start();
    await expect(started).rejects.toMatchObject({code: 'KAFKA_RETENTION_TOO_SHORT'});
    await expect(started).rejects.toThrow(/retention.ms is 600000 but stateRefreshInterval is 300000.*-1 \(infinite\) or at least 4 × stateRefreshInterval \(1200000\)/);
    expect(sync.state).toBe('failed');
    const k2 = new FakeKafka();
    k2.createTopic('c_connector_sync', 1, {'retention.ms': '-1', 'cleanup.policy': 'compact,delete'});
    make(k2);
    await expect(sync.start()).rejects.toMatchObject({code: 'KAFKA_SYNC_TOPIC_COMPACTED'});
    sync = null;
  });

  test('the topic check re-checks the retention rule: a retention.ms lowered while the task runs fails it', async () => {
    const kafka = new FakeKafka();
    const {events} = make(kafka, {topicCheckInterval: 20});
    await sync.start();
    kafka.topics.get('c_connector_sync').configs['retention.ms'] = '60000';
    await until(() => sync.state === 'failed', 'the failure');
    expect(events.map(([e, x]) => [e, x.code])).toEqual([['error', 'KAFKA_RETENTION_TOO_SHORT']]);
    sync = null;
  });

  test('a broker that cannot answer describeConfigs (or leaves configs out): a warning, and the task starts', async () => {
    const kafka = new FakeKafka();
    kafka.describeConfigsError = 'unsupported';
    const {events} = make(kafka);
    await sync.start();
    expect(sync.state).toBe('running');
    expect(events).toEqual([['warning', 'could not read the configs of c_connector_sync (describeConfigs: unsupported): the retention rule is not checked']]);
    await sync.close();
    const k2 = new FakeKafka();
    k2.createTopic('c_connector_sync', 1, {'retention.ms': '-1'});
    const made = make(k2);
    await sync.start();
    expect(made.events.map(([e, w]) => [e, w.replace(/:.*/, '')])).toEqual([['warning', 'the broker did not report cleanup.policy of c_connector_sync']]);
  });

  test('a rebalance is the leader\'s member list, the join\'s leadership and the heartbeat\'s generation + 1', async () => {
    const kafka = new FakeKafka();
    const {task, events} = make(kafka);
    await sync.start();
    const c = hb(kafka);
    await c.assign([['m-b', 'b'], ['m-a', 'a']]);
    c.fire(EVENTS.GROUP_JOIN, {memberId: 'm-a', isLeader: true});
    expect(task.inputs.filter(([k]) => k === 'rebalance')).toEqual([]);
    c.fire(EVENTS.HEARTBEAT, {memberId: 'm-a', groupGenerationId: 0});
    c.fire(EVENTS.HEARTBEAT, {memberId: 'm-a', groupGenerationId: 0});
    expect(task.inputs.filter(([k]) => k === 'rebalance').map(([, e]) => e)).toEqual([{generation: 1, leader: true, members: ['a', 'b']}]);
    expect(sync.isLeader()).toBe(true);
    // a follower of the next generation
    c.fire(EVENTS.REBALANCING, {});
    c.fire(EVENTS.GROUP_JOIN, {memberId: 'm-a', isLeader: false});
    c.fire(EVENTS.HEARTBEAT, {memberId: 'm-a', groupGenerationId: 4});
    expect(task.inputs.filter(([k]) => k === 'rebalance').map(([, e]) => e)[1]).toEqual({generation: 5, leader: false});
    expect(sync.isLeader()).toBe(false);
    expect(events.filter(([e]) => e === 'rebalance').length).toBe(2);
  });

  test('a rejoin that keeps the generation (tansu) makes the task leave and rejoin', async () => {
    const kafka = new FakeKafka();
    const {task, events} = make(kafka);
    await sync.start();
    const c = hb(kafka);
    c.fire(EVENTS.GROUP_JOIN, {memberId: 'm-a', isLeader: false});
    c.fire(EVENTS.HEARTBEAT, {memberId: 'm-a', groupGenerationId: 2});
    c.fire(EVENTS.REBALANCING, {});
    c.fire(EVENTS.GROUP_JOIN, {memberId: 'm-a', isLeader: false});
    c.fire(EVENTS.HEARTBEAT, {memberId: 'm-a', groupGenerationId: 2});
    await tick();
    expect(kafka.calls.filter((x) => !x.startsWith('send')).slice(-2)).toEqual(['stop c', 'run c']);
    expect(events.filter(([e]) => e === 'warning').map(([, w]) => w)).toEqual([expect.stringContaining('kept generation 2: leaving and rejoining')]);
    expect(task.inputs.filter(([k]) => k === 'rebalance').length).toBe(1);
  });

  test('outputs: publish in order, with the sender as key; start as events; finished partitions leave the running set', async () => {
    const kafka = new FakeKafka();
    const {task, events} = await alone(kafka);
    const sent = kafka.topics.get('c_connector_sync').records;
    // the answer, then the epoch, each read back and fed to the SyncTask in offset order
    expect(sent.slice(0, 2).map((r) => [r.key, JSON.parse(r.value).type])).toEqual([['a', 'RebalanceAnswer'], ['a', 'NewEpoch']]);
    await until(() => messages(task).length === sent.length, 'every record read back');
    expect(messages(task).map((m) => m.type)).toEqual(sent.map((r) => JSON.parse(r.value).type));
    sync.addPartitions([{token: 'p1', parents: []}, {token: 'p2', parents: []}]);
    expect(events.filter(([e]) => e === 'start')).toEqual([['start', 'p1'], ['start', 'p2']]);
    sync.partitionStarted('p1');
    sync.partitionFinished('p1');
    expect(sync.runningPartitions()).toEqual(['p2']);
    await sync.flush();
    const types = kafka.calls.filter((c) => c.startsWith('send')).map((c) => c.split(' ')[2]);
    expect(types.length).toBeGreaterThanOrEqual(5);
    expect(sync.ownedPartitions().find((p) => p.token === 'p1').state).toBe('Finished');
  });

  test('one timer: the SyncTask is ticked at its pollTimeout(), not on an interval', async () => {
    let now = 1000;
    const kafka = new FakeKafka();
    const {task} = make(kafka, {clock: () => now, syncOptions: {rebalanceTimeout: 600}});
    await sync.start();
    expect(task.pollTimeout()).toBeUndefined();
    const c = hb(kafka);
    await c.assign([['m-a', 'a'], ['m-b', 'b']]);
    c.fire(EVENTS.GROUP_JOIN, {memberId: 'm-a', isLeader: true});
    c.fire(EVENTS.HEARTBEAT, {memberId: 'm-a', groupGenerationId: 0});
    // the leader waits for b's answer until now + rebalanceTimeout (once its own answer is read back)
    await until(() => task.pollTimeout() !== undefined, 'a deadline');
    // (the timer is set for 600 ms of real time: the check below comes well before it, however
    // loaded the machine)
    expect(task.pollTimeout()).toBe(1600);
    await new Promise((r) => setTimeout(r, 30));
    expect(task.inputs.filter(([k]) => k === 'tick')).toEqual([]);
    now = 1600;
    await until(() => task.inputs.some(([k]) => k === 'tick'), 'the tick');
    expect(task.inputs.filter(([k]) => k === 'tick')).toEqual([['tick', 1600]]);
    // the leader gave up waiting and published the epoch without b's answer
    await until(() => sync.epoch() === '1-a', 'epoch 1-a');
  });

  test('a pollTimeout() that stays in the past after a tick does not make the timer spin', async () => {
    const kafka = new FakeKafka();
    let task;
    sync = new KafkaTaskSync({
      kafka, connectorName: 'c', taskId: 'a', topicCheckInterval: 100000,
      createSyncTask: (id, so) => {
        task = recordingSyncTask(id, so);
        task.pollTimeout = () => 5; // always due, long ago
        return task;
      },
    });
    await sync.start();
    await new Promise((r) => setTimeout(r, 300));
    const ticks = task.inputs.filter(([k]) => k === 'tick').length;
    // one at once, then one per 50 ms at most
    expect(ticks).toBeGreaterThanOrEqual(2);
    expect(ticks).toBeLessThanOrEqual(8);
  });

  test('close() stops running partitions (awaiting async listeners) before leaving the group', async () => {
    const kafka = new FakeKafka();
    await alone(kafka);
    sync.addPartitions([{token: 'p1', parents: []}]);
    expect(sync.runningPartitions()).toEqual(['p1']);
    sync.on('stop', async (t) => {
      await tick();
      kafka.log('connector stopped', t);
    });
    await sync.close();
    const tail = kafka.calls.slice(kafka.calls.indexOf('connector stopped p1'));
    expect(tail.filter((c) => !c.startsWith('send'))).toEqual(['connector stopped p1', 'disconnect c', `disconnect ${readerGroup(kafka)}`, 'producer.disconnect', 'admin.disconnect']);
    expect(sync.state).toBe('closed');
    expect(() => sync.addPartitions([])).toThrow(expect.objectContaining({code: 'KAFKA_BAD_STATE'}));
  });

  test('close() lets a finish published just before it reach the sync topic before leaving the group', async () => {
    const kafka = new FakeKafka();
    await alone(kafka);
    sync.addPartitions([{token: 'p1', parents: []}]);
    sync.partitionStarted('p1');
    sync.partitionFinished('p1');
    await sync.close();
    const lastSend = kafka.calls.map((c, i) => (c.startsWith('send c_connector_sync') ? i : -1)).reduce((a, b) => Math.max(a, b));
    expect(lastSend).toBeGreaterThan(-1);
    expect(lastSend).toBeLessThan(kafka.calls.indexOf('disconnect c'));
  });

  test('close() does not hang on a consumer whose disconnect never resolves: it goes on after stopTimeout, with a warning', async () => {
    const kafka = new FakeKafka();
    kafka.hangDisconnect.add('c');
    const {events} = make(kafka, {stopTimeout: 50});
    await sync.start();
    await sync.close();
    expect(sync.state).toBe('closed');
    expect(kafka.calls.slice(kafka.calls.indexOf('disconnect c'))).toEqual(['disconnect c', `disconnect ${readerGroup(kafka)}`, 'producer.disconnect', 'admin.disconnect']);
    expect(events.filter(([e]) => e === 'warning').map(([, m]) => m)).toEqual([
      'the heartbeat group consumer of c did not disconnect within 50 ms (stopTimeout); going on without it (exit the process to drop its connection)',
    ]);
  });

  test('a heartbeat consumer that rejoins after close() (kafkajs#1462) is disconnected again', async () => {
    const kafka = new FakeKafka();
    const {events} = make(kafka);
    await sync.start();
    await sync.close();
    const before = kafka.calls.filter((c) => c === 'disconnect c').length;
    hb(kafka).fire(EVENTS.GROUP_JOIN, {memberId: 'm-zombie', isLeader: true});
    await tick();
    expect(kafka.calls.filter((c) => c === 'disconnect c').length).toBe(before + 1);
    expect(events.filter(([e]) => e === 'warning').map(([, m]) => m)).toEqual(['the heartbeat group consumer of c (task a) rejoined after the task ended; leaving again']);
    expect(events.filter(([e]) => e === 'rebalance')).toEqual([]);
  });

  test('a failed publish past outageTimeout fails the task: stop every partition, then error', async () => {
    const kafka = new FakeKafka();
    const {events} = await alone(kafka, {outageTimeout: 1});
    sync.addPartitions([{token: 'p1', parents: []}]);
    await sync.flush();
    await tick();
    kafka.failSends = true;
    sync.partitionStarted('p1');
    await until(() => sync.state === 'failed', 'the failure');
    expect(events.slice(-2)).toEqual([['stop', 'p1'], ['error', expect.objectContaining({code: 'KAFKA_PUBLISH_FAILED', message: expect.stringMatching(/no contact with the brokers for \d+ ms, more than outageTimeout \(1 ms\)/)})]]);
    await expect(sync.flush()).rejects.toMatchObject({code: 'KAFKA_PUBLISH_FAILED'});
  });

  test('a failed publish within outageTimeout: every partition stops, the task reconnects under a new task id and carries on', async () => {
    const kafka = new FakeKafka();
    const {events} = await alone(kafka);
    sync.addPartitions([{token: 'p1', parents: []}]);
    await sync.flush();
    const release = kafka.gateAdminConnects();
    kafka.failSends = true;
    sync.partitionStarted('p1');
    await until(() => sync.state === 'recovering', 'the reconnection');
    expect(events.filter(([e]) => e === 'stop')).toEqual([['stop', 'p1']]);
    expect(() => sync.partitionFinished('p1')).toThrow(expect.objectContaining({code: 'KAFKA_SESSION_LOST'}));
    expect(sync.isRunning('p1')).toBe(false);
    kafka.failSends = false;
    release();
    await until(() => sync.state === 'running', 'the task running again');
    expect(sync.taskId).toBe('a~1');
    expect(events.filter(([e, w]) => e === 'warning' && /^reconnected/.test(w)).length).toBe(1);
    // the new member of the group: its first epoch gives it the partition the old one left
    const c = kafka.consumers.filter((x) => x.groupId === 'c').at(-1);
    await c.assign([['m-a1', 'a~1']]);
    c.fire(EVENTS.GROUP_JOIN, {memberId: 'm-a1', isLeader: true});
    c.fire(EVENTS.HEARTBEAT, {memberId: 'm-a1', groupGenerationId: 1});
    await until(() => events.filter(([e, t]) => e === 'start' && t === 'p1').length === 2, 'p1 started again');
    expect(sync.isRunning('p1')).toBe(true);
  });

  test('a finish the broker did not acknowledge when the session is lost gets a stop: the partition started again later comes after it', async () => {
    const kafka = new FakeKafka();
    const {events} = await alone(kafka);
    sync.addPartitions([{token: 'p1', parents: []}, {token: 'p2', parents: []}]);
    await sync.flush();
    const release = kafka.gateAdminConnects();
    kafka.failSends = true;
    sync.partitionFinished('p1'); // accepted; its publish fails, so the session is taken as lost
    const flushed = sync.flush().then(() => null, (e) => e);
    expect(sync.isRunning('p1')).toBe(false);
    await until(() => sync.state === 'recovering', 'the reconnection');
    expect(events.filter(([e]) => e === 'stop').map(([, t]) => t).sort()).toEqual(['p1', 'p2']);
    expect(await flushed).toMatchObject({code: 'KAFKA_SESSION_LOST'});
    kafka.failSends = false;
    release();
    await until(() => sync.state === 'running', 'the task running again');
    const c = kafka.consumers.filter((x) => x.groupId === 'c').at(-1);
    await c.assign([['m-a1', 'a~1']]);
    c.fire(EVENTS.GROUP_JOIN, {memberId: 'm-a1', isLeader: true});
    c.fire(EVENTS.HEARTBEAT, {memberId: 'm-a1', groupGenerationId: 1});
    // its finish was lost: p1 runs again (at least once), after its stop
    await until(() => events.filter(([e, t]) => e === 'start' && t === 'p1').length === 2, 'p1 started again');
    const p1 = events.filter(([e, t]) => t === 'p1' && (e === 'start' || e === 'stop')).map(([e]) => e);
    expect(p1).toEqual(['start', 'stop', 'start']);
  });

  test('a reconnection attempt still running at outageTimeout fails the task; what it connects afterwards is disconnected', async () => {
    const kafka = new FakeKafka();
    const {events} = await alone(kafka, {outageTimeout: 300});
    sync.addPartitions([{token: 'p1', parents: []}]);
    await sync.flush();
    const release = kafka.gateAdminConnects();
    kafka.failSends = true;
    sync.partitionStarted('p1');
    await until(() => sync.state === 'failed', 'the failure');
    expect(events.filter(([e]) => e === 'error').map(([, x]) => [x.code, /more than outageTimeout \(300 ms\): reconnecting failed 1 time/.test(x.message)])).toEqual([['KAFKA_SESSION_LOST', true]]);
    const disconnects = kafka.calls.filter((c) => c === 'admin.disconnect').length;
    release(); // the attempt goes on: the admin client it connected is disconnected
    await until(() => kafka.calls.filter((c) => c === 'admin.disconnect').length > disconnects, 'the late admin client disconnected');
    expect(kafka.consumers.filter((c) => c.groupId === 'c').length).toBe(1); // it joined no group
  });

  test('a finish acknowledged before a failure gets no stop; a clean close() does not stop finished partitions', async () => {
    const kafka = new FakeKafka();
    const {events} = await alone(kafka);
    sync.addPartitions([{token: 'p1', parents: []}, {token: 'p2', parents: []}]);
    sync.partitionFinished('p1');
    await sync.flush();
    sync.partitionFinished('p2');
    await sync.close();
    expect(events.filter(([e]) => e === 'stop')).toEqual([]);
  });

  test('a task frozen past its session: the first call after it stops every partition, then is refused (KAFKA_SESSION_LOST)', async () => {
    const kafka = new FakeKafka();
    const {events} = await alone(kafka, {sessionTimeout: 2000, heartbeatInterval: 100});
    sync.addPartitions([{token: 'p1', parents: []}, {token: 'p2', parents: []}]);
    expect(events.filter(([e]) => e === 'start').length).toBe(2);
    const sends = kafka.calls.length;
    const t = Date.now();
    while (Date.now() - t < 2100); // the event loop stalls: no timer runs
    let thrown;
    try {
      sync.partitionFinished('p1');
    } catch (e) {
      thrown = e;
    }
    // the stops ran within the call, before it was refused; nothing more is published
    expect(events.filter(([e]) => e === 'stop')).toEqual([['stop', 'p1'], ['stop', 'p2']]);
    expect(thrown).toMatchObject({code: 'KAFKA_SESSION_LOST', message: expect.stringMatching(/did not run for (\d+) ms .*more than the 1900 ms a session allows \(session timeout 2000 ms less a heartbeat interval of 100 ms\)/)});
    expect(() => sync.addPartitions([{token: 'p3', parents: []}])).toThrow(expect.objectContaining({code: 'KAFKA_SESSION_LOST'}));
    expect(sync.isRunning('p2')).toBe(false);
    await until(() => sync.state === 'failed', 'the failure');
    expect(events.filter(([e]) => e === 'error').map(([, x]) => x.code)).toEqual(['KAFKA_SESSION_LOST']);
    // what was handed to the producer before the freeze may land; nothing asked for after it does
    await tick();
    const published = kafka.topics.get('c_connector_sync').records.map((r) => JSON.parse(r.value));
    const partitions = published.flatMap((m) => (m.connectorState ?? []).flatMap((st) => st.data.partitions));
    expect(partitions.filter((p) => p.token === 'p3' || (p.token === 'p1' && p.state === 'Finished'))).toEqual([]);
    expect(kafka.calls.slice(sends).filter((x) => x.startsWith('send')).length).toBeLessThanOrEqual(1);
    expect(events.filter(([e]) => e === 'start').length).toBe(2);
  });

  test('the leader refuses a member of another connector (KAFKA_CONNECTOR_MISMATCH) and a second member with one task id (KAFKA_DUPLICATE_TASK_ID)', async () => {
    const {AssignerProtocol: {MemberAssignment: MA}} = require('kafkajs');
    const kafka = new FakeKafka();
    const {task, events} = make(kafka, {connectorId: 'v1'});
    await sync.start();
    const c = hb(kafka);
    const out = await c.assign([
      ['m-a', 'a', {connector: 'c', connectorId: 'v1', nonce: nonceOf(kafka)}],
      ['m-b', 'b', {connector: 'c', connectorId: 'v2'}],
      ['m-x', 'x', {connector: 'c', connectorId: 'v1', nonce: 'n1'}],
      ['m-y', 'x', {connector: 'c', connectorId: 'v1', nonce: 'n2'}],
      ['m-z', 'z'], // says no connector: not refused for it
    ]);
    const byMember = Object.fromEntries(out.map((a) => [a.memberId, MA.decode(a.memberAssignment).assignment]));
    const refusal = (m) => {
      const topic = Object.keys(byMember[m]).find((t) => t.startsWith('__partkit_refused:'));
      return topic && JSON.parse(topic.slice('__partkit_refused:'.length));
    };
    expect(refusal('m-b')).toMatchObject({code: 'KAFKA_CONNECTOR_MISMATCH', message: expect.stringContaining('"v2"')});
    expect(refusal('m-y')).toMatchObject({code: 'KAFKA_DUPLICATE_TASK_ID', message: expect.stringContaining('task id x')});
    for (const m of ['m-a', 'm-x', 'm-z']) expect(refusal(m)).toBeUndefined();
    c.fire(EVENTS.GROUP_JOIN, {memberId: 'm-a', isLeader: true});
    c.fire(EVENTS.HEARTBEAT, {memberId: 'm-a', groupGenerationId: 0});
    expect(task.inputs.filter(([k]) => k === 'rebalance').map(([, e]) => e.members)).toEqual([['a', 'x', 'z']]);
    expect(events.filter(([e, w]) => e === 'warning' && /^refused member/.test(w)).length).toBe(2);
  });

  test('a member refused by the leader fails loudly with the code it was given, having started nothing', async () => {
    const kafka = new FakeKafka();
    const {events} = make(kafka);
    await sync.start();
    const c = hb(kafka);
    c.fire(EVENTS.RECEIVED_UNSUBSCRIBED_TOPICS, {topicsNotSubscribed: ['__partkit_refused:{"code":"KAFKA_DUPLICATE_TASK_ID","message":"task id a is used by two members"}']});
    await until(() => sync.state === 'failed', 'the failure');
    expect(events.filter(([e]) => e === 'error').map(([, x]) => [x.code, x.message])).toEqual([['KAFKA_DUPLICATE_TASK_ID', 'the group leader of c refused this task: task id a is used by two members']]);
    expect(events.filter(([e]) => e === 'start')).toEqual([]);
  });

  test('start() is bounded: a step that never answers fails it with KAFKA_START_TIMEOUT', async () => {
    const kafka = new FakeKafka();
    const admin = kafka.admin.bind(kafka);
    kafka.admin = () => ({...admin(), connect: () => new Promise(() => {})});
    make(kafka, {startTimeout: 200});
    const t = Date.now();
    await expect(sync.start()).rejects.toMatchObject({code: 'KAFKA_START_TIMEOUT', message: expect.stringContaining('200 ms (startTimeout)')});
    expect(Date.now() - t).toBeLessThan(5000);
    expect(sync.state).toBe('failed');
  });

  test('a fetch that skips an offset is fetched again from the missing offset: nothing lost, nothing twice, a warning', async () => {
    const kafka = new FakeKafka();
    const {task, events} = make(kafka);
    await sync.start();
    kafka.skips.set(1, 2); // the first two fetches from offset 1 leave it out
    for (let n = 0; n < 4; n++) kafka.append('c_connector_sync', msg('Regular', {n}));
    await until(() => messages(task).length >= 4, 'four messages');
    expect(messages(task).map((m) => m.n)).toEqual([0, 1, 2, 3]);
    expect(events).toEqual([['warning', 'offset 1 of c_connector_sync was missing from a fetch and came on a later one']]);
    expect(kafka.calls.filter((c) => c.startsWith('seek'))).toEqual([`seek ${readerGroup(kafka)} 0`, `seek ${readerGroup(kafka)} 1`, `seek ${readerGroup(kafka)} 1`]);
    expect(sync.state).toBe('running');
  });

  test('the startup replay fetches a skipped offset again too', async () => {
    const kafka = new FakeKafka();
    topics(kafka);
    kafka.append('c_connector_sync', epochMsg('1-x', '', 1));
    for (let n = 1; n < 10; n++) kafka.append('c_connector_sync', msg('Regular', {n}));
    kafka.skips.set(5, 1);
    const {task, events} = make(kafka);
    await sync.start();
    expect(messages(task).map((m) => m.n ?? m.syncEpoch)).toEqual(['1-x', ...Array.from({length: 9}, (_, i) => i + 1)]);
    expect(events).toEqual([['warning', 'offset 5 of c_connector_sync was missing from a fetch and came on a later one']]);
  });

  test('an offset missing from every fetch is a hole: the task fences itself (KAFKA_TASK_FENCED)', async () => {
    const kafka = new FakeKafka();
    const {task, events} = make(kafka);
    await sync.start();
    kafka.skips.set(1, Infinity);
    for (let n = 0; n < 3; n++) kafka.append('c_connector_sync', msg('Regular', {n}));
    await until(() => sync.state === 'failed', 'the fence');
    expect(task.inputs.map(([k, m]) => (k === 'fence' ? `fence: ${m}` : `${k} ${m.n}`))).toEqual([
      'message 0',
      'fence: offsets 1..1 of c_connector_sync were never read (fetched 4 times)',
    ]);
    expect(task.fenced()).toContain('offsets 1..1');
    expect(events.map(([e, x]) => [e, x.code])).toEqual([['error', 'KAFKA_TASK_FENCED']]);
  });

  test('a record that is not JSON, or that the SyncTask refuses, is skipped with a warning', async () => {
    const kafka = new FakeKafka();
    const {task, events} = make(kafka);
    await sync.start();
    kafka.append('c_connector_sync', 'garbage');
    kafka.append('c_connector_sync', JSON.stringify({type: 'Regular', taskID: ''}));
    kafka.append('c_connector_sync', msg('Regular'));
    await until(() => messages(task).length >= 3, 'three messages');
    // every record goes to the SyncTask as read; it refuses what is not a message
    expect(messages(task).map((m) => m.taskID)).toEqual([undefined, '', 'x']);
    expect(events.map(([e, w]) => [e, w.replace(/: .*/, '')])).toEqual([
      ['warning', 'skipped a malformed sync message at offset 0 of c_connector_sync'],
      ['warning', 'skipped a malformed sync message at offset 1 of c_connector_sync'],
    ]);
    expect(sync.state).toBe('running');
  });
});

// Three tasks, each a KafkaTaskSync driving partkit's SyncTask, over one in-memory kafka: the
// group's rebalance is fired by hand; everything else goes through the transport.
test('three tasks over one in-memory kafka share an initial partition and its children, each finishing once', async () => {
  const {FakeKafka, EVENTS} = require('./support/fake-kafka');
  const kafka = new FakeKafka();
  const ids = ['a', 'b', 'c'];
  const tree = {root: ['k1', 'k2', 'k3', 'k4', 'k5'], k1: ['g1'], k2: ['g2']};
  const finished = [];
  const starts = [];
  const tasks = ids.map((id) => {
    const s = new KafkaTaskSync({kafka, connectorName: 'c', taskId: id, topicCheckInterval: 100000, syncOptions: {rebalanceTimeout: 2000}});
    s.on('start', (token) => {
      starts.push([id, token]);
      setImmediate(() => {
        if (!s.runningPartitions().includes(token)) return;
        s.partitionStarted(token);
        if (tree[token]) s.addPartitions(tree[token].map((k) => ({token: k, parents: [token]})));
        s.partitionFinished(token);
        finished.push([id, token]);
      });
    });
    s.on('error', (e) => finished.push([id, `error ${e.code}`]));
    return s;
  });
  try {
    for (const s of tasks) await s.start();
    const consumers = kafka.consumers.filter((c) => c.groupId === 'c');
    await consumers[0].assign(ids.map((id) => [`m-${id}`, id]));
    consumers.forEach((c, i) => c.fire(EVENTS.GROUP_JOIN, {memberId: `m-${ids[i]}`, isLeader: i === 0}));
    consumers.forEach((c, i) => c.fire(EVENTS.HEARTBEAT, {memberId: `m-${ids[i]}`, groupGenerationId: 0}));
    for (let i = 0; i < 400 && !tasks.every((s) => s.epoch() === '1-a'); i++) await new Promise((r) => setTimeout(r, 5));
    expect(tasks.map((s) => s.epoch())).toEqual(['1-a', '1-a', '1-a']);
    tasks[0].addPartitions([{token: 'root', parents: []}]);
    const all = ['root', 'k1', 'k2', 'k3', 'k4', 'k5', 'g1', 'g2'];
    for (let i = 0; i < 600 && finished.length < all.length; i++) await new Promise((r) => setTimeout(r, 5));
    expect(finished.map(([, t]) => t).sort()).toEqual([...all].sort());
    expect(starts.length).toBe(all.length);
    expect(new Set(finished.map(([id]) => id)).size).toBeGreaterThan(1);
  } finally {
    for (const s of tasks) await s.close();
  }
});

// Retention over the in-memory kafka: the records before some offset are deleted while the
// tasks run (every NewEpoch with them), then the leader dies and a fresh task joins and leads: it
// starts from a checkpoint and applies the epoch in force, and the dead task's partitions move.
test('after retention deleted every NewEpoch, a fresh leader starts from a checkpoint and nothing is lost', async () => {
  const {FakeKafka, EVENTS} = require('./support/fake-kafka');
  const kafka = new FakeKafka();
  const syncOptions = {rebalanceTimeout: 300, epochAckTimeout: 200, stateRefreshInterval: 100};
  const running = new Map(); // token -> task id
  const finished = [];
  const wait = async (pred, what) => {
    for (let i = 0; i < 600; i++) {
      if (pred()) return;
      await new Promise((r) => setTimeout(r, 5));
    }
    throw new Error(`timed out waiting for ${what}`);
  };
  const tasks = new Map();
  const warnings = [];
  const spawn = async (id) => {
    const s = new KafkaTaskSync({kafka, connectorName: 'c', taskId: id, topicCheckInterval: 100000, syncOptions});
    s.on('start', (token) => {
      expect(running.get(token)).toBeUndefined(); // never on two tasks at once
      running.set(token, id);
      s.partitionStarted(token);
    });
    s.on('stop', (token) => running.get(token) === id && running.delete(token));
    s.on('warning', (w) => warnings.push([id, w]));
    s.on('error', (e) => warnings.push([id, `error ${e.code}: ${e.message}`]));
    await s.start();
    tasks.set(id, s);
    return s;
  };
  const rebalance = async (generation, ids) => {
    const cs = ids.map((id) => kafka.consumers.filter((c) => c.groupId === 'c')[[...tasks.keys()].indexOf(id)]);
    await cs[0].assign(ids.map((id) => [`m-${id}`, id]));
    cs.forEach((c) => c.fire(EVENTS.REBALANCING, {}));
    cs.forEach((c, i) => c.fire(EVENTS.GROUP_JOIN, {memberId: `m-${ids[i]}`, isLeader: i === 0}));
    cs.forEach((c, i) => c.fire(EVENTS.HEARTBEAT, {memberId: `m-${ids[i]}`, groupGenerationId: generation - 1}));
  };
  const finish = (token) => {
    const id = running.get(token);
    tasks.get(id).partitionFinished(token);
    running.delete(token);
    finished.push(token);
  };
  try {
    for (const id of ['a', 'b', 'c']) await spawn(id);
    await rebalance(1, ['a', 'b', 'c']);
    await wait(() => ['a', 'b', 'c'].every((id) => tasks.get(id).epoch() === '1-a'), 'epoch 1-a');
    const tokens = ['p1', 'p2', 'p3', 'p4', 'p5', 'p6'];
    tasks.get('a').addPartitions(tokens.map((token) => ({token, parents: []})));
    await wait(() => running.size === tokens.length && new Set(running.values()).size === 3, 'the partitions spread over a, b and c');
    // some checkpoints, then retention deletes everything so far (every NewEpoch)
    await new Promise((r) => setTimeout(r, 350));
    const topic = kafka.topics.get('c_connector_sync');
    kafka.deleteRecords('c_connector_sync', topic.records.length);
    const deletedUpTo = topic.low;
    expect(topic.records.slice(deletedUpTo).some((r) => JSON.parse(r.value).type === 'NewEpoch')).toBe(false);
    await new Promise((r) => setTimeout(r, 350));
    // the leader dies; d starts (from what is retained) and leads the next generation
    const orphans = [...running].filter(([, id]) => id === 'a').map(([t]) => t);
    expect(orphans.length).toBeGreaterThan(0);
    const a = tasks.get('a');
    // it fails (a listener that throws: every partition stopped, no final checkpoint, it leaves)
    a.on('error', () => {});
    a.on('test-kill', () => {
      throw new SyncError('killed', 'TEST_KILLED');
    });
    a.emit('test-kill');
    for (let i = 0; i < 400 && a.state !== 'failed'; i++) await new Promise((r) => setTimeout(r, 5));
    expect(a.state).toBe('failed');
    orphans.forEach((t) => running.delete(t));
    const d = await spawn('d');
    expect(d.epoch()).toBe('1-a'); // the replay from the checkpoint applied the epoch in force
    await rebalance(2, ['d', 'b', 'c']);
    await wait(() => ['b', 'c', 'd'].every((id) => tasks.get(id).epoch() === '2-d'), 'epoch 2-d');
    await wait(() => orphans.every((t) => running.has(t)), "a's partitions restarted elsewhere");
    for (const t of tokens) finish(t);
    expect(finished.sort()).toEqual(tokens);
    expect(warnings.filter(([id]) => id !== 'a')).toEqual([]);
  } finally {
    for (const s of tasks.values()) await s.close();
  }
});

test('close() while start() replays the sync topic ends start() instead of leaving it hanging', async () => {
  const {FakeKafka} = require('./support/fake-kafka');
  const kafka = new FakeKafka();
  kafka.createTopic('c_connector_sync', 1, {'retention.ms': '-1', 'cleanup.policy': 'delete'});
  kafka.createTopic('c_connector_heartbeat', 1);
  kafka.append('c_connector_sync', JSON.stringify({type: 'Regular', taskID: 'x', syncEpoch: '', connectorState: []}));
  const reader = () => kafka.consumers.find((c) => c.groupId.includes('reader'));
  const sync = new KafkaTaskSync({kafka, connectorName: 'c', taskId: 'a'});
  const origConsumer = kafka.consumer.bind(kafka);
  kafka.consumer = (o) => Object.assign(origConsumer(o), {seek() {}}); // the reader never delivers
  const started = sync.start();
  for (let i = 0; i < 50 && !reader(); i++) await new Promise((r) => setTimeout(r, 5));
  await sync.close();
  await expect(started).rejects.toMatchObject({code: 'KAFKA_BAD_STATE'});
  expect(sync.state).toBe('closed');
});

test("without createSyncTask, KafkaTaskSync drives partkit's SyncTask with the given options", () => {
  const kafka = {consumer() {}, producer() {}, admin() {}};
  const s = new KafkaTaskSync({kafka, connectorName: 'c', taskId: 't1', syncOptions: {rebalanceTimeout: 5000}});
  expect(s.knownTasks().map((t) => t.taskID)).toEqual(['t1']); // partkit's SyncTask, before any input
  expect(s.epoch()).toBeUndefined();
  expect(() => new KafkaTaskSync({kafka, connectorName: 'c', taskId: 't1', syncOptions: {bogus: 1}})).toThrow(expect.objectContaining({code: 'SYNC_INVALID_OPTIONS'}));
});

describe('partkit/kafka: a Node-only subpath', () => {
  test('the package root exports no Kafka transport', () => {
    const root = require('partkit');
    for (const name of ['KafkaTaskSync', 'SyncLogReader', 'taskSyncAssigner', 'findEpochStart', 'kafkaTopicNames']) expect(root[name]).toBeUndefined();
  });

  test("KafkaTaskSync's public surface is what types/kafka.d.ts declares: its internals are private", () => {
    const {EventEmitter} = require('node:events');
    const s = new KafkaTaskSync({kafka: {consumer() {}, producer() {}, admin() {}}, connectorName: 'c', taskId: 't1'});
    const own = Object.keys(s).filter((k) => !Object.keys(new EventEmitter()).includes(k));
    expect(own).toEqual([]);
    expect(Object.getOwnPropertyNames(KafkaTaskSync.prototype).sort()).toEqual(
      ['constructor', 'taskId', 'connectorName', 'connectorId', 'syncTopic', 'heartbeatTopic', 'groupId', 'state', 'failure', 'start', 'close', 'addPartitions', 'partitionStarted', 'partitionFinished', 'flush', 'isRunning', 'emit', 'ownedPartitions', 'knownTasks', 'epoch', 'isLeader', 'epochMembers', 'runningPartitions'].sort(),
    );
    // the read-only properties are getters
    expect(() => {
      'use strict';
      s.state = 'running';
    }).toThrow(TypeError);
    expect(s.state).toBe('new');
  });

  test('KafkaTaskSync is an EventEmitter whose emit guards the task', () => {
    const {EventEmitter} = require('node:events');
    const kafka = {consumer() {}, producer() {}, admin() {}};
    const s = new KafkaTaskSync({kafka, connectorName: 'c', taskId: 't1'});
    expect(s).toBeInstanceOf(EventEmitter);
    const seen = [];
    s.once('epoch', function (e) {
      seen.push(['once', e, this === s]);
    });
    s.on('epoch', (e) => seen.push(['on', e]));
    expect(s.emit('epoch', '1-a')).toBe(true);
    expect(s.emit('epoch', '2-a')).toBe(true);
    expect(seen).toEqual([
      ['once', '1-a', true],
      ['on', '1-a'],
      ['on', '2-a'],
    ]);
    expect(s.listenerCount('epoch')).toBe(1);
    // no listener: false, and an 'error' without listeners is not thrown by emit itself
    expect(s.emit('warning', 'w')).toBe(false);
    expect(s.emit('error', new Error('e'))).toBe(false);
    // a listener that throws fails the task instead of throwing to the emitter's caller
    s.on('warning', () => {
      throw new Error('boom');
    });
    expect(() => s.emit('warning', 'w')).not.toThrow();
    expect(s.failure).toMatchObject({code: 'KAFKA_LISTENER_FAILED', message: 'a "warning" listener threw: boom'});
  });
});
