// Bucketing: 1M distinct entity ids, the faros algorithm in Node (createHmac per call) vs
// partkit's single calls, batch calls, and the native Rust core.
import {createHmac} from 'node:crypto';
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
      ['native Rust, `Bucketer::bucket_packed` (the multi-lane batch kernel)', fmt(natBatch), ratio(ref / natBatch), `${(natBatch / nat).toFixed(2)}×`],
    ]);
  return sink;
}

