#!/usr/bin/env node
// `npm run bench:load [-- --baseline DIR]`: how long partkit takes to load, measured, never
// asserted (docs/validator.md gives the figures).
//
// - Chromium: from navigation to the validator page's first validation result (a
//   MutationObserver installed before the page runs notes performance.now() when the message
//   first shows), cache off, median of 20 loads, served gzipped from localhost; then the same
//   with the network throttled to 10 Mbit/s down and 40 ms latency.
// - Node: `require('partkit')` alone, and with its first bucket() call, in a fresh process each
//   time, median of 20.
//
// DIR is a copy of another build to compare with: its examples/config-validator, dist/ and pkg/
// (e.g. a checkout of an older commit, built).
import {execFileSync} from 'node:child_process';
import {existsSync, readFileSync, statSync} from 'node:fs';
import {createServer} from 'node:http';
import {createRequire} from 'node:module';
import {dirname, extname, join, normalize, resolve, sep} from 'node:path';
import {fileURLToPath} from 'node:url';
import {gzipSync} from 'node:zlib';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const RUNS = Number(process.env.RUNS ?? 20);
const i = process.argv.indexOf('--baseline');
const builds = [['this build', root]];
if (i > 0) builds.unshift(['baseline', resolve(process.argv[i + 1])]);

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const TYPES = {'.html': 'text/html; charset=utf-8', '.mjs': 'text/javascript', '.js': 'text/javascript',
  '.css': 'text/css', '.wasm': 'application/wasm', '.json': 'application/json'};

function serveGzipped(dir) {
  const cache = new Map();
  const server = createServer((req, res) => {
    let file = normalize(join(dir, decodeURIComponent(new URL(req.url, 'http://x').pathname)));
    if (!file.startsWith(dir + sep)) return void res.writeHead(403).end();
    if (existsSync(file) && statSync(file).isDirectory()) file = join(file, 'index.html');
    if (!existsSync(file)) return void res.writeHead(404).end();
    if (!cache.has(file)) cache.set(file, gzipSync(readFileSync(file), {level: 9}));
    res.writeHead(200, {'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'content-encoding': 'gzip', 'cache-control': 'no-store'});
    res.end(cache.get(file));
  });
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r(server)));
}

const FIRST_RESULT = `new MutationObserver((_, obs) => {
  const m = document.querySelector('#validation [data-testid="message"]');
  if (m && m.textContent) { window.__firstResult = performance.now(); obs.disconnect(); }
}).observe(document, {subtree: true, childList: true, characterData: true});`;

async function chromiumLoads(dir, throttle) {
  const {chromium} = createRequire(join(root, 'package.json'))('playwright-core');
  const server = await serveGzipped(dir);
  const browser = await chromium.launch({executablePath: CHROMIUM, headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync']});
  const times = [];
  try {
    for (let r = 0; r < RUNS + 1; r++) {
      const context = await browser.newContext();
      const page = await context.newPage();
      const cdp = await context.newCDPSession(page);
      await cdp.send('Network.enable');
      await cdp.send('Network.setCacheDisabled', {cacheDisabled: true});
      if (throttle) {
        await cdp.send('Network.emulateNetworkConditions', {offline: false, latency: 40,
          downloadThroughput: (10e6 / 8), uploadThroughput: (10e6 / 8)});
      }
      const errors = [];
      page.on('pageerror', (e) => errors.push(e.message));
      page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
      await page.addInitScript(FIRST_RESULT);
      await page.goto(`http://127.0.0.1:${server.address().port}/examples/config-validator/`);
      await page.waitForFunction(() => window.__firstResult !== undefined, null, {timeout: 60000}).catch((e) => {
        throw new Error(`${dir}: no validation result (${errors.join('; ') || e.message})`);
      });
      const t = await page.evaluate(() => window.__firstResult);
      if (r > 0) { // the first load warms the browser process, not the page
        times.push(t);
      }
      await context.close();
    }
  } finally {
    await browser.close();
    server.close();
  }
  return {ms: median(times)};
}

function nodeLoads(dir) {
  const script = (call) => `const t0 = process.hrtime.bigint(); const p = require(${JSON.stringify(join(dir, 'dist', 'index.cjs'))});
${call ? "p.bucket('farosai/airbyte-github-source', 'facebook/react', 12);" : ''}
console.log(Number(process.hrtime.bigint() - t0) / 1e6);`;
  const time = (call) => median(Array.from({length: RUNS}, () => Number(execFileSync(process.execPath, ['-e', script(call)], {encoding: 'utf8'}))));
  return {require: time(false), firstCall: time(true)};
}

const rows = [];
for (const [label, dir] of builds) {
  const local = existsSync(CHROMIUM) ? await chromiumLoads(dir, false) : null;
  const slow = existsSync(CHROMIUM) ? await chromiumLoads(dir, true) : null;
  const node = nodeLoads(dir);
  rows.push([label, local, slow, node]);
}
const f = (x) => `${x.toFixed(1)} ms`;
console.log(`partkit load times — node ${process.version}, Chromium (${CHROMIUM}), ${RUNS} runs each, medians\n`);
console.log('| build | validator page, first result (localhost) | same at 10 Mbit/s, 40 ms | `require(\'partkit\')` | `require` + first `bucket()` |');
console.log('| --- | ---: | ---: | ---: | ---: |');
for (const [label, local, slow, node] of rows) {
  console.log(`| ${label} | ${local ? f(local.ms) : '—'} | ${slow ? f(slow.ms) : '—'} | ${f(node.require)} | ${f(node.firstCall)} |`);
}
