// One connector task in its own process, for the broker tests: a KafkaTaskSync and a simulated
// connector that "reads" each partition it is told to start for `work[token]` ms (default
// `workMs`), finds the partition's children (`tree[token]`) halfway through, and reports every
// start, stop and finish to the parent over IPC with its wall-clock time. With `hold` set, it
// only reports the start and leaves the partition Scheduled (never started, never finished): a
// task that owns thousands of partitions without publishing a state per partition.
//
// Killing this process (SIGKILL) is a task that dies without leaving the group.
'use strict';

const {createHash} = require('node:crypto');
const {Kafka, logLevel} = require('kafkajs');
const {KafkaTaskSync} = require('../../dist/kafka.cjs');

const cfg = JSON.parse(process.env.PARTKIT_TASK_CONFIG);
const send = (m) => process.connected && process.send({task: cfg.taskId, t: Date.now(), ...m});

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
  ...cfg.transport,
});

const timers = new Map();
sync.on('start', (token) => {
  send({ev: 'start', token});
  if (cfg.hold) return;
  const ms = cfg.work?.[token] ?? cfg.workMs;
  const t1 = setTimeout(() => {
    try {
      sync.partitionStarted(token);
    } catch (e) {
      send({ev: 'warn', message: `partitionStarted(${token}): ${e.message}`});
    }
    const kids = cfg.tree?.[token];
    const t2 = setTimeout(() => {
      if (kids && kids.length) sync.addPartitions(kids.map((k) => ({token: k, parents: [token]})));
      const t3 = setTimeout(async () => {
        timers.delete(token);
        sync.partitionFinished(token);
        await sync.flush();
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
    if (m.cmd === 'add') sync.addPartitions(m.specs);
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
