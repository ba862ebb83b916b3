// The start rule through the wasm binding: `syncLogStart` (the package root's, which
// partkit/kafka exports as `findEpochStart`) answers on random logs exactly what the core's `find_epoch_start`
// answers (tests/vectors/epoch-start.json, written by the Rust test
// `sync::start::tests::vectors_for_the_js_binding`, which also checks the file is current), and
// `checkpointMessage` joins chunks as a SyncTask does.
const {readFileSync} = require('node:fs');
const {join} = require('node:path');
const {SyncError, SyncTask, checkpointMessage, syncLogStart} = require('partkit');
const {findEpochStart} = require('partkit/kafka');

const vectors = JSON.parse(readFileSync(join(__dirname, 'vectors', 'epoch-start.json'), 'utf8'));

test('partkit/kafka exports the root function as findEpochStart', () => {
  expect(findEpochStart).toBe(syncLogStart);
});

test(`the JS-bound rule answers as the Rust rule on ${vectors.length} random logs`, () => {
  const kinds = new Set();
  for (const {records, where, start} of vectors) {
    expect(findEpochStart(records, where)).toEqual(start);
    // offsets as bigints and strings: the same answer
    const big = records.map((r) => ({...r, offset: BigInt(r.offset)}));
    expect(findEpochStart(big, {atLow: where.atLow, low: String(where.low)})).toEqual(start);
    kinds.add(start.extend ? 'extend' : start.chunks ? 'chunks' : start.checkpoint ? 'checkpoint' : 'offset');
  }
  expect([...kinds].sort()).toEqual(['checkpoint', 'chunks', 'extend', 'offset']);
});

describe('checkpointMessage', () => {
  const header = {syncEpoch: '2-a', taskID: 'a', messageTimestamp: 5, type: 'NewEpoch', epochGeneration: 2, baseEpoch: '1-a', resend: true, checkpoint: {afterTaskID: 'b', afterSeq: 4}};
  const state = (taskID, from, to) => ({taskID, stateVersion: 1, data: {partitions: Array.from({length: to - from}, (_, i) => ({token: `${taskID}${from + i}`, state: 'Running'}))}});
  const chunks = [
    {...header, messageSeq: 9, chunk: {index: 0, count: 3}, connectorState: [state('a', 0, 3)]},
    {...header, messageSeq: 10, chunk: {index: 1, count: 3}, connectorState: [state('a', 3, 8), state('b', 0, 2)]},
    {...header, messageSeq: 11, chunk: {index: 2, count: 3}, connectorState: [state('b', 2, 8)]},
  ];

  test('joins the chunks into the whole message, without messageSeq or chunk', () => {
    const whole = checkpointMessage(chunks);
    expect(whole.messageSeq).toBeUndefined();
    expect(whole.chunk).toBeUndefined();
    expect(whole.connectorState.map((s) => s.data.partitions.length)).toEqual([8, 8]);
    expect(whole.connectorState[1].data.partitions[0].token).toBe('b0');
    // a SyncTask takes it as its first epoch
    const task = new SyncTask('z');
    task.onMessage(whole, 10);
    const known = Object.fromEntries(task.knownTasks().map((s) => [s.taskID, s.data.partitions.length]));
    expect(known).toEqual(expect.objectContaining({a: 8, b: 8}));
    // one record: itself, without messageSeq
    const one = checkpointMessage([{...header, messageSeq: 3, connectorState: [state('a', 0, 1)]}]);
    expect(one.messageSeq).toBeUndefined();
    expect(one.syncEpoch).toBe('2-a');
  });

  test('chunks that do not make one message, and wrong arguments, are SyncErrors', () => {
    const code = (fn) => {
      try {
        fn();
      } catch (e) {
        expect(e).toBeInstanceOf(SyncError);
        return e.code;
      }
      return undefined;
    };
    expect(code(() => checkpointMessage([chunks[0], chunks[2]]))).toBe('INVALID_ARGUMENT');
    expect(code(() => checkpointMessage([chunks[1], chunks[0], chunks[2]]))).toBe('INVALID_ARGUMENT');
    expect(code(() => checkpointMessage([]))).toBe('INVALID_ARGUMENT');
    expect(code(() => checkpointMessage('x'))).toBe('INVALID_ARGUMENT');
    expect(code(() => checkpointMessage([null]))).toBe('INVALID_ARGUMENT');
    expect(code(() => checkpointMessage([{connectorState: 5}]))).toBe('INVALID_ARGUMENT');
    // one record that is no chunk: itself (the SyncTask checks what it reads)
    expect(checkpointMessage([{type: 'Nope', messageSeq: 1}])).toEqual({type: 'Nope', connectorState: []});
  });
});
