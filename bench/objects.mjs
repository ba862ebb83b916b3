// Object partitioning: 1M listing keys per partition type, 16 partitions. partkit's batch calls
// vs the same algorithm in plain JS (fnv-plus `fast1a32utf`, a UTF-8 FNV-1a from npm, with
// JS RegExp / string code for the key types) and vs the native Rust core, one `&str` at a time
// and as the UTF-16 batch `indexMany` hands to wasm. Type `none` does no per-key work: its
// `indexMany` is the cost of getting the keys into wasm and the results out.
import {createRequire} from 'node:module';
import {fmt, native, nsPer, ratio} from './_util.mjs';

const fnv = createRequire(import.meta.url)('fnv-plus');
const N = Number(process.env.BENCH_N ?? 1_000_000);
const TOTAL = 16;
const PREFIX = 'logs/';

/** The bench keys (keep in sync with examples/bench_objects.rs). */
function key(i) {
  const day = String(1 + (i % 28)).padStart(2, '0');
  const name = i % 10 === 0 ? 'données' : 'events';
  return `logs/2024-03-${day}/user${i % 997}/${name}-${i}.json`;
}

const trim = (k) => {
  const t = k.startsWith(PREFIX) ? k.slice(PREFIX.length) : k;
  return t.startsWith('/') ? t.slice(1) : t;
};
const idx = (s) => fnv.fast1a32utf(s) % TOTAL;
const DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const USER = /user(\d+)/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Plain-JS versions of the Go algorithm, valid for these configs and keys. */
const PLAIN = {
  object: (k) => idx(k),
  regex: (k) => {
    const m = USER.exec(trim(k));
    if (!m || m[0] === '') return 0;
    return m[1] ? idx(m[1]) : idx(m[0]);
  },
  substring: (k) => {
    const cps = Array.from(trim(k));
    return cps.length < 10 ? 0 : idx(cps.slice(0, 10).join(''));
  },
  date: (k) => {
    const m = DATE.exec(trim(k).slice(0, 10)); // ASCII dates: 10 bytes = 10 chars
    if (!m) return 0;
    const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
    const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
    if (mo < 1 || mo > 12 || d < 1 || d > (mo === 2 && !leap ? 28 : DAYS[mo - 1])) return 0;
    return idx(m[0]);
  },
};

const SOURCES = {
  object: {type: 'object'},
  regex: {type: 'regex', pattern: 'user(\\d+)'},
  substring: {type: 'substring', startIndex: 0, endIndex: 10},
  date: {type: 'date', dateFormat: '2006-01-02'},
};

export async function run(api, report) {
  const keys = Array.from({length: N}, (_, i) => key(i));
  const nat = native('bench_objects', [N]);
  const rows = [];
  let sink = 0;
  for (const [type, partition] of Object.entries(SOURCES)) {
    const p = new api.ObjectPartitioner(TOTAL, {key: `${PREFIX}*`, partition});
    const plain = PLAIN[type];
    const check = p.indexMany(keys.slice(0, 20000));
    for (let i = 0; i < check.length; i++) {
      if (check[i] !== plain(keys[i])) throw new Error(`bench: ${type} differs on ${keys[i]}`);
    }
    const ref = nsPer(N, () => { for (const k of keys) sink += plain(k); });
    const many = nsPer(N, () => { sink += p.indexMany(keys)[0]; });
    const plan = nsPer(N, () => { sink += p.plan(keys).length; });
    const {nsPerKey: n, nsPerKeyBatch: nb} = nat[type];
    rows.push([type, fmt(ref), `${fmt(many)} (${ratio(ref / many)})`, `${fmt(plan)} (${ratio(ref / plan)})`, fmt(n), fmt(nb),
      `${(many / n).toFixed(2)}× / ${(plan / n).toFixed(2)}×`]);
  }
  // Measured last: the plain-JS loops have flattened the keys (template literals build V8 cons
  // strings, which cost far more to copy out the first time).
  const none = new api.ObjectPartitioner(TOTAL, {key: `${PREFIX}*`, partition: {type: 'none'}});
  const crossing = nsPer(N, () => { sink += none.indexMany(keys)[0]; });
  rows.push(['none (crossing only)', '—', fmt(crossing), '—', fmt(nat.none.nsPerKey), fmt(nat.none.nsPerKeyBatch), '—']);
  report(`objects: ${N.toLocaleString('en')} listing keys per type, 16 partitions`,
    ['type', 'plain JS (fnv-plus)', 'partkit `indexMany` (speed-up)', 'partkit `plan` (speed-up)', 'native Rust, per key',
      'native Rust, UTF-16 batch', '`indexMany` / `plan` vs native per key'],
    rows);
  return sink;
}
