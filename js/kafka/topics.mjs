// The sync topic's retention rule, as pure functions of the topic's configs.
//
// The epoch's leader re-publishes the epoch in force as a checkpoint at least every
// `stateRefreshInterval` (a SyncOptions field), and a new task starts reading at the latest clean
// checkpoint (see findEpochStart). For one to be retained at all times the sync topic must keep
// records long enough, and must never drop a record from the middle of the log:
//
//   retention.ms = -1 (infinite) or retention.ms >= 4 × stateRefreshInterval, and
//   cleanup.policy = delete (not compact).
//
// Four intervals leave room for a checkpoint that is late (its leader died, a rebalance) and for
// a reader that starts just before the oldest one ages out.
import {SyncError} from '../errors.mjs';

/** SyncOptions' `stateRefreshInterval` default (ms): the core's. */
export const DEFAULT_STATE_REFRESH_INTERVAL = 300000;
/** `retention.ms` of a sync topic created by KafkaTaskSync, unless `syncRetentionMs` says otherwise: 7 days. */
export const DEFAULT_SYNC_RETENTION_MS = 7 * 24 * 3600 * 1000;
/** retention.ms must be at least this many stateRefreshIntervals. */
export const RETENTION_FACTOR = 4;

const RULE = `the sync topic's retention.ms must be -1 (infinite) or at least ${RETENTION_FACTOR} × stateRefreshInterval`;

/** Throws KAFKA_RETENTION_TOO_SHORT when `retentionMs` (a number) breaks the rule. */
export function checkRetention(retentionMs, stateRefreshInterval, where) {
  if (retentionMs === -1 || retentionMs >= RETENTION_FACTOR * stateRefreshInterval) return;
  throw new SyncError(
    `${where}: retention.ms is ${retentionMs} but stateRefreshInterval is ${stateRefreshInterval}, and ${RULE} (${RETENTION_FACTOR * stateRefreshInterval}): ` +
      'a new task could find no checkpoint left to start from',
    'KAFKA_RETENTION_TOO_SHORT',
  );
}

/**
 * Checks the configs of the sync topic as `admin.describeConfigs` reported them
 * (`[{configName, configValue}]`). Throws a SyncError when the rule is broken; returns the
 * warnings about what could not be checked (a config the broker did not report, size-based
 * retention).
 */
export function checkSyncTopicConfigs(topic, entries, stateRefreshInterval) {
  const byName = new Map();
  for (const e of entries ?? []) if (e && typeof e.configName === 'string') byName.set(e.configName, e.configValue);
  const warnings = [];
  const retention = byName.get('retention.ms');
  if (retention == null) {
    warnings.push(`the broker did not report retention.ms of ${topic}: cannot check that ${RULE} (${RETENTION_FACTOR * stateRefreshInterval} ms)`);
  } else {
    const ms = Number(retention);
    if (!Number.isSafeInteger(ms)) warnings.push(`retention.ms of ${topic} is ${JSON.stringify(retention)}, not an integer: cannot check that ${RULE}`);
    else checkRetention(ms, stateRefreshInterval, `sync topic ${topic}`);
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
