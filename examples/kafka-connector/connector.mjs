#!/usr/bin/env node
// A connector skeleton that runs as one of N tasks against an existing Kafka cluster.
//
//   KAFKA_BROKERS=host1:9092,host2:9092 CONNECTOR_NAME=orders TASKS=3 node node_modules/partkit/examples/kafka-connector/connector.mjs
//
// Start the same command N times (N processes, N hosts, N containers): the tasks find each other
// through the Kafka consumer group `CONNECTOR_NAME`, elect a leader, and share the partitions of
// the source between them. Kill one and, after the session timeout, its partitions move to the
// others; start another and it gets work. Ctrl-C leaves the group cleanly, and the others take
// its partitions over at once.
//
// The initial partitions: the leader adds them, once, when the connector has none yet, and only
// once TASKS tasks are in its epoch (or SEED_AFTER_MS passed): a leader that seeds alone owns
// everything it found until the next rebalance spreads the new work, so waiting for the group
// spreads the initial partitions from the start.
//
// The source here is simulated: partition `root` splits into children, each reads for a while.
// Replace `readPartition` with the real reading (a change stream, a paginated API, ...).
import {randomUUID} from 'node:crypto';
import {hostname} from 'node:os';
import {Kafka, logLevel} from 'kafkajs';
import {KafkaTaskSync} from 'partkit/kafka';

const brokers = (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
const connectorName = process.env.CONNECTOR_NAME ?? 'example';
// What tells this connector from another one that (by mistake) uses the same name: the group
// refuses a task whose connector announces another id (KAFKA_CONNECTOR_MISMATCH).
const connectorId = process.env.CONNECTOR_ID ?? 'example-v1';
const expectedTasks = Number(process.env.TASKS ?? 1);
const seedAfterMs = Number(process.env.SEED_AFTER_MS ?? 30000);
// A task id is unique per process lifetime: a restarted task is a new task.
const taskId = `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
const log = (...a) => console.log(new Date().toISOString(), taskId, ...a);

const kafka = new Kafka({clientId: `${connectorName}-${taskId}`, brokers, logLevel: logLevel.WARN});
const sync = new KafkaTaskSync({kafka, connectorName, connectorId, taskId});

// --- the connector's side: read what the protocol says to read ---------------------------------
const reading = new Map(); // token -> AbortController

async function readPartition(token, signal) {
  // Simulated source: `root` has three children, children have none; each read takes 2-5 s.
  for (let i = 0; i < 4; i++) {
    await sleep(500 + Math.random() * 750, signal);
    // Before each write: is the partition still this task's? After a freeze (SIGSTOP, a
    // suspended VM) the first check stops every partition and fails the task: nothing is
    // written for a partition another task may run by now.
    if (!sync.isRunning(token)) throw Object.assign(new Error('stopped'), {name: 'AbortError'});
    log('read a page of', token);
  }
  if (token === 'root') sync.addPartitions(['a', 'b', 'c'].map((c) => ({token: `root/${c}`, parents: ['root']})));
  await sleep(1000, signal);
}

sync.on('start', (token) => {
  const ctl = new AbortController();
  reading.set(token, ctl);
  log('start', token);
  sync.partitionStarted(token);
  readPartition(token, ctl.signal).then(
    () => {
      reading.delete(token);
      try {
        // refused (a SyncError) when the task lost its session meanwhile: never silently dropped
        sync.partitionFinished(token);
        log('finished', token);
      } catch (e) {
        log('could not report', token, 'finished:', e.code);
      }
    },
    (e) => {
      if (e.name !== 'AbortError') log('read failed', token, e);
    },
  );
});

// Ownership moved away (or this task is closing): stop reading at once. Returning a promise makes
// close() wait for it before leaving the group.
sync.on('stop', (token) => {
  log('stop', token);
  reading.get(token)?.abort();
  reading.delete(token);
});

// The initial partition(s): added by the leader of an epoch of at least `expectedTasks` tasks (or
// after `seedAfterMs`), when the connector has none yet. A later leader that sees any partition
// in the state does nothing (and known tokens are ignored anyway).
const startedAt = Date.now();
function seed() {
  if (sync.state !== 'running' || !sync.isLeader()) return;
  const known = sync.knownTasks().some((t) => t.data.partitions.length || t.share.partitions.length);
  if (known) return;
  if (sync.epochMembers().length < expectedTasks && Date.now() - startedAt < seedAfterMs) return;
  log(`seeding the initial partition (${sync.epochMembers().length} task(s) in the epoch)`);
  sync.addPartitions([{token: 'root', parents: []}]);
}
sync.on('epoch', (epoch) => {
  log('epoch', epoch, sync.isLeader() ? '(leader)' : '', `members: ${sync.epochMembers().join(', ')}`);
  seed();
});
const seeding = setInterval(seed, 1000);

// A lost topic, a session lost to a freeze (KAFKA_SESSION_LOST) or to a broker outage longer than
// outageTimeout, a refusal by the group (KAFKA_DUPLICATE_TASK_ID, KAFKA_CONNECTOR_MISMATCH), a
// hole in the sync topic (KAFKA_TASK_FENCED): every partition was already stopped. Exit so that
// the process supervisor restarts the task (with a new task id). A shorter broker outage is
// ridden through: the task stops its partitions, reconnects (as `<taskId>~1`) and carries on.
sync.on('error', (e) => {
  log('fatal', e.code, e.message);
  process.exit(1);
});

await sync.start();
log(`joined ${connectorName} (sync topic ${sync.syncTopic}, heartbeat group ${sync.groupId})`);

for (const sig of ['SIGINT', 'SIGTERM']) {
  process.once(sig, async () => {
    log('leaving');
    clearInterval(seeding);
    await sync.close();
    process.exit(0);
  });
}

function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(t);
      reject(Object.assign(new Error('aborted'), {name: 'AbortError'}));
    });
  });
}
