// The topics of KafkaTaskSync: their names, their creation and shape checks through the kafkajs
// admin client, and the sync topic's retention rule, as pure functions of the topic's configs.
//
// The epoch's leader re-publishes the epoch in force as a checkpoint at least every
// `stateRefreshInterval` (a SyncOptions field), and a new task starts reading at the latest clean
// checkpoint (see findEpochStart). For one to be retained at all times the sync topic must keep
// records long enough, and must never drop a record from the middle of the log:
//
//   retention.ms = -1 (infinite) or retention.ms >= minSyncRetention(syncOptions), and
//   cleanup.policy = delete (not compact).
//
// The core owns the rule's number (`minSyncRetention`, a few stateRefreshIntervals: room for a
// checkpoint that is late, its leader died or a rebalance, and for a reader that starts just
// before the oldest one ages out); here `retention` is `{stateRefreshInterval, minRetention}` as
// the core resolved them for the task's syncOptions.
import {SyncError} from '../errors.mjs';
import {describe} from '../kit/args.mjs';

/** `retention.ms` of a sync topic created by KafkaTaskSync, unless `syncRetentionMs` says otherwise: 7 days. */
export const DEFAULT_SYNC_RETENTION_MS = 7 * 24 * 3600 * 1000;
/** The rule in words, for `{stateRefreshInterval, minRetention}` (the core's numbers). */
const rule = ({stateRefreshInterval, minRetention}) =>
  `the sync topic's retention.ms must be -1 (infinite) or at least ${minRetention / stateRefreshInterval} × stateRefreshInterval`;

/** Throws KAFKA_RETENTION_TOO_SHORT when `retentionMs` (a number) breaks the rule of `retention`. */
export function checkRetention(retentionMs, retention, where) {
  const {stateRefreshInterval, minRetention} = retention;
  if (retentionMs === -1 || retentionMs >= minRetention) return;
  throw new SyncError(
    `${where}: retention.ms is ${retentionMs} but stateRefreshInterval is ${stateRefreshInterval}, and ${rule(retention)} (${minRetention}): ` +
      'a new task could find no checkpoint left to start from',
    'KAFKA_RETENTION_TOO_SHORT',
  );
}

/**
 * Checks the configs of the sync topic as `admin.describeConfigs` reported them
 * (`[{configName, configValue}]`). Throws a SyncError when the rule is broken; returns the
 * warnings about what could not be checked (a config the broker did not report, size-based
 * retention). `required`: `{stateRefreshInterval, minRetention}`, the core's numbers for the
 * task's syncOptions.
 */
export function checkSyncTopicConfigs(topic, entries, required) {
  const byName = new Map();
  for (const e of entries ?? []) if (e && typeof e.configName === 'string') byName.set(e.configName, e.configValue);
  const warnings = [];
  const retention = byName.get('retention.ms');
  if (retention == null) {
    warnings.push(`the broker did not report retention.ms of ${topic}: cannot check that ${rule(required)} (${required.minRetention} ms)`);
  } else {
    const ms = Number(retention);
    if (!Number.isSafeInteger(ms)) warnings.push(`retention.ms of ${topic} is ${JSON.stringify(retention)}, not an integer: cannot check that ${rule(required)}`);
    else checkRetention(ms, required, `sync topic ${topic}`);
  }
  const policy = byName.get('cleanup.policy');
  if (policy == null) {
    warnings.push(`the broker did not report cleanup.policy of ${topic}: cannot check that it is delete (not compact)`);
  } else if (String(policy).split(',').map((p) => p.trim()).includes('compact')) {
    throw new SyncError(
      `sync topic ${topic} has cleanup.policy ${policy}; it must be delete: compaction removes records from the middle of the log, which readers take for a hole`,
      'KAFKA_SYNC_TOPIC_COMPACTED',
    );
  }
  const bytes = byName.get('retention.bytes');
  if (bytes != null && Number(bytes) !== -1) {
    warnings.push(`retention.bytes of ${topic} is ${bytes}: size-based retention can delete the latest checkpoint whatever retention.ms says; use -1`);
  }
  return warnings;
}

// ---------------------------------------------------------------------------------------------
// Through the admin client.

const CONFIG_RESOURCE_TOPIC = 2; // kafkajs' ConfigResourceTypes.TOPIC

/** The longest connector name: Kafka topic names have at most 249 characters, and the heartbeat
 * topic adds 20 to it. */
const MAX_CONNECTOR_NAME = 249 - '_connector_heartbeat'.length;

/**
 * Throws INVALID_ARGUMENT unless `value` is a connector name (`name` in the message): a string of
 * 1 to 229 letters, digits, '.', '_' or '-', so that its topic names are Kafka topic names.
 */
export function requireConnectorName(value, name) {
  if (typeof value !== 'string' || !/^[A-Za-z0-9._-]+$/.test(value) || value.length > MAX_CONNECTOR_NAME) {
    throw new SyncError(
      `${name} must be a non-empty string of at most ${MAX_CONNECTOR_NAME} letters, digits, ".", "_" or "-" (its topic names are Kafka topic names), got ${describe(value)}`,
      'INVALID_ARGUMENT',
    );
  }
  return value;
}

/** The names of the topics of a connector. */
export function kafkaTopicNames(connectorName) {
  requireConnectorName(connectorName, 'connectorName');
  return {
    sync: `${connectorName}_connector_sync`,
    heartbeat: `${connectorName}_connector_heartbeat`,
  };
}

/**
 * Creates the sync topic (one partition, `retention.ms` = `syncRetentionMs`, `cleanup.policy`
 * delete) and the heartbeat topic when missing; throws KAFKA_TOPIC_MISSING instead when
 * `createTopics` is false. Another task creating them at the same time is no error.
 */
export async function createMissingTopics(admin, {syncTopic, heartbeatTopic, createTopics, heartbeatPartitions, replicationFactor, syncRetentionMs}) {
  const existing = new Set(await admin.listTopics());
  const wanted = [];
  if (!existing.has(syncTopic)) {
    wanted.push({
      topic: syncTopic,
      numPartitions: 1,
      ...(replicationFactor ? {replicationFactor} : {}),
      configEntries: [
        {name: 'retention.ms', value: String(syncRetentionMs)},
        {name: 'cleanup.policy', value: 'delete'},
      ],
    });
  }
  if (!existing.has(heartbeatTopic)) {
    wanted.push({topic: heartbeatTopic, numPartitions: heartbeatPartitions, ...(replicationFactor ? {replicationFactor} : {})});
  }
  if (wanted.length) {
    if (!createTopics) {
      throw new SyncError(`missing topic(s) ${wanted.map((t) => t.topic).join(', ')} and createTopics is false`, 'KAFKA_TOPIC_MISSING');
    }
    try {
      await admin.createTopics({topics: wanted, waitForLeaders: true});
    } catch (error) {
      // another task may have created it at the same time
      if (error?.type !== 'TOPIC_ALREADY_EXISTS' && !/already exists/i.test(String(error?.message))) throw error;
    }
  }
}

/** Throws if a topic is gone, or the sync topic does not have exactly one partition. */
export async function checkTopicShape(admin, syncTopic, heartbeatTopic, initial) {
  const {topics} = await admin.fetchTopicMetadata({topics: [syncTopic, heartbeatTopic]});
  const byName = new Map(topics.map((t) => [t.name, t]));
  for (const name of [syncTopic, heartbeatTopic]) {
    const t = byName.get(name);
    if (!t || !t.partitions || t.partitions.length === 0) {
      throw new SyncError(`topic ${name} is missing${initial ? '' : ' (deleted while the task ran)'}`, initial ? 'KAFKA_TOPIC_MISSING' : 'KAFKA_TOPIC_LOST');
    }
  }
  const n = byName.get(syncTopic).partitions.length;
  if (n !== 1) throw new SyncError(`sync topic ${syncTopic} has ${n} partitions; it must have exactly 1 (total order)`, 'KAFKA_SYNC_TOPIC_PARTITIONS');
}

/**
 * Reads the sync topic's configs from the broker (describeConfigs) and checks the retention rule:
 * throws a SyncError when it is broken; returns the warnings about what cannot be checked (the
 * broker does not answer describeConfigs, or leaves a config out, as tansu 0.6 does for the ones
 * not set when the topic was created).
 */
export async function checkSyncTopicRetention(admin, syncTopic, retention) {
  let entries;
  try {
    // every config of the topic (no configNames: tansu 0.6 cannot decode a request that names
    // them, and drops the connection)
    const {resources} = await admin.describeConfigs({
      includeSynonyms: false,
      resources: [{type: CONFIG_RESOURCE_TOPIC, name: syncTopic}],
    });
    const r = (resources ?? []).find((x) => x.resourceName === syncTopic) ?? resources?.[0];
    if (!r || (r.errorCode && r.errorCode !== 0)) throw new Error(r ? `error code ${r.errorCode}: ${r.errorMessage}` : 'no answer for the topic');
    entries = r.configEntries ?? [];
  } catch (error) {
    return [`could not read the configs of ${syncTopic} (describeConfigs: ${error?.message ?? error}): the retention rule is not checked`];
  }
  return checkSyncTopicConfigs(syncTopic, entries, retention);
}
