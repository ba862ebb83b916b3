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
// Prints them, and fails when any passes its budget (tests/size/budgets.json: round figures with
// room for ordinary changes, which the docs quote).
import {execFileSync} from 'node:child_process';
import {mkdtempSync, readFileSync, rmSync, statSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {dirname, join, resolve} from 'node:path';
import {fileURLToPath} from 'node:url';
import {brotliCompressSync, constants, gzipSync} from 'node:zlib';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
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
  tarball = {packed: statSync(join(packDir, info.filename)).size, unpacked: info.unpackedSize, files: info.files.map((f) => f.path)};
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

for (const [name, size] of Object.entries(rows)) {
  console.log(`${name.padEnd(48)} ${String(size.raw).padStart(9)} ${String(size.gzip).padStart(9)} ${String(size.brotli).padStart(9)}`);
}
console.log(`${'tarball (packed, unpacked)'.padEnd(48)} ${String(tarball.packed).padStart(9)} ${String(tarball.unpacked).padStart(9)}`);
if (failures.length) {
  console.error(`\nsize budgets: ${failures.length} failure(s)\n  ${failures.join('\n  ')}`);
  process.exit(1);
}
console.log('size budgets: ok');
