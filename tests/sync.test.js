// Task coordination through the public JS API, in the world of tests/support/sync-world.js (the
// JS side of the Rust scenario tests' world): a small simulation of 3 tasks over a shared log
// (splits, a merge, a crash, a quick rebalance), a Rust scenario step for step, the wire format,
// and bad input of any shape (fast-check) leaving the task unchanged and working.
const fc = require('fast-check');
const partkit = require('partkit');
const {thrown} = require('./support/thrown');
const {SyncWorld} = require('./support/sync-world');

const {SyncTask, SyncError, PartkitError} = partkit;

/** Park and Miller's minimal standard generator: seeded, so the simulation is the same on every run. */
function prng(seed) {
  let x = (seed % 2147483646) + 1;
  return () => (x = (x * 48271) % 2147483647) / 2147483647;
}

/** Partitions: r splits into a, b; a into a1, a2; b and a1 merge into m. */
const DAG = {
  r: [{token: 'a', parents: ['r']}, {token: 'b', parents: ['r']}],
  a: [{token: 'a1', parents: ['a']}, {token: 'a2', parents: ['a']}],
  a1: [{token: 'm', parents: ['a1', 'b']}],
  b: [{token: 'm', parents: ['a1', 'b']}],
};
const ALL = ['r', 'a', 'b', 'a1', 'a2', 'm'];

const OPTIONS = {rebalanceTimeout: 500, epochAckTimeout: 300, removalDelay: 50, tombstoneTtl: 100000};

/** Tasks `ids` in the world of tests/support (`records`: those that publish records), at 1000 ms. */
const world = (ids, records = []) => new SyncWorld(ids, OPTIONS, {records, now: 1000});

/**
 * A random step of the DAG's run: a task reads a record, works (reports a partition it was told
 * to start started, or a running one finished, adding its children first), or time passes; then
 * no partition is owned twice. `finished`: every partition finished so far, each once.
 */
function randomStep(w, rand, finished) {
  const ids = [...w.live];
  const id = ids[Math.floor(rand() * ids.length)];
  const r = rand();
  if (r < 0.5) w.step(id);
  else if (r < 0.85) work(w, id, rand, finished);
  else w.tick(Math.floor(rand() * 40));
  w.assertUnique();
}

function work(w, id, rand, finished) {
  const tokens = [...w.running.get(id)];
  if (tokens.length === 0) return;
  const token = tokens[Math.floor(rand() * tokens.length)];
  const state = w.owned(id, token)?.state;
  if (state === 'Scheduled') {
    w.run(id, token);
    return;
  }
  if (DAG[token]) w.addPartitions(id, DAG[token]);
  w.finish(id, token);
  expect(finished.has(token)).toBe(false);
  finished.add(token);
}

describe('SyncTask: three tasks through the JS API', () => {
  test.each([
    [1, []], [2, []], [3, []], [4, []], [5, []],
    [6, ['t1', 't3']], [7, ['t2']], [8, ['t1', 't2', 't3']],
  ])('seed %i, in records mode %j: splits, a merge, a crash and quick rebalances; everything finishes once', (seed, records) => {
    const w = world(['t1', 't2', 't3'], records);
    const rand = prng(seed);
    const finished = new Set();
    w.rebalance(null, 't1');
    for (const id of ['t1', 't2', 't3']) expect(w.task(id).epoch()).toBe('1-t1');
    expect(w.task('t1').isLeader()).toBe(true);
    w.addPartitions('t1', [{token: 'r'}]);
    for (let i = 0; i < 60; i++) randomStep(w, rand, finished);
    // t3 crashes; two rebalances in quick succession
    w.leave('t3');
    w.rebalance(null, 't2');
    for (let i = 0; i < 5; i++) randomStep(w, rand, finished);
    w.rebalance(null, 't1');
    for (let i = 0; i < 2000 && finished.size < ALL.length; i++) randomStep(w, rand, finished);
    w.settle();
    expect([...finished].sort()).toEqual([...ALL].sort());
    expect(w.violations).toEqual([]);
    const epochs = new Set([...w.live].map((id) => w.task(id).epoch()));
    expect(epochs).toEqual(new Set(['3-t1']));
    // every state is known everywhere, nothing is left shared
    for (const id of w.live) {
      expect(w.task(id).sharedPartitions()).toEqual([]);
      expect(w.task(id).knownTasks().map((s) => s.taskID)).toEqual(['t1', 't2']);
    }
  });

  test('the wire format keeps the field names of the Spanner connector design', () => {
    const c = world(['t1', 't2']);
    c.rebalance(null, 't1');
    c.addPartitions('t1', [{token: 'x'}, {token: 'y'}]);
    const epoch = c.log.find((m) => m.type === 'NewEpoch');
    expect(Object.keys(epoch)).toEqual(expect.arrayContaining(['syncEpoch', 'taskID', 'messageTimestamp', 'type', 'connectorState']));
    expect(Object.keys(epoch.connectorState[0])).toEqual(['taskID', 'stateTimestamp', 'stateVersion', 'data', 'share']);
    const shared = c.log.at(-1).connectorState[0].share.partitions[0];
    expect(shared).toEqual({token: 'y', parents: [], state: 'Created', assignee: 't2'});
    c.settle();
    expect(c.task('t2').ownedPartitions().map((p) => p.token)).toEqual(['y']);
    expect(c.task('t1').sharedPartitions()).toEqual([]);
  });

  test('a task that reads the log with a hole stops everything and fences itself', () => {
    const w = new SyncWorld(['t1', 't2'], {}, {inputGap: 1});
    w.rebalance(1, 't1', ['t1', 't2']);
    expect(w.task('t2').epoch()).toBe('1-t1');
    w.addPartitions('t1', [{token: 'a'}, {token: 'b'}]);
    w.settle();
    expect(w.task('t2').ownedPartitions().map((p) => p.state)).toEqual(['Scheduled']);
    expect(w.log.every((m) => Number.isInteger(m.messageSeq))).toBe(true);
    // t1 publishes at least two messages; t2 reads only the last
    const from = w.log.length;
    w.call('t1', (t, now) => t.tick(now + 200_000));
    w.rebalanceOne(2, 't2', ['t1', 't2'], 't1');
    w.run('t1', 'a');
    expect(w.log.length - from).toBeGreaterThanOrEqual(2);
    while (w.tasks.get('t2').cursor < w.log.length - 1) w.skip('t2');
    w.allowFenced = true;
    w.step('t2');
    expect(w.task('t2').fenced()).toMatch(/missed messages .* of t1/);
    expect(w.stopped.get('t2')).toEqual(['b']);
    expect(w.task('t2').tick(w.now + 100_000)).toEqual({publish: [], start: [], stop: []});
  });
});

describe('SyncTask: the Rust scenarios, through the bindings', () => {
  // tests/sync_faults.rs `a_share_readdressed_from_a_departed_task_does_not_restart_a_finish_read`,
  // step for step in the same world (tests/support/sync-world.js), with messages and records
  test.each([[[]], [['a', 'l', 'n', 's']]])('a share re-addressed from a departed task does not restart a finish read (records: %j)', (records) => {
    const w = new SyncWorld(['a', 'l', 'n', 's'], {rebalanceTimeout: 5000, epochAckTimeout: 1000}, {records, now: 1000, inputGap: 10});
    w.rebalance(1, 'l', ['a', 'l', 'n', 's']);
    w.ticks(2, 1500);
    // s finds x (kept: ties go to the finder) and runs it, then finds p: shared to a
    w.add('s', 'x');
    w.settle();
    w.run('s', 'x');
    w.settle();
    w.hold('a');
    w.add('s', 'p');
    w.settle();
    expect(w.owned('a', 'p')).toBeDefined();
    expect(w.task('s').sharedPartitions().map((p) => p.token)).toContain('p');
    // a runs and finishes p; its transport leaves the group before its records land
    w.run('a', 'p');
    w.finish('a', 'p');
    w.leave('a');
    w.announce(2, 'l', ['l', 'n', 's']);
    // s answered generation 2; its reader stalls before it applies the epoch
    w.stalled.add('s');
    w.settle();
    w.ticks(3, 1500);
    expect(w.task('l').epoch()).toBe('2-l');
    // a's records land after 2-l: l and n read p's finish
    w.land('a');
    w.settle();
    w.ticks(2, 1500);
    expect(w.finishesRead.get('l').has('p')).toBe(true);
    // s's reader resumes: it applies 2-l and re-addresses its share to the departed a
    w.stalled.delete('s');
    w.settle();
    w.ticks(4, 1500);
    expect(w.violations).toEqual([]);
    for (const id of ['l', 'n', 's']) expect(w.owned(id, 'p')?.state ?? 'Finished').toBe('Finished');
  });
});

describe('SyncTask: fence() for a transport that checks offsets', () => {
  test('stops what the task runs, reports the reason once, then does nothing', () => {
    const t = new SyncTask('t1');
    const log = t.onRebalance({generation: 1, leader: true, members: ['t1']}, 0).publish;
    for (let i = 0; i < log.length; i++) log.push(...t.onMessage(log[i], 1).publish);
    expect(t.epoch()).toBe('1-t1');
    expect(t.addPartitions([{token: 'a'}], 2).start).toEqual(['a']);
    expect(() => t.fence(42, 3)).toThrow(SyncError);
    expect(() => t.fence('x', -1)).toThrow(SyncError);
    expect(t.fenced()).toBeUndefined();
    const out = t.fence('offsets 7..8 of c_connector_sync were never read', 3);
    expect(out).toEqual({publish: [], start: [], stop: ['a'], fenced: 'offsets 7..8 of c_connector_sync were never read'});
    expect(t.fenced()).toBe(out.fenced);
    expect(t.fence('again', 4)).toEqual({publish: [], start: [], stop: []});
    expect(t.partitionFinished('a', 5)).toEqual({publish: [], start: [], stop: []});
  });
});

describe('SyncTask: close() leaves a final checkpoint', () => {
  test('once its own records are read back; it starts nothing more; closed() says when it is done', () => {
    const w = new SyncWorld(['t1'], {}, {inputGap: 1});
    w.rebalance(1, 't1', ['t1']);
    const t = w.task('t1');
    expect(w.addPartitions('t1', [{token: 'a'}]).start).toEqual(['a']);
    expect(t.closed()).toBe(false);
    // its records of `a` are not read back yet: the checkpoint waits for them
    w.run('t1', 'a');
    expect(() => t.close(-1)).toThrow(SyncError);
    // it publishes its own state once more (the record its final checkpoint names)
    const closing = w.input('t1', (task, now) => task.close(now)).publish;
    expect(closing.length).toBeGreaterThan(0);
    expect(closing.filter((m) => m.checkpoint)).toEqual([]);
    expect(t.closed()).toBe(false);
    // a partition added now is not started by a closing task
    const from = w.log.length;
    expect(w.addPartitions('t1', [{token: 'b'}]).start).toEqual([]);
    // the log: what it published is read back, and what that publishes, to the end
    w.settle();
    expect(w.started.get('t1')).toEqual(['a']);
    const final = w.log.slice(from).filter((m) => m.checkpoint);
    expect(final).toHaveLength(1);
    const own = final[0].connectorState.find((s) => s.taskID === 't1');
    expect(own.data.partitions.map((p) => p.token).sort()).toEqual(['a', 'b']);
    expect(t.closed()).toBe(true);
    expect(t.close(w.now + 100)).toEqual({publish: [], start: [], stop: []});
  });
});

describe('SyncTask: records of at most maxRecordBytes', () => {
  test('an epoch goes out in chunks, applied whole at its last one; a last chunk that breaks it is refused and changes nothing', () => {
    const opts = {rebalanceTimeout: 500, epochAckTimeout: 300, maxRecordBytes: 1024};
    const ids = ['a', 'b'];
    const w = new SyncWorld(ids, opts, {now: 1});
    w.rebalance(1, 'a', ids);
    const specs = (id) => Array.from({length: 40}, (_, i) => ({token: `${id}-partition-token-${String(i).padStart(6, '0')}`}));
    for (const id of ids) w.addPartitions(id, specs(id));
    w.settle();
    const from = w.log.length;
    w.rebalance(2, 'b', ids);
    const chunks = w.log.slice(from).filter((m) => m.type === 'NewEpoch' && m.syncEpoch === '2-b' && m.chunk);
    expect(chunks.length).toBeGreaterThan(1);
    expect(w.task('a').epoch()).toBe('2-b');
    expect(Math.max(...w.values.map((v) => v.length))).toBeLessThanOrEqual(1024);
    expect(Math.max(...w.log.map((m) => JSON.stringify(m).length))).toBeLessThanOrEqual(1024);
    // a new task reading the chunks in order applies the epoch at the last one
    const fresh = new SyncTask('c', opts);
    for (const m of chunks) fresh.onMessage(m, 7);
    expect(fresh.epoch()).toBe('2-b');
    // the last chunk with a partition of an earlier chunk again: the whole message is malformed
    const last = chunks[chunks.length - 1];
    const continued = last.connectorState[0].taskID;
    const earlier = chunks.slice(0, -1).flatMap((m) => m.connectorState).find((st) => st.taskID === continued && st.data.partitions.length);
    expect(earlier).toBeDefined();
    const bad = JSON.parse(JSON.stringify(last));
    bad.connectorState[0].data.partitions.push(earlier.data.partitions[0]);
    const again = new SyncTask('c', opts);
    for (const m of chunks.slice(0, -1)) again.onMessage(m, 7);
    expect(thrown(() => again.onMessage(bad, 7)).code).toBe('SYNC_MALFORMED_MESSAGE');
    expect(again.epoch()).toBeUndefined();
    again.onMessage(last, 7);
    expect(again.epoch()).toBe('2-b');
    expect(again.knownTasks()).toEqual(fresh.knownTasks());
  });
});

describe('SyncTask: bad input', () => {
  const fresh = () => {
    const c = world(['t1', 't2']);
    c.rebalance(null, 't1');
    c.addPartitions('t1', [{token: 'p'}, {token: 'q'}]);
    c.settle();
    return c;
  };
  const view = (t) => JSON.stringify([t.epoch(), t.knownTasks(), t.ownedPartitions(), t.sharedPartitions(), t.pollTimeout()]);

  test('errors are SyncError with a code, task unchanged', () => {
    const c = fresh();
    const t = c.task('t2');
    const before = view(t);
    const cases = [
      [() => t.onMessage(null, 1), 'SYNC_MALFORMED_MESSAGE'],
      [() => t.onMessage({syncEpoch: 'x'}, 1), 'SYNC_MALFORMED_MESSAGE'],
      [() => t.onMessage({...c.log[0], taskID: ''}, 1), 'SYNC_MALFORMED_MESSAGE'],
      [() => t.onMessage({...c.log[0], connectorState: []}, 1), 'SYNC_MALFORMED_MESSAGE'],
      [() => t.onMessage({...c.log[0], messageTimestamp: 2 ** 60}, 1), 'SYNC_MALFORMED_MESSAGE'],
      [() => t.onMessage(c.log[0], -5), 'INVALID_ARGUMENT'],
      [() => t.onMessage(c.log[0], 1.5), 'INVALID_ARGUMENT'],
      [() => t.onRebalance({generation: 2, leader: true}, 1), 'SYNC_INVALID_REBALANCE'],
      [() => t.onRebalance({generation: 0, leader: false}, 1), 'SYNC_INVALID_REBALANCE'],
      [() => t.onRebalance('g', 1), 'SYNC_INVALID_REBALANCE'],
      [() => t.addPartitions([{token: ''}], 1), 'SYNC_INVALID_PARTITION'],
      [() => t.addPartitions([{token: 'z', parents: ['z']}], 1), 'SYNC_INVALID_PARTITION'],
      [() => t.addPartitions({token: 'z'}, 1), 'INVALID_ARGUMENT'],
      [() => t.addPartitions([['z']], 1), 'SYNC_INVALID_PARTITION'],
      [() => t.partitionStarted('nope', 1), 'SYNC_UNKNOWN_PARTITION'],
      [() => t.partitionFinished(42, 1), 'INVALID_ARGUMENT'],
      [() => t.tick('soon'), 'INVALID_ARGUMENT'],
      [() => new SyncTask('', {}), 'SYNC_INVALID_TASK_ID'],
      [() => new SyncTask('t9', {rebalanceTimeout: 0}), 'SYNC_INVALID_OPTIONS'],
      [() => new SyncTask('t9', {rebalanceTimeot: 10}), 'SYNC_INVALID_OPTIONS'],
      [() => new SyncTask('t9', {publishAs: 'json'}), 'SYNC_INVALID_OPTIONS'],
      // a record's value as read: bytes or a string of JSON
      [() => t.onMessage(Buffer.from('not json'), 1), 'SYNC_MALFORMED_MESSAGE'],
      [() => t.onMessage(new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]), 1), 'SYNC_MALFORMED_MESSAGE'],
      [() => t.onMessage(new Uint8Array(0), 1), 'SYNC_MALFORMED_MESSAGE'],
      [() => t.onMessage('[1, 2]', 1), 'SYNC_MALFORMED_MESSAGE'],
      [() => t.onMessage(JSON.stringify({...c.log[0], taskID: ''}), 1), 'SYNC_MALFORMED_MESSAGE'],
      [() => t.onMessage(Buffer.from(JSON.stringify({...c.log[0], connectorState: []})), 1), 'SYNC_MALFORMED_MESSAGE'],
      [() => t.onMessage(Buffer.from(c.values[0]), -1), 'INVALID_ARGUMENT'],
    ];
    for (const [fn, code] of cases) {
      const error = thrown(fn);
      expect(error).toBeInstanceOf(SyncError);
      expect(error).toBeInstanceOf(PartkitError);
      expect(error.name).toBe('SyncError');
      expect(error.code).toBe(code);
      expect(view(t)).toBe(before);
    }
    const cyclic = {};
    cyclic.self = cyclic;
    expect(thrown(() => t.onMessage(cyclic, 1)).code).toBe('SYNC_MALFORMED_MESSAGE');
    expect(thrown(() => t.onMessage({syncEpoch: 1n}, 1)).code).toBe('SYNC_MALFORMED_MESSAGE');
    // bytes over a buffer detached after the view was made cannot be read
    const buffer = new ArrayBuffer(16);
    const bytes = new Uint8Array(buffer);
    structuredClone(buffer, {transfer: [buffer]});
    expect(thrown(() => t.onMessage(bytes, 1)).code).toBe('INVALID_ARGUMENT');
    expect(view(t)).toBe(before);
  });

  test('misuse: each refused with a code and a message in JS words, or a documented repeat', () => {
    const c = fresh();
    const t = c.task('t2');
    const before = view(t);
    const refused = (fn, code, message) => {
      const error = thrown(fn);
      expect(error).toBeInstanceOf(SyncError);
      expect(error.code).toBe(code);
      expect(error.message).toBe(message);
      expect(view(t)).toBe(before);
    };
    // a typo of a spec's key: refused with the nearest key, whatever builds the array
    const children = ['c1'].map((token) => ({token, parent: ['p']}));
    refused(() => t.addPartitions(children, c.now), 'SYNC_INVALID_PARTITION',
      'invalid partition: partitions[0].parent is not a known key: did you mean partitions[0].parents? (known keys: token, parents, startTimestamp, endTimestamp)');
    refused(() => t.addPartitions([{token: 'c1'}, {token: 'c2', Parents: ['p']}], c.now), 'SYNC_INVALID_PARTITION',
      'invalid partition: partitions[1].Parents is not a known key: did you mean partitions[1].parents? (known keys: token, parents, startTimestamp, endTimestamp)');
    // a known token given again with other parents
    refused(() => t.addPartitions([{token: 'q', parents: ['p']}], c.now), 'SYNC_INVALID_PARTITION',
      'invalid partition: q is known with parents [], given again with parents [p]');
    // a malformed record value, in JS words
    refused(() => t.onMessage(Buffer.from('[]'), c.now), 'SYNC_MALFORMED_MESSAGE', 'malformed sync message: message must be an object, got an array');
    // SyncTask called without new
    const error = thrown(() => SyncTask('t9'));
    expect(error).toBeInstanceOf(PartkitError);
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.message).toBe('SyncTask is a class: create a task with new SyncTask(taskId, options)');
    expect(new SyncTask('t9')).toBeInstanceOf(SyncTask);
    // repeats: a known token with its parents, a finish twice
    const owner = ['t1', 't2'].find((id) => c.task(id).ownedPartitions().some((p) => p.token === 'q'));
    const o = c.task(owner);
    expect(o.addPartitions([{token: 'q'}], c.now)).toEqual({publish: [], start: [], stop: []});
    const seen = JSON.stringify(o.ownedPartitions());
    o.partitionFinished('q', c.now);
    const done = JSON.stringify(o.ownedPartitions());
    expect(done).not.toBe(seen);
    expect(o.partitionFinished('q', c.now + 1)).toEqual({publish: [], start: [], stop: []});
    expect(JSON.stringify(o.ownedPartitions())).toBe(done);
  });

  test('a record value (bytes or text) is the message it holds: the same output, the same view', () => {
    const objects = fresh();
    const bytes = fresh();
    const text = fresh();
    const [a, b, s] = [objects, bytes, text].map((c) => c.task('t2'));
    const next = a.partitionStarted('q', objects.now).publish;
    b.partitionStarted('q', bytes.now);
    s.partitionStarted('q', text.now);
    expect(next).toHaveLength(1);
    const value = JSON.stringify(next[0]);
    const outs = [a.onMessage(JSON.parse(value), 5000), b.onMessage(Buffer.from(value), 5000), s.onMessage(value, 5000)];
    expect(outs[1]).toEqual(outs[0]);
    expect(outs[2]).toEqual(outs[0]);
    expect(view(b)).toBe(view(a));
    expect(view(s)).toBe(view(a));
  });

  test('input of any shape never breaks a task (fast-check)', () => {
    const c = fresh();
    const t = c.task('t2');
    const near = fc.record(
      {
        syncEpoch: fc.oneof(fc.constant('1-t1'), fc.string()),
        taskID: fc.oneof(fc.constant('t1'), fc.string()),
        messageTimestamp: fc.oneof(fc.nat(), fc.double()),
        type: fc.oneof(fc.constantFrom('Regular', 'RebalanceAnswer', 'NewEpoch'), fc.string()),
        connectorState: fc.array(fc.anything(), {maxLength: 3}),
        epochGeneration: fc.oneof(fc.nat(5), fc.anything()),
        delta: fc.oneof(fc.anything(), fc.record({removed: fc.array(fc.string(), {maxLength: 3}), unshared: fc.array(fc.anything(), {maxLength: 3})}, {requiredKeys: []})),
      },
      {requiredKeys: []},
    );
    // a record's value as read: the JSON of a near message as text or bytes, or any bytes
    const value = fc.oneof(
      near.map((m) => JSON.stringify(m)),
      near.map((m) => Buffer.from(JSON.stringify(m))),
      fc.uint8Array({maxLength: 64}),
      fc.string(),
    );
    fc.assert(
      fc.property(fc.oneof(fc.anything(), near, value), fc.anything(), (input, other) => {
        let before = view(t);
        for (const fn of [
          () => t.onMessage(input, c.now),
          () => t.onRebalance(input, c.now),
          () => t.addPartitions(input, c.now),
          () => t.partitionStarted(input, c.now),
          () => t.partitionFinished(input, c.now),
          () => t.onMessage(input, other),
          () => t.tick(other),
        ]) {
          try {
            fn();
          } catch (error) {
            expect(error).toBeInstanceOf(SyncError);
            expect(typeof error.code).toBe('string');
            expect(view(t)).toBe(before);
          }
          // (an input that was taken changes the task: the next refused one leaves it as this)
          before = view(t);
        }
      }),
      {numRuns: 300},
    );
    // still working: the next real message and input are handled
    c.addPartitions('t1', [{token: 'later'}]);
    c.settle();
    c.assertUnique();
    expect(c.task('t2').epoch()).toBe('1-t1');
  });
});
