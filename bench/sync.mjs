// Task coordination: the leader's new-epoch computation for 100k partitions over 1,000 tasks (a
// tenth of them departed, their partitions reassigned to the least-loaded survivors) natively
// (`compute_epoch`, example bench_sync) and through the JS API (wasm: the onMessage call that
// completes the answers computes the epoch and returns the NewEpoch message as JS objects); and
// bytes per message as the number of tasks grows (partkit sends only the sender's own state on
// every change and every state once per rebalance; the Debezium Spanner connector's
// design sends every state in every message).
import {native} from './_util.mjs';

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
  const epoch = result.publish.find((m) => m.type === 'NewEpoch');
  if (!epoch) throw new Error('bench: the last answer did not produce the new epoch');
  const count = epoch.connectorState.reduce((n, s) => n + s.data.partitions.length, 0);
  leader.free();
  return {epochMs, feedMsPerMessage: feedMs / (TASKS - 1), partitions: count, bytes: JSON.stringify(epoch).length};
}

export async function run(api, report) {
  const nat = native('bench_sync', ['--partitions', PARTITIONS, '--tasks', TASKS, '--json']);
  const w = wasmNewEpoch(api);
  report(
    `sync: the leader's new epoch, ${PARTITIONS.toLocaleString('en')} partitions over ${TASKS.toLocaleString('en')} tasks, ${nat.departed} departed`,
    ['implementation', 'time', 'partitions in the epoch', 'NewEpoch message'],
    [
      ['native Rust (`compute_epoch`)', ms(nat.newEpochMs), nat.partitionsInEpoch.toLocaleString('en'), kb(nat.newEpochMessageBytes)],
      ['wasm via `SyncTask.onMessage` (compute + message to JS)', ms(w.epochMs), w.partitions.toLocaleString('en'), kb(w.bytes)],
      [`wasm, one ordinary message into the leader's view of ${TASKS} tasks`, ms(w.feedMsPerMessage), '', ''],
    ],
  );
  report(
    'sync: JSON bytes per message, tasks of 100 partitions each',
    ['tasks', 'Regular (partkit: every change)', 'NewEpoch (partkit: once per rebalance)', 'Spanner connector design (every state, every message)'],
    nat.sizes.map((s) => [String(s.tasks), kb(s.regularBytes), kb(s.newEpochBytes), kb(s.everyStateEveryMessageBytes)]),
  );
}
