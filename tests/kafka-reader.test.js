// SyncLogReader: the sync-topic reader's state machine (js/kafka/reader.mjs), driven by hand:
// records in, actions out, no broker, no timers.
const {SyncError} = require('partkit');
const {SyncLogReader} = require('partkit/kafka');

const T = 't_sync';
const v = (m) => JSON.stringify({taskID: 'x', syncEpoch: '', connectorState: [], ...m});
const regular = (n) => v({type: 'Regular', n});
const newEpoch = (syncEpoch, baseEpoch, extra = {}) => v({type: 'NewEpoch', syncEpoch, baseEpoch, ...extra});
/** A delivered message: records go out as read (the SyncTask parses them), a joined checkpoint parsed. */
const parsed = (message) => (typeof message === 'string' || message instanceof Uint8Array ? JSON.parse(Buffer.from(message).toString()) : message);

/** A log as an array of values (offset = index + base) and a consumer that fetches from it. */
function driver(values, {low = 0, scanWindow = 256, skip = new Map()} = {}) {
  const high = low + values.length;
  const reader = new SyncLogReader({topic: T, low, high, scanWindow});
  const out = {reader, delivered: [], warnings: [], seeks: [], fenced: null, ready: false, log: values, low};
  let pos = null;
  const apply = (actions) => {
    let seeked = false;
    for (const a of actions) {
      if (a.type === 'deliver') out.delivered.push(Number(a.offset));
      else if (a.type === 'warning') out.warnings.push(a.message);
      else if (a.type === 'fence') out.fenced = a.reason;
      else if (a.type === 'ready') out.ready = true;
      else if (a.type === 'seek') {
        out.seeks.push([Number(a.offset), a.delay]);
        pos = Number(a.offset) < out.low ? out.low : Number(a.offset); // out of range: earliest
        seeked = true;
      }
    }
    return seeked;
  };
  /** Delivers records from the seek position, as a consumer does, until the end of the log. */
  out.run = () => {
    apply(reader.begin());
    out.pump();
    return out;
  };
  out.pump = () => {
    while (pos !== null && pos < out.low + out.log.length) {
      if (pos < out.low) pos = out.low;
      let at = pos;
      const n = skip.get(at) ?? 0;
      if (n > 0 && at + 1 < out.low + out.log.length) {
        skip.set(at, n - 1);
        at += 1; // this fetch leaves the record out
      }
      if (!apply(reader.record(String(at), Buffer.from(out.log[at - out.low])))) pos = at + 1;
      if (out.fenced) break;
    }
  };
  out.append = (...vals) => {
    out.log.push(...vals);
    out.pump();
  };
  return out;
}

/** A driver over `log` that also keeps every action its reader returned, run to the end. */
function recording(log) {
  const d = driver(log);
  const actions = [];
  const record = d.reader.record.bind(d.reader);
  d.reader.record = (o, val) => {
    const a = record(o, val);
    actions.push(...a);
    return a;
  };
  d.run();
  return {d, actions};
}

describe('SyncLogReader', () => {
  test('an empty log: seek to the end, ready at once, then every record in order', () => {
    const r = new SyncLogReader({topic: T, low: 5, high: 5, scanWindow: 10});
    expect(r.begin()).toEqual([{type: 'seek', offset: 5n, delay: 0}, {type: 'ready'}]);
    expect(r.record('5', regular(0))).toEqual([{type: 'deliver', offset: 5n, message: regular(0)}]);
    expect(r.record(6, regular(1)).map((a) => a.type)).toEqual(['deliver']);
    expect(r.lastOffset).toBe(6n);
  });

  test('the replay starts at the base epoch of the latest NewEpoch; the window grows fourfold', () => {
    const log = [];
    for (let i = 0; i < 100; i++) log.push(regular(i));
    log.push(newEpoch('1-x', '')); // 100
    for (let i = 101; i < 400; i++) log.push(regular(i));
    log.push(newEpoch('2-x', '1-x')); // 400
    for (let i = 401; i < 600; i++) log.push(regular(i));
    const d = driver(log, {scanWindow: 100}).run();
    expect(d.seeks).toEqual([[500, 0], [200, 0], [0, 0]]);
    expect(d.ready).toBe(true);
    expect(d.delivered).toEqual(Array.from({length: 500}, (_, i) => 100 + i));
    expect(d.warnings).toEqual([]);
    expect(d.reader.phase).toBe('live');
    d.append(regular(600));
    expect(d.delivered[d.delivered.length - 1]).toBe(600);
  });

  test('starts at the latest clean checkpoint', () => {
    const log = [
      newEpoch('1-a', ''),
      v({type: 'Regular', taskID: 'b', messageSeq: 7}), // 1
      newEpoch('1-a', '', {resend: true, checkpoint: {afterTaskID: 'b', afterSeq: 7}}), // 2: clean
      regular(3),
    ];
    const d = driver(log).run();
    expect(d.delivered).toEqual([2, 3]);
  });

  test('an unclean checkpoint is applied first (without its counter), then the records after the one it names', () => {
    const log = [
      newEpoch('1-a', ''),
      v({type: 'Regular', taskID: 'b', messageSeq: 7}), // 1: named
      v({type: 'Regular', taskID: 'c', messageSeq: 2}), // 2: came between
      newEpoch('1-a', '', {taskID: 'b', messageSeq: 8, resend: true, checkpoint: {afterTaskID: 'b', afterSeq: 7}}), // 3
      regular(4),
    ];
    const {d, actions} = recording(log);
    expect(d.delivered).toEqual([3, 2, 3, 4]);
    const first = actions.find((a) => a.type === 'deliver');
    expect(first.message).toEqual(expect.objectContaining({type: 'NewEpoch', checkpoint: {afterTaskID: 'b', afterSeq: 7}}));
    expect(first.message).not.toHaveProperty('messageSeq');
    expect(parsed(actions.filter((a) => a.type === 'deliver')[2].message).messageSeq).toBe(8);
  });

  test('an overtaken chunked checkpoint is applied joined, then read again chunk by chunk', () => {
    const state = (taskID, tokens) => ({taskID, data: {partitions: tokens.map((token) => ({token}))}, share: {partitions: []}});
    const chunk = (index, messageSeq, connectorState) =>
      newEpoch('1-a', '', {taskID: 'b', messageSeq, resend: true, checkpoint: {afterTaskID: 'b', afterSeq: 7}, chunk: {index, count: 2}, connectorState});
    const log = [
      newEpoch('1-a', ''),
      v({type: 'Regular', taskID: 'b', messageSeq: 7}), // 1: named
      chunk(0, 8, [state('a', ['p1']), state('b', ['p2'])]), // 2
      v({type: 'Regular', taskID: 'c', messageSeq: 2}), // 3: came between the chunks
      chunk(1, 9, [state('b', ['p3']), state('c', [])]), // 4
    ];
    const {d, actions} = recording(log);
    expect(d.delivered).toEqual([2, 2, 3, 4]);
    const first = actions.find((a) => a.type === 'deliver').message;
    expect(first).not.toHaveProperty('messageSeq');
    expect(first).not.toHaveProperty('chunk');
    expect(first.connectorState.map((s) => [s.taskID, s.data.partitions.map((p) => p.token)])).toEqual([['a', ['p1']], ['b', ['p2', 'p3']], ['c', []]]);
  });

  test('a skipped offset is fetched again (50, 100 ms later); when it comes: a warning, nothing lost, nothing twice', () => {
    const d = driver([newEpoch('1-a', ''), regular(1), regular(2)], {skip: new Map([[1, 2]])}).run();
    expect(d.seeks).toEqual([[0, 0], [1, 50], [1, 100]]);
    expect(d.delivered).toEqual([0, 1, 2]);
    expect(d.warnings).toEqual([`offset 1 of ${T} was missing from a fetch and came on a later one`]);
    expect(d.fenced).toBe(null);
  });

  test('live: a skip fetched again', () => {
    const d = driver([]).run();
    const r = d.reader;
    expect(r.record(0, regular(0)).map((a) => a.type)).toEqual(['deliver']);
    expect(r.record(2, regular(2))).toEqual([{type: 'seek', offset: 1n, delay: 50}]);
    expect(r.record(2, regular(2))).toEqual([{type: 'seek', offset: 1n, delay: 100}]);
    expect(r.record(1, regular(1)).map((a) => a.type)).toEqual(['warning', 'deliver']);
    expect(r.record(2, regular(2)).map((a) => a.type)).toEqual(['deliver']);
    expect(r.lastOffset).toBe(2n);
  });

  test('live: an offset missing from four fetches is a hole: fence, then nothing more', () => {
    const r = new SyncLogReader({topic: T, low: 0, high: 0, scanWindow: 10});
    r.begin();
    r.record(0, regular(0));
    expect(r.record(3, regular(3))).toEqual([{type: 'seek', offset: 1n, delay: 50}]);
    expect(r.record(3, regular(3))).toEqual([{type: 'seek', offset: 1n, delay: 100}]);
    expect(r.record(2, regular(2))).toEqual([{type: 'seek', offset: 1n, delay: 150}]);
    expect(r.record(3, regular(3))).toEqual([{type: 'fence', reason: `offsets 1..2 of ${T} were never read (fetched 4 times)`}]);
    expect(r.phase).toBe('fenced');
    expect(r.record(1, regular(1))).toEqual([]);
    expect(r.record(4, regular(4))).toEqual([]);
  });

  test('retention moved the earliest retained offset past what a live reader read: it fences', () => {
    // the reader read up to 4; records 5..9 were deleted before it fetched them: every fetch
    // from 5 is out of range and starts at the earliest retained offset, 10
    const r = new SyncLogReader({topic: T, low: 0, high: 5, scanWindow: 10});
    r.begin();
    for (let o = 0; o < 5; o++) r.record(o, o === 0 ? newEpoch('1-a', '') : regular(o));
    expect(r.phase).toBe('live');
    const got = [];
    for (let i = 0; i < 4; i++) got.push(...r.record(10, regular(10)));
    expect(got.map((a) => a.type)).toEqual(['seek', 'seek', 'seek', 'fence']);
    expect(got[3].reason).toBe(`offsets 5..9 of ${T} were never read (fetched 4 times)`);
  });

  test('retention moved the earliest retained offset past the window while starting: the replay starts at the first record there is', () => {
    // offsets at start: 0..20; by the time the reader fetches, 0..11 are gone
    const log = Array.from({length: 20}, (_, i) => regular(i));
    const d = driver(log, {scanWindow: 4});
    d.low = 12;
    d.log = log.slice(12);
    d.run();
    // windows 16..20, then 4 × 4 = 16 wide: 4..20 (seek to 4 is out of range: the consumer starts at 12)
    expect(d.seeks.slice(0, 2)).toEqual([[16, 0], [4, 0]]);
    expect(d.seeks.slice(2)).toEqual([[4, 50], [4, 100], [4, 150]]);
    expect(d.warnings).toEqual([`offsets 4..11 of ${T} were deleted (retention) while this task started; replaying from 12`]);
    expect(d.delivered).toEqual([12, 13, 14, 15, 16, 17, 18, 19]);
    expect(d.ready).toBe(true);
    expect(d.fenced).toBe(null);
  });

  test('a hole inside the replay window (not at its start) fences', () => {
    const log = [newEpoch('1-a', ''), regular(1), regular(2), regular(3)];
    const d = driver(log, {skip: new Map([[2, Infinity]])}).run();
    expect(d.fenced).toBe(`offsets 2..2 of ${T} were never read while replaying it (fetched 4 times)`);
    expect(d.ready).toBe(false);
  });

  test('duplicates: a record delivered again (a seek, a reader rebalance) is dropped; equal values at two offsets are two records', () => {
    const r = new SyncLogReader({topic: T, low: 0, high: 0, scanWindow: 10});
    r.begin();
    expect(r.record(0, regular(0)).length).toBe(1);
    expect(r.record(0, regular(0))).toEqual([]);
    // a producer retry can append the same message twice: the reader passes both (the SyncTask
    // keeps the greatest stateVersion of each task, so the second changes nothing)
    expect(r.record(1, regular(0)).map((a) => a.type)).toEqual(['deliver']);
    expect(r.record(1, regular(0))).toEqual([]);
    expect(r.record('0', regular(0))).toEqual([]);
    expect(r.lastOffset).toBe(1n);
  });

  test('a record without a value is read (the offset counts) but not delivered: a warning; any other goes to the SyncTask as read', () => {
    const r = new SyncLogReader({topic: T, low: 0, high: 0, scanWindow: 10});
    r.begin();
    expect(r.record(0, null)).toEqual([{type: 'warning', message: `skipped an unreadable record at offset 0 of ${T}`}]);
    // not parsed here: the SyncTask refuses it (SYNC_MALFORMED_MESSAGE), as every task does
    expect(r.record(1, 'not json')).toEqual([{type: 'deliver', offset: 1n, message: 'not json'}]);
    expect(r.record(2, regular(2)).map((a) => a.type)).toEqual(['deliver']);
    expect(r.lastOffset).toBe(2n);
  });

  test('while replaying, a record that is not JSON is read but not delivered: a warning', () => {
    const d = driver([newEpoch('1-a', ''), 'not json', regular(2)]).run();
    expect(d.delivered).toEqual([0, 2]);
    expect(d.warnings).toEqual([`skipped an unreadable record at offset 1 of ${T}`]);
  });

  test('bad arguments are SyncErrors', () => {
    expect(() => new SyncLogReader({topic: T, low: 5, high: 4, scanWindow: 1})).toThrow(SyncError);
    expect(() => new SyncLogReader({topic: T, low: -1, high: 4, scanWindow: 1})).toThrow(expect.objectContaining({code: 'INVALID_ARGUMENT'}));
    expect(() => new SyncLogReader({topic: T, low: 0, high: 4, scanWindow: 0})).toThrow(expect.objectContaining({code: 'INVALID_ARGUMENT'}));
    expect(() => new SyncLogReader({topic: T, low: 0, high: 4, scanWindow: 1, refetches: -1})).toThrow(expect.objectContaining({code: 'INVALID_ARGUMENT'}));
    expect(() => new SyncLogReader({topic: T, low: 0, high: 4, scanWindow: 1, refetchDelay: 0.5})).toThrow(expect.objectContaining({code: 'INVALID_ARGUMENT'}));
    const r = new SyncLogReader({topic: T, low: 0, high: 0, scanWindow: 1});
    expect(() => r.record('x', null)).toThrow(expect.objectContaining({code: 'INVALID_ARGUMENT'}));
    expect(() => r.record(Symbol('o'), null)).toThrow(expect.objectContaining({code: 'INVALID_ARGUMENT'}));
  });
});
