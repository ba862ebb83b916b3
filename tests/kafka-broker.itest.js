// KafkaTaskSync against a real Kafka-protocol broker (tansu, in-memory storage): connector tasks
// run in their own processes (tests/support/task-process.js) so that a task can be killed without
// leaving the group. Each test starts its own broker on a free loopback port and stops it, with
// every task, at the end.
//
// Without tansu these tests skip, loudly, unless PARTKIT_REQUIRE_KAFKA=1 (set by .ci/run, which
// installs tansu through scripts/ensure-tansu.sh): then they fail.
const {mkdirSync, writeFileSync} = require('node:fs');
const path = require('node:path');
const partkit = require('partkit');
const {KafkaTaskSync} = require('partkit/kafka');
const {describeWith} = require('./support/service');
const {findTansu, startTansu, tansuSupportsStorage} = require('./support/tansu');
const {TaskCluster, chains, sleep} = require('./support/cluster');

const TANSU = findTansu();
const d = describeWith(TANSU, {what: 'kafka broker tests: tansu', install: 'scripts/ensure-tansu.sh installs it', env: 'PARTKIT_REQUIRE_KAFKA'});

// The retention test removes the sync topic's old records (admin.deleteTopicRecords) while tasks
// run. tansu 0.6 cannot host it: its memory engine (memory://, dynostore) neither enforces
// retention.ms (the earliest offset never moves) nor implements DeleteRecords (a todo!() panic
// that drops the connection); its slatedb engine (slatedb://memory, tansu built with
// --features dynostore,tansu-broker/slatedb) deletes records, but its consumer groups break
// here (two members lead the same generation, a member hears nothing from the coordinator for
// longer than the session timeout), so the tasks fail with KAFKA_SESSION_LOST before any record
// is deleted. PARTKIT_KAFKA_DELETE_RECORDS_STORAGE=<storage url> runs the test on a tansu storage
// engine that does both (the in-memory kafka of tests/kafka.test.js covers the scenario).
const DELETE_RECORDS_STORAGE = process.env.PARTKIT_KAFKA_DELETE_RECORDS_STORAGE;
// The test needs a SyncTask that publishes checkpoints (SyncOptions.stateRefreshInterval).
const CHECKPOINTS = (() => {
  try {
    new partkit.SyncTask('probe', {stateRefreshInterval: 1500}).free();
    return true;
  } catch {
    return false;
  }
})();
const RETENTION_SKIP = !DELETE_RECORDS_STORAGE
  ? 'tansu 0.6 cannot remove records from a topic its consumer groups work with (memory://: no retention, no DeleteRecords; slatedb://memory: DeleteRecords, but broken groups); set PARTKIT_KAFKA_DELETE_RECORDS_STORAGE to a storage engine that can'
  : TANSU && !tansuSupportsStorage(TANSU, DELETE_RECORDS_STORAGE)
    ? `tansu does not run on ${DELETE_RECORDS_STORAGE} (not built with that engine)`
    : !CHECKPOINTS
      ? 'TODO: the SyncTask does not publish checkpoints yet (SyncOptions.stateRefreshInterval is refused)'
      : null;
if (TANSU && RETENTION_SKIP) console.warn(`kafka broker tests: SKIPPED the retention test: ${RETENTION_SKIP}`);

const SESSION_TIMEOUT = 6000;
const transport = {sessionTimeout: SESSION_TIMEOUT, heartbeatInterval: 500, rebalanceTimeout: 10000, topicCheckInterval: 1000};
const syncOptions = {rebalanceTimeout: 4000, epochAckTimeout: 2000};

const TEST_TIMEOUT = 150000;
const LONG_TEST_TIMEOUT = 240000;
jest.setTimeout(TEST_TIMEOUT);

d('KafkaTaskSync on tansu', () => {
  let broker;
  let cluster;
  let name;
  let counter = 0;

  beforeEach(async () => {
    broker = await startTansu({bin: TANSU});
    name = `conn${++counter}`;
  });

  afterEach(async () => {
    const state = expect.getState();
    if (cluster) {
      await cluster.stopAll();
      const dir = process.env.PARTKIT_TEST_OUTPUT ?? path.join(__dirname, '..', 'test-output');
      mkdirSync(dir, {recursive: true});
      writeFileSync(path.join(dir, `kafka-${state.currentTestName.replace(/[^a-z0-9]+/gi, '-')}.json`), JSON.stringify(cluster.events, null, 1));
    }
    cluster = null;
    if (broker) await broker.stop();
    broker = null;
  });

  // Every wait of a test ends 20 s before the test's timeout, so a slow step fails with the
  // cluster's summary and statuses (and the closes after it still have time to run).
  const make = (tree, work, workMs, timeout = TEST_TIMEOUT) =>
    (cluster = new TaskCluster({brokers: broker.brokers, connectorName: name, syncOptions, transport, tree, work, workMs, deadline: Date.now() + timeout - 20000}));

  function expectSafe(tokens) {
    expect(cluster.overlaps()).toEqual([]);
    const counts = cluster.finishedCounts();
    for (const t of tokens) expect([t, counts.get(t) ?? 0]).toEqual([t, 1]);
    expect([...counts.keys()].sort()).toEqual([...tokens].sort());
    expect(cluster.of('error')).toEqual([]);
  }

  const allFinished = (tokens) => () => {
    const c = cluster.finishedCounts();
    return tokens.every((t) => c.get(t) >= 1);
  };

  test('three tasks share an initial partition and its children; each partition finishes exactly once', async () => {
    const {tree, tokens} = chains(6, 2); // root, 6 children, 6 grandchildren
    make(tree, {root: 600}, 800);
    const t0 = Date.now();
    for (const id of ['a', 'b', 'c']) cluster.spawn(id);
    const {leader} = await cluster.waitForEpoch(['a', 'b', 'c'], 60000);
    // records on the sync topic that are not SyncMessages are skipped by every task, with a warning
    const {Kafka, logLevel} = require('kafkajs');
    const producer = new Kafka({brokers: broker.brokers, logLevel: logLevel.NOTHING}).producer({createPartitioner: () => () => 0});
    await producer.connect();
    await producer.send({topic: `${name}_connector_sync`, messages: [{value: 'not json'}, {value: '{"type":"Regular","taskID":""}'}]});
    await producer.disconnect();
    cluster.send(leader, {cmd: 'add', specs: [{token: 'root', parents: []}]});
    await cluster.waitFor('every partition finished', allFinished(tokens), 60000);
    expect(cluster.of('warn').filter((w) => /unreadable record|malformed sync message/.test(w.message)).length).toBe(6);
    await sleep(500);
    expectSafe(tokens);
    const workers = new Set(cluster.of('finish').map((e) => e.task));
    expect([...workers].sort()).toEqual(['a', 'b', 'c']);
    console.log(`3 tasks, ${tokens.length} partitions, finished in ${Date.now() - t0} ms; per task: ${JSON.stringify(countBy(cluster.of('finish'), 'task'))}`);
    for (const id of ['a', 'b', 'c']) await cluster.close(id);
    expect(cluster.of('error')).toEqual([]);
    // each task left a final checkpoint as it closed (the periodic ones are 5 minutes apart, the
    // leader's first at once): the newest one is as new as the stop, and a task starting there
    // finds it
    const records = await readTopic(new Kafka({brokers: broker.brokers, logLevel: logLevel.NOTHING}), `${name}_connector_sync`);
    const authors = new Set(records.filter((r) => r.message?.checkpoint).map((r) => r.message.taskID));
    expect([...authors].sort()).toEqual(['a', 'b', 'c']);
    const {findEpochStart} = require('partkit/kafka');
    const start = findEpochStart(records.map((r) => ({offset: r.offset, message: r.message})), {atLow: true, low: records[0].offset});
    const last = records.findLast((r) => r.message?.checkpoint);
    expect(String(start.checkpoint ?? start.offset)).toBe(String(last.offset));
  });

  test('a task killed without leaving: its partitions move after the session timeout; a restarted task gets work', async () => {
    const {tree, tokens} = chains(6, 5);
    make(tree, {root: 400}, 2500);
    for (const id of ['a', 'b', 'c']) cluster.spawn(id);
    const first = await cluster.waitForEpoch(['a', 'b', 'c'], 60000);
    cluster.send(first.leader, {cmd: 'add', specs: [{token: 'root', parents: []}]});
    // a task that is not the leader, while it runs partitions
    const victim = await cluster.waitFor('a non-leader running partitions', async () => {
      const st = await cluster.statuses();
      return Object.keys(st).find((id) => id !== first.leader && st[id] && st[id].running.length > 0);
    }, 30000);
    const orphaned = (await cluster.status(victim)).running;
    const killedAt = await cluster.kill(victim);
    const live = ['a', 'b', 'c'].filter((id) => id !== victim);
    const second = await cluster.waitForEpoch(live, 60000, first.epoch);
    // its partitions restart on live tasks, not before the broker expired its session
    await cluster.waitFor("the victim's partitions restarted elsewhere", () => {
      const restarted = cluster.of('start').filter((e) => e.t > killedAt && orphaned.includes(e.token) && live.includes(e.task));
      return orphaned.every((tok) => restarted.some((e) => e.token === tok) || cluster.finishedCounts().get(tok));
    }, 30000);
    const moved = cluster.of('start').filter((e) => e.t > killedAt && orphaned.includes(e.token));
    const delay = Math.min(...moved.map((e) => e.t)) - killedAt;
    expect(delay).toBeGreaterThanOrEqual(SESSION_TIMEOUT - 1500);
    // a restarted task with a new id
    cluster.spawn('d');
    await cluster.waitForEpoch([...live, 'd'], 60000, second.epoch);
    await cluster.waitFor('the restarted task to get work', () => cluster.of('start').some((e) => e.task === 'd'), 40000);
    await cluster.waitFor('every partition finished', allFinished(tokens), 90000);
    await sleep(500);
    expectSafe(tokens);
    console.log(`killed ${victim} running ${orphaned.join(',')}; first restart ${delay} ms after the kill (session timeout ${SESSION_TIMEOUT} ms); d finished ${cluster.of('finish').filter((e) => e.task === 'd').length}`);
    for (const id of [...live, 'd']) await cluster.close(id);
  });

  test('the leader killed mid-epoch: a new leader, a new epoch, nothing lost', async () => {
    const {tree, tokens} = chains(4, 4);
    make(tree, {root: 400}, 2000);
    for (const id of ['a', 'b', 'c']) cluster.spawn(id);
    const first = await cluster.waitForEpoch(['a', 'b', 'c'], 60000);
    cluster.send(first.leader, {cmd: 'add', specs: [{token: 'root', parents: []}]});
    await cluster.waitFor('partitions running on the leader and on another task', async () => {
      const st = await cluster.statuses();
      return st[first.leader]?.running.length > 0 && Object.entries(st).some(([id, s]) => id !== first.leader && s?.running.length > 0);
    }, 30000);
    await cluster.kill(first.leader);
    const live = ['a', 'b', 'c'].filter((id) => id !== first.leader);
    const second = await cluster.waitForEpoch(live, 60000, first.epoch);
    expect(second.epoch).not.toBe(first.epoch);
    expect(second.leader).not.toBe(first.leader);
    await cluster.waitFor('every partition finished', allFinished(tokens), 90000);
    await sleep(500);
    expectSafe(tokens);
    console.log(`leader ${first.leader} (epoch ${first.epoch}) killed; new leader ${second.leader}, epoch ${second.epoch}`);
    for (const id of live) await cluster.close(id);
  });

  test('start/stop log with timestamps: tasks join, leave cleanly and die while work runs; no partition runs on two tasks at once', async () => {
    const {tree, tokens} = chains(6, 6);
    make(tree, {root: 300}, 2500, LONG_TEST_TIMEOUT);
    cluster.spawn('a');
    cluster.spawn('b');
    const first = await cluster.waitForEpoch(['a', 'b'], 60000);
    cluster.send(first.leader, {cmd: 'add', specs: [{token: 'root', parents: []}]});
    await cluster.waitFor('work under way', () => cluster.of('finish').length >= 2, 30000);
    cluster.spawn('c'); // joins
    const second = await cluster.waitForEpoch(['a', 'b', 'c'], 60000, first.epoch);
    const leaving = first.leader === 'a' ? 'b' : 'a';
    await cluster.close(leaving); // leaves cleanly
    let live = ['a', 'b', 'c'].filter((id) => id !== leaving);
    const third = await cluster.waitForEpoch(live, 60000, second.epoch);
    cluster.spawn('e'); // joins
    const fourth = await cluster.waitForEpoch([...live, 'e'], 60000, third.epoch);
    const victim = live.find((id) => id !== fourth.leader);
    await cluster.kill(victim); // dies without leaving
    live = [...live, 'e'].filter((id) => id !== victim);
    await cluster.waitForEpoch(live, 60000, fourth.epoch);
    await cluster.waitFor('every partition finished', allFinished(tokens), 120000);
    await sleep(500);
    for (const id of cluster.alive()) await cluster.close(id);
    const log = cluster.intervals().sort((x, y) => x.start - y.start);
    expect(log.length).toBeGreaterThanOrEqual(tokens.length);
    expect(log.every((i) => Number.isFinite(i.end) && i.end >= i.start)).toBe(true);
    expectSafe(tokens);
    const ended = countBy(log, 'how');
    console.log(`${log.length} intervals of ${tokens.length} partitions over tasks ${JSON.stringify(countBy(log, 'task'))}, ended by ${JSON.stringify(ended)}; ${leaving} left cleanly, ${victim} was killed; no overlap`);
  }, LONG_TEST_TIMEOUT);

  test.each(['sync', 'heartbeat'])('losing the %s topic fails the task loudly: error, every partition stopped, process out', async (which) => {
    make({}, {}, 60000);
    cluster.spawn('a');
    const {leader} = await cluster.waitForEpoch(['a'], 60000);
    cluster.send(leader, {cmd: 'add', specs: [{token: 'p1', parents: []}]});
    await cluster.waitFor('p1 running', () => cluster.of('start').some((e) => e.token === 'p1'), 20000);
    const {Kafka, logLevel} = require('kafkajs');
    const admin = new Kafka({brokers: broker.brokers, logLevel: logLevel.NOTHING}).admin();
    await admin.connect();
    const topic = `${name}_connector_${which}`;
    const deletedAt = Date.now();
    await admin.deleteTopics({topics: [topic], timeout: 5000});
    await admin.disconnect();
    const deadline = Date.now() + 30000;
    while (!cluster.of('exit').length && Date.now() < deadline) await sleep(100);
    const errors = cluster.of('error');
    expect(errors.map((e) => e.code)).toEqual(['KAFKA_TOPIC_LOST']);
    expect(errors[0].message).toContain(topic);
    const stop = cluster.of('stop').find((e) => e.token === 'p1');
    expect(stop && stop.t).toBeLessThanOrEqual(errors[0].t);
    expect(cluster.of('exit')[0].code).toBe(3);
    console.log(`${which} topic deleted: error ${errors[0].t - deletedAt} ms later: ${errors[0].message}`);
    cluster.events = cluster.events.filter((e) => e.ev !== 'error');
  });

  test('a task whose process stalls past the session timeout stops its partitions and fails (KAFKA_SESSION_LOST)', async () => {
    const {Kafka, logLevel} = require('kafkajs');
    const kafka = new Kafka({clientId: 'stall', brokers: broker.brokers, logLevel: logLevel.NOTHING});
    const seen = [];
    const sync = new KafkaTaskSync({
      kafka, connectorName: name, taskId: 'stalled', ...transport, syncOptions,
    });
    sync.on('start', (token) => seen.push(['start', token, Date.now()]) && sync.partitionStarted(token));
    sync.on('stop', (token) => seen.push(['stop', token, Date.now()]));
    const failed = new Promise((resolve) => sync.on('error', (e) => resolve([e, Date.now()])));
    await sync.start();
    try {
      const deadline = Date.now() + 30000;
      while (!sync.epoch() && Date.now() < deadline) await sleep(100);
      sync.addPartitions([{token: 'p1', parents: []}]);
      while (!seen.length && Date.now() < deadline) await sleep(50);
      expect(seen.map((x) => x.slice(0, 2))).toEqual([['start', 'p1']]);
      const t = Date.now();
      while (Date.now() - t < SESSION_TIMEOUT + 1000); // the event loop stalls
      let timer;
      const [error, at] = await Promise.race([failed, new Promise((r) => (timer = setTimeout(() => r([null]), 10000)))]);
      clearTimeout(timer);
      expect(error && error.code).toBe('KAFKA_SESSION_LOST');
      expect(seen.map((x) => x.slice(0, 2))).toEqual([['start', 'p1'], ['stop', 'p1']]);
      expect(seen[1][2]).toBeLessThanOrEqual(at);
      expect(sync.state).toBe('failed');
      console.log(`stalled ${SESSION_TIMEOUT + 1000} ms: p1 stopped ${seen[1][2] - t - SESSION_TIMEOUT - 1000} ms after waking; ${error.message}`);
    } finally {
      await sync.close();
    }
  });

  (RETENTION_SKIP ? test.skip : test)("the sync topic's old records are removed while tasks run; then the leader is killed and a new task starts: every partition finishes exactly once", async () => {
    // a storage engine that implements DeleteRecords
    await broker.stop();
    broker = await startTansu({bin: TANSU, storage: DELETE_RECORDS_STORAGE});
    const REFRESH = 1500;
    const {tree, tokens} = chains(4, 4);
    make(tree, {root: 400}, 1500, LONG_TEST_TIMEOUT);
    cluster.o.syncOptions = {...syncOptions, stateRefreshInterval: REFRESH};
    for (const id of ['a', 'b', 'c']) cluster.spawn(id);
    const first = await cluster.waitForEpoch(['a', 'b', 'c'], 60000);
    cluster.send(first.leader, {cmd: 'add', specs: [{token: 'root', parents: []}]});
    await cluster.waitFor('work under way', () => cluster.of('finish').length >= 3, 60000);
    // what retention does: everything before now goes (the first NewEpoch, the first checkpoints)
    const {Kafka, logLevel} = require('kafkajs');
    const admin = new Kafka({brokers: broker.brokers, logLevel: logLevel.NOTHING}).admin();
    await admin.connect();
    const topic = `${name}_connector_sync`;
    const [before] = await admin.fetchTopicOffsets(topic);
    await admin.deleteTopicRecords({topic, partitions: [{partition: 0, offset: before.high}]});
    const [after] = await admin.fetchTopicOffsets(topic);
    expect(after.low).toBe(before.high);
    // the retained log gets checkpoints (and the running tasks read on: none fences)
    await sleep(3 * REFRESH);
    const [later] = await admin.fetchTopicOffsets(topic);
    await admin.disconnect();
    expect(BigInt(later.high)).toBeGreaterThan(BigInt(later.low));
    // a fresh leader after retention: the leader dies, a new task starts from what is retained
    await cluster.kill(first.leader);
    const live = ['a', 'b', 'c'].filter((id) => id !== first.leader);
    cluster.spawn('d');
    const second = await cluster.waitForEpoch([...live, 'd'], 90000, first.epoch);
    await cluster.waitFor('every partition finished', allFinished(tokens), 120000);
    await sleep(500);
    expectSafe(tokens);
    console.log(`deleted offsets ${before.low}..${BigInt(before.high) - 1n} of ${topic}; killed leader ${first.leader}; epoch ${second.epoch} led by ${second.leader}; d finished ${cluster.of('finish').filter((e) => e.task === 'd').length}`);
    for (const id of [...live, 'd']) await cluster.close(id);
  }, LONG_TEST_TIMEOUT);

  // Issue "Sync at scale": a NewEpoch carries every member's state, and 4 tasks × 4,000
  // partitions (40-character tokens) make one of about 1.4 MB, over Kafka's default
  // max.message.bytes (1,048,588 bytes) and the Java producer's max.request.size (1 MiB). The sync
  // topic is the one KafkaTaskSync creates (no max.message.bytes: the broker default). tansu 0.6
  // enforces neither max.message.bytes nor a request size (and kafkajs has no max.request.size
  // check), so the test reads every record back and checks the bound itself: no value over
  // maxRecordBytes (900,000), and the large messages really went out in chunks. The tasks hold
  // their partitions Scheduled (they never start them), so that no task publishes a state per
  // partition.
  test('an epoch larger than max.message.bytes goes out in chunks under 900,000 bytes: every task applies it; a task joining later rebuilds the same view', async () => {
    const TASKS = ['a', 'b', 'c', 'd'];
    const PER_TASK = 4000;
    const tokens = Array.from({length: TASKS.length * PER_TASK}, (_, i) => `scale-${String(i).padStart(5, '0')}-`.padEnd(40, 'x'));
    const topic = `${name}_connector_sync`;
    const t0 = Date.now();
    make({}, {}, 60000);
    cluster.o.hold = true;
    // checkpoints every 5 s (a chunked one once the partitions are spread), and time to read a
    // large epoch before its leader re-publishes it
    cluster.o.syncOptions = {...syncOptions, epochAckTimeout: 10000, stateRefreshInterval: 5000};
    for (const id of TASKS) cluster.spawn(id);
    const first = await cluster.waitForEpoch(TASKS, 60000);
    // the sync topic has the broker's default max.message.bytes
    const {Kafka, logLevel} = require('kafkajs');
    const kafka = new Kafka({brokers: broker.brokers, logLevel: logLevel.NOTHING});
    const admin = kafka.admin();
    await admin.connect();
    const {resources} = await admin.describeConfigs({includeSynonyms: false, resources: [{type: 2, name: topic}]});
    await admin.disconnect();
    const maxMessageBytes = resources[0].configEntries.find((e) => e.configName === 'max.message.bytes')?.configValue;
    expect(maxMessageBytes === undefined || Number(maxMessageBytes) === 1048588).toBe(true);

    // the leader finds every partition; sharing spreads them over the four tasks
    cluster.send(first.leader, {cmd: 'add', specs: tokens.map((token) => ({token, parents: []}))});
    const spread = await waitForOneView(TASKS, (st) => ownedOnce(st, tokens) && TASKS.every((id) => st[id].owned.length === PER_TASK), 'the partitions spread, four views alike');
    expect(spread.view.partitions).toBe(tokens.length);
    expect(spread.epoch).toBe(first.epoch);
    const tSpread = Date.now();

    // a chunked checkpoint of the whole state in the log: where a task joining now starts
    const {findEpochStart} = require('partkit/kafka');
    const before = await cluster.waitFor('a chunked checkpoint of every partition', async () => {
      const records = await readTopic(kafka, topic);
      const over = records.find((r) => r.size > 900000);
      if (over) throw new Error(`the record at offset ${over.offset} of ${topic} (${over.message?.type}) has a value of ${over.size} bytes, over maxRecordBytes (900,000)`);
      const messages = joinChunks(records);
      const full = messages.filter((m) => m.message.checkpoint && m.chunks > 1 && m.partitions === tokens.length);
      return full.length ? records : null;
    }, 60000);
    const start = findEpochStart(before.map((r) => ({offset: r.offset, message: r.message})), {atLow: true, low: before[0].offset});
    const at = before.find((r) => String(r.offset) === (start.checkpoint ?? start.offset));
    expect(at.message).toMatchObject({type: 'NewEpoch', resend: true, chunk: {index: 0}});
    expect(at.message.checkpoint).toBeTruthy();

    // a task joining later replays from findEpochStart: a new epoch of five tasks, over 1 MB
    cluster.spawn('e');
    const five = [...TASKS, 'e'];
    const second = await cluster.waitForEpoch(five, 60000, first.epoch);
    const joined = await waitForOneView(five, (st) => ownedOnce(st, tokens) && st.e.owned.length === 0 && five.every((id) => st[id].epoch === second.epoch), 'the five views alike');
    expect(joined.view.tasks).toBe(5);
    const tJoined = Date.now();

    // a task leaves: its partitions go to the least-loaded member (the new one)
    const leaving = TASKS.find((id) => id !== second.leader);
    await cluster.close(leaving);
    const live = five.filter((id) => id !== leaving);
    const third = await cluster.waitForEpoch(live, 60000, second.epoch);
    const moved = await waitForOneView(live, (st) => ownedOnce(st, tokens) && live.every((id) => st[id].epoch === third.epoch), 'the partitions of the task that left owned once, four views alike');
    expect(moved.statuses.e.owned.length).toBe(PER_TASK);
    await cluster.waitFor('the new task told to start what it took over', () => cluster.of('start').filter((e) => e.task === 'e').length >= PER_TASK, 30000);

    // no publish failed, no task fenced, no partition on two tasks at once
    expect(cluster.of('error')).toEqual([]);
    expect(cluster.of('warn').filter((w) => /fenc|publish/i.test(w.message))).toEqual([]);
    expect(cluster.overlaps()).toEqual([]);

    // every record on the topic: within the bound, and the large messages in chunks
    const records = await readTopic(kafka, topic);
    const largest = Math.max(...records.map((r) => r.size));
    expect(largest).toBeLessThanOrEqual(900000);
    expect(Math.max(...records.map((r) => r.batchBytes))).toBeLessThan(1048588);
    const messages = joinChunks(records);
    // (a NewEpoch carries every member's whole state today; were epochs to carry only what
    // changed since their base, these two would be small and the chunked checkpoints above the
    // messages to check)
    const epochs = [second.epoch, third.epoch].map((epoch) => {
      const m = messages.find((x) => x.message.type === 'NewEpoch' && x.message.syncEpoch === epoch && !x.message.resend);
      expect(m && m.chunks).toBeGreaterThan(1);
      expect(m.bytes).toBeGreaterThan(1048588);
      expect(m.partitions).toBe(tokens.length);
      return `${epoch}: ${m.bytes} bytes in ${m.chunks} chunks`;
    });
    for (const id of live) await cluster.close(id);
    expect(cluster.of('error')).toEqual([]);
    const chunked = messages.filter((m) => m.chunks > 1);
    console.log(
      `max.message.bytes of ${topic}: ${maxMessageBytes ?? 'not reported (the default)'}; ${tokens.length} partitions over ${TASKS.length} tasks: spread in ${tSpread - t0} ms; a chunked checkpoint at offset ${at.offset} (findEpochStart ${JSON.stringify(start)}); ` +
        `e joined, epoch ${second.epoch} applied by five in ${tJoined - tSpread} ms; ${leaving} left, epoch ${third.epoch}; NewEpochs ${epochs.join(', ')}; ` +
        `${records.length} records, largest value ${largest} bytes, ${chunked.length} messages in chunks (${JSON.stringify(countBy(chunked.map((m) => ({k: `${m.message.type}${m.message.checkpoint ? '/checkpoint' : ''}`})), 'k'))}), ` +
        `largest unsplit ${Math.max(...messages.map((m) => m.bytes))} bytes; ${Date.now() - t0} ms in all`,
    );
  });

  // Polls the statuses (with views) of `ids` until `pred(statuses)` holds and every task has
  // the same view; returns the statuses, the epoch and the view.
  async function waitForOneView(ids, pred, what) {
    return cluster.waitFor(what, async () => {
      const st = await cluster.statuses(ids, true);
      if (ids.some((id) => !st[id])) return null;
      const views = new Set(ids.map((id) => st[id].view.digest));
      if (views.size !== 1 || new Set(ids.map((id) => st[id].epoch)).size !== 1 || !pred(st)) return null;
      return {statuses: st, epoch: st[ids[0]].epoch, view: st[ids[0]].view};
    }, 60000);
  }

  // Every token owned by exactly one of the tasks, and nothing else.
  function ownedOnce(st, tokens) {
    const owners = new Map();
    for (const [id, s] of Object.entries(st)) {
      for (const p of s.owned) {
        if (owners.has(p.token)) return false;
        owners.set(p.token, id);
      }
    }
    return owners.size === tokens.length && tokens.every((t) => owners.has(t));
  }

  test('examples/kafka-connector: two tasks share the example source, then leave on SIGTERM', async () => {
    const {spawn} = require('node:child_process');
    const script = path.join(__dirname, '..', 'examples', 'kafka-connector', 'connector.mjs');
    const procs = [0, 1].map(() => {
      const child = spawn(process.execPath, [script], {env: {...process.env, KAFKA_BROKERS: broker.brokers.join(','), CONNECTOR_NAME: name}, stdio: ['ignore', 'pipe', 'pipe']});
      const p = {child, out: '', exit: new Promise((r) => child.once('exit', (code) => r(code)))};
      child.stdout.on('data', (d) => (p.out += d));
      child.stderr.on('data', (d) => (p.out += d));
      return p;
    });
    try {
      const all = () => procs.map((p) => p.out).join('');
      const deadline = Date.now() + 90000;
      while (!['root', 'root/a', 'root/b', 'root/c'].every((t) => all().includes(`finished ${t}\n`)) && Date.now() < deadline) await sleep(200);
      for (const t of ['root', 'root/a', 'root/b', 'root/c']) expect(all().split(`finished ${t}\n`).length - 1).toBe(1);
      procs.forEach((p) => p.child.kill('SIGTERM'));
      expect(await Promise.all(procs.map((p) => p.exit))).toEqual([0, 0]);
      expect(procs.every((p) => p.out.includes('leaving'))).toBe(true);
    } finally {
      procs.forEach((p) => p.child.exitCode === null && p.child.kill('SIGKILL'));
    }
  });
});

// Every record of `topic`, read back with a consumer of its own: offset, value size, the size
// the record takes in a batch of its own (value, key, headers and their framing: what
// max.message.bytes bounds), and the parsed message (null if not JSON).
async function readTopic(kafka, topic) {
  const admin = kafka.admin();
  await admin.connect();
  const [p] = await admin.fetchTopicOffsets(topic);
  await admin.disconnect();
  const high = BigInt(p.high);
  const records = [];
  if (high <= BigInt(p.low)) return records;
  const consumer = kafka.consumer({groupId: `check-${topic}-${Date.now()}`, maxWaitTimeInMs: 250});
  await consumer.connect();
  try {
    await consumer.subscribe({topics: [topic], fromBeginning: true});
    let done;
    const all = new Promise((resolve) => (done = resolve));
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({message}) => {
        const offset = BigInt(message.offset);
        if (offset >= high) return;
        let parsed = null;
        try {
          parsed = JSON.parse(message.value.toString('utf8'));
        } catch {}
        // a batch of one record: 61 bytes of batch header, at most 21 of record framing (varints),
        // the key, the value, and each header with at most 10 bytes of framing
        const headers = Object.entries(message.headers ?? {}).reduce((n, [k, v]) => n + Buffer.byteLength(k) + (v ? v.length : 0) + 10, 0);
        const size = message.value.length;
        records.push({offset, size, batchBytes: 61 + 21 + size + (message.key ? message.key.length : 0) + headers, message: parsed});
        if (offset === high - 1n) done();
      },
    });
    let timer;
    const finished = await Promise.race([all.then(() => true), new Promise((r) => (timer = setTimeout(() => r(false), 30000)))]);
    clearTimeout(timer);
    if (!finished) throw new Error(`read ${records.length} records of ${topic} before the timeout, not up to offset ${high - 1n}`);
  } finally {
    await consumer.disconnect();
  }
  return records.sort((x, y) => (x.offset < y.offset ? -1 : 1));
}

// The messages of the records, chunks joined (as a reader joins them: a chunk's first state
// continues the previous chunk's last one when it is the same task's): `{message, chunks,
// bytes, partitions}`, where `bytes` is the length of the message's JSON had it gone out whole.
function joinChunks(records) {
  const out = [];
  const open = new Map(); // taskID -> the message being joined
  for (const {message: m} of records) {
    if (!m || typeof m !== 'object') continue;
    if (!m.chunk) {
      out.push(sized({message: m, chunks: 1}));
      continue;
    }
    if (m.chunk.index === 0) open.set(m.taskID, {message: {...m, connectorState: []}, chunks: 0});
    const p = open.get(m.taskID);
    if (!p || p.chunks !== m.chunk.index) {
      open.delete(m.taskID);
      continue;
    }
    for (const s of m.connectorState ?? []) {
      const last = p.message.connectorState[p.message.connectorState.length - 1];
      if (last && last.taskID === s.taskID) {
        last.data.partitions.push(...s.data.partitions);
        last.share.partitions.push(...s.share.partitions);
      } else p.message.connectorState.push(structuredClone(s));
    }
    p.chunks++;
    if (p.chunks === m.chunk.count) {
      open.delete(m.taskID);
      delete p.message.chunk;
      out.push(sized(p));
    }
  }
  return out;
}

function sized(m) {
  const states = m.message.connectorState ?? [];
  return {...m, bytes: Buffer.byteLength(JSON.stringify(m.message)), partitions: states.reduce((n, s) => n + s.data.partitions.length, 0)};
}

function countBy(list, key) {
  const c = {};
  for (const x of list) c[x[key]] = (c[x[key]] ?? 0) + 1;
  return c;
}
