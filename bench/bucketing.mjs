// Bucketing: 1M distinct entity ids, the faros algorithm in Node (createHmac per call) vs
// partkit's single calls, batch calls, and the native Rust core.
import {createHmac} from 'node:crypto';
import {createRequire} from 'node:module';
import {fmt, native, nsPer, ratio} from './_util.mjs';

const N = Number(process.env.BENCH_N ?? 1_000_000);
const KEY = 'farosai/airbyte-github-source';
const TOTAL = 16;

function faros(key, data, bucketTotal) {
  const md5 = createHmac('md5', key);
  md5.update(data);
  const hex = md5.digest('hex').substring(0, 8);
  return (parseInt(hex, 16) % bucketTotal) + 1;
}

export async function run(api, report) {
  const ids = Array.from({length: N}, (_, i) => `org-${i % 5000}/repository-${i}`);
  let sink = 0;
  const ref = nsPer(N, () => { for (const id of ids) sink += faros(KEY, id, TOTAL); });
  const single = nsPer(N, () => { for (const id of ids) sink += api.bucket(KEY, id, TOTAL); });
  const many = nsPer(N, () => { sink += api.bucketMany(KEY, ids, TOTAL)[0]; });
  const bucketer = new api.Bucketer(KEY, TOTAL);
  const reused = nsPer(N, () => { sink += bucketer.bucketMany(ids)[0]; });
  const formats = packedFormats(ids);
  const {nsPerEntity: nat, nsPerEntityBatch: natBatch} = native('bench_bucketing', [N]);
  const check = api.bucketMany(KEY, ids.slice(0, 1000), TOTAL);
  if (ids.slice(0, 1000).some((id, i) => faros(KEY, id, TOTAL) !== check[i])) throw new Error('bench: results differ');
  report(`bucketing: ${N.toLocaleString('en')} distinct entity ids, bucket_total ${TOTAL}`,
    ['implementation', 'per entity', 'vs Node reference', 'vs native Rust'],
    [
      ['faros algorithm in Node (`createHmac` per call)', fmt(ref), ratio(1), `${(ref / nat).toFixed(1)}× slower`],
      ['partkit `bucket()` per call', fmt(single), ratio(ref / single), `${(single / nat).toFixed(2)}×`],
      ['partkit `bucketMany()`', fmt(many), ratio(ref / many), `${(many / nat).toFixed(2)}×`],
      ['partkit `Bucketer.bucketMany()`', fmt(reused), ratio(ref / reused), `${(reused / nat).toFixed(2)}×`],
      ['native Rust, `Bucketer::bucket` per id', fmt(nat), ratio(ref / nat), '1.00×'],
      ['native Rust, `Bucketer::bucket_packed` (the path `bucketMany` runs)', fmt(natBatch), ratio(ref / natBatch), `${(natBatch / nat).toFixed(2)}×`],
    ]);
  report('bucketing: the two packed string formats (raw wasm, one reused Bucketer)',
    ['format', 'per entity', 'vs joined string'],
    [
      ['one joined string + UTF-16 lengths (`bucketPacked`, what `bucketMany` uses)', fmt(formats.joined), ratio(1)],
      ['UTF-16 code units written into wasm memory (`bucketUtf16`, `mapPacked`)', fmt(formats.utf16), `${(formats.joined / formats.utf16).toFixed(2)}×`],
    ]);
  return sink;
}

/**
 * The two packed formats of js/packed.mjs side by side on the same ids, through the raw wasm
 * glue: `mapJoined`'s (join, wasm-bindgen encodes to UTF-8) and `mapPacked`'s (UTF-16 code
 * units written into wasm memory, Rust encodes each item).
 */
function packedFormats(ids) {
  const raw = createRequire(import.meta.url)('../pkg/node/partkit.js');
  const b = new raw.Bucketer(KEY, TOTAL);
  const lens = new Uint32Array(ids.length);
  for (let i = 0; i < ids.length; i++) lens[i] = ids[i].length;
  const packed = new raw.PackedStrings();
  let a, c;
  const joined = nsPer(ids.length, () => { a = b.bucketPacked(ids.join(''), lens); });
  // As mapPacked does: chunks of at most 2^18 code units, strings grouped per Buffer.write.
  const utf16 = nsPer(ids.length, () => {
    c = new Uint32Array(ids.length);
    let start = 0;
    while (start < ids.length) {
      let end = start;
      let size = 0;
      while (end < ids.length && (end === start || size + lens[end] <= 1 << 18)) size += lens[end++];
      packed.reset(size, end - start);
      const {buffer} = raw.wasmMemory();
      new Uint32Array(buffer, packed.lensPtr(), end - start).set(lens.subarray(start, end));
      const buf = Buffer.from(buffer, packed.unitsPtr(), size * 2);
      let o = 0;
      let i = start;
      while (i < end) {
        let s = ids[i++];
        while (i < end && s.length < 1 << 14) s += ids[i++];
        o += buf.write(s, o, 'utf16le');
      }
      c.set(b.bucketUtf16(packed), start);
      start = end;
    }
  });
  if (a.length !== c.length || a.some((x, i) => x !== c[i])) throw new Error('bench: the two formats differ');
  packed.free();
  b.free();
  return {joined, utf16};
}
