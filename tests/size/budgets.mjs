#!/usr/bin/env node
// `npm run test:size`: what partkit weighs, against budgets. Packs the tarball (`npm pack`) and
// measures, raw, gzipped (level 9) and brotli (quality 11), each file a browser would fetch for:
//
// - the validator page (examples/config-validator) until its first result: the page, its script
//   and dist/browser/bucketing.mjs with every chunk and wasm it imports;
// - the same page with object partitioning (dist/browser/objects.mjs and what it imports);
// - the whole browser build (dist/browser/index.mjs and everything it imports);
// - each domain's wasm (dist/wasm/<domain>.json), dist/index.cjs, and the tarball, which must hold
//   no pkg/ (each wasm is in it once) and of js/ only the CLI.
//
// Fails when any figure passes its budget (tests/size/budgets.json), and when the size tables of
// README.md and docs/validator.md (between `<!-- sizes:NAME -->` and `<!-- /sizes -->`) are not
// what it measured; `npm run test:size -- --write` rewrites those tables.
import {execFileSync} from 'node:child_process';
import {mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {dirname, join, relative, resolve} from 'node:path';
import {fileURLToPath} from 'node:url';
import {brotliCompressSync, constants, gzipSync} from 'node:zlib';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const write = process.argv.includes('--write');
const DOMAINS = ['bucketing', 'objects', 'imports', 'lifecycle', 'sync'];

const sizeOf = (bytes) => ({
  raw: bytes.length,
  gzip: gzipSync(bytes, {level: 9}).length,
  brotli: brotliCompressSync(bytes, {params: {[constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length}}).length,
});
const add = (a, b) => ({raw: a.raw + b.raw, gzip: a.gzip + b.gzip, brotli: a.brotli + b.brotli});
const ZERO = {raw: 0, gzip: 0, brotli: 0};

/** Every file `entries` import (relative specifiers; dynamic imports too if `dynamic`), themselves included. */
function graph(entries, dynamic = true) {
  const seen = new Set();
  const visit = (file) => {
    if (seen.has(file)) return;
    seen.add(file);
    if (!/\.m?js$/.test(file)) return;
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/(?:\bfrom|\bimport)\s*(\(?)\s*["'](\.{1,2}\/[^"']+)["']/g)) {
      if (dynamic || !m[1]) visit(resolve(dirname(file), m[2]));
    }
  };
  entries.forEach((e) => visit(join(root, e)));
  return [...seen];
}
const weigh = (files) => files.reduce((sum, f) => add(sum, sizeOf(readFileSync(f))), ZERO);

// The validator page until its first result: everything but its dynamic import of objects.
const page = ['examples/config-validator/index.html', 'examples/config-validator/style.css'];
const pageFiles = graph([...page, 'examples/config-validator/app.mjs']);
const firstResult = graph([...page, 'examples/config-validator/app.mjs'], false);

// The tarball.
const packDir = mkdtempSync(join(tmpdir(), 'partkit-size-'));
let tarball;
try {
  const [info] = JSON.parse(execFileSync('npm', ['pack', '--json', '--silent', '--pack-destination', packDir], {cwd: root, encoding: 'utf8'}));
  tarball = {packed: statSync(join(packDir, info.filename)).size, unpacked: info.unpackedSize, files: info.files.map((f) => f.path).sort()};
} finally {
  rmSync(packDir, {recursive: true, force: true});
}

const rows = {
  'validator page, bucketing (first result)': weigh(firstResult),
  'validator page, with object partitioning': weigh(pageFiles),
  'whole browser build (dist/browser/index.mjs)': weigh(graph(['dist/browser/index.mjs'])),
  ...Object.fromEntries(DOMAINS.map((d) => [`wasm: ${d}`, sizeOf(readFileSync(join(root, 'pkg', d, 'partkit_bg.wasm')))])),
  // the decoder that unpacks the others (crates/unlzma), in the shared chunk of every page
  'wasm: LZMA decoder': sizeOf(readFileSync(join(root, 'pkg', 'unlzma', 'unlzma.wasm'))),
  ...Object.fromEntries(DOMAINS.map((d) => [`dist/wasm/${d}.json`, sizeOf(readFileSync(join(root, 'dist', 'wasm', `${d}.json`)))])),
  'dist/index.cjs': sizeOf(readFileSync(join(root, 'dist', 'index.cjs'))),
  // each subpath (package.json "exports" "./<domain>"): what a page without a bundler downloads
  // from its browser entry (an import map to dist/browser/<domain>.mjs), and what Node reads for
  // it (dist/<domain>.cjs, the shared modules it requires, its wasm)
  ...Object.fromEntries(DOMAINS.map((d) => [`partkit/${d}: browser entry and imports`, weigh(graph([`dist/browser/${d}.mjs`]))])),
  ...Object.fromEntries(DOMAINS.map((d) => [`partkit/${d}: Node files`, weigh([`${d}.cjs`, 'common.cjs', `wasm/${d}.json`,
    ...(['lifecycle', 'sync'].includes(d) ? ['serde.cjs'] : [])].map((f) => join(root, 'dist', f)))])),
};

const budgets = JSON.parse(readFileSync(join(here, 'budgets.json'), 'utf8'));
const failures = [];
for (const [name, size] of Object.entries(rows)) {
  const budget = budgets[name];
  if (!budget) {
    failures.push(`${name}: no budget in tests/size/budgets.json`);
    continue;
  }
  for (const k of ['raw', 'gzip', 'brotli']) {
    if (size[k] > budget[k]) failures.push(`${name}: ${k} ${size[k]} B, over its budget of ${budget[k]} B`);
  }
}
// The tarball holds what runs and is read: each domain's wasm once (dist/wasm/), no wasm-bindgen
// output (pkg/), and of js/ only the CLI (the rest is bundled into dist/).
for (const f of tarball.files) {
  if (f.startsWith('pkg/') || f.endsWith('.wasm')) failures.push(`tarball: ${f} (the wasm is in dist/wasm/, once)`);
  if (f.startsWith('js/') && !(f === 'js/cli.mjs' || f.startsWith('js/cli/'))) failures.push(`tarball: ${f} (bundled into dist/; only the CLI runs from js/)`);
}
// what docs/wasm.md says of the packed modules: gzipped, each weighs less than its wasm would
// with gzip or brotli, so a page gains nothing from how its server compresses
for (const d of DOMAINS) {
  const packed = rows[`dist/wasm/${d}.json`].gzip;
  const wasm = rows[`wasm: ${d}`];
  if (packed >= Math.min(wasm.gzip, wasm.brotli)) failures.push(`dist/wasm/${d}.json: ${packed} B gzipped, not less than its wasm with gzip (${wasm.gzip} B) and brotli (${wasm.brotli} B)`);
}
if (tarball.packed > budgets.tarball.packed) failures.push(`tarball: ${tarball.packed} B packed, over its budget of ${budgets.tarball.packed} B`);
if (tarball.unpacked > budgets.tarball.unpacked) failures.push(`tarball: ${tarball.unpacked} B unpacked, over its budget of ${budgets.tarball.unpacked} B`);

/** The tarball's files, esbuild's hashed chunks as one entry. */
function listing(files) {
  const chunks = files.filter((f) => /^dist\/browser\/chunk-\w+\.mjs$/.test(f));
  const named = files.filter((f) => !chunks.includes(f)).map((f) => `\`${f}\``);
  named.push(`\`dist/browser/chunk-*.mjs\` (${chunks.length})`);
  return named.sort().join(', ') + '.';
}

// The tables README.md and docs/validator.md show.
const n = (x) => x.toLocaleString('en');
const kb = (x) => `${Math.round(x / 1000)} KB`;
const mb = (x) => `${(x / 1e6).toFixed(1)} MB`;
const pkgVersion = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
const table = (names) => ['| what | raw | gzip | brotli |', '| --- | ---: | ---: | ---: |',
  ...names.map((k) => `| ${k} | ${n(rows[k].raw)} B | ${n(rows[k].gzip)} B | ${n(rows[k].brotli)} B |`)].join('\n');
const tables = {
  validator: table(['validator page, bucketing (first result)', 'validator page, with object partitioning', 'whole browser build (dist/browser/index.mjs)']),
  subpaths: table(DOMAINS.flatMap((d) => [`partkit/${d}: browser entry and imports`, `partkit/${d}: Node files`])),
  wasm: table([...DOMAINS.map((d) => `wasm: ${d}`), 'wasm: LZMA decoder']),
  packed: table(DOMAINS.map((d) => `dist/wasm/${d}.json`)),
  tarball: [`The tarball: ${n(tarball.packed)} B packed, ${n(tarball.unpacked)} B unpacked, ${tarball.files.length} files:`, '',
    listing(tarball.files)].join('\n'),
  // README.md is in the tarball it describes, and read by users: round figures (KB, MB), which
  // settle and do not move with every change; the exact ones are in docs/wasm.md and
  // docs/validator.md. Its link is absolute: the tarball ships no docs/.
  summary: `Sizes (\`npm run test:size\`, gzipped): a bucketing validator page loads about ${kb(rows['validator page, bucketing (first result)'].gzip)}, ` +
    `about ${kb(rows['validator page, with object partitioning'].gzip)} with object partitioning,\nabout ${kb(rows['whole browser build (dist/browser/index.mjs)'].gzip)} with every domain ` +
    `([docs/validator.md](https://github.com/partkit/partkit/blob/v${pkgVersion}/docs/validator.md#size)); the tarball is about ${mb(tarball.unpacked)} unpacked.`,
};
// The docs quote measured sizes; a table is stale when its words changed or a figure moved by more
// than 5% (a build on another machine, or an ordinary change, moves sizes a little: the budgets
// above are what holds the line, the tables only have to stay true to within a few percent).
function closeEnough(a, b) {
  const figures = (t) => [...t.matchAll(/\d[\d,]*(?:\.\d+)?/g)].map((m) => Number(m[0].replace(/,/g, '')));
  const words = (t) => t.replace(/\d[\d,]*(?:\.\d+)?/g, '#');
  if (words(a) !== words(b)) return false;
  const [x, y] = [figures(a), figures(b)];
  return x.every((v, i) => Math.abs(v - y[i]) <= Math.max(2, 0.05 * Math.max(v, y[i])));
}
let changed = false;
for (const doc of ['README.md', 'docs/validator.md', 'docs/wasm.md']) {
  const path = join(root, doc);
  const text = readFileSync(path, 'utf8');
  const next = text.replace(/(<!-- sizes:(\w+) -->\n)(?:[\s\S]*?\n)??(<!-- \/sizes -->)/g, (all, open, name, close) => {
    if (!(name in tables)) {
      failures.push(`${doc}: unknown size table ${name}`);
      return all;
    }
    return `${open}${tables[name]}\n${close}`;
  });
  if (next === text) continue;
  if (!write && closeEnough(text, next)) continue;
  changed = true;
  if (write) writeFileSync(path, next);
  else failures.push(`${doc}: its size tables are not what was measured (run \`npm run test:size -- --write\`)`);
}

// README.md is in the tarball it describes: writing its figures changes them, so --write measures
// again until they hold (a few rounds).
const attempt = Number(process.env.PARTKIT_SIZE_ROUND ?? 1);
if (write && changed && attempt < 8) {
  try {
    execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--write'], {stdio: 'inherit', env: {...process.env, PARTKIT_SIZE_ROUND: String(attempt + 1)}});
    process.exit(0);
  } catch {
    process.exit(1);
  }
}
for (const [name, size] of Object.entries(rows)) {
  console.log(`${name.padEnd(48)} ${String(size.raw).padStart(9)} ${String(size.gzip).padStart(9)} ${String(size.brotli).padStart(9)}`);
}
console.log(`${'tarball (packed, unpacked)'.padEnd(48)} ${String(tarball.packed).padStart(9)} ${String(tarball.unpacked).padStart(9)}`);
if (failures.length) {
  console.error(`\nsize budgets: ${failures.length} failure(s)\n  ${failures.join('\n  ')}`);
  process.exit(1);
}
console.log(`size budgets: ok${write ? ' (docs written)' : ''}`);
