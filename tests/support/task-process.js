// One connector task in its own process, for the broker tests: a KafkaTaskSync and a simulated
// connector that "reads" each partition it is told to start for `work[token]` ms (default
// `workMs`), finds the partition's children (`tree[token]`) halfway through, and reports every
// start, stop and finish to the parent over IPC with its wall-clock time. With `hold` set, it
// only reports the start and leaves the partition Scheduled (never started, never finished): a
// task that owns thousands of partitions without publishing a state per partition.
//
// With `streamMs`, while it reads a partition it also reports a `stream` line every `streamMs` ms,
// each written only if `sync.isRunning(token)` says so right then (the check a connector makes
// before each write): the evidence that a task acts on a partition. `finishing` is reported when
// it calls partitionFinished (before the finish is published); a call the task refuses is a
// `refused` event with the error's code.
//
// Killing this process (SIGKILL) is a task that dies without leaving the group; SIGSTOP freezes
// it.
'use strict';

const {createHash} = require('node:crypto');
const {Kafka, logLevel} = require('kafkajs');
const {KafkaTaskSync} = require('../../dist/kafka.cjs');

const cfg = JSON.parse(process.env.PARTKIT_TASK_CONFIG);
const send = (m) => process.connected && process.send({task: cfg.label ?? cfg.taskId, t: Date.now(), ...m});

const kafka = new Kafka({
  clientId: cfg.taskId,
  brokers: cfg.brokers,
  logLevel: logLevel.NOTHING,
  retry: {initialRetryTime: 100, retries: 8},
});

// partkit's own SyncTask (KafkaTaskSync's default)
const sync = new KafkaTaskSync({
  kafka,
  connectorName: cfg.connectorName,
  taskId: cfg.taskId,
  syncOptions: cfg.syncOptions,
  ...(cfg.connectorId !== undefined ? {connectorId: cfg.connectorId} : {}),
  ...cfg.transport,
});
// the check before each write (isRunning; a build without it: the running set)
const mayWrite = (token) => (typeof sync.isRunning === 'function' ? sync.isRunning(token) : sync.runningPartitions().includes(token));
// a call the task refuses is reported, never thrown out of a timer
const attempt = (what, fn) => {
  try {
    fn();
    return true;
  } catch (e) {
    send({ev: 'refused', what, code: e.code, message: e.message});
    return false;
  }
};

const timers = new Map();
const streams = new Map();
sync.on('start', (token) => {
  send({ev: 'start', token});
  if (cfg.hold) return;
  const ms = cfg.work?.[token] ?? cfg.workMs;
  if (cfg.streamMs) {
    streams.set(token, setInterval(() => {
      if (mayWrite(token)) send({ev: 'stream', token});
    }, cfg.streamMs));
  }
  const t1 = setTimeout(() => {
    attempt(`partitionStarted(${token})`, () => sync.partitionStarted(token));
    const kids = cfg.tree?.[token];
    const t2 = setTimeout(() => {
      if (kids && kids.length && !attempt(`addPartitions(children of ${token})`, () => sync.addPartitions(kids.map((k) => ({token: k, parents: [token]}))))) return;
      const t3 = setTimeout(async () => {
        timers.delete(token);
        clearInterval(streams.get(token));
        streams.delete(token);
        if (!mayWrite(token)) return;
        send({ev: 'finishing', token});
        if (!attempt(`partitionFinished(${token})`, () => sync.partitionFinished(token))) return;
        try {
          await sync.flush();
        } catch (e) {
          send({ev: 'refused', what: `flush after partitionFinished(${token})`, code: e.code, message: e.message});
          return;
        }
        send({ev: 'finish', token});
      }, Math.ceil(ms / 2));
      timers.set(token, t3);
    }, Math.floor(ms / 2));
    timers.set(token, t2);
  }, 20);
  timers.set(token, t1);
});
sync.on('stop', (token) => {
  clearTimeout(timers.get(token));
  timers.delete(token);
  clearInterval(streams.get(token));
  streams.delete(token);
  send({ev: 'stop', token});
});
sync.on('epoch', (epoch) => send({ev: 'epoch', epoch, leader: sync.isLeader()}));
sync.on('rebalance', (e) => send({ev: 'rebalance', generation: e.generation, leader: e.leader, members: e.members}));
sync.on('warning', (message) => send({ev: 'warn', message}));
sync.on('error', (e) => {
  send({ev: 'error', message: e.message, code: e.code});
  setTimeout(() => process.exit(3), 50);
});

function status(withView) {
  const known = sync.knownTasks();
  const out = {
    ev: 'status',
    epoch: sync.epoch(),
    leader: sync.isLeader(),
    running: sync.runningPartitions(),
    owned: sync.ownedPartitions().map((p) => ({token: p.token, state: p.state})),
    known: known.map((s) => s.taskID),
  };
  if (withView) out.view = view(known);
  return out;
}

// What this task knows of every task (whose partitions, in which state, and the shares), as a
// digest: tasks that read the same log have the same one.
function view(known) {
  const tasks = known
    .map((s) => [
      s.taskID,
      s.data.partitions.map((p) => `${p.token}:${p.state}`).sort(),
      s.share.partitions.map((p) => `${p.token}>${p.assignee ?? ''}`).sort(),
    ])
    .sort((x, y) => (x[0] < y[0] ? -1 : 1));
  const partitions = tasks.reduce((n, t) => n + t[1].length, 0);
  return {digest: createHash('sha256').update(JSON.stringify(tasks)).digest('hex').slice(0, 16), tasks: tasks.length, partitions};
}

process.on('message', async (m) => {
  try {
    if (m.cmd === 'add') attempt('addPartitions', () => sync.addPartitions(m.specs));
    else if (m.cmd === 'status') send(status(m.view));
    else if (m.cmd === 'close') {
      await sync.close();
      send({ev: 'closed'});
      setTimeout(() => process.exit(0), 20);
    }
  } catch (e) {
    send({ev: 'error', message: `command ${m.cmd}: ${e.message}`});
  }
});
process.on('disconnect', () => process.exit(0));

sync.start().then(
  () => send({ev: 'ready'}),
  (e) => {
    send({ev: 'error', message: `start: ${e.message}`, code: e.code});
    setTimeout(() => process.exit(2), 50);
  },
);
