// The sync options as the core resolves them (resolveSyncOptions, SyncTask#options) and the
// retention rule's number (minSyncRetention), which partkit/kafka asks the core for instead of
// keeping copies; `publishAs` read once by the SyncTask constructor.
const partkit = require('partkit');
const kafka = require('partkit/kafka');
const {thrown} = require('./support/thrown');

const {SyncTask, SyncError, resolveSyncOptions, minSyncRetention} = partkit;

/** SyncOptions::default() of src/sync/types.rs, field by field. */
const DEFAULTS = {
  rebalanceTimeout: 120000,
  epochAckTimeout: 30000,
  removalDelay: 7200000,
  tombstoneTtl: 86400000,
  stateRefreshInterval: 300000,
  maxRecordBytes: 900000,
};

describe('resolveSyncOptions', () => {
  test('no options, or empty ones: every default of the core', () => {
    expect(resolveSyncOptions()).toEqual(DEFAULTS);
    expect(resolveSyncOptions({})).toEqual(DEFAULTS);
  });

  test('given fields kept, the others defaulted; publishAs is not a core option', () => {
    expect(resolveSyncOptions({stateRefreshInterval: 1000, maxRecordBytes: 4096, publishAs: 'records'})).toEqual({
      ...DEFAULTS,
      stateRefreshInterval: 1000,
      maxRecordBytes: 4096,
    });
    expect(resolveSyncOptions({removalDelay: undefined})).toEqual(DEFAULTS);
  });

  test('what new SyncTask refuses, it refuses with the same code', () => {
    for (const options of [{rebalanceTimeout: 0}, {stateRefreshInterval: 0}, {maxRecordBytes: 10}, {rebalanceTimeot: 1}, {publishAs: 'json'}, {epochAckTimeout: -1}, {tombstoneTtl: 1.5}]) {
      const task = thrown(() => new SyncTask('t', options));
      const resolved = thrown(() => resolveSyncOptions(options));
      expect(resolved).toBeInstanceOf(SyncError);
      expect([resolved.code, resolved.message]).toEqual([task.code, task.message]);
      expect(resolved.code).toBe('SYNC_INVALID_OPTIONS');
    }
    expect(thrown(() => resolveSyncOptions(null)).code).toBe('INVALID_ARGUMENT');
    expect(thrown(() => resolveSyncOptions([1])).code).toBe('INVALID_ARGUMENT');
  });
});

describe('SyncTask#options', () => {
  test('the options the task runs with, as resolveSyncOptions gives them', () => {
    const given = {epochAckTimeout: 700, stateRefreshInterval: 5000};
    const task = new SyncTask('t1', given);
    expect(task.options()).toEqual(resolveSyncOptions(given));
    expect(new SyncTask('t2').options()).toEqual(DEFAULTS);
    // publishAs: 'records' is read once, by the constructor: outputs give records
    const records = new SyncTask('t3', {...given, publishAs: 'records'});
    expect(records.options()).toEqual(resolveSyncOptions(given));
    const out = records.onRebalance({generation: 1, leader: true, members: ['t3']}, 0);
    const epoch = out.publish.length ? out : records.tick(10_000);
    expect(epoch.publish.length).toBeGreaterThan(0);
    for (const r of epoch.publish) {
      expect(Object.keys(r).sort()).toEqual(['key', 'type', 'value']);
      expect(JSON.parse(r.value).taskID).toBe('t3');
    }
    records.free();
    expect(thrown(() => records.options()).code).toBe('OBJECT_FREED');
  });
});

describe('minSyncRetention', () => {
  test('stateRefreshInterval times the core\'s refreshes (4): 1200000 for the defaults', () => {
    expect(minSyncRetention()).toBe(1200000);
    expect(minSyncRetention({stateRefreshInterval: 1000})).toBe(4000);
    expect(minSyncRetention({stateRefreshInterval: 1000, publishAs: 'records'})).toBe(4000);
    expect(thrown(() => minSyncRetention({stateRefreshInterval: 0})).code).toBe('SYNC_INVALID_OPTIONS');
  });

  test('KafkaTaskSync checks syncRetentionMs against it, and leaves the options to the core', () => {
    const client = {admin: () => ({}), producer: () => ({}), consumer: () => ({})};
    const make = (o) => new kafka.KafkaTaskSync({kafka: client, connectorName: 'c1', taskId: 't1', ...o});
    const syncOptions = {stateRefreshInterval: 1000};
    expect(() => make({syncOptions, syncRetentionMs: minSyncRetention(syncOptions)})).not.toThrow();
    const short = thrown(() => make({syncOptions, syncRetentionMs: minSyncRetention(syncOptions) - 1}));
    expect(short.code).toBe('KAFKA_RETENTION_TOO_SHORT');
    expect(short.message).toContain('(4000)');
    // invalid sync options: the core's error, as new SyncTask gives it
    const bad = thrown(() => make({syncOptions: {stateRefreshInterval: 0}}));
    expect([bad.code, bad.message]).toEqual([
      'SYNC_INVALID_OPTIONS',
      thrown(() => new SyncTask('t1', {stateRefreshInterval: 0})).message,
    ]);
  });
});
