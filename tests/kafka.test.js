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
