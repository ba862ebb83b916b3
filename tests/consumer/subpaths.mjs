// The per-domain subpaths (`partkit/bucketing`, `partkit/objects`, `partkit/imports`,
// `partkit/lifecycle`, `partkit/sync`) from the installed tarball, run by tests/consumer/runtime.mjs
// (which installs it into tests/consumer/runtime/): each loads only its own wasm in Node (require
// and import) and in esbuild's node bundles, within the bundle budget; each exported browser
// entry works on a page without a bundler (an import map) within its download budget; a page
// whose Content-Security-Policy forbids WebAssembly gets PartkitError WASM_UNSAFE_EVAL_REQUIRED;
// jest's jsdom environment runs the ES modules under native ESM; the CLI's --json is JSON on
// every path and warns of near-miss config keys.
import {execFileSync, spawnSync} from 'node:child_process';
import {existsSync, mkdirSync, readFileSync, statSync, writeFileSync} from 'node:fs';
import {createServer} from 'node:http';
import {createRequire} from 'node:module';
import {extname, join, normalize} from 'node:path';
import {gzipSync} from 'node:zlib';

export const DOMAINS = ['bucketing', 'objects', 'imports', 'lifecycle', 'sync'];
/**
 * Budgets (bytes): an esbuild --platform=node bundle (unminified) of a file that calls
 * Bucketing.create through partkit/bucketing (the subpath's `module` condition: its ES module,
 * tree-shaken; its wasm data alone is about 30 KB, the LZMA decoder about 3 KB); the no-build
 * pages, gzipped.
 */
export const BUDGETS = {nodeBundleBucketing: 65000, pageBucketing: 40000, pageObjects: 100000};

// One call per domain, with the export it needs: what a connector of that domain alone runs.
const CALLS = {
  bucketing: ['Bucketing', "Bucketing.create({partitionKey: 'k', config: {bucket_total: 3, bucket_id: 2}}).getBucketId() === 2"],
  objects: ['ObjectPartitioner', "new ObjectPartitioner(4, {key: 'prefix/', partition: {type: 'regex', pattern: 'user(\\\\d+)'}}).indexOf('prefix/user123/file1.txt') === 3"],
  imports: ['assignImportBuckets', "assignImportBuckets([{datasetName: 'faq'}], {buckets: 2, importId: 'i1'})[0].bucket.length === 36"],
  lifecycle: ['BuildState', "typeof new BuildState().snapshot() === 'object'"],
  sync: ['SyncTask', "new SyncTask('t1').taskId() === 't1'"],
};
const ERROR_CLASS = {bucketing: 'BucketingError', objects: 'PartitionError', imports: 'ImportBucketError', lifecycle: 'LifecycleError', sync: 'SyncError'};

export async function subpaths({here, out, bin, run, chromium, chromiumPath}) {
  const step = (what) => console.log(`\n== subpaths: ${what}`);
  const pkg = join(here, 'node_modules', 'partkit');

  // 1. Node: require and import; the same error classes as the root; only the domain's own files.
  step('node require and import of each subpath');
  for (const d of DOMAINS) {
    const [name, expr] = CALLS[d];
    const cls = ERROR_CLASS[d];
    run(process.execPath, ['-e', [
      `const m = require('partkit/${d}');`,
      `const {${name}, ${cls}, PartkitError} = m;`,
      `if (!(${expr})) throw new Error('${d}: wrong result');`,
      `if (${cls} !== require('partkit').${cls} || PartkitError !== require('partkit').PartkitError) throw new Error('${d}: error classes differ from the root');`,
    ].join('\n')]);
    // what a process that loads only the subpath reads: its own file and wasm, the shared module
    const loaded = execFileSync(process.execPath, ['-e', [
      `const m = require('partkit/${d}'); const {${name}} = m; ${expr};`,
      "console.log(JSON.stringify(Object.keys(require.cache).filter((f) => f.includes('partkit')).map((f) => f.slice(f.lastIndexOf('partkit')))));",
    ].join('\n')], {cwd: here, encoding: 'utf8'});
    const files = JSON.parse(loaded).map((f) => f.replace(/^partkit[\\/]/, '')).sort();
    const want = [`dist/${d}.cjs`, 'dist/common.cjs', `dist/wasm/${d}.json`,
      ...(['lifecycle', 'sync'].includes(d) ? ['dist/serde.cjs'] : [])].sort();
    if (JSON.stringify(files) !== JSON.stringify(want)) throw new Error(`partkit/${d} loaded ${files.join(', ')}, not ${want.join(', ')}`);
    run(process.execPath, ['--input-type=module', '-e',
      `import {${name}, ${cls}} from 'partkit/${d}'; import * as root from 'partkit'; if (!(${expr})) process.exit(1); if (${cls} !== root.${cls}) process.exit(1); console.log('partkit/${d}: import and require ok, loads ${files.join(', ')}');`]);
  }

  // 2. esbuild --platform=node bundles of one subpath each: its wasm alone.
  step('esbuild --bundle --platform=node of each subpath');
  const nodeBundles = {};
  for (const d of DOMAINS) {
    const [name, expr] = CALLS[d];
    const dir = join(out, `node-${d}`);
    mkdirSync(dir, {recursive: true});
    const src = join(dir, 'src.mjs');
    writeFileSync(src, `import {${name}} from 'partkit/${d}';\nif (!(${expr})) throw new Error('${d}');\nconsole.log('node bundle of partkit/${d}: ok');\n`);
    const file = join(dir, 'app.cjs');
    run(bin('esbuild'), [src, '--bundle', '--platform=node', `--outfile=${file}`, '--log-level=warning']);
    run(process.execPath, [file], {cwd: dir});
    const text = readFileSync(file, 'utf8');
    for (const other of DOMAINS.filter((o) => o !== d)) {
      const data = JSON.parse(readFileSync(join(pkg, 'dist', 'wasm', `${other}.json`), 'utf8'));
      if (text.includes(data.slice(0, 64))) throw new Error(`the node bundle of partkit/${d} holds the ${other} wasm`);
    }
    nodeBundles[d] = statSync(file).size;
    console.log(`node bundle of partkit/${d}: ${nodeBundles[d].toLocaleString('en')} B`);
  }
  if (nodeBundles.bucketing > BUDGETS.nodeBundleBucketing) {
    throw new Error(`the node bundle of partkit/bucketing is ${nodeBundles.bucketing} B, over ${BUDGETS.nodeBundleBucketing} B`);
  }

  // 3. The CLI from the tarball: --json on every path, near-miss warnings.
  step('partkit validate --json');
  const cli = (args, input) => spawnSync(bin('partkit'), args, {cwd: here, encoding: 'utf8', input});
  for (const [args, input, code] of [
    [['validate', '--json', 'missing.json'], undefined, 'INPUT_UNREADABLE'],
    [['validate', '--json', '-'], '{"bucket_total": ', 'INPUT_INVALID_JSON'],
    [['validate', '--json', '-'], '{"bucket_total": 4, "bucket_id": 5}', 'BUCKET_ID_OUT_OF_RANGE'],
  ]) {
    const r = cli(args, input);
    const json = JSON.parse(r.stdout);
    if (r.status !== 1 || json.ok !== false || json.error.code !== code) throw new Error(`partkit ${args.join(' ')}: ${r.status} ${r.stdout}`);
  }
  const near = cli(['validate', '--json', '-'], '{"bucket_totl": 4, "bucket_id": 1}');
  const nearJson = JSON.parse(near.stdout);
  if (near.status !== 0 || nearJson.ok !== true || nearJson.warnings?.[0]?.path?.[0] !== 'bucket_totl' || !/warning: .*did you mean bucket_total/.test(near.stderr)) {
    throw new Error(`partkit validate of a near miss: ${near.status} ${near.stdout} ${near.stderr}`);
  }
  console.log('partkit validate --json: JSON on every path; a near-miss key warned of');

  // 4. jest's jsdom environment under native ESM (--experimental-vm-modules), no other setting.
  step('jest --testEnvironment jsdom, native ESM');
  run(bin('jest'), ['--ci', '--rootDir', here, '--roots', '<rootDir>/jest-esm', '--testEnvironment', 'jsdom',
    '--testMatch', '**/*.test.mjs', '--moduleFileExtensions', 'mjs', '--moduleFileExtensions', 'js', '--transform', '{}'],
  {env: {...process.env, NODE_OPTIONS: '--experimental-vm-modules --no-warnings'}});

  // 5. Pages without a bundler: an import map to each subpath's browser entry.
  if (!chromium) return;
  step('no-build pages in Chromium (import maps), and a Content-Security-Policy');
  const pages = join(out, 'pages');
  mkdirSync(pages, {recursive: true});
  const entry = (d) => {
    const exp = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')).exports[`./${d}`];
    return `/pkg/${exp.browser.default.replace(/^\.\//, '')}`;
  };
  const CHECK = {
    bucketing: "import {validateBucketingConfig} from 'partkit/bucketing';\nvalidateBucketingConfig({round_robin_bucket_execution: true, bucket_total: 6, bucket_ranges: '2-3,5'});",
    objects: `import {ObjectPartitioner} from 'partkit/objects';\nif (!(${CALLS.objects[1]})) throw new Error('objects');`,
  };
  for (const d of DOMAINS) {
    const [name, expr] = CALLS[d];
    const script = CHECK[d] ?? `import {${name}} from 'partkit/${d}';\nif (!(${expr})) throw new Error('${d}');`;
    writeFileSync(join(pages, `${d}.mjs`), `${script}\ndocument.body.dataset.result = 'ok';\n`);
    writeFileSync(join(pages, `${d}.html`), `<!doctype html><meta charset="utf-8"><title>partkit/${d}</title><link rel="icon" href="data:,">` +
      `<script type="importmap">${JSON.stringify({imports: {[`partkit/${d}`]: entry(d)}})}</script>` +
      `<body><script type="module" src="${d}.mjs"></script></body>\n`);
  }
  // the CSP pages load the entry by URL (an inline import map is itself a script the policy governs)
  for (const [name, policy] of [['csp-blocked', "script-src 'self'"], ['csp-allowed', "script-src 'self' 'wasm-unsafe-eval'"]]) {
    writeFileSync(join(pages, `${name}.mjs`), [
      `import {validateBucketingConfig, PartkitError} from '${entry('bucketing')}';`,
      'try {',
      "  validateBucketingConfig({bucket_total: 6});",
      "  document.body.dataset.result = 'ok';",
      '} catch (error) {',
      "  document.body.dataset.result = error instanceof PartkitError ? `${error.code}: ${error.message}` : `raw ${error?.name}: ${error?.message}`;",
      '}', ''].join('\n'));
    writeFileSync(join(pages, `${name}.html`), `<!doctype html><meta charset="utf-8"><title>${policy}</title><link rel="icon" href="data:,"><body><script type="module" src="${name}.mjs"></script></body>\n`);
  }
  const TYPES = {'.html': 'text/html', '.mjs': 'text/javascript', '.js': 'text/javascript', '.json': 'application/json'};
  const served = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    const base = url.pathname.startsWith('/pkg/') ? pkg : pages;
    const file = normalize(join(base, decodeURIComponent(url.pathname.replace(/^\/pkg\//, '/'))));
    if (!file.startsWith(base) || !existsSync(file)) {
      res.writeHead(404).end();
      return;
    }
    const body = readFileSync(file);
    served.push(body);
    const headers = {'content-type': TYPES[extname(file)] ?? 'application/octet-stream'};
    if (url.pathname.startsWith('/csp-')) headers['content-security-policy'] = url.pathname.includes('blocked') ? "script-src 'self'" : "script-src 'self' 'wasm-unsafe-eval'";
    res.writeHead(200, headers).end(body);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const browser = await chromium.launch({executablePath: chromiumPath, headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync']});
  const load = async (name) => {
    served.length = 0;
    const context = await browser.newContext();
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`http://127.0.0.1:${server.address().port}/${name}.html`);
    await page.waitForFunction(() => document.body?.dataset.result !== undefined, null, {timeout: 20000});
    const result = await page.evaluate(() => document.body.dataset.result);
    await context.close();
    const gzipped = served.reduce((sum, body) => sum + gzipSync(body, {level: 9}).length, 0);
    return {result, errors, gzipped};
  };
  const pageSizes = {};
  try {
    for (const d of DOMAINS) {
      const {result, errors, gzipped} = await load(d);
      if (result !== 'ok' || errors.length) throw new Error(`the no-build page of partkit/${d}: ${result} ${errors.join('; ')}`);
      pageSizes[d] = gzipped;
      console.log(`no-build page of partkit/${d}: ok, ${gzipped.toLocaleString('en')} B gzipped`);
    }
    const blocked = await load('csp-blocked');
    if (!blocked.result.startsWith('WASM_UNSAFE_EVAL_REQUIRED: ') || !blocked.result.includes("'wasm-unsafe-eval'")) {
      throw new Error(`a page whose CSP forbids WebAssembly: ${blocked.result}`);
    }
    const allowed = await load('csp-allowed');
    if (allowed.result !== 'ok') throw new Error(`a page whose CSP allows 'wasm-unsafe-eval': ${allowed.result}`);
    console.log("Content-Security-Policy: without 'wasm-unsafe-eval' WASM_UNSAFE_EVAL_REQUIRED; with it, ok");
  } finally {
    await browser.close();
    server.close();
  }
  if (pageSizes.bucketing > BUDGETS.pageBucketing) throw new Error(`the partkit/bucketing page downloads ${pageSizes.bucketing} B gzipped, over ${BUDGETS.pageBucketing} B`);
  if (pageSizes.objects > BUDGETS.pageObjects) throw new Error(`the partkit/objects page downloads ${pageSizes.objects} B gzipped, over ${BUDGETS.pageObjects} B`);
}
