// Import buckets: 1M bucketless items over 10 datasets assigned in one call (random v4 and
// derived v5), vs the shipped service's algorithm written in plain JS, plus grouping by
// partition key and the native Rust core.
import {randomUUID} from 'node:crypto';
import {fmt, native, nsPer, ratio} from './_util.mjs';

const N = Number(process.env.BENCH_N ?? 1_000_000);
const DATASETS = 10;
const BUCKETS = 5;

/**
 * The shipped service's algorithm: per dataset min(N, count) random UUIDs, round-robin, copies
 * made the way partkit makes them (Object.assign, the fastest in V8), so the ratio compares the
 * assignment, not the copying.
 */
function reference(items, n) {
  const byDataset = new Map();
  for (const item of items) {
    if (item.bucket != null) continue;
    const d = item.datasetName;
    byDataset.set(d, (byDataset.get(d) ?? 0) + 1);
  }
  const buckets = new Map();
  for (const [d, count] of byDataset) buckets.set(d, Array.from({length: Math.max(1, Math.min(n, count))}, () => randomUUID()));
  const seen = new Map();
  return items.map((item) => {
    const copy = Object.assign({}, item);
    if (item.bucket != null) return copy;
    const list = buckets.get(item.datasetName);
    const i = seen.get(item.datasetName) ?? 0;
    seen.set(item.datasetName, i + 1);
    copy.bucket = list[i % list.length];
    return copy;
  });
}

export async function run(api, report) {
  const items = Array.from({length: N}, (_, i) => ({id: `doc-${i}`, datasetName: `dataset-${i % DATASETS}`, text: 'q/a'}));
  let sink = 0;
  const ref = nsPer(N, () => { sink += reference(items, BUCKETS).length; });
  const random = nsPer(N, () => { sink += api.assignImportBuckets(items, {buckets: BUCKETS}).length; });
  const derived = nsPer(N, () => { sink += api.assignImportBuckets(items, {buckets: BUCKETS, importId: 'bench-import'}).length; });
  const assigned = api.assignImportBuckets(items, {buckets: BUCKETS, importId: 'bench-import'});
  const group = nsPer(N, () => { sink += api.groupByPartitionKey(assigned).length; });
  const nat = native('bench_imports', [N]);
  if (new Set(assigned.map((x) => x.bucket)).size !== DATASETS * BUCKETS) throw new Error('bench: wrong bucket count');
  const ms = (ns) => `${((ns * N) / 1e6).toFixed(0)} ms`;
  report(`imports: ${N.toLocaleString('en')} bucketless items, ${DATASETS} datasets, N = ${BUCKETS}, one call`,
    ['implementation', 'per item', 'whole import', 'vs JS reference'],
    [
      ['shipped algorithm in plain JS (`randomUUID`, round-robin, `Object.assign` copies)', fmt(ref), ms(ref), ratio(1)],
      ['partkit `assignImportBuckets` (random v4)', fmt(random), ms(random), ratio(ref / random)],
      ['partkit `assignImportBuckets` (`importId`, derived v5)', fmt(derived), ms(derived), ratio(ref / derived)],
      ['partkit `groupByPartitionKey` (50 partitions)', fmt(group), ms(group), '—'],
      ['native Rust core `assign_packed` (random, no copies)', fmt(nat.nsPerItemRandom), ms(nat.nsPerItemRandom), '—'],
      ['native Rust core `assign_packed` (derived, no copies)', fmt(nat.nsPerItemDerived), ms(nat.nsPerItemDerived), '—'],
    ]);
  return sink;
}
