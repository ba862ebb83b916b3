// KafkaTaskSync pieces that need no broker: the partition assigner against kafkajs' own consumer
// protocol codec, where a new reader starts on the sync topic, argument checks, and the fake
// SyncTask the broker tests can fall back to.
const {AssignerProtocol} = require('kafkajs');
const {KafkaTaskSync, taskSyncAssigner, findEpochStart, kafkaTopicNames, SyncError} = require('partkit');
const {FakeSyncTask} = require('./support/fake-sync-task');

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

describe('KafkaTaskSync arguments', () => {
  const kafka = {consumer() {}, producer() {}, admin() {}};
  const make = (o) => new KafkaTaskSync({kafka, connectorName: 'c1', taskId: 't1', createSyncTask: (id, opts) => new FakeSyncTask(id, opts), ...o});

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
    [{tickInterval: 0}, 'options.tickInterval must be a positive integer'],
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

// The fake SyncTask over an in-memory, totally ordered log: the protocol the broker tests rely on
// when the real SyncTask is not available.
describe('FakeSyncTask over an in-memory log', () => {
  function simulate(ids, steps) {
    const log = [];
    const tasks = new Map(ids.map((id) => [id, {t: new FakeSyncTask(id, {rebalanceTimeout: 50}), read: 0, running: new Set()}]));
    const starts = [];
    const apply = (id, out) => {
      log.push(...out.publish);
      const x = tasks.get(id);
      out.stop.forEach((tok) => x.running.delete(tok));
      out.start.forEach((tok) => {
        x.running.add(tok);
        starts.push([id, tok]);
      });
    };
    const pump = (now) => {
      for (let moved = true; moved; ) {
        moved = false;
        for (const [id, x] of tasks) {
          while (x.read < log.length) {
            apply(id, x.t.onMessage(log[x.read++], now));
            moved = true;
          }
        }
      }
    };
    return {log, tasks, starts, apply, pump};
  }

  test('three tasks share an initial partition and its children, each finishing once', () => {
    const ids = ['a', 'b', 'c'];
    const {tasks, starts, apply, pump} = simulate(ids);
    let now = 1;
    ids.forEach((id) => apply(id, tasks.get(id).t.onRebalance(id === 'a' ? {generation: 1, leader: true, members: ids} : {generation: 1, leader: false}, now)));
    pump(++now);
    ids.forEach((id) => expect(tasks.get(id).t.epoch()).toBe('1-a'));
    apply('a', tasks.get('a').t.addPartitions([{token: 'root', parents: []}], ++now));
    pump(++now);
    const finished = [];
    for (let round = 0; round < 20; round++) {
      for (const [id, x] of tasks) {
        for (const tok of [...x.running]) {
          apply(id, x.t.partitionStarted(tok, ++now));
          if (tok === 'root') apply(id, x.t.addPartitions(['c1', 'c2', 'c3', 'c4', 'c5'].map((c) => ({token: c, parents: ['root']})), ++now));
          apply(id, x.t.partitionFinished(tok, ++now));
          x.running.delete(tok);
          finished.push([id, tok]);
          pump(++now);
        }
      }
      pump(++now);
    }
    expect(finished.map(([, t]) => t).sort()).toEqual(['c1', 'c2', 'c3', 'c4', 'c5', 'root']);
    expect(starts.length).toBe(6);
    expect(new Set(finished.map(([id]) => id)).size).toBe(3);
  });
});

// The transport over an in-memory kafkajs stand-in: order of operations, the rebalance assembled
// from the assigner, GROUP_JOIN and HEARTBEAT, publishing, events, failures.
describe('KafkaTaskSync over an in-memory kafka', () => {
  const {FakeKafka, StubSyncTask, EVENTS} = require('./support/fake-kafka');
  const tick = () => new Promise((r) => setTimeout(r, 5));
  const msg = (type, extra = {}) => JSON.stringify({type, taskID: 'x', syncEpoch: '', connectorState: [], ...extra});
  let sync;

  function make(kafka, o = {}) {
    const task = new StubSyncTask('a');
    sync = new KafkaTaskSync({kafka, connectorName: 'c', taskId: 'a', createSyncTask: () => task, tickInterval: 100000, topicCheckInterval: 100000, ...o});
    const events = [];
    for (const e of ['start', 'stop', 'rebalance', 'warning', 'error']) sync.on(e, (x) => events.push([e, x]));
    return {task, events};
  }
  const hb = (kafka) => kafka.consumers.find((c) => c.groupId === 'c');

  afterEach(async () => {
    if (sync) await sync.close();
    sync = null;
  });

  test('creates the topics, replays the sync topic from the epoch start, and only then joins the group', async () => {
    const kafka = new FakeKafka();
    kafka.createTopic('c_connector_sync', 1);
    kafka.createTopic('c_connector_heartbeat', 1);
    for (let i = 0; i < 100; i++) kafka.append('c_connector_sync', msg('Regular', {n: i}));
    kafka.append('c_connector_sync', msg('NewEpoch', {syncEpoch: '1-x', baseEpoch: ''})); // 100
    for (let i = 101; i < 400; i++) kafka.append('c_connector_sync', msg('Regular', {n: i}));
    kafka.append('c_connector_sync', msg('NewEpoch', {syncEpoch: '2-x', baseEpoch: '1-x'})); // 400
    for (let i = 401; i < 600; i++) kafka.append('c_connector_sync', msg('Regular', {n: i}));
    const {task} = make(kafka, {scanWindow: 100});
    await sync.start();
    // windows of 100, 400, then the whole log: the base epoch 1-x starts at offset 100
    expect(kafka.calls.filter((c) => c.startsWith('seek'))).toEqual(['seek c_connector_sync_reader_a 500', 'seek c_connector_sync_reader_a 200', 'seek c_connector_sync_reader_a 0']);
    const got = task.inputs.filter(([k]) => k === 'message').map(([, m]) => m);
    expect(got.length).toBe(500);
    expect(got[0]).toMatchObject({type: 'NewEpoch', syncEpoch: '1-x'});
    expect(got[499]).toMatchObject({n: 599});
    // the heartbeat group is joined after the replay
    const joinedAt = kafka.calls.indexOf('connect c');
    expect(joinedAt).toBeGreaterThan(kafka.calls.lastIndexOf('seek c_connector_sync_reader_a 0'));
    expect(sync.state).toBe('running');
  });

  test('missing topics are created (the sync topic with one partition); a sync topic with 2 partitions is refused', async () => {
    const kafka = new FakeKafka();
    make(kafka);
    await sync.start();
    expect(kafka.calls.filter((c) => c.startsWith('createTopic'))).toEqual(['createTopic c_connector_sync 1', 'createTopic c_connector_heartbeat 1']);
    await sync.close();
    const k2 = new FakeKafka();
    k2.createTopic('c_connector_sync', 2);
    make(k2);
    await expect(sync.start()).rejects.toMatchObject({code: 'KAFKA_SYNC_TOPIC_PARTITIONS'});
    expect(sync.state).toBe('failed');
    sync = null;
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
    // a follower of the next generation
    c.fire(EVENTS.REBALANCING, {});
    c.fire(EVENTS.GROUP_JOIN, {memberId: 'm-a', isLeader: false});
    c.fire(EVENTS.HEARTBEAT, {memberId: 'm-a', groupGenerationId: 4});
    expect(task.inputs.filter(([k]) => k === 'rebalance').map(([, e]) => e)[1]).toEqual({generation: 5, leader: false});
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
    expect(kafka.calls.slice(-2)).toEqual(['stop c', 'run c']);
    expect(events.filter(([e]) => e === 'warning').map(([, w]) => w)).toEqual([expect.stringContaining('kept generation 2: leaving and rejoining')]);
    expect(task.inputs.filter(([k]) => k === 'rebalance').length).toBe(1);
  });

  test('outputs: publish in order, stop then start as events; finished partitions leave the running set', async () => {
    const kafka = new FakeKafka();
    const {task, events} = make(kafka);
    await sync.start();
    task.next.push({publish: [{type: 'Regular', taskID: 'a'}, {type: 'RebalanceAnswer', taskID: 'a'}], start: ['p1', 'p2'], stop: []});
    sync.addPartitions([{token: 'p1'}]);
    await sync.flush();
    expect(kafka.calls.filter((c) => c.startsWith('send'))).toEqual(['send c_connector_sync Regular', 'send c_connector_sync RebalanceAnswer']);
    expect(kafka.topics.get('c_connector_sync').records.map((r) => r.key)).toEqual(['a', 'a']);
    task.next.push({publish: [], start: ['p3'], stop: ['p2']});
    sync.partitionStarted('p1');
    expect(events.filter(([e]) => e === 'start' || e === 'stop')).toEqual([['start', 'p1'], ['start', 'p2'], ['stop', 'p2'], ['start', 'p3']]);
    sync.partitionFinished('p1');
    expect(sync.runningPartitions()).toEqual(['p3']);
  });

  test('close() stops running partitions (awaiting async listeners) before leaving the group', async () => {
    const kafka = new FakeKafka();
    const {task} = make(kafka);
    await sync.start();
    task.next.push({publish: [], start: ['p1'], stop: []});
    sync.addPartitions([{token: 'p1'}]);
    sync.on('stop', async (t) => {
      await tick();
      kafka.log('connector stopped', t);
    });
    await sync.close();
    const tail = kafka.calls.slice(kafka.calls.indexOf('connector stopped p1'));
    expect(tail).toEqual(['connector stopped p1', 'disconnect c', 'disconnect c_connector_sync_reader_a', 'producer.disconnect', 'admin.disconnect']);
    expect(sync.state).toBe('closed');
    expect(() => sync.addPartitions([])).toThrow(expect.objectContaining({code: 'KAFKA_BAD_STATE'}));
  });

  test('close() does not hang on a consumer whose disconnect never resolves: it goes on after stopTimeout, with a warning', async () => {
    const kafka = new FakeKafka();
    kafka.hangDisconnect.add('c');
    const {events} = make(kafka, {stopTimeout: 50});
    await sync.start();
    await sync.close();
    expect(sync.state).toBe('closed');
    expect(kafka.calls.slice(kafka.calls.indexOf('disconnect c'))).toEqual(['disconnect c', 'disconnect c_connector_sync_reader_a', 'producer.disconnect', 'admin.disconnect']);
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
    expect(events.filter(([e]) => e === 'warning').map(([, m]) => m)).toEqual(['the heartbeat group consumer of c rejoined after the task ended; leaving again']);
    expect(events.filter(([e]) => e === 'rebalance')).toEqual([]);
  });

  test('a failed publish fails the task: stop every partition, then error', async () => {
    const kafka = new FakeKafka();
    const {task, events} = make(kafka);
    await sync.start();
    task.next.push({publish: [], start: ['p1'], stop: []});
    sync.addPartitions([{token: 'p1'}]);
    kafka.failSends = true;
    task.next.push({publish: [{type: 'Regular', taskID: 'a'}], start: [], stop: []});
    sync.partitionStarted('p1');
    for (let i = 0; i < 50 && sync.state !== 'failed'; i++) await tick();
    expect(sync.state).toBe('failed');
    expect(events.slice(-2)).toEqual([['stop', 'p1'], ['error', expect.objectContaining({code: 'KAFKA_PUBLISH_FAILED'})]]);
  });

  test('a fetch that skips an offset is fetched again from the missing offset: nothing lost, nothing twice, a warning', async () => {
    const kafka = new FakeKafka();
    const {task, events} = make(kafka);
    await sync.start();
    kafka.skips.set(1, 2); // the first two fetches from offset 1 leave it out
    for (let n = 0; n < 4; n++) kafka.append('c_connector_sync', msg('Regular', {n}));
    for (let i = 0; i < 100 && task.inputs.length < 4; i++) await tick();
    expect(task.inputs.map(([k, m]) => `${k} ${m.n}`)).toEqual(['message 0', 'message 1', 'message 2', 'message 3']);
    expect(events).toEqual([['warning', 'offset 1 of c_connector_sync was missing from a fetch and came on a later one']]);
    expect(kafka.calls.filter((c) => c.startsWith('seek'))).toEqual(['seek c_connector_sync_reader_a 0', 'seek c_connector_sync_reader_a 1', 'seek c_connector_sync_reader_a 1']);
    expect(sync.state).toBe('running');
  });

  test('the startup replay fetches a skipped offset again too', async () => {
    const kafka = new FakeKafka();
    kafka.createTopic('c_connector_sync', 1);
    kafka.createTopic('c_connector_heartbeat', 1);
    kafka.append('c_connector_sync', msg('NewEpoch', {syncEpoch: '1-x', baseEpoch: ''}));
    for (let n = 1; n < 10; n++) kafka.append('c_connector_sync', msg('Regular', {n}));
    kafka.skips.set(5, 1);
    const {task, events} = make(kafka);
    await sync.start();
    expect(task.inputs.map(([k, m]) => `${k} ${m.n ?? m.syncEpoch}`)).toEqual(['message 1-x', ...Array.from({length: 9}, (_, i) => `message ${i + 1}`)]);
    expect(events).toEqual([['warning', 'offset 5 of c_connector_sync was missing from a fetch and came on a later one']]);
  });

  test('an offset missing from every fetch is a hole: the task fences itself (KAFKA_TASK_FENCED)', async () => {
    const kafka = new FakeKafka();
    const {task, events} = make(kafka);
    await sync.start();
    kafka.skips.set(1, Infinity);
    for (let n = 0; n < 3; n++) kafka.append('c_connector_sync', msg('Regular', {n}));
    for (let i = 0; i < 200 && sync.state !== 'failed'; i++) await tick();
    expect(task.inputs.map(([k, m]) => (k === 'fence' ? `fence: ${m}` : `${k} ${m.n}`))).toEqual([
      'message 0',
      'fence: offsets 1..1 of c_connector_sync were never read (fetched 4 times)',
    ]);
    expect(events.map(([e, x]) => [e, x.code])).toEqual([['error', 'KAFKA_TASK_FENCED']]);
  });

  test('a record that is not JSON is skipped with a warning', async () => {
    const kafka = new FakeKafka();
    const {task, events} = make(kafka);
    await sync.start();
    kafka.append('c_connector_sync', 'garbage');
    kafka.append('c_connector_sync', msg('Regular'));
    for (let i = 0; i < 20 && !task.inputs.length; i++) await tick();
    expect(task.inputs.map(([k]) => k)).toEqual(['message']);
    expect(events).toEqual([['warning', 'skipped an unreadable record at offset 0 of c_connector_sync']]);
  });
});

test('close() while start() replays the sync topic ends start() instead of leaving it hanging', async () => {
  const {FakeKafka, StubSyncTask} = require('./support/fake-kafka');
  const kafka = new FakeKafka();
  kafka.createTopic('c_connector_sync', 1);
  kafka.createTopic('c_connector_heartbeat', 1);
  kafka.append('c_connector_sync', JSON.stringify({type: 'Regular', taskID: 'x', syncEpoch: '', connectorState: []}));
  const reader = () => kafka.consumers.find((c) => c.groupId.includes('reader'));
  const sync = new KafkaTaskSync({kafka, connectorName: 'c', taskId: 'a', createSyncTask: (id) => new StubSyncTask(id)});
  const origConsumer = kafka.consumer.bind(kafka);
  kafka.consumer = (o) => Object.assign(origConsumer(o), {seek() {}}); // the reader never delivers
  const started = sync.start();
  for (let i = 0; i < 50 && !reader(); i++) await new Promise((r) => setTimeout(r, 5));
  await sync.close();
  await expect(started).rejects.toMatchObject({code: 'KAFKA_BAD_STATE'});
  expect(sync.state).toBe('closed');
});

test("without createSyncTask, KafkaTaskSync drives partkit's SyncTask with the given options", () => {
  const {SyncTask} = require('partkit');
  const kafka = {consumer() {}, producer() {}, admin() {}};
  const s = new KafkaTaskSync({kafka, connectorName: 'c', taskId: 't1', syncOptions: {rebalanceTimeout: 5000}});
  expect(s.task).toBeInstanceOf(SyncTask);
  expect(s.epoch()).toBeUndefined();
  expect(() => new KafkaTaskSync({kafka, connectorName: 'c', taskId: 't1', syncOptions: {bogus: 1}})).toThrow(expect.objectContaining({code: 'SYNC_INVALID_OPTIONS'}));
});
