// Task coordination through the public JS API: a small simulation of 3 tasks over a shared log
// (splits, a merge, a crash, a quick rebalance), the wire format, and bad input of any shape
// (fast-check) leaving the task unchanged and working.
const fc = require('fast-check');
const partkit = require('partkit');
const {thrown} = require('./support/thrown');

const {SyncTask, SyncError, PartkitError} = partkit;

/** mulberry32: a tiny seeded PRNG, so the simulation is the same on every run. */
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Partitions: r splits into a, b; a into a1, a2; b and a1 merge into m. */
const DAG = {
  r: [{token: 'a', parents: ['r']}, {token: 'b', parents: ['r']}],
  a: [{token: 'a1', parents: ['a']}, {token: 'a2', parents: ['a']}],
  a1: [{token: 'm', parents: ['a1', 'b']}],
  b: [{token: 'm', parents: ['a1', 'b']}],
};
const ALL = ['r', 'a', 'b', 'a1', 'a2', 'm'];

class Cluster {
  /** `records`: ids of the tasks made with `publishAs: 'records'`, which read the log's values as bytes. */
  constructor(ids, seed, records = []) {
    this.rand = prng(seed);
    this.records = new Set(records);
    this.now = 1000;
    this.log = [];
    this.values = []; // each message of the log as its record's value (JSON text)
    this.generation = 0;
    this.nodes = new Map();
    this.finished = new Set();
    for (const id of ids) this.spawn(id);
  }
  spawn(id) {
    const options = {rebalanceTimeout: 500, epochAckTimeout: 300, removalDelay: 50, tombstoneTtl: 100000};
    const task = new SyncTask(id, this.records.has(id) ? {...options, publishAs: 'records'} : options);
    this.nodes.set(id, {task, cursor: 0, running: new Map()});
  }
  apply(id, out) {
    const node = this.nodes.get(id);
    expect(Object.keys(out).sort()).toEqual(['publish', 'start', 'stop']);
    for (const t of out.stop) node.running.delete(t);
    for (const t of out.start) node.running.set(t, 'scheduled');
    for (const m of out.publish) {
      if (this.records.has(id)) {
        // a record to write as it is: the sender's key, the message's type, its JSON text
        expect(Object.keys(m)).toEqual(['key', 'type', 'value']);
        const msg = JSON.parse(m.value);
        expect([m.key, m.type]).toEqual([id, msg.type]);
        this.log.push(msg);
        this.values.push(m.value);
      } else {
        // the sync topic carries JSON: every message must survive the round trip
        this.log.push(JSON.parse(JSON.stringify(m)));
        this.values.push(JSON.stringify(m));
      }
    }
  }
  rebalance(leader) {
    this.generation += 1;
    const members = [...this.nodes.keys()];
    for (const id of members) {
      const ev = {generation: this.generation, leader: id === leader, ...(id === leader ? {members} : {})};
      this.apply(id, this.nodes.get(id).task.onRebalance(ev, this.now));
    }
  }
  deliverOne(id) {
    const node = this.nodes.get(id);
    if (node.cursor >= this.log.length) return false;
    const at = node.cursor++;
    // a task in records mode reads the record's value as bytes, as KafkaTaskSync passes it
    const msg = this.records.has(id) ? Buffer.from(this.values[at], 'utf8') : this.log[at];
    this.apply(id, node.task.onMessage(msg, this.now));
    return true;
  }
  settle() {
    let more = true;
    while (more) {
      more = false;
      for (const id of this.nodes.keys()) more = this.deliverOne(id) || more;
    }
  }
  work(id) {
    const node = this.nodes.get(id);
    const tokens = [...node.running.keys()];
    if (tokens.length === 0) return;
    const token = tokens[Math.floor(this.rand() * tokens.length)];
    if (node.running.get(token) === 'scheduled') {
      this.apply(id, node.task.partitionStarted(token, this.now));
      node.running.set(token, 'running');
      return;
    }
    if (DAG[token]) this.apply(id, node.task.addPartitions(DAG[token], this.now));
    this.apply(id, node.task.partitionFinished(token, this.now));
    node.running.delete(token);
    expect(this.finished.has(token)).toBe(false);
    this.finished.add(token);
  }
  tick(dt) {
    this.now += dt;
    for (const [id, node] of this.nodes) this.apply(id, node.task.tick(this.now));
  }
  /** Safety: no partition active or owned on two live tasks. */
  check() {
    const owner = new Map();
    for (const [id, node] of this.nodes) {
      for (const p of node.task.ownedPartitions()) {
        expect(owner.get(p.token)).toBeUndefined();
        owner.set(p.token, id);
      }
    }
  }
  step() {
    const ids = [...this.nodes.keys()];
    const id = ids[Math.floor(this.rand() * ids.length)];
    const r = this.rand();
    if (r < 0.5) this.deliverOne(id);
    else if (r < 0.85) this.work(id);
    else this.tick(Math.floor(this.rand() * 40));
    this.check();
  }
}

describe('SyncTask: three tasks through the JS API', () => {
  test.each([
    [1, []], [2, []], [3, []], [4, []], [5, []],
    [6, ['t1', 't3']], [7, ['t2']], [8, ['t1', 't2', 't3']],
  ])('seed %i, in records mode %j: splits, a merge, a crash and quick rebalances; everything finishes once', (seed, records) => {
    const c = new Cluster(['t1', 't2', 't3'], seed, records);
    c.rebalance('t1');
    c.settle();
    for (const id of ['t1', 't2', 't3']) expect(c.nodes.get(id).task.epoch()).toBe('1-t1');
    expect(c.nodes.get('t1').task.isLeader()).toBe(true);
    c.apply('t1', c.nodes.get('t1').task.addPartitions([{token: 'r'}], c.now));
    for (let i = 0; i < 60; i++) c.step();
    // t3 crashes; two rebalances in quick succession
    c.nodes.delete('t3');
    c.rebalance('t2');
    for (let i = 0; i < 5; i++) c.step();
    c.rebalance('t1');
    for (let i = 0; i < 2000 && c.finished.size < ALL.length; i++) c.step();
    c.settle();
    expect([...c.finished].sort()).toEqual([...ALL].sort());
    const epochs = new Set([...c.nodes.values()].map((n) => n.task.epoch()));
    expect(epochs).toEqual(new Set(['3-t1']));
    // every state is known everywhere, nothing is left shared
    for (const node of c.nodes.values()) {
      expect(node.task.sharedPartitions()).toEqual([]);
      expect(node.task.knownTasks().map((s) => s.taskID)).toEqual(['t1', 't2']);
    }
  });

  test('the wire format keeps the field names of the Spanner connector design', () => {
    const c = new Cluster(['t1', 't2'], 9);
    c.rebalance('t1');
    c.settle();
    c.apply('t1', c.nodes.get('t1').task.addPartitions([{token: 'x'}, {token: 'y'}], c.now));
    const epoch = c.log.find((m) => m.type === 'NewEpoch');
    expect(Object.keys(epoch)).toEqual(expect.arrayContaining(['syncEpoch', 'taskID', 'messageTimestamp', 'type', 'connectorState']));
    expect(Object.keys(epoch.connectorState[0])).toEqual(['taskID', 'stateTimestamp', 'stateVersion', 'data', 'share']);
    const shared = c.log.at(-1).connectorState[0].share.partitions[0];
    expect(shared).toEqual({token: 'y', parents: [], state: 'Created', assignee: 't2'});
    c.settle();
    expect(c.nodes.get('t2').task.ownedPartitions().map((p) => p.token)).toEqual(['y']);
    expect(c.nodes.get('t1').task.sharedPartitions()).toEqual([]);
  });

  test('a task that reads the log with a hole stops everything and fences itself', () => {
    const t1 = new SyncTask('t1');
    const t2 = new SyncTask('t2');
    const log = [];
    let now = 0;
    log.push(...t1.onRebalance({generation: 1, leader: true, members: ['t1', 't2']}, now).publish);
    log.push(...t2.onRebalance({generation: 1, leader: false}, now).publish);
    const read = {t1: 0, t2: 0};
    for (let round = 0; round < 5; round++) {
      for (const [id, task] of [['t1', t1], ['t2', t2]]) {
        while (read[id] < log.length) log.push(...task.onMessage(log[read[id]++], ++now).publish);
      }
    }
    expect(t2.epoch()).toBe('1-t1');
    log.push(...t1.addPartitions([{token: 'a'}, {token: 'b'}], ++now).publish);
    for (const [id, task] of [['t1', t1], ['t2', t2]]) {
      while (read[id] < log.length) log.push(...task.onMessage(log[read[id]++], ++now).publish);
    }
    expect(t2.ownedPartitions().map((p) => p.state)).toEqual(['Scheduled']);
    expect(log.every((m) => Number.isInteger(m.messageSeq))).toBe(true);
    // t1 publishes two messages; t2 reads only the second
    const first = t1.tick(now + 200_000).publish.concat(t1.onRebalance({generation: 2, leader: false}, now + 200_001).publish);
    expect(first.length).toBeGreaterThanOrEqual(1);
    const later = t1.partitionStarted('a', now + 200_002).publish;
    expect(later.length).toBe(1);
    const out = t2.onMessage(later[0], now + 200_003);
    expect(out.fenced).toMatch(/missed messages .* of t1/);
    expect(out.stop).toEqual(['b']);
    expect(t2.fenced()).toBe(out.fenced);
    expect(t2.tick(now + 300_000)).toEqual({publish: [], start: [], stop: []});
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
    const t = new SyncTask('t1');
    const log = t.onRebalance({generation: 1, leader: true, members: ['t1']}, 0).publish;
    for (let i = 0; i < log.length; i++) log.push(...t.onMessage(log[i], 1).publish);
    const added = t.addPartitions([{token: 'a'}], 2);
    expect(added.start).toEqual(['a']);
    expect(t.closed()).toBe(false);
    // its records of `a` are not read back yet: the checkpoint waits for them
    const pending = [...added.publish, ...t.partitionStarted('a', 3).publish];
    expect(() => t.close(-1)).toThrow(SyncError);
    // it publishes its own state once more (the record its final checkpoint names)
    const closing = t.close(4).publish;
    expect(closing.filter((m) => m.checkpoint)).toEqual([]);
    expect(t.closed()).toBe(false);
    // a partition added now is not started by a closing task
    const queue = [...pending, ...closing, ...t.addPartitions([{token: 'b'}], 5).publish];
    const final = [];
    // the log: what it published is read back, and what that publishes, to the end
    for (let i = 0; i < queue.length; i++) {
      const out = t.onMessage(queue[i], 6 + i);
      expect(out.start).toEqual([]);
      final.push(...out.publish.filter((m) => m.checkpoint));
      queue.push(...out.publish);
    }
    expect(final).toHaveLength(1);
    const own = final[0].connectorState.find((s) => s.taskID === 't1');
    expect(own.data.partitions.map((p) => p.token).sort()).toEqual(['a', 'b']);
    expect(t.closed()).toBe(true);
    expect(t.close(100)).toEqual({publish: [], start: [], stop: []});
  });
});

describe('SyncTask: records of at most maxRecordBytes', () => {
  test('an epoch goes out in chunks, applied whole at its last one; a last chunk that breaks it is refused and changes nothing', () => {
    const opts = {rebalanceTimeout: 500, epochAckTimeout: 300, maxRecordBytes: 1024};
    const ids = ['a', 'b'];
    const tasks = {a: new SyncTask('a', opts), b: new SyncTask('b', opts)};
    const log = [];
    const cursor = {a: 0, b: 0};
    const settle = (now) => {
      for (let moved = true; moved; ) {
        moved = false;
        for (const id of ids) {
          while (cursor[id] < log.length) {
            log.push(...tasks[id].onMessage(log[cursor[id]++], now).publish);
            moved = true;
          }
        }
      }
    };
    const specs = (id) => Array.from({length: 40}, (_, i) => ({token: `${id}-partition-token-${String(i).padStart(6, '0')}`}));
    log.push(...tasks.a.onRebalance({generation: 1, leader: true, members: ids}, 1).publish);
    log.push(...tasks.b.onRebalance({generation: 1, leader: false}, 1).publish);
    settle(2);
    for (const id of ids) log.push(...tasks[id].addPartitions(specs(id), 3).publish);
    settle(4);
    const from = log.length;
    log.push(...tasks.a.onRebalance({generation: 2, leader: false}, 5).publish);
    log.push(...tasks.b.onRebalance({generation: 2, leader: true, members: ids}, 5).publish);
    settle(6);
    const chunks = log.slice(from).filter((m) => m.type === 'NewEpoch' && m.syncEpoch === '2-b' && m.chunk);
    expect(chunks.length).toBeGreaterThan(1);
    expect(tasks.a.epoch()).toBe('2-b');
    expect(Math.max(...log.map((m) => JSON.stringify(m).length))).toBeLessThanOrEqual(1024);
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
    const c = new Cluster(['t1', 't2'], 7);
    c.rebalance('t1');
    c.settle();
    c.apply('t1', c.nodes.get('t1').task.addPartitions([{token: 'p'}, {token: 'q'}], c.now));
    c.settle();
    return c;
  };
  const view = (t) => JSON.stringify([t.epoch(), t.knownTasks(), t.ownedPartitions(), t.sharedPartitions(), t.pollTimeout()]);

  test('errors are SyncError with a code, task unchanged', () => {
    const c = fresh();
    const t = c.nodes.get('t2').task;
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
    const t = c.nodes.get('t2').task;
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
    const owner = ['t1', 't2'].find((id) => c.nodes.get(id).task.ownedPartitions().some((p) => p.token === 'q'));
    const o = c.nodes.get(owner).task;
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
    const [a, b, s] = [objects, bytes, text].map((c) => c.nodes.get('t2').task);
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
    const t = c.nodes.get('t2').task;
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
    c.apply('t1', c.nodes.get('t1').task.addPartitions([{token: 'later'}], c.now));
    c.settle();
    c.check();
    expect(c.nodes.get('t2').task.epoch()).toBe('1-t1');
  });
});
