// Task coordination: the leader's new-epoch computation for 100k partitions over 1,000 tasks (a
// tenth of them departed, their partitions reassigned to the least-loaded survivors) natively
// (`compute_epoch`, example bench_sync) and through the JS API (wasm: the onMessage call that
// completes the answers computes the epoch and returns the NewEpoch message as JS objects); and
// bytes per message as the number of tasks grows (partkit sends only the sender's own state on
// every change and every state once per rebalance; the Debezium Spanner connector's
// design sends every state in every message). Then, at scale (T tasks × P partitions per task,
// 10/100/1,000 × 100/1,000): the leader's computation and publication of a new epoch (the
// onMessage call that reads the last answer) and a member's application of it (its onMessage
// calls for the epoch's records), the largest record and all of them in JSON bytes, natively
// and in wasm; and one task that adds N partitions, then starts each (records, bytes, CPU).
// Last, a member's cost to read one small record (a change naming one partition) as the view
// grows from 1,000 to 50,000 partitions: the median per record.
// BENCH_SYNC_SHAPES (e.g. "10x100,100x1000"), BENCH_SYNC_ONE_TASK (e.g. "100,1000") and
// BENCH_SYNC_VIEWS (e.g. "1000,50000") pick others (1,000 × 1,000, the largest default shape, takes about 20 s and 1.7 GB).
import {native} from './_util.mjs';

const SHAPES = process.env.BENCH_SYNC_SHAPES ?? '10x100,10x1000,100x100,100x1000,1000x100,1000x1000';
const ONE_TASK = process.env.BENCH_SYNC_ONE_TASK ?? '100,1000,3000,10000';

const VIEWS = process.env.BENCH_SYNC_VIEWS ?? '1000,50000';
const PARTITIONS = Number(process.env.BENCH_SYNC_PARTITIONS ?? 100_000);
const TASKS = Number(process.env.BENCH_SYNC_TASKS ?? 1_000);

const ms = (x) => `${x.toFixed(1)} ms`;
const kb = (b) => (b >= 1 << 20 ? `${(b / (1 << 20)).toFixed(1)} MiB` : `${(b / 1024).toFixed(1)} KiB`);
const STATES = ['Running', 'Finished', 'Scheduled', 'Created'];

function taskState(id, first, count) {
  const partitions = [];
  for (let i = first; i < first + count; i++) {
    const state = STATES[i % 4];
    partitions.push({
      token: i.toString(16).padStart(40, '0'),
      parents: [],
      state,
      startTimestamp: 1_700_000_000_000,
      ...(state === 'Finished' ? {finishedTimestamp: 1_700_000_100_000} : {}),
    });
  }
  return {taskID: id, stateTimestamp: 1_700_000_000_000, stateVersion: 1, data: {partitions}, share: {partitions: []}};
}

function wasmNewEpoch(api) {
  const ids = Array.from({length: TASKS}, (_, i) => `connector_task-${String(i).padStart(4, '0')}`);
  const per = Math.floor(PARTITIONS / TASKS);
  const live = TASKS - Math.floor(TASKS / 10);
  const leader = new api.SyncTask(ids[0], {rebalanceTimeout: 3_600_000});
  let now = 1_700_000_000_000;
  // the leader's own partitions, then every other task's state as read from the topic
  leader.addPartitions(Array.from({length: per}, (_, i) => ({token: `own-${i}`})), now);
  const states = ids.map((id, t) => taskState(id, t * per, per));
  const feedStart = process.hrtime.bigint();
  for (let t = 1; t < TASKS; t++) {
    const msg = {syncEpoch: '', taskID: ids[t], messageTimestamp: now, type: 'Regular', connectorState: [states[t]]};
    leader.onMessage(msg, now);
  }
  const feedMs = Number(process.hrtime.bigint() - feedStart) / 1e6;
  const out = leader.onRebalance({generation: 1, leader: true, members: ids.slice(0, live)}, ++now);
  for (const m of out.publish) leader.onMessage(m, now);
  for (let t = 1; t < live - 1; t++) {
    const s = {...states[t], stateVersion: 2};
    leader.onMessage({syncEpoch: '', taskID: ids[t], messageTimestamp: now, type: 'RebalanceAnswer', rebalanceGeneration: 1, connectorState: [s]}, now);
  }
  const last = {...states[live - 1], stateVersion: 2};
  const msg = {syncEpoch: '', taskID: ids[live - 1], messageTimestamp: now, type: 'RebalanceAnswer', rebalanceGeneration: 1, connectorState: [last]};
  const start = process.hrtime.bigint();
  const result = leader.onMessage(msg, now);
  const epochMs = Number(process.hrtime.bigint() - start) / 1e6;
  // (every chunk of it: the epoch goes out in records of at most maxRecordBytes)
  const epoch = result.publish.filter((m) => m.type === 'NewEpoch');
  if (!epoch.length) throw new Error('bench: the last answer did not produce the new epoch');
  const count = epoch.reduce((n, m) => n + m.connectorState.reduce((k, s) => k + s.data.partitions.length, 0), 0);
  leader.free();
  return {epochMs, feedMsPerMessage: feedMs / (TASKS - 1), partitions: count, bytes: bytesOf(epoch).reduce((a, b) => a + b, 0)};
}

const token = (i) => i.toString(16).padStart(40, '0');
const bytesOf = (records) => records.map((m) => JSON.stringify(m).length);

// A leader and a member that read every task's state and answer (as examples/bench_sync.rs).
// `records`: as KafkaTaskSync drives them (`publishAs: 'records'`, every record's value given as
// the bytes read): the leader's output is the JSON text to publish, the member parses each record
// once, in wasm. Otherwise the JS API with message objects (stringified in, parsed out).
export function wasmEpochAtScale(api, tasks, per, records) {
  const ids = Array.from({length: tasks}, (_, i) => `connector_task-${String(i).padStart(4, '0')}`);
  const opts = {rebalanceTimeout: 3_600_000, epochAckTimeout: 3_600_000, ...(records ? {publishAs: 'records'} : {})};
  const leader = new api.SyncTask(ids[0], opts);
  const member = new api.SyncTask(ids[1], opts);
  // the log holds record values (JSON text); what a task is given of one, and what it publishes
  const input = (value) => (records ? Buffer.from(value) : JSON.parse(value));
  const values = (out) => out.publish.map((m) => (records ? m.value : JSON.stringify(m)));
  let now = 1_700_000_000_000;
  const log = [];
  [leader, member].forEach((t, k) => {
    const specs = Array.from({length: per}, (_, i) => ({token: token(k * per + i)}));
    log.push(...values(t.addPartitions(specs, now)));
  });
  const state = (t, version) => ({
    taskID: ids[t],
    stateTimestamp: now,
    stateVersion: version,
    data: {partitions: Array.from({length: per}, (_, i) => ({token: token(t * per + i), parents: [], state: 'Running', startTimestamp: now}))},
    share: {partitions: []},
  });
  for (let t = 2; t < tasks; t++) log.push(JSON.stringify({syncEpoch: '', taskID: ids[t], messageTimestamp: now, type: 'Regular', connectorState: [state(t, 1)]}));
  now++;
  log.push(...values(leader.onRebalance({generation: 1, leader: true, members: ids}, now)));
  log.push(...values(member.onRebalance({generation: 1, leader: false}, now)));
  const answer = (t) => JSON.stringify({syncEpoch: '', taskID: ids[t], messageTimestamp: now, type: 'RebalanceAnswer', rebalanceGeneration: 1, connectorState: [state(t, 2)]});
  for (let t = 2; t < tasks - 1; t++) log.push(answer(t));
  for (let k = 0; k < log.length; k++) {
    for (const t of [leader, member]) log.push(...values(t.onMessage(input(log[k]), now)));
  }
  const last = answer(tasks - 1);
  const mine = values(member.onMessage(input(last), now));
  for (let k = 0; k < mine.length; k++) mine.push(...values(member.onMessage(input(mine[k]), now)));
  const lastInput = input(last);
  let start = process.hrtime.bigint();
  const out = leader.onMessage(lastInput, now);
  const leaderMs = Number(process.hrtime.bigint() - start) / 1e6;
  const published = values(out);
  const epoch = published.filter((v) => JSON.parse(v).type === 'NewEpoch');
  if (!epoch.length) throw new Error('bench: the last answer did not produce the new epoch');
  const inputs = published.map(input);
  start = process.hrtime.bigint();
  for (const m of inputs) member.onMessage(m, now);
  const memberMs = Number(process.hrtime.bigint() - start) / 1e6;
  if (member.epoch() !== JSON.parse(epoch[0]).syncEpoch) throw new Error('bench: the member did not apply the epoch');
  const bytes = epoch.map((v) => v.length);
  leader.free();
  member.free();
  return {leaderMs, memberMs, records: epoch.length, largestRecordBytes: Math.max(...bytes), epochBytes: bytes.reduce((a, b) => a + b, 0)};
}

function wasmOneTask(api, n) {
  const start = process.hrtime.bigint();
  const t = new api.SyncTask('connector_task-0');
  let now = 1_700_000_000_000;
  const log = [...t.onRebalance({generation: 1, leader: true, members: ['connector_task-0']}, now).publish];
  let k = 0;
  for (; k < log.length; k++) log.push(...t.onMessage(log[k], now).publish);
  const setup = log.length;
  const out = t.addPartitions(Array.from({length: n}, (_, i) => ({token: token(i)})), ++now);
  log.push(...out.publish);
  for (const tok of out.start) {
    log.push(...t.partitionStarted(tok, ++now).publish);
    for (; k < log.length; k++) log.push(...t.onMessage(log[k], now).publish);
  }
  const cpuMs = Number(process.hrtime.bigint() - start) / 1e6;
  t.free();
  const bytes = bytesOf(log.slice(setup));
  return {records: bytes.length, bytes: bytes.reduce((a, b) => a + b, 0), largestRecordBytes: Math.max(...bytes), cpuMs};
}

// Two tasks as KafkaTaskSync drives them (records in and out); the leader adds `added`
// partitions (about half fall to the member) and starts up to `starts` of its own one by one:
// the two tasks, the records the member has not read yet (one Regular record per start), the time.
function memberScenario(api, added, starts = Infinity) {
  const ids = ['connector_task-0', 'connector_task-1'];
  const [a, b] = ids.map((id) => new api.SyncTask(id, {publishAs: 'records'}));
  let now = 1_700_000_000_000;
  const log = [];
  log.push(...a.onRebalance({generation: 1, leader: true, members: ids}, now).publish.map((r) => r.value));
  log.push(...b.onRebalance({generation: 1, leader: false}, now).publish.map((r) => r.value));
  const read = [0, 0];
  const pump = (t, i) => {
    for (; read[i] < log.length; read[i]++) log.push(...t.onMessage(Buffer.from(log[read[i]]), now).publish.map((r) => r.value));
  };
  for (let round = 0; round < 3; round++) [a, b].forEach(pump);
  const out = a.addPartitions(Array.from({length: added}, (_, i) => ({token: token(i)})), ++now);
  log.push(...out.publish.map((r) => r.value));
  for (let round = 0; round < 3; round++) [a, b].forEach(pump);
  for (const tok of out.start.slice(0, starts)) {
    log.push(...a.partitionStarted(tok, ++now).publish.map((r) => r.value));
    pump(a, 0);
  }
  const changes = log.slice(read[1]).map((v) => Buffer.from(v));
  return {a, b, changes, now};
}

// The leader adds 2N partitions (N fall to the member) and starts its N one by one; the member's
// time to read those changes.
export function wasmMemberReads(api, n) {
  const {a, b, changes, now} = memberScenario(api, 2 * n);
  const start = process.hrtime.bigint();
  for (const m of changes) b.onMessage(m, now);
  const cpuMs = Number(process.hrtime.bigint() - start) / 1e6;
  a.free();
  b.free();
  return {records: changes.length, cpuMs};
}

// A member's cost to read one small record as the view grows: the leader adds V partitions (half
// fall to the member) and starts 1,000 of its own one by one; each of the member's onMessage calls
// reading one of those changes (a Regular record naming one partition) is timed alone. Returns
// the median and the 90th percentile in µs.
export function wasmMemberReadsOne(api, view, reads = 1_000) {
  const {a, b, changes, now} = memberScenario(api, view, reads);
  const times = changes.map((m) => {
    const start = process.hrtime.bigint();
    b.onMessage(m, now);
    return Number(process.hrtime.bigint() - start) / 1e3;
  });
  a.free();
  b.free();
  times.sort((x, y) => x - y);
  const at = (q) => times[Math.round((times.length - 1) * q)];
  return {records: changes.length, medianUs: at(0.5), p90Us: at(0.9)};
}

const num = (x) => x.toLocaleString('en');
const mb = (b) => (b >= 1e6 ? `${(b / 1e6).toFixed(1)} MB` : `${(b / 1e3).toFixed(1)} KB`);
const secs = (x) => (x >= 1000 ? `${(x / 1000).toFixed(1)} s` : `${x.toFixed(1)} ms`);

export async function run(api, report) {
  const nat = native('bench_sync', ['--partitions', PARTITIONS, '--tasks', TASKS, '--epoch-shapes', SHAPES, '--one-task', ONE_TASK, '--view-sizes', VIEWS, '--json']);
  const w = wasmNewEpoch(api);
  report(
    `sync: the leader's new epoch, ${PARTITIONS.toLocaleString('en')} partitions over ${TASKS.toLocaleString('en')} tasks, ${nat.departed} departed`,
    ['implementation', 'time', 'partitions in the epoch', 'NewEpoch message'],
    [
      ['native Rust (`compute_epoch`)', ms(nat.newEpochMs), nat.partitionsInEpoch.toLocaleString('en'), kb(nat.newEpochMessageBytes)],
      ['wasm via `SyncTask.onMessage` (compute + message to JS)', ms(w.epochMs), w.partitions.toLocaleString('en'), `${kb(w.bytes)} (all chunks)`],
      [`wasm, one ordinary message into the leader's view of ${TASKS} tasks`, ms(w.feedMsPerMessage), '', ''],
    ],
  );
  report(
    'sync: JSON bytes per message, tasks of 100 partitions each',
    ['tasks', 'Regular change, one partition started (partkit: every change)', 'Regular, whole own state (partkit: once per epoch)', 'NewEpoch (partkit: once per rebalance)', 'Spanner connector design (every state, every message)'],
    nat.sizes.map((s) => [String(s.tasks), kb(s.changeBytes), kb(s.regularBytes), kb(s.newEpochBytes), kb(s.everyStateEveryMessageBytes)]),
  );
  const rows = [];
  for (const n of nat.epochs) {
    const x = wasmEpochAtScale(api, n.tasks, n.perTask, true);
    const o = wasmEpochAtScale(api, n.tasks, n.perTask, false);
    rows.push([
      `${num(n.tasks)} × ${num(n.perTask)}`,
      `${ms(n.leaderMs)} / ${ms(x.leaderMs)} / ${ms(o.leaderMs)}`,
      `${ms(n.memberMs)} / ${ms(x.memberMs)} / ${ms(o.memberMs)}`,
      String(n.records),
      `${num(n.largestRecordBytes)} B`,
      mb(n.epochBytes),
    ]);
  }
  report(
    'sync: a new epoch at scale, tasks × partitions per task (native / wasm with records, as KafkaTaskSync / wasm with message objects; the default maxRecordBytes, 900,000 bytes)',
    ['tasks × partitions per task', "leader: compute + publish", 'member: apply', 'records', 'largest record', 'bytes per epoch'],
    rows,
  );
  report(
    'sync: one task adds N partitions, then starts each (its own records read back; native / wasm)',
    ['partitions', 'records', 'bytes published', 'largest record', 'CPU time'],
    nat.oneTask.map((n) => {
      if (n.skipped) return [num(n.partitions), 'skipped: the size before, scaled quadratically, predicts over a minute natively', '', '', ''];
      const x = wasmOneTask(api, n.partitions);
      return [num(n.partitions), num(n.records), mb(n.bytes), `${num(n.largestRecordBytes)} B`, `${secs(n.cpuMs)} / ${secs(x.cpuMs)}`];
    }),
  );
  report(
    "sync: a member reads another task's N start changes (the sender owns N partitions; native / wasm with records)",
    ['partitions the sender owns', 'changes read', 'CPU time', 'per change'],
    (nat.memberReads ?? []).map((n) => {
      const x = wasmMemberReads(api, n.partitions);
      return [num(n.partitions), num(n.records), `${secs(n.cpuMs)} / ${secs(x.cpuMs)}`, `${((n.cpuMs * 1000) / n.records).toFixed(1)} µs / ${((x.cpuMs * 1000) / x.records).toFixed(1)} µs`];
    }),
  );
  const us = (x) => `${x.toFixed(1)} µs`;
  wasmMemberReadsOne(api, 1_000); // (warm-up: the first of a process is the slowest)
  const one = (nat.memberReadsOne ?? []).map((n) => ({n, x: wasmMemberReadsOne(api, n.view)}));
  const [first] = one;
  report(
    'sync: a member reads one small record (a change naming one partition) as the view grows: two tasks, the sender owns half the view; up to 1,000 reads, each timed alone (native / wasm with records)',
    ['partitions in the view', 'records read', 'median per record', '90th percentile', 'median vs the first row'],
    one.map(({n, x}) => [
      num(n.view),
      num(n.records),
      `${us(n.medianUs)} / ${us(x.medianUs)}`,
      `${us(n.p90Us)} / ${us(x.p90Us)}`,
      `${(n.medianUs / first.n.medianUs).toFixed(2)}× / ${(x.medianUs / first.x.medianUs).toFixed(2)}×`,
    ]),
  );
}
