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
  const bytesRows = bytesPath(api, keys, nat);
  sink += bytesRows.sink;
  report(`objects: ${N.toLocaleString('en')} listing keys per type, 16 partitions`,
    ['type', 'plain JS (fnv-plus)', 'partkit `indexMany` (speed-up)', 'partkit `plan` (speed-up)', 'native Rust, per key',
      'native Rust, UTF-16 batch', '`indexMany` / `plan` vs native per key'],
    rows);
  report(`objects, bytes path: the same ${N.toLocaleString('en')} keys as one newline-separated UTF-8 Buffer (${(bytesRows.bytes / 2 ** 20).toFixed(0)} MiB), the [start, end) ranges of partition ${SELECTED} of 16`,
    ['type', 'plain JS over the bytes (FNV-1a loop)', 'partkit `selectLines` (speed-up)', 'native Rust, per `&str` key', 'native Rust, bytes path',
      '`selectLines` / native per key', '`selectLines` / native bytes path'],
    bytesRows.rows);
  return sink;
}

// ---- The bytes path, against the best plain JS over the same bytes ----

const SELECTED = 3;
const OFFSET = 0x811c9dc5;
const PRIME = 0x01000193;
const NL = 10;
const CR = 13;
const SLASH = 47;
const PREFIX_BYTES = new TextEncoder().encode(PREFIX);
const encoder = new TextEncoder();
const latin1 = new TextDecoder('latin1');
const utf8 = new TextDecoder('utf-8', {ignoreBOM: true});

/** FNV-1a of a string: its code units when ASCII, else its UTF-8 (TextEncoder). */
function fnvString(s) {
  let h = OFFSET;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) {
      h = OFFSET;
      for (const b of encoder.encode(s)) h = Math.imul(h ^ b, PRIME);
      return h >>> 0;
    }
    h = Math.imul(h ^ c, PRIME);
  }
  return h >>> 0;
}

/** Where the sanitised key starts: after `logs/`, then after one `/`. */
function sanitized(b, start, end) {
  let s = start;
  const n = PREFIX_BYTES.length;
  if (end - s >= n) {
    let k = 0;
    while (k < n && b[s + k] === PREFIX_BYTES[k]) k++;
    if (k === n) s += n;
  }
  if (s < end && b[s] === SLASH) s++;
  return s;
}

/**
 * Hand-tuned plain JS over the bytes: one pass per line, no strings (except regex, which needs
 * one: latin1 for ASCII lines, TextDecoder otherwise), FNV-1a with Math.imul. `part(b, s, e)`
 * is the partition of the key line b[s..e) (no \n, no \r, not a directory). Returns the
 * ranges of partition SELECTED.
 */
function plainLines(b, part) {
  const out = [];
  const len = b.length;
  let start = 0;
  for (let i = 0; i <= len; i++) {
    if (i < len && b[i] !== NL) continue;
    let end = i;
    if (end > start && b[end - 1] === CR) end--;
    if (end > start && b[end - 1] !== SLASH && part(b, start, end) === SELECTED) out.push(start, end);
    start = i + 1;
  }
  return out;
}

const PLAIN_BYTES = {
  object: (b) => plainLines(b, (b, s, e) => {
    let h = OFFSET;
    for (let i = s; i < e; i++) h = Math.imul(h ^ b[i], PRIME);
    return (h >>> 0) % TOTAL;
  }),
  substring: (b) => plainLines(b, (b, s, e) => {
    // Code points [0, 10) of the sanitised key: count the bytes that are not continuations.
    let h = OFFSET;
    let cps = 0;
    let i = sanitized(b, s, e);
    for (; i < e; i++) {
      const c = b[i];
      if ((c & 0xc0) !== 0x80 && ++cps > 10) break;
      h = Math.imul(h ^ c, PRIME);
    }
    if (cps < 10) return 0;
    return (h >>> 0) % TOTAL;
  }),
  date: (b) => plainLines(b, (b, s, e) => {
    const d = sanitized(b, s, e);
    if (e - d < 10) return 0;
    const num = (i, n) => {
      let v = 0;
      for (let k = 0; k < n; k++) {
        const c = b[i + k] - 48;
        if (c < 0 || c > 9) return -1;
        v = v * 10 + c;
      }
      return v;
    };
    const y = num(d, 4);
    const mo = num(d + 5, 2);
    const day = num(d + 8, 2);
    if (y < 0 || mo < 1 || mo > 12 || day < 1 || b[d + 4] !== 45 || b[d + 7] !== 45) return 0;
    const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
    if (day > (mo === 2 && !leap ? 28 : DAYS[mo - 1])) return 0;
    let h = OFFSET;
    for (let i = d; i < d + 10; i++) h = Math.imul(h ^ b[i], PRIME);
    return (h >>> 0) % TOTAL;
  }),
  regex: (b) => plainLines(b, (b, s, e) => {
    const d = sanitized(b, s, e);
    let ascii = true;
    for (let i = d; i < e; i++) if (b[i] >= 0x80) { ascii = false; break; }
    const key = (ascii ? latin1 : utf8).decode(b.subarray(d, e));
    const m = USER.exec(key);
    if (!m || m[0] === '') return 0;
    return fnvString(m[1] || m[0]) % TOTAL;
  }),
};

function bytesPath(api, keys, nat) {
  const bytes = Buffer.from(keys.map((k) => `${k}\n`).join(''));
  const rows = [];
  let sink = 0;
  for (const [type, partition] of Object.entries(SOURCES)) {
    const p = new api.ObjectPartitioner(TOTAL, {key: `${PREFIX}*`, partition});
    const plain = PLAIN_BYTES[type];
    const want = plain(bytes);
    const got = p.selectLines(bytes, SELECTED);
    if (want.length !== got.length || want.some((v, i) => v !== got[i])) throw new Error(`bench: bytes path ${type} differs from plain JS`);
    const ref = nsPer(N, () => { sink += plain(bytes).length; });
    const lines = nsPer(N, () => { sink += p.selectLines(bytes, SELECTED).length; });
    const {nsPerKey: n, nsPerKeyLines: nl} = nat[type];
    rows.push([type, fmt(ref), `${fmt(lines)} (${ratio(ref / lines)})`, fmt(n), fmt(nl), `${(lines / n).toFixed(2)}×`, `${(lines / nl).toFixed(2)}×`]);
    p.free();
  }
  return {rows, sink, bytes: bytes.length};
}
