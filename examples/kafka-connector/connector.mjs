#!/usr/bin/env node
// A connector skeleton that runs as one of N tasks against an existing Kafka cluster.
//
//   KAFKA_BROKERS=host1:9092,host2:9092 CONNECTOR_NAME=orders node examples/kafka-connector/connector.mjs
//
// Start the same command N times (N processes, N hosts, N containers): the tasks find each other
// through the Kafka consumer group `CONNECTOR_NAME`, elect a leader, and share the partitions of
// the source between them. Kill one and, after the session timeout, its partitions move to the
// others; start another and it gets work. Ctrl-C leaves the group cleanly.
//
// The source here is simulated: partition `root` splits into children, each reads for a while.
// Replace `readPartition` with the real reading (a change stream, a paginated API, ...).
import {randomUUID} from 'node:crypto';
import {hostname} from 'node:os';
import {Kafka, logLevel} from 'kafkajs';
import {KafkaTaskSync} from 'partkit/kafka';

const brokers = (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
const connectorName = process.env.CONNECTOR_NAME ?? 'example';
// A task id is unique per process lifetime: a restarted task is a new task.
const taskId = `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
const log = (...a) => console.log(new Date().toISOString(), taskId, ...a);

const kafka = new Kafka({clientId: `${connectorName}-${taskId}`, brokers, logLevel: logLevel.WARN});
const sync = new KafkaTaskSync({kafka, connectorName, taskId});

// --- the connector's side: read what the protocol says to read ---------------------------------
const reading = new Map(); // token -> AbortController

async function readPartition(token, signal) {
  // Simulated source: `root` has three children, children have none; each read takes 2-5 s.
  await sleep(2000 + Math.random() * 3000, signal);
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
      log('finished', token);
      sync.partitionFinished(token);
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

// The first leader of the connector creates the initial partition(s). Known tokens are ignored,
// so a later leader that sees `root` anywhere in the state does nothing.
sync.on('epoch', (epoch) => {
  log('epoch', epoch, sync.isLeader() ? '(leader)' : '');
  const known = sync.knownTasks().some((t) => t.data.partitions.length || t.share.partitions.length);
  if (sync.isLeader() && !known) sync.addPartitions([{token: 'root', parents: []}]);
});

// A lost topic, a crashed client, a failed publish, a hole in the sync topic (KAFKA_TASK_FENCED):
// every partition was already stopped. Exit so that the process supervisor restarts the task
// (with a new task id).
sync.on('error', (e) => {
  log('fatal', e.code, e.message);
  process.exit(1);
});

await sync.start();
log(`joined ${connectorName} (sync topic ${sync.syncTopic}, heartbeat group ${sync.groupId})`);

for (const sig of ['SIGINT', 'SIGTERM']) {
  process.once(sig, async () => {
    log('leaving');
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
