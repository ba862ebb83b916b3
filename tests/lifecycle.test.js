// Partition lifecycle through the public JS API: the scenarios of DataBuild's partition-identity
// design, the derivative-want link, every refusal (snapshot identical before/after), replay with
// eventIndex on both wasm paths, snapshots, argument checks, fast-check random event sequences
// with invariants after every step, derivePartitionUuid against an independent SHA-256 (Node's crypto), and the CLI.
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const {spawnSync} = require('node:child_process');
const fc = require('fast-check');
const partkit = require('partkit');
const {thrown} = require('./support/thrown');

const {BuildState, derivePartitionUuid, LifecycleError, PartkitError} = partkit;
const CLI = path.join(__dirname, '..', 'js', 'cli.mjs');

// ---------------------------------------------------------------- helpers

/** The documented derivation, written from its description with Node's crypto. */
function referenceUuid(jobRunId, ref) {
  const job = Buffer.from(jobRunId, 'utf8');
  const len = Buffer.alloc(8);
  len.writeBigUInt64BE(BigInt(job.length));
  const b = crypto.createHash('sha256').update(len).update(job).update(Buffer.from(ref, 'utf8')).digest().subarray(0, 16);
  b[6] = (b[6] & 0x0f) | 0x80;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** A state plus its accepted log and a clock; checks invariants after each accepted event. */
class Harness {
  constructor() {
    this.state = new BuildState();
    this.log = [];
    this.now = 1_700_000_000_000;
  }
  stamp(event) {
    this.now += 1000;
    return {...event, timestamp: this.now};
  }
  ok(event) {
    const e = this.stamp(event);
    const transitions = this.state.apply(e);
    this.state.checkInvariants();
    this.log.push(e);
    return transitions;
  }
  refused(event, code) {
    const e = this.stamp(event);
    const before = this.state.snapshot();
    const error = thrown(() => this.state.apply(e));
    expect(error).toBeInstanceOf(LifecycleError);
    expect(error).toBeInstanceOf(PartkitError);
    expect(error.name).toBe('LifecycleError');
    expect(error.code).toBe(code);
    expect(this.state.snapshot()).toEqual(before);
    this.state.checkInvariants();
    return error;
  }
  want(id) {
    return this.state.want(id).state;
  }
  canonical(ref) {
    return this.state.canonicalPartition(ref).state;
  }
  schedulable() {
    return this.state.schedulableWants().map((w) => w.wantId);
  }
  checkReplayAndSnapshot() {
    const live = this.state.snapshot();
    expect(BuildState.replay(this.log).snapshot()).toEqual(live);
    expect(BuildState.fromSnapshot(JSON.parse(JSON.stringify(live))).snapshot()).toEqual(live);
  }
}

const want = (wantId, partitions, extra = {}) => ({type: 'WantCreate', wantId, partitions, ...extra});
const buffer = (jobRunId, buildingPartitions) => ({type: 'JobRunBuffer', jobRunId, buildingPartitions});
const job = (type, jobRunId) => ({type, jobRunId});
const depMiss = (jobRunId, impacted, missing) => ({type: 'JobRunDepMiss', jobRunId, missingDeps: [{impacted, missing}]});
const taint = (taintId, partitions) => ({type: 'TaintCreate', taintId, partitions});
const wantT = (wantId, from, to) => ({kind: 'want', wantId, from, to});
const partT = (jobRunId, ref, from, to) => ({kind: 'partition', uuid: derivePartitionUuid(jobRunId, ref), ref, from, to});
const jobT = (jobRunId, from, to) => ({kind: 'jobRun', jobRunId, from, to});

// ------------------------------------------ the scenarios of DataBuild's partition-identity design

describe('the scenarios of DataBuild\'s partition-identity design', () => {
  test('multi-want bug reproduction: every want follows the one canonical partition', () => {
    const h = new Harness();
    expect(h.ok(want('w1', ['data/beta']))).toEqual([wantT('w1', 'New', 'Idle')]);
    expect(h.ok(buffer('j1', ['data/beta']))).toEqual([
      jobT('j1', null, 'Queued'),
      partT('j1', 'data/beta', null, 'Building'),
      wantT('w1', 'Idle', 'Building'),
    ]);
    for (const w of ['w2', 'w3', 'w4']) expect(h.ok(want(w, ['data/beta']))).toEqual([wantT(w, 'New', 'Building')]);
    expect(h.state.wantsForPartition('data/beta')).toEqual(['w1', 'w2', 'w3', 'w4']);
    const t = h.ok(depMiss('j1', ['data/beta'], ['data/alpha']));
    expect(t.slice(0, 2)).toEqual([jobT('j1', 'Queued', 'DepMissed'), partT('j1', 'data/beta', 'Building', 'UpstreamBuilding')]);
    for (const w of ['w1', 'w2', 'w3', 'w4']) expect(h.want(w)).toBe('UpstreamBuilding');
    expect(h.state.canonicalPartition('data/beta')).toMatchObject({
      uuid: derivePartitionUuid('j1', 'data/beta'),
      state: 'UpstreamBuilding',
      missingDeps: ['data/alpha'],
    });
    expect(h.ok(want('d1', ['data/alpha'], {sourceJobRunId: 'j1'}))).toEqual([wantT('d1', 'New', 'Idle')]);
    expect(h.schedulable()).toEqual(['d1']);
    h.refused(buffer('j2', ['data/beta']), 'PARTITION_LEASED');
    h.checkReplayAndSnapshot();
  });

  test('rebuild after taint: tainted instance stays canonical until replaced, then is history', () => {
    const h = new Harness();
    h.ok(want('w1', ['data/beta'], {ttlSeconds: 86400}));
    h.ok(buffer('j1', ['data/beta']));
    h.ok(job('JobRunSuccess', 'j1'));
    expect(h.ok(taint('t1', ['data/beta']))).toEqual([
      partT('j1', 'data/beta', 'Live', 'Tainted'),
      wantT('w1', 'Successful', 'Idle'),
    ]);
    expect(h.state.canonicalPartition('data/beta')).toMatchObject({state: 'Tainted', taintId: 't1'});
    expect(h.schedulable()).toEqual(['w1']);
    expect(h.ok(want('w2', ['data/beta']))).toEqual([wantT('w2', 'New', 'Idle')]);
    h.ok(buffer('j2', ['data/beta']));
    const uuid1 = derivePartitionUuid('j1', 'data/beta');
    const uuid2 = derivePartitionUuid('j2', 'data/beta');
    expect(h.state.canonicalPartition('data/beta')).toMatchObject({uuid: uuid2, previousUuid: uuid1, state: 'Building'});
    h.ok(job('JobRunSuccess', 'j2'));
    expect([h.want('w1'), h.want('w2')]).toEqual(['Successful', 'Successful']);
    expect(h.state.partitionHistory('data/beta').map((p) => [p.uuid, p.state])).toEqual([[uuid1, 'Tainted'], [uuid2, 'Live']]);
    expect(h.state.partition(uuid1.toUpperCase())).toMatchObject({jobRunId: 'j1', state: 'Tainted'});
    expect(h.state.taint('t1').taintedUuids).toEqual([uuid1]);
    h.checkReplayAndSnapshot();
  });

  test('full lifecycle: heartbeat, partial success, rebuild after expiry', () => {
    const h = new Harness();
    h.ok(want('w', ['a', 'b'], {dataTimestamp: 1_699_999_000_000, slaSeconds: 3600, comment: 'daily'}));
    h.ok({...buffer('j1', ['a']), jobLabel: '//jobs:a'});
    expect(h.ok(job('JobRunHeartbeat', 'j1'))).toEqual([jobT('j1', 'Queued', 'Running')]);
    expect(h.ok(job('JobRunHeartbeat', 'j1'))).toEqual([]);
    expect(h.ok(job('JobRunSuccess', 'j1'))).toEqual([
      jobT('j1', 'Running', 'Succeeded'),
      partT('j1', 'a', 'Building', 'Live'),
      wantT('w', 'Building', 'Idle'),
    ]);
    h.ok(buffer('j2', ['b']));
    h.ok(job('JobRunSuccess', 'j2'));
    expect(h.state.want('w')).toMatchObject({state: 'Successful', comment: 'daily', slaSeconds: 3600});
    expect(h.state.jobRun('j1')).toMatchObject({
      state: 'Succeeded',
      jobLabel: '//jobs:a',
      partitionUuids: [derivePartitionUuid('j1', 'a')],
      partitionRefs: ['a'],
    });
    h.ok(taint('expire-a', ['a']));
    h.ok(buffer('j3', ['a']));
    h.ok(job('JobRunSuccess', 'j3'));
    expect(h.want('w')).toBe('Successful');
    expect(h.state.partitionHistory('a')).toHaveLength(2);
    h.checkReplayAndSnapshot();
  });

  test('dep-miss chain with retry and fresh UUIDs', () => {
    const h = new Harness();
    h.ok(want('wC', ['C']));
    h.ok(buffer('jC1', ['C']));
    h.ok(depMiss('jC1', ['C'], ['B']));
    h.ok(want('wB', ['B'], {sourceJobRunId: 'jC1'}));
    h.ok(buffer('jB1', ['B']));
    h.ok(depMiss('jB1', ['B'], ['A']));
    h.ok(want('wA', ['A'], {sourceJobRunId: 'jB1'}));
    h.ok(buffer('jA1', ['A']));
    expect(h.ok(job('JobRunSuccess', 'jA1'))).toEqual([
      jobT('jA1', 'Queued', 'Succeeded'),
      partT('jA1', 'A', 'Building', 'Live'),
      partT('jB1', 'B', 'UpstreamBuilding', 'UpForRetry'),
      wantT('wB', 'UpstreamBuilding', 'Idle'),
      wantT('wA', 'Building', 'Successful'),
    ]);
    expect(h.canonical('C')).toBe('UpstreamBuilding');
    h.ok(buffer('jB2', ['B']));
    h.ok(job('JobRunSuccess', 'jB2'));
    expect(h.canonical('C')).toBe('UpForRetry');
    expect(h.schedulable()).toEqual(['wC']);
    h.ok(buffer('jC2', ['C']));
    h.ok(job('JobRunSuccess', 'jC2'));
    expect(h.want('wC')).toBe('Successful');
    expect(h.state.partitionHistory('B').map((p) => p.uuid)).toEqual([derivePartitionUuid('jB1', 'B'), derivePartitionUuid('jB2', 'B')]);
    h.checkReplayAndSnapshot();
  });

  test('upstream failure propagates over several levels', () => {
    const h = new Harness();
    const chain = ['D', 'C', 'B', 'A'];
    h.ok(want('wD', ['D']));
    for (let i = 0; i < 3; i++) {
      h.ok(buffer(`j${chain[i]}`, [chain[i]]));
      h.ok(depMiss(`j${chain[i]}`, [chain[i]], [chain[i + 1]]));
      h.ok(want(`w${chain[i + 1]}`, [chain[i + 1]], {sourceJobRunId: `j${chain[i]}`}));
    }
    h.ok(buffer('jA', ['A']));
    const t = h.ok({type: 'JobRunFailure', jobRunId: 'jA', reason: 'exit 1'});
    expect(t.filter((x) => x.kind === 'partition').map((x) => [x.ref, x.to])).toEqual([
      ['A', 'Failed'],
      ['B', 'UpstreamFailed'],
      ['C', 'UpstreamFailed'],
      ['D', 'UpstreamFailed'],
    ]);
    expect(chain.map((r) => h.want(`w${r}`))).toEqual(['UpstreamFailed', 'UpstreamFailed', 'UpstreamFailed', 'Failed']);
    expect(h.state.canonicalPartition('D')).toMatchObject({state: 'UpstreamFailed', failedUpstream: 'C'});
    expect(h.state.jobRun('jA')).toMatchObject({state: 'Failed', reason: 'exit 1'});
    expect(h.ok(want('late', ['D']))).toEqual([wantT('late', 'New', 'UpstreamFailed')]);
    expect(h.schedulable()).toEqual([]);
    h.checkReplayAndSnapshot();
  });

  test('wants arriving during UpstreamBuilding wait; during UpForRetry they are schedulable', () => {
    const h = new Harness();
    h.ok(buffer('j1', ['down']));
    h.ok(depMiss('j1', ['down'], ['up']));
    expect(h.ok(want('w1', ['down']))).toEqual([wantT('w1', 'New', 'UpstreamBuilding')]);
    h.ok(buffer('j2', ['up']));
    h.ok(job('JobRunSuccess', 'j2'));
    expect(h.canonical('down')).toBe('UpForRetry');
    expect(h.ok(want('w2', ['down']))).toEqual([wantT('w2', 'New', 'Idle')]);
    expect(h.schedulable()).toEqual(['w1', 'w2']);
    h.checkReplayAndSnapshot();
  });
});

describe('derivative wants', () => {
  test('sourceJobRunId links a derivative want to the dep-missed job run, both ways', () => {
    const h = new Harness();
    h.ok(want('w', ['out']));
    h.ok(buffer('j', ['out']));
    h.refused(want('d0', ['in1'], {sourceJobRunId: 'j'}), 'JOB_RUN_WRONG_STATE');
    h.ok({type: 'JobRunDepMiss', jobRunId: 'j', missingDeps: [{impacted: ['out'], missing: ['in1', 'in2']}]});
    h.refused(want('d0', ['in1'], {sourceJobRunId: 'nope'}), 'UNKNOWN_JOB_RUN');
    h.refused(want('d0', ['elsewhere'], {sourceJobRunId: 'j'}), 'INVALID_EVENT');
    h.ok(want('d1', ['in1'], {sourceJobRunId: 'j'}));
    h.ok(want('d2', ['in1', 'in2'], {sourceJobRunId: 'j'}));
    expect(h.state.want('d1').sourceJobRunId).toBe('j');
    expect(h.state.want('w').sourceJobRunId).toBeUndefined();
    expect(h.state.jobRun('j').derivativeWantIds).toEqual(['d1', 'd2']);
    // From the original want: ref → canonical instance → its job run → derivative wants.
    const instance = h.state.canonicalPartition(h.state.want('w').partitions[0]);
    expect(h.state.jobRun(instance.jobRunId).derivativeWantIds).toEqual(['d1', 'd2']);
    h.checkReplayAndSnapshot();
  });
});

describe('refused events', () => {
  test('every refusal code, with the snapshot identical before and after', () => {
    const h = new Harness();
    h.ok(want('w1', ['a']));
    h.ok(buffer('j1', ['a', 'b']));
    h.refused(want('w1', ['z']), 'DUPLICATE_WANT');
    h.refused({type: 'WantCancel', wantId: 'nope'}, 'UNKNOWN_WANT');
    h.refused(job('JobRunSuccess', 'nope'), 'UNKNOWN_JOB_RUN');
    h.refused(buffer('j1', ['c']), 'DUPLICATE_JOB_RUN');
    h.refused(buffer('j2', ['c', 'd', 'c']), 'DUPLICATE_REF_IN_JOB');
    h.refused(buffer('j2', ['c', 'b']), 'PARTITION_LEASED');
    h.refused(depMiss('j1', ['a'], ['b']), 'DEPENDENCY_CYCLE');
    h.refused(depMiss('j1', ['zz'], ['c']), 'INVALID_EVENT');
    h.ok(depMiss('j1', ['a'], ['c']));
    h.refused(job('JobRunHeartbeat', 'j1'), 'JOB_RUN_WRONG_STATE');
    h.ok(buffer('jc', ['c']));
    h.refused(depMiss('jc', ['c'], ['a']), 'DEPENDENCY_CYCLE');
    h.ok({type: 'WantCancel', wantId: 'w1'});
    h.refused({type: 'WantCancel', wantId: 'w1'}, 'WANT_WRONG_STATE');
    h.ok(taint('t1', ['a']));
    h.refused(taint('t1', ['b']), 'DUPLICATE_TAINT');
    h.checkReplayAndSnapshot();
  });

  test('malformed events are INVALID_EVENT and change nothing', () => {
    const h = new Harness();
    h.ok(want('w1', ['a']));
    const bad = [
      {type: 'Nope'},
      {type: 'WantCreate', wantId: 'w2'},
      {type: 'WantCreate', wantId: 'w2', partitions: []},
      {type: 'WantCreate', wantId: 'w2', partitions: ['a', 'a']},
      {type: 'WantCreate', wantId: '', partitions: ['a']},
      {type: 'WantCreate', wantId: 'w2', partitions: [''], comment: 'x'},
      {type: 'WantCreate', wantId: 'w2', partitions: ['a'], ttlSeconds: -1},
      {type: 'WantCreate', wantId: 'w2', partitions: ['a'], ttlSeconds: 1.5},
      {type: 'WantCreate', wantId: 'w2', partitions: ['a'], ttlSeconds: 2 ** 53},
      {type: 'WantCreate', wantId: 'w2', partitions: ['a'], wantID: 'typo'},
      {type: 'WantCreate', wantId: 7, partitions: ['a']},
      {type: 'JobRunBuffer', jobRunId: 'j', buildingPartitions: []},
      {type: 'JobRunDepMiss', jobRunId: 'j', missingDeps: []},
    ];
    for (const event of bad) h.refused(event, 'INVALID_EVENT');
    for (const notAnObject of [null, undefined, 42, 'WantCreate', [1, 2]]) {
      const before = h.state.snapshot();
      expect(thrown(() => h.state.apply(notAnObject)).code).toBe('INVALID_EVENT');
      expect(h.state.snapshot()).toEqual(before);
    }
    expect(thrown(() => h.state.apply({type: 'WantCancel', wantId: 'w1'})).code).toBe('INVALID_EVENT'); // no timestamp
  });

  test('an event stamped before the last applied one is TIMESTAMP_NOT_MONOTONIC; an equal stamp is fine', () => {
    const h = new Harness();
    h.ok(want('w1', ['a']));
    h.ok(buffer('j1', ['a']));
    const last = h.now;
    const before = h.state.snapshot();
    const error = thrown(() => h.state.apply({...job('JobRunSuccess', 'j1'), timestamp: last - 1}));
    expect(error).toBeInstanceOf(LifecycleError);
    expect(error.code).toBe('TIMESTAMP_NOT_MONOTONIC');
    expect(error.message).toBe(`timestamp ${last - 1} is earlier than ${last}, the timestamp of the last applied event`);
    expect(h.state.snapshot()).toEqual(before);
    h.state.checkInvariants();
    // Checked right after the shape: an early event that is also wrong otherwise names the time.
    expect(thrown(() => h.state.apply({...job('JobRunSuccess', 'nope'), timestamp: 0})).code).toBe('TIMESTAMP_NOT_MONOTONIC');
    expect(h.state.snapshot()).toEqual(before);
    const same = {...job('JobRunSuccess', 'j1'), timestamp: last};
    h.state.apply(same);
    h.log.push(same);
    expect(h.state.want('w1')).toMatchObject({state: 'Successful', updatedAt: last});
    // Replay reports the index; a restored snapshot keeps the clock.
    const late = {...taint('t1', ['a']), timestamp: last - 1};
    const replayError = thrown(() => BuildState.replay([...h.log, late]));
    expect([replayError.code, replayError.eventIndex]).toEqual(['TIMESTAMP_NOT_MONOTONIC', h.log.length]);
    const restored = BuildState.fromSnapshot(h.state.snapshot());
    expect(thrown(() => restored.apply(late)).code).toBe('TIMESTAMP_NOT_MONOTONIC');
    restored.apply({...late, timestamp: last});
    h.checkReplayAndSnapshot();
  });

  test('non-string ids and non-array logs are INVALID_ARGUMENT', () => {
    const s = new BuildState();
    for (const fn of [
      () => s.canonicalPartition(1),
      () => s.partition(null),
      () => s.partitionHistory(undefined),
      () => s.want({}),
      () => s.wantsForPartition([]),
      () => s.jobRun(2),
      () => BuildState.replay('[]'),
      () => BuildState.fromSnapshot(null),
      () => derivePartitionUuid('j', 5),
    ]) {
      const error = thrown(fn);
      expect(error).toBeInstanceOf(LifecycleError);
      expect(error.code).toBe('INVALID_ARGUMENT');
    }
    expect(s.partition('not-a-uuid')).toBeUndefined();
    expect(s.canonicalPartition('never')).toBeUndefined();
    expect(s.partitionHistory('never')).toEqual([]);
    expect(s.wantsForPartition('never')).toEqual([]);
  });
});

describe('want TTL and SLA (no clock in the core: the caller passes now)', () => {
  /** A state fed events with explicit timestamps; invariants checked after each. */
  function timed(events) {
    const state = new BuildState();
    for (const [timestamp, event] of events) {
      state.apply({...event, timestamp});
      state.checkInvariants();
    }
    return state;
  }
  const ids = (wants) => wants.map((w) => w.wantId);
  const t0 = 1_700_000_000_000;

  test('schedulableWants(now) leaves out wants at or past createdAt + ttlSeconds * 1000; no TTL never expires', () => {
    const state = timed([
      [t0, want('ten', ['a'], {ttlSeconds: 10})],
      [t0, want('zero', ['b'], {ttlSeconds: 0})],
      [t0, want('forever', ['c'])],
    ]);
    expect(ids(state.schedulableWants())).toEqual(['ten', 'zero', 'forever']);
    expect(ids(state.schedulableWants(undefined))).toEqual(['ten', 'zero', 'forever']);
    expect(ids(state.schedulableWants(t0 - 1))).toEqual(['ten', 'zero', 'forever']);
    expect(ids(state.schedulableWants(t0))).toEqual(['ten', 'forever']);
    expect(ids(state.schedulableWants(t0 + 9_999))).toEqual(['ten', 'forever']);
    expect(ids(state.schedulableWants(t0 + 10_000))).toEqual(['forever']); // exactly at expiry
    expect(ids(state.schedulableWants(Number.MAX_SAFE_INTEGER))).toEqual(['forever']);
    expect(state.want('ten').state).toBe('Idle'); // expiry is not a state
    const restored = BuildState.fromSnapshot(state.snapshot());
    expect(restored.schedulableWants(t0 + 10_000)).toEqual(state.schedulableWants(t0 + 10_000));
  });

  test('after a taint, wants are schedulable again only within their TTL', () => {
    const state = timed([
      [t0, want('minute', ['a'], {ttlSeconds: 60})],
      [t0, want('brief', ['a'], {ttlSeconds: 5})],
      [t0, want('forever', ['a'])],
      [t0 + 1000, buffer('j1', ['a'])],
      [t0 + 2000, job('JobRunSuccess', 'j1')],
    ]);
    expect(state.schedulableWants(t0 + 2000)).toEqual([]);
    const transitions = state.apply({...taint('t1', ['a']), timestamp: t0 + 30_000});
    expect(transitions).toEqual([
      partT('j1', 'a', 'Live', 'Tainted'),
      wantT('minute', 'Successful', 'Idle'),
      wantT('forever', 'Successful', 'Idle'),
    ]);
    expect(state.want('brief').state).toBe('Successful'); // past its TTL at the taint
    expect(ids(state.schedulableWants(t0 + 59_999))).toEqual(['minute', 'forever']);
    expect(ids(state.schedulableWants(t0 + 60_000))).toEqual(['forever']);
    state.apply({...buffer('j2', ['a']), timestamp: t0 + 70_000});
    state.apply({...job('JobRunSuccess', 'j2'), timestamp: t0 + 71_000});
    expect(['minute', 'brief', 'forever'].map((w) => state.want(w).state)).toEqual(['Successful', 'Successful', 'Successful']);
    state.checkInvariants();
  });

  test('wantsPastSla(now): open wants at or past createdAt + slaSeconds * 1000, creation order', () => {
    const state = timed([
      [t0, want('s60', ['a'], {slaSeconds: 60})],
      [t0, want('s10', ['b'], {slaSeconds: 10})],
      [t0, want('none', ['a'])],
      [t0 + 1000, buffer('jb', ['b'])],
    ]);
    expect(state.wantsPastSla(t0 + 9_999)).toEqual([]);
    expect(ids(state.wantsPastSla(t0 + 10_000))).toEqual(['s10']); // Building, still open
    expect(ids(state.wantsPastSla(t0 + 60_000))).toEqual(['s60', 's10']);
    state.apply({...job('JobRunSuccess', 'jb'), timestamp: t0 + 61_000});
    expect(ids(state.wantsPastSla(t0 + 61_000))).toEqual(['s60']);
    expect(state.want('s60').state).toBe('Idle'); // an alarm, not a state change
    expect(BuildState.fromSnapshot(state.snapshot()).wantsPastSla(t0 + 61_000)).toEqual(state.wantsPastSla(t0 + 61_000));
  });

  test('now must be an integer number of milliseconds in 0..=MAX_SAFE_INTEGER', () => {
    const state = timed([[t0, want('w', ['a'], {ttlSeconds: 1, slaSeconds: 1})]]);
    for (const bad of [-1, 1.5, NaN, Infinity, -Infinity, 2 ** 53, '5', null, 5n, {}, [1]]) {
      for (const fn of [() => state.schedulableWants(bad), () => state.wantsPastSla(bad)]) {
        const error = thrown(fn);
        expect(error).toBeInstanceOf(LifecycleError);
        expect(error.code).toBe('INVALID_ARGUMENT');
      }
    }
    expect(thrown(() => state.wantsPastSla()).code).toBe('INVALID_ARGUMENT');
    expect(ids(state.schedulableWants(0))).toEqual(['w']);
    expect(ids(state.wantsPastSla(Number.MAX_SAFE_INTEGER))).toEqual(['w']);
    state.checkInvariants(); // still usable
  });
});

describe('replay and snapshots', () => {
  const log = [
    {type: 'WantCreate', timestamp: 1, wantId: 'w', partitions: ['a']},
    {type: 'JobRunBuffer', timestamp: 2, jobRunId: 'j', buildingPartitions: ['a']},
    {type: 'JobRunSuccess', timestamp: 3, jobRunId: 'j'},
  ];

  test('replay stops at the first bad event and reports its index', () => {
    const bad = [log[0], log[1], {type: 'JobRunSuccess', timestamp: 3, jobRunId: 'nope'}, log[2]];
    const error = thrown(() => BuildState.replay(bad));
    expect(error).toBeInstanceOf(LifecycleError);
    expect(error.code).toBe('UNKNOWN_JOB_RUN');
    expect(error.eventIndex).toBe(2);
    expect(error.message).toBe("event 2: unknown job run 'nope'");
    const malformed = thrown(() => BuildState.replay([log[0], {type: 'JobRunBuffer', timestamp: 2}]));
    expect([malformed.code, malformed.eventIndex]).toEqual(['INVALID_EVENT', 1]);
    expect(BuildState.replay(log).want('w')).toMatchObject({state: 'Successful', updatedAt: 3});
    // Long logs cross in chunks; the index still counts from the start of the log.
    const long = Array.from({length: 25_000}, (_, i) => ({type: 'WantCreate', timestamp: i, wantId: `w${i}`, partitions: [`p${i % 100}`]}));
    expect(BuildState.replay(long).stats()).toMatchObject({wants: 25_000, refs: 100});
    long[23_456] = {type: 'WantCancel', timestamp: 23_456, wantId: 'nope'};
    const far = thrown(() => BuildState.replay(long));
    expect([far.code, far.eventIndex, far.message]).toEqual(['UNKNOWN_WANT', 23_456, "event 23456: unknown want 'nope'"]);
    long[23_456] = {type: 'WantCancel', timestamp: 1n, wantId: 'nope'};
    expect(thrown(() => BuildState.replay(long)).eventIndex).toBe(23_456);
    expect(BuildState.replay([]).snapshot().wants).toEqual([]);
  });

  test('events JSON cannot carry are INVALID_EVENT, and the state stays usable', () => {
    // Events are log entries: plain JSON. They are serialized in JS before wasm is entered, so
    // getters, proxies, cycles and deep nesting fail there, never in the middle of a wasm call.
    const h = new Harness();
    h.ok(want('w0', ['a']));
    let deep = [];
    for (let i = 0; i < 100_000; i++) deep = [deep];
    const cyclic = want('w1', ['a']);
    cyclic.comment = cyclic;
    const throwing = want('w1', ['a']);
    Object.defineProperty(throwing, 'comment', {enumerable: true, get() { throw new Error('getter'); }});
    const proxy = new Proxy({...want('w1', ['a']), timestamp: 5}, {ownKeys() { throw new Error('trap'); }});
    const nested = want('w1', ['a']);
    nested.comment = JSON.parse('['.repeat(200) + ']'.repeat(200));
    for (const event of [
      {...want('w1', ['a']), comment: deep},
      cyclic,
      throwing,
      proxy,
      {...want('w1', ['a']), ttlSeconds: 5n},
      want('w\ud800', ['a']),
      nested,
    ]) {
      if (!('timestamp' in event)) Object.defineProperty(event, 'timestamp', {value: 5, enumerable: true});
      const before = h.state.snapshot();
      const error = thrown(() => h.state.apply(event));
      expect([error.constructor, error.code]).toEqual([LifecycleError, 'INVALID_EVENT']);
      expect(h.state.snapshot()).toEqual(before);
    }
    const error = thrown(() => BuildState.replay([h.log[0], {...want('w1', ['a']), timestamp: 1n}]));
    expect([error.code, error.eventIndex]).toEqual(['INVALID_EVENT', 1]);
    expect(thrown(() => BuildState.replay([h.log[0], want('w\ud800', ['a'])])).eventIndex).toBe(1);
    h.ok(want('w1', ['a']));
    h.checkReplayAndSnapshot();
  });

  test('snapshot is plain JSON; corrupted snapshots are refused', () => {
    const h = new Harness();
    h.ok(want('w', ['C']));
    h.ok(buffer('j1', ['C']));
    h.ok(depMiss('j1', ['C'], ['B']));
    h.ok(want('d', ['B'], {sourceJobRunId: 'j1'}));
    const snap = h.state.snapshot();
    expect(JSON.parse(JSON.stringify(snap))).toEqual(snap);
    expect(snap).toMatchObject({format: 'partkit.lifecycle', version: 1});
    expect(snap.partitions[0]).toMatchObject({state: 'UpstreamBuilding', missingDeps: ['B']});
    const corrupt = [
      (s) => (s.wants[0].state = 'Idle'),
      (s) => (s.partitions[0].state = 'Live'),
      (s) => (s.partitions[0].uuid = derivePartitionUuid('other', 'C')),
      (s) => (s.jobRuns[0].derivativeWantIds = []),
      (s) => (s.version = 2),
      (s) => s.wants.push({...s.wants[0]}),
      (s) => (s.extra = true),
      (s) => (s.partitions[0].timestamp = 5),
      (s) => (s.wants[0].createdAt = 1n),
    ];
    for (const f of corrupt) {
      const s = JSON.parse(JSON.stringify(snap));
      f(s);
      expect(thrown(() => BuildState.fromSnapshot(s)).code).toBe('INVALID_SNAPSHOT');
    }
    h.checkReplayAndSnapshot();
  });
});

describe('derivePartitionUuid', () => {
  test('the vectors of docs/lifecycle.md', () => {
    expect(derivePartitionUuid('job-1', 'data/beta')).toBe('b9fdaee2-c421-8dda-b7ad-0d0b3b24b0d4');
    expect(derivePartitionUuid('ab', 'c')).toBe('290a3daa-9b49-826a-aed7-352cd7f5e69c');
    expect(derivePartitionUuid('a', 'bc')).toBe('e98bc483-cc6a-89cc-b82b-c23e481a128c');
    expect(derivePartitionUuid('', '')).toBe('af5570f5-a181-8b7a-b78c-af4bc70a660f');
    expect(derivePartitionUuid('jöb-ü', '数据/β')).toBe('8d9d15ff-c105-8efb-a1a1-d64f0026dd27');
  });

  test('matches an independent SHA-256 implementation (Node crypto) on random strings', () => {
    fc.assert(
      fc.property(fc.fullUnicodeString(), fc.fullUnicodeString(), (j, r) => {
        const uuid = derivePartitionUuid(j, r);
        expect(uuid).toBe(referenceUuid(j, r));
        expect(uuid[14]).toBe('8');
        expect('89ab').toContain(uuid[19]);
      }),
      {numRuns: 500},
    );
    // Lone surrogates become U+FFFD on both sides (UTF-8 encoding of JS strings).
    expect(derivePartitionUuid('a\ud800', 'b')).toBe(referenceUuid('a\ud800', 'b'));
  });

  test('the length prefix separates ("ab","c") from ("a","bc")', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.string({minLength: 1}), (a, b, c) => {
        expect(derivePartitionUuid(a + c, b)).not.toBe(derivePartitionUuid(a, c + b));
      }),
    );
  });

  test('a job buffer creates exactly these UUIDs', () => {
    const s = new BuildState();
    s.apply({type: 'JobRunBuffer', timestamp: 1, jobRunId: 'job-42', buildingPartitions: ['x', 'y']});
    expect(s.jobRun('job-42').partitionUuids).toEqual([referenceUuid('job-42', 'x'), referenceUuid('job-42', 'y')]);
  });
});

// ---------------------------------------------------------------- random sequences

const REFS = ['r0', 'r1', 'r2', 'r3', 'r4'];
const op = fc.record({
  kind: fc.integer({min: 0, max: 12}),
  a: fc.nat(255),
  b: fc.nat(255),
  flag: fc.nat(255),
  refs: fc.array(fc.constantFrom(...REFS), {maxLength: 3}),
  missing: fc.array(fc.constantFrom(...REFS, 'up0', 'up1'), {maxLength: 2}),
});

/** Turns a random op into an event against the current state: mostly plausible, often wrong. */
function eventFor(o, state, ids, ts, last) {
  const pick = (list, k, fallback) => (list.length ? list[k % list.length] : fallback);
  const dedup = (list) => (o.flag % 11 === 0 ? list : [...new Set(list)]);
  const activeJobs = ids.jobs.filter((j) => ['Queued', 'Running'].includes(state.jobRun(j).state));
  const someJob = () => (o.flag % 4 !== 0 && activeJobs.length ? pick(activeJobs, o.a) : pick(ids.jobs, o.a, 'no-job'));
  switch (o.kind) {
    case 0:
    case 1: {
      const e = {type: 'WantCreate', timestamp: ts, wantId: o.flag % 9 === 0 ? pick(ids.wants, o.a, 'w') : `w${ids.n}`, partitions: dedup(o.refs)};
      if (o.flag % 3 === 0 && ids.jobs.length) {
        const jr = state.jobRun(pick(ids.jobs, o.b));
        e.sourceJobRunId = jr.jobRunId;
        if (jr.state === 'DepMissed' && o.flag % 2 === 0) e.partitions = [...new Set(jr.missingDeps.flatMap((m) => m.missing))];
      }
      if (o.flag % 5 === 0) e.ttlSeconds = o.b;
      if (o.flag % 7 === 0) e.slaSeconds = o.a % 4;
      return e;
    }
    case 2:
      return {type: 'WantCancel', timestamp: ts, wantId: pick(ids.wants, o.a, 'w')};
    case 3:
    case 4:
      return {type: 'JobRunBuffer', timestamp: ts, jobRunId: o.flag % 10 === 0 ? pick(ids.jobs, o.a, 'j') : `j${ids.n}`, buildingPartitions: dedup(o.refs.length ? o.refs : [REFS[o.b % 5]])};
    case 5:
      return {type: 'JobRunHeartbeat', timestamp: ts, jobRunId: someJob()};
    case 6:
      return {type: 'JobRunSuccess', timestamp: ts, jobRunId: someJob()};
    case 7:
      return {type: 'JobRunFailure', timestamp: ts, jobRunId: someJob(), reason: 'boom'};
    case 8:
    case 9: {
      const jobRunId = someJob();
      const refs = state.jobRun(jobRunId)?.partitionRefs ?? ['r0'];
      const impacted = refs.filter((_, i) => o.b & (1 << i));
      const missing = dedup(o.missing);
      if (o.flag % 3 === 0) {
        const leased = REFS.filter((r) => !refs.includes(r) && ['Building', 'UpstreamBuilding'].includes(state.canonicalPartition(r)?.state));
        if (leased.length && !missing.includes(leased[0])) missing.push(pick(leased, o.a));
      }
      return {type: 'JobRunDepMiss', timestamp: ts, jobRunId, missingDeps: [{impacted: impacted.length ? impacted : refs.slice(0, 1), missing}]};
    }
    case 10:
      return {type: 'JobRunCancel', timestamp: ts, jobRunId: someJob()};
    case 11:
      return {type: 'TaintCreate', timestamp: ts, taintId: o.flag % 6 === 0 ? 't0' : `t${ids.n}`, partitions: [...new Set(o.refs)]};
    default:
      return [
        {type: 'Bogus', timestamp: ts},
        {type: 'WantCancel', timestamp: -1, wantId: 'w'},
        null,
        {type: 'JobRunSuccess', timestamp: ts},
        // Stamped before the last applied event (otherwise a valid want).
        {type: 'WantCreate', timestamp: last > 0 ? last - 1 - (o.b % Math.min(last, 5)) : ts, wantId: `w${ids.n}`, partitions: dedup(o.refs.length ? o.refs : ['r0'])},
      ][o.flag % 5];
  }
}

describe('random event sequences (fast-check)', () => {
  test('invariants hold after every step; refusals change nothing; replay and snapshots agree', () => {
    let accepted = 0;
    let refused = 0;
    let backwards = 0;
    fc.assert(
      fc.property(fc.array(op, {minLength: 20, maxLength: 60}), (ops) => {
        const state = new BuildState();
        const ids = {wants: [], jobs: [], n: 0};
        const log = [];
        const transitions = [];
        let ts = 0; // never decreases: events are applied in timestamp order
        let last = -1; // timestamp of the last accepted event
        for (const o of ops) {
          ids.n++;
          ts += o.b % 3;
          const event = eventFor(o, state, ids, ts, last);
          const before = state.snapshot();
          const early = typeof event?.timestamp === 'number' && event.timestamp >= 0 && event.timestamp < last;
          let t;
          try {
            t = state.apply(event);
          } catch (error) {
            refused++;
            expect(error).toBeInstanceOf(LifecycleError);
            expect(state.snapshot()).toEqual(before);
            if (early) backwards++;
            expect(error.code === 'TIMESTAMP_NOT_MONOTONIC').toBe(early && error.code !== 'INVALID_EVENT');
            continue;
          }
          expect(early).toBe(false);
          last = event.timestamp;
          accepted++;
          state.checkInvariants();
          log.push(event);
          transitions.push(t);
          if (event.type === 'WantCreate') ids.wants.push(event.wantId);
          if (event.type === 'JobRunBuffer') ids.jobs.push(event.jobRunId);
        }
        const live = state.snapshot();
        expect(BuildState.replay(log).snapshot()).toEqual(live);
        const again = new BuildState();
        log.forEach((e, i) => expect(again.apply(e)).toEqual(transitions[i]));
        const restored = BuildState.fromSnapshot(JSON.parse(JSON.stringify(live)));
        expect(restored.snapshot()).toEqual(live);
        expect(restored.schedulableWants()).toEqual(state.schedulableWants());
        // TTL and SLA queries against a brute-force reading of the snapshot.
        for (const now of [0, ts, ts + 1_000, ts + 1_000_000]) {
          const within = (w) => w.ttlSeconds === undefined || now < w.createdAt + w.ttlSeconds * 1000;
          expect(state.schedulableWants(now)).toEqual(state.schedulableWants().filter(within));
          expect(restored.schedulableWants(now)).toEqual(state.schedulableWants(now));
          const open = ['Idle', 'Building', 'UpstreamBuilding'];
          const past = live.wants.filter((w) => open.includes(w.state) && w.slaSeconds !== undefined && w.createdAt + w.slaSeconds * 1000 <= now);
          expect(state.wantsPastSla(now)).toEqual(past);
          expect(restored.wantsPastSla(now)).toEqual(past);
        }
        state.free();
      }),
      {numRuns: 150},
    );
    expect(accepted).toBeGreaterThan(1500);
    expect(refused).toBeGreaterThan(500);
    expect(backwards).toBeGreaterThan(20);
  });
});

// ---------------------------------------------------------------- CLI

describe('partkit lifecycle CLI', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'partkit-lifecycle-'));
  const cli = (args, input) => spawnSync(process.execPath, [CLI, 'lifecycle', ...args], {input, encoding: 'utf8'});
  const events = [
    {type: 'WantCreate', timestamp: 1, wantId: 'w1', partitions: ['a']},
    {type: 'JobRunBuffer', timestamp: 2, jobRunId: 'j1', buildingPartitions: ['a']},
    {type: 'JobRunSuccess', timestamp: 3, jobRunId: 'j1'},
    {type: 'WantCreate', timestamp: 4, wantId: 'w2', partitions: ['b']},
  ];

  test('replay prints a summary (JSON lines on stdin) or the snapshot (JSON file)', () => {
    const r = cli(['replay', '-', '--ref', 'a'], events.map((e) => JSON.stringify(e)).join('\n'));
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('4 events: 2 wants, 1 job runs, 1 partition instances over 2 refs');
    expect(r.stdout).toContain('schedulable wants (1): w2');
    expect(r.stdout).toContain(derivePartitionUuid('j1', 'a'));
    const file = path.join(tmp, 'events.json');
    fs.writeFileSync(file, JSON.stringify(events));
    const s = cli(['replay', '--snapshot', file]);
    expect(s.status).toBe(0);
    expect(JSON.parse(s.stdout)).toEqual(BuildState.replay(events).snapshot());
  });

  test('replay exits 1 naming the refused event', () => {
    const r = cli(['replay', '-'], JSON.stringify([...events, {type: 'WantCancel', timestamp: 5, wantId: 'w1'}]));
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('[WANT_WRONG_STATE] event 4:');
  });

  test('uuid prints derivePartitionUuid', () => {
    const r = cli(['uuid', 'job-1', 'data/beta']);
    expect(r.stdout.trim()).toBe('b9fdaee2-c421-8dda-b7ad-0d0b3b24b0d4');
  });
});
