#!/usr/bin/env node
// `npm run test:consumer` (second half): partkit's packed tarball where its users run it, each
// with no configuration for partkit: Node (ESM and CJS); jest with testEnvironment node and jsdom;
// vitest with environment node and jsdom; esbuild --platform=node bundles (CJS and ESM), run from
// a directory without node_modules; browser bundles made by esbuild (ESM and IIFE), Vite and
// webpack 5, each loaded in Chromium; and the ecosystem's package checkers, publint and
// arethetypeswrong; then the per-domain subpaths (tests/consumer/subpaths.mjs). The fixture
// (tests/consumer/runtime/) pins its tools and installs them once.
//
// Without /usr/bin/chromium the browser part skips, loudly, unless PARTKIT_REQUIRE_BROWSER=1.
import {execFileSync} from 'node:child_process';
import {cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync} from 'node:fs';
import {createServer} from 'node:http';
import {createRequire} from 'node:module';
import {tmpdir} from 'node:os';
import {dirname, extname, join, normalize} from 'node:path';
import {fileURLToPath} from 'node:url';
import {gzipSync} from 'node:zlib';

const here = join(dirname(fileURLToPath(import.meta.url)), 'runtime');
const root = join(here, '..', '..', '..');
const out = join(here, 'out');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const run = (cmd, args, opts = {}) => execFileSync(cmd, args, {cwd: here, stdio: 'inherit', ...opts});
const bin = (name) => join(here, 'node_modules', '.bin', name);
const step = (what) => console.log(`\n== runtime consumer: ${what}`);

// 1. The tarball, installed as a user installs it (the fixture's tools once, then partkit).
for (const f of readdirSync(here)) if (f.endsWith('.tgz')) rmSync(join(here, f));
run('npm', ['pack', '--silent', '--pack-destination', here], {cwd: root, stdio: ['ignore', 'ignore', 'inherit']});
const tarball = readdirSync(here).find((f) => f.endsWith('.tgz'));
if (!existsSync(join(here, 'node_modules', '.bin', 'vitest'))) {
  run('npm', ['install', '--no-audit', '--no-fund', '--no-package-lock', '--loglevel=error']);
}
run('npm', ['install', '--no-audit', '--no-fund', '--no-package-lock', '--no-save', '--loglevel=error', `./${tarball}`]);
rmSync(out, {recursive: true, force: true});
mkdirSync(out, {recursive: true});

// 2. The ecosystem's package checkers.
step('publint');
run(bin('publint'), ['run', '--strict', join(here, 'node_modules', 'partkit')]);
step('arethetypeswrong');
run(bin('attw'), [`./${tarball}`]);

// 3. Node, ESM and CJS.
step('node');
run(process.execPath, ['--input-type=module', '-e',
  "import {check, checkObjects} from './app/check.mjs'; console.log(`node ESM: ${check()} ${checkObjects()}`);"]);
run(process.execPath, ['-e',
  "const p = require('partkit'); if (p.bucket('test-key', 'test-data', 5) !== 2) process.exit(1); console.log('node CJS: ok');"]);

// 4. jest and vitest, node and jsdom: the environment is the only setting.
for (const env of ['node', 'jsdom']) {
  step(`jest --testEnvironment ${env}`);
  run(bin('jest'), ['--ci', '--rootDir', here, '--roots', '<rootDir>/jest', '--testEnvironment', env]);
  step(`vitest --environment ${env}`);
  run(bin('vitest'), ['run', '--root', here, '--dir', 'vitest', '--environment', env]);
}

// 5. esbuild --platform=node bundles, run where no node_modules can be found.
for (const format of ['cjs', 'esm']) {
  step(`esbuild --bundle --platform=node --format=${format}`);
  const file = join(out, `node-${format}`, format === 'cjs' ? 'app.cjs' : 'app.mjs');
  run(bin('esbuild'), ['app/node.mjs', '--bundle', '--platform=node', `--format=${format}`, `--outfile=${file}`, '--log-level=warning']);
  const away = mkdtempSync(join(tmpdir(), 'partkit-bundle-'));
  try {
    cpSync(file, join(away, 'app' + extname(file)));
    run(process.execPath, [join(away, 'app' + extname(file))], {cwd: away});
  } finally {
    rmSync(away, {recursive: true, force: true});
  }
}

// 6. Browser bundles, each in its own directory with an index.html.
const page = (dir, script, module = true) => writeFileSync(join(dir, 'index.html'),
  `<!doctype html><meta charset="utf-8"><title>partkit</title><link rel="icon" href="data:,"><body><script ${module ? 'type="module" ' : ''}src="${script}"></script></body>\n`);
const bundles = [];
for (const [name, format] of [['esbuild-esm', 'esm'], ['esbuild-iife', 'iife']]) {
  step(`esbuild --bundle --format=${format} (browser)`);
  const dir = join(out, name);
  run(bin('esbuild'), ['app/browser.mjs', '--bundle', `--format=${format}`, '--minify', `--outfile=${join(dir, 'app.js')}`, '--log-level=warning']);
  page(dir, 'app.js', format === 'esm');
  bundles.push([name, dir]);
}
step('esbuild, a bucketing-only page');
const slim = join(out, 'esbuild-bucketing');
run(bin('esbuild'), ['app/bucketing-only.mjs', '--bundle', '--format=esm', '--minify', `--outfile=${join(slim, 'app.js')}`, '--log-level=warning']);
page(slim, 'app.js');
bundles.push(['esbuild-bucketing', slim]);

step('vite build');
const viteRoot = join(out, 'vite-src');
mkdirSync(viteRoot, {recursive: true});
writeFileSync(join(viteRoot, 'index.html'), '<!doctype html><meta charset="utf-8"><title>partkit</title><link rel="icon" href="data:,"><body><script type="module" src="../../app/browser.mjs"></script></body>\n');
run(bin('vite'), ['build', viteRoot, '--base', './', '--outDir', join(out, 'vite'), '--emptyOutDir', '--logLevel', 'warn']);
bundles.push(['vite', join(out, 'vite')]);

step('webpack 5');
const webpack = createRequire(join(here, 'package.json'))('webpack');
await new Promise((resolve, reject) => webpack({
  mode: 'production',
  context: here,
  entry: './app/browser.mjs',
  output: {path: join(out, 'webpack'), filename: 'app.js'},
  target: 'web',
}, (error, stats) => {
  if (error || stats.hasErrors()) reject(error ?? new Error(stats.toString('errors-only')));
  else resolve();
}));
page(join(out, 'webpack'), 'app.js', false);
bundles.push(['webpack', join(out, 'webpack')]);

// What a bundle holds: the bucketing-only page's bundle carries no other domain's wasm.
const sizeOfDir = (dir) => readdirSync(dir, {recursive: true}).filter((f) => /\.(m?js|json|wasm)$/.test(f))
  .map((f) => readFileSync(join(dir, f))).reduce((s, b) => [s[0] + b.length, s[1] + gzipSync(b, {level: 9}).length], [0, 0]);
const wasmData = (domain) => JSON.parse(readFileSync(join(here, 'node_modules', 'partkit', 'dist', 'wasm', `${domain}.json`), 'utf8'));
const slimText = readFileSync(join(slim, 'app.js'), 'utf8');
for (const domain of ['objects', 'imports', 'lifecycle', 'sync']) {
  if (slimText.includes(wasmData(domain).slice(0, 64))) throw new Error(`the bucketing-only bundle holds the ${domain} wasm`);
}
if (!slimText.includes(wasmData('bucketing').slice(0, 64))) throw new Error('the bucketing-only bundle lacks the bucketing wasm');
for (const [name, dir] of bundles) {
  const [raw, gz] = sizeOfDir(dir);
  console.log(`bundle ${name}: ${raw.toLocaleString('en')} B, ${gz.toLocaleString('en')} B gzipped`);
}

// 7. Each bundle in Chromium.
if (!existsSync(CHROMIUM)) {
  const message = `runtime consumer: ${CHROMIUM} not found (install Debian's chromium package)`;
  if (process.env.PARTKIT_REQUIRE_BROWSER === '1') throw new Error(message);
  console.warn(`SKIPPED the browser bundles: ${message}`);
} else {
  step('the browser bundles in Chromium');
  const TYPES = {'.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript', '.json': 'application/json', '.wasm': 'application/wasm', '.css': 'text/css'};
  const server = createServer((req, res) => {
    const path = normalize(join(out, decodeURIComponent(new URL(req.url, 'http://x').pathname)));
    const file = path.endsWith('/') ? join(path, 'index.html') : path;
    if (!file.startsWith(out) || !existsSync(file)) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, {'content-type': TYPES[extname(file)] ?? 'application/octet-stream'}).end(readFileSync(file));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const {chromium} = createRequire(join(root, 'package.json'))('playwright-core');
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    for (const [name, dir] of bundles) {
      const page = await browser.newPage();
      const errors = [];
      page.on('pageerror', (e) => errors.push(e.message));
      page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
      const rel = dir.slice(out.length + 1);
      const query = name === 'esbuild-bucketing' ? '' : '?objects';
      await page.goto(`http://127.0.0.1:${server.address().port}/${rel}/${query}`);
      await page.waitForFunction(() => document.body?.dataset.result !== undefined, null, {timeout: 20000});
      const result = await page.evaluate(() => document.body.dataset.result);
      const want = query ? 'ok ok' : 'ok';
      if (result !== want || errors.length) throw new Error(`${name} in Chromium: ${result} ${errors.join('; ')}`);
      console.log(`${name} in Chromium: ${result}`);
      await page.close();
    }
  } finally {
    await browser.close();
    server.close();
  }
}
// 8. The per-domain subpaths (tests/consumer/subpaths.mjs), the browser part in Chromium when it is here.
const {subpaths} = await import('./subpaths.mjs');
const hasChromium = existsSync(CHROMIUM);
await subpaths({here, out, bin, run, chromiumPath: CHROMIUM,
  chromium: hasChromium ? createRequire(join(root, 'package.json'))('playwright-core').chromium : null});
rmSync(join(here, tarball));
console.log('\nruntime consumers: ok');
