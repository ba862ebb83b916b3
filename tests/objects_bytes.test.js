// The bytes path of object partitioning: listings as newline-separated UTF-8 bytes, fed in
// chunks, against `partitionObjects`/`indexMany` on the same keys read as the CLI reads them.
const fc = require('fast-check');
const p = require('partkit');

const decoder = new TextDecoder('utf-8', {ignoreBOM: true});
const enc = new TextEncoder();

/** The CLI's keys: decoded (U+FFFD for invalid bytes), split at \n, one \r dropped, empty skipped. */
const cliLines = (bytes) => decoder.decode(bytes).split('\n').map((l) => l.replace(/\r$/, '')).filter((l) => l.length > 0);

const SOURCES = [
  {key: 'logs/*', partition: {type: 'object'}},
  {key: 'logs/*', partition: {type: 'none'}},
  {key: 'logs/*', partition: {type: 'regex', pattern: 'user(\\d+)'}},
  {key: '', partition: {type: 'regex', pattern: '[a-zé]+'}},
  {key: 'logs/', partition: {type: 'substring', startIndex: 1, endIndex: 4}},
  {key: 'logs/*', partition: {type: 'date', dateFormat: '2006-01-02'}},
];

const PIECES = ['\n', '\r\n', '\r', '/', 'logs/', 'user12', '2024-02-29', 'é文🎉', '\uFEFF'].map((s) => enc.encode(s));
const piece = fc.oneof(
  fc.constantFrom(...PIECES),
  fc.constantFrom(new Uint8Array([0xff]), new Uint8Array([0xc3]), new Uint8Array([0xe2, 0x82]), new Uint8Array([0xf0, 0x9f, 0x98])),
  fc.stringMatching(/^[a-z0-9]{1,6}$/).map((s) => enc.encode(s)),
  fc.uint8Array({minLength: 1, maxLength: 3}),
);
const listing = fc.array(piece, {maxLength: 40}).map((parts) => Buffer.concat(parts));

/** Splits `bytes` at sorted `cuts` into chunks (views: no copy). */
function chunks(bytes, cuts) {
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out = [];
  let from = 0;
  for (const c of [...at, bytes.length]) {
    out.push(bytes.subarray(from, c));
    from = c;
  }
  return out;
}

/** The kept lines' bytes, streamed through a LineSelector. */
function streamed(sel, parts) {
  const lines = [];
  parts.forEach((chunk, i) => {
    const {ranges, head} = sel.selectLines(chunk, {final: i === parts.length - 1});
    for (let r = 0; r < ranges.length; r += 2) {
      const body = chunk.subarray(ranges[r], ranges[r + 1]);
      lines.push(r === 0 && head.length > 0 ? Buffer.concat([head, body]) : Buffer.from(body));
    }
  });
  return lines;
}

describe('bytes path = partitionObjects on the decoded lines', () => {
  test('any listing, any chunking, every type and partition', () => {
    fc.assert(
      fc.property(listing, fc.array(fc.nat(), {maxLength: 8}), fc.nat(SOURCES.length - 1), fc.integer({min: 1, max: 5}),
        (bytes, cuts, s, total) => {
          const source = SOURCES[s];
          const keys = cliLines(bytes);
          const part = new p.ObjectPartitioner(total, source);
          expect(Array.from(part.partitionLines(bytes))).toEqual(Array.from(part.indexMany(keys)));
          const indexer = part.lineIndexer();
          const parts = chunks(bytes, cuts);
          const idx = parts.flatMap((c, i) => Array.from(indexer.indexLines(c, {final: i === parts.length - 1})));
          expect(idx).toEqual(Array.from(part.indexMany(keys)));
          indexer.free();
          for (let index = 0; index < total; index++) {
            const want = p.partitionObjects(keys, total, index, source);
            const sel = part.lineSelector(index);
            const got = streamed(sel, parts);
            expect(got.map((b) => decoder.decode(b))).toEqual(want);
            expect(sel.carried).toBe(0);
            // One shot: ranges into the whole listing.
            const ranges = part.selectLines(bytes, index);
            const oneShot = [];
            for (let r = 0; r < ranges.length; r += 2) oneShot.push(Buffer.from(bytes.subarray(ranges[r], ranges[r + 1])));
            expect(oneShot).toEqual(got);
            // selectBytes: the same lines, raw, each with \n.
            const bytesOut = Buffer.concat(parts.map((c, i) => sel.selectBytes(c, {final: i === parts.length - 1})));
            expect(bytesOut).toEqual(Buffer.concat(got.flatMap((l) => [l, Buffer.from('\n')])));
            sel.free();
          }
          part.free();
        }),
      {numRuns: 300},
    );
  });

  test('a key split across chunks: ranges into each chunk, the earlier bytes as head', () => {
    const part = new p.ObjectPartitioner(1, {partition: {type: 'object'}});
    const sel = part.lineSelector(0);
    let r = sel.selectLines(enc.encode('first\r\nsec'));
    expect(Array.from(r.ranges)).toEqual([0, 5]);
    expect(sel.carried).toBe(3);
    r = sel.selectLines(enc.encode('ond\r'));
    expect(Array.from(r.ranges)).toEqual([]);
    r = sel.selectLines(enc.encode('\nthird'), {final: true});
    expect(Array.from(r.ranges)).toEqual([0, 0, 1, 6]);
    expect(Buffer.from(r.head).toString()).toBe('second');
    expect(sel.carried).toBe(0);
  });

  test('invalid UTF-8 is the key TextDecoder gives; raw bytes come back', () => {
    const part = new p.ObjectPartitioner(7, {partition: {type: 'object'}});
    const bytes = Buffer.from([0x61, 0xff, 0x62, 0x0a, 0xe2, 0x82, 0x0a]);
    expect(Array.from(part.partitionLines(bytes))).toEqual([part.indexOf('a\uFFFDb'), part.indexOf('\uFFFD')]);
    const i = part.indexOf('a\uFFFDb');
    expect(Buffer.from(part.lineSelector(i).selectBytes(bytes, {final: true})).subarray(0, 4)).toEqual(Buffer.from([0x61, 0xff, 0x62, 0x0a]));
  });
});

describe('bounds and errors', () => {
  const part = new p.ObjectPartitioner(4, {partition: {type: 'object'}});

  test('argument types', () => {
    for (const v of ['abc', [1, 2], new Uint16Array(2), new Proxy(new Uint8Array(2), {}), null, {length: 3}]) {
      expect(() => part.partitionLines(v)).toThrow(expect.objectContaining({code: 'INVALID_ARGUMENT'}));
      expect(() => part.lineSelector(0).selectLines(v)).toThrow(expect.objectContaining({code: 'INVALID_ARGUMENT'}));
    }
    expect(() => part.lineSelector(0).selectLines(new Uint8Array(1), {final: 1})).toThrow(expect.objectContaining({code: 'INVALID_ARGUMENT'}));
    expect(() => part.lineSelector(4)).toThrow(expect.objectContaining({code: 'PARTITION_INDEX_OUT_OF_RANGE'}));
    expect(() => part.lineSelector(-1)).toThrow(expect.objectContaining({code: 'PARTITION_INDEX_OUT_OF_RANGE'}));
    expect(() => part.lineSelector(0.5)).toThrow(expect.objectContaining({code: 'INVALID_ARGUMENT'}));
  });

  test('a line over 1 MiB is INPUT_TOO_LARGE and changes nothing', () => {
    const sel = part.lineIndexer();
    const big = new Uint8Array(1 << 20).fill(97);
    sel.indexLines(big);
    expect(sel.carried).toBe(1 << 20);
    expect(() => sel.indexLines(enc.encode('a\nb\n'))).toThrow(expect.objectContaining({code: 'INPUT_TOO_LARGE'}));
    expect(sel.carried).toBe(1 << 20);
    sel.reset();
    expect(Array.from(sel.indexLines(enc.encode('x\n'), {final: true}))).toEqual([part.indexOf('x')]);
    expect(() => part.partitionLines(new Uint8Array((1 << 20) + 1).fill(98))).toThrow(expect.objectContaining({code: 'INPUT_TOO_LARGE'}));
  });

  test('a chunk over 64 MiB is INPUT_TOO_LARGE; a whole listing is sliced', () => {
    const sel = part.lineSelector(0);
    expect(() => sel.selectLines(new Uint8Array((1 << 26) + 1))).toThrow(expect.objectContaining({code: 'INPUT_TOO_LARGE'}));
    // 3 MiB of keys, one-shot: sliced into 1 MiB calls, keys straddling slices included.
    const keys = Array.from({length: 100000}, (_, i) => `logs/key-${i}-${'x'.repeat(i % 40)}`);
    const bytes = enc.encode(keys.join('\n'));
    expect(Array.from(part.partitionLines(bytes))).toEqual(Array.from(part.indexMany(keys)));
    const ranges = part.selectLines(bytes, 2);
    const got = [];
    for (let r = 0; r < ranges.length; r += 2) got.push(decoder.decode(bytes.subarray(ranges[r], ranges[r + 1])));
    expect(got).toEqual(p.partitionObjects(keys, 4, 2, {partition: {type: 'object'}}));
  });

  test('freed objects throw OBJECT_FREED from JS', () => {
    const sel = part.lineSelector(1);
    sel.free();
    sel.free();
    expect(() => sel.selectLines(new Uint8Array(1))).toThrow(expect.objectContaining({code: 'OBJECT_FREED'}));
    const q = new p.ObjectPartitioner(2, {});
    q.free();
    expect(() => q.lineSelector(0)).toThrow(expect.objectContaining({code: 'OBJECT_FREED'}));
  });
});
