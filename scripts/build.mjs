#!/usr/bin/env node
// Builds the package: toolchain check, npm dependencies when missing, the wasm for Node and
// for browsers, then the JS entry points. Every step is skipped when its output is current.
import {execFileSync, spawn} from 'node:child_process';
import {existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, rmdirSync, statSync, writeFileSync} from 'node:fs';
import {dirname, join, relative, resolve, sep} from 'node:path';
import {createRequire} from 'node:module';
import {fileURLToPath, pathToFileURL} from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const run = (cmd, args, opts = {}) => execFileSync(cmd, args, {cwd: root, stdio: 'inherit', ...opts});
/** `run`, without waiting: a promise of its end. */
const runAsync = (cmd, args) => new Promise((done, fail) => {
  const child = spawn(cmd, args, {cwd: root, stdio: 'inherit'});
  child.on('error', fail);
  child.on('exit', (code, signal) => (code === 0 ? done() : fail(new Error(`build: ${cmd} ${args.join(' ')} ended with ${signal ?? code}`))));
});
const quiet = process.argv.includes('--quiet');
if (process.argv.includes('--help') || process.argv.includes('-h')) {
  console.log(`usage: node scripts/build.mjs [--quiet]

Builds the package into pkg/ and dist/: the npm dependencies and Rust toolchain pieces when
missing, one WebAssembly module per domain, the LZMA decoder, dist/index.cjs, dist/browser/ and
the Node-only subpaths. Every step is skipped when its output is current.

  --quiet   no progress lines on standard error`);
  process.exit(0);
}
const log = (msg) => quiet || console.error(`build: ${msg}`);

function newest(paths) {
  let t = 0;
  const visit = (p) => {
    if (!existsSync(p)) return;
    const st = statSync(p);
    if (st.isDirectory()) for (const f of readdirSync(p)) visit(join(p, f));
    else t = Math.max(t, st.mtimeMs);
  };
  paths.forEach((p) => visit(join(root, p)));
  return t;
}
const mtime = (p) => (existsSync(join(root, p)) ? statSync(join(root, p)).mtimeMs : 0);

// 1. npm dependencies (a fresh clone has none).
if (['esbuild', 'commander', 'binaryen', 'typescript'].some((m) => !existsSync(join(root, 'node_modules', m)))) {
  log('installing npm dependencies');
  run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error']);
}

// 2. Rust toolchain pieces (a C compiler, the wasm target, the matching wasm-bindgen CLI).
run('bash', [join(root, 'scripts', 'ensure-toolchain.sh')]);

// 3. The wasm: one module per domain (cargo feature `<domain>`, src/wasm/<domain>.rs), so that a
// page or process loads only the domains it calls. Each is built by cargo, bound by wasm-bindgen
// (`--target web`, whose glue takes the compiled module from us: `initSync`), shrunk by binaryen's
// wasm-opt (the npm package `binaryen`, a devDependency), packed with LZMA into
// dist/wasm/<domain>.json, and wrapped in pkg/<domain>/index.mjs, which unpacks and compiles it on the first call
// (js/wasm/load.mjs).
const DOMAINS = ['bucketing', 'objects', 'imports', 'lifecycle', 'sync'];
// The cargo features of a domain's module, where more than the domain's own: the bucketing module
// allocates with talc (src/wasm/alloc.rs).
const FEATURES = {bucketing: 'bucketing,talc-alloc'};
// Features of the wasm rustc emits by default (Rust >= 1.87), which wasm-opt must be told of.
const WASM_FEATURES = ['--enable-bulk-memory', '--enable-nontrapping-float-to-int', '--enable-sign-ext',
  '--enable-mutable-globals', '--enable-reference-types', '--enable-multivalue'];
// -O3, not -Oz: -Oz saved about 1% and slowed the regex partitioner by 20-30% (docs/wasm-design.md).
const WASM_OPT = ['-O3', '--strip-debug', '--strip-producers', ...WASM_FEATURES];
const rustInputs = newest(['src', 'Cargo.toml', 'Cargo.lock']);
const env = {...process.env, PATH: `${process.env.HOME}/.cargo/bin:${process.env.PATH}`};
for (const old of ['pkg/node', 'pkg/web']) rmSync(join(root, old), {recursive: true, force: true});
const optimizing = [];
for (const domain of DOMAINS) {
  const out = `pkg/${domain}`;
  const stamp = join(root, out, 'wasm-opt.json');
  const flags = JSON.stringify(WASM_OPT) + '\n';
  if (mtime(`${out}/partkit_bg.wasm`) > rustInputs && existsSync(stamp) && readFileSync(stamp, 'utf8') === flags) continue;
  log(`wasm of ${domain}: cargo build, wasm-bindgen, wasm-opt`);
  run('cargo', ['build', '--quiet', '--lib', '--release', '--target', 'wasm32-unknown-unknown',
    '--no-default-features', '--features', FEATURES[domain] ?? domain], {env});
  rmSync(join(root, out), {recursive: true, force: true});
  run('wasm-bindgen', ['target/wasm32-unknown-unknown/release/partkit.wasm', '--target', 'web',
    '--out-dir', out, '--out-name', 'partkit', '--no-typescript', '--remove-name-section',
    '--remove-producers-section'], {env});
  const wasmFile = join(root, out, 'partkit_bg.wasm');
  // wasm-opt works on its own copy while cargo builds the next domain (each uses one core: the
  // crate's codegen is one unit)
  optimizing.push(runAsync(join(root, 'node_modules', '.bin', 'wasm-opt'), [wasmFile, '-o', wasmFile, ...WASM_OPT]).then(() => {
    writeFileSync(join(root, out, 'package.json'), '{"type": "module"}\n');
    writeFileSync(stamp, flags);
  }));
}
await Promise.all(optimizing);
// The LZMA decoder that unpacks them (crates/unlzma, no_std, no allocator), carried inline in
// js/wasm/load.mjs as base64 (pkg/unlzma/index.mjs): its stack is 16 KiB, so its memory starts
// at two pages.
const unlzmaOut = 'pkg/unlzma';
if (!(mtime(`${unlzmaOut}/index.mjs`) > newest(['crates/unlzma/src', 'crates/unlzma/Cargo.toml', 'Cargo.toml', 'scripts/build.mjs']))) {
  log('LZMA decoder: cargo build, wasm-opt');
  // RUSTFLAGS (for this package alone: the only one this command builds for wasm) replace
  // .cargo/config.toml's +simd128, which the decoder has no use for
  run('cargo', ['build', '--quiet', '--release', '--target', 'wasm32-unknown-unknown', '-p', 'partkit-unlzma'],
    {env: {...env, RUSTFLAGS: '-C link-arg=-zstack-size=16384'}});
  mkdirSync(join(root, unlzmaOut), {recursive: true});
  const wasmFile = join(root, unlzmaOut, 'unlzma.wasm');
  run(join(root, 'node_modules', '.bin', 'wasm-opt'), ['target/wasm32-unknown-unknown/release/partkit_unlzma.wasm',
    '-o', wasmFile, ...WASM_OPT]);
  writeFileSync(join(root, unlzmaOut, 'index.mjs'), [
    '// Generated by scripts/build.mjs: the LZMA decoder of js/wasm/load.mjs (crates/unlzma).',
    `export const unlzmaWasm = ${JSON.stringify(readFileSync(wasmFile).toString('base64'))};`,
    ''].join('\n'));
}
const {unlzma} = await import(pathToFileURL(join(root, 'js', 'wasm', 'load.mjs')).href + `?${Date.now()}`);
// dist/ is written in place, each file only when its bytes change (by a rename, never half
// written), and what this build did not write is removed at the end: a build that changes
// nothing leaves dist/ as it was, so that processes loading partkit meanwhile (the Kafka suites
// that run beside the others in `npm test`, whose `npm pack` builds again) never see it change.
const written = new Set();
function emit(path, contents) {
  const file = resolve(root, path);
  written.add(file);
  const bytes = typeof contents === 'string' ? Buffer.from(contents) : Buffer.from(contents.buffer, contents.byteOffset, contents.byteLength);
  if (existsSync(file) && readFileSync(file).equals(bytes)) return;
  mkdirSync(dirname(file), {recursive: true});
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, bytes);
  renameSync(tmp, file);
}
const esbuildTo = async (options) => {
  const result = await esbuild.build({...options, write: false});
  for (const f of result.outputFiles) emit(f.path, f.contents);
  return result;
};
const wasmFile = (domain) => join(root, 'pkg', domain, 'partkit_bg.wasm');
log('lzma');
for (const domain of DOMAINS) {
  emit(join('pkg', domain, 'index.mjs'), await lazyModule(domain, `pkg/${domain}`));
  emit(join('dist', 'wasm', `${domain}.json`), JSON.stringify(pack(wasmFile(domain)).toString('base64')) + '\n');
}

/**
 * The file at `path` compressed for js/wasm/load.mjs: a properties byte, then liblzma's raw LZMA1
 * stream, ended by an end marker, as XZ Utils' `xz` writes it (preset 9 extreme, lc 3, lp 0, pb 0:
 * WebAssembly has no alignment for position bits to use; a window of 4 MiB, larger than any
 * module). The decoder that pages run must give the file back, which is checked here.
 */
function pack(path) {
  const [lc, lp, pb] = [3, 0, 0];
  const stream = execFileSync('xz', ['--format=raw', `--lzma1=preset=9e,lc=${lc},lp=${lp},pb=${pb},dict=4MiB`, '--stdout', path],
    {maxBuffer: 1 << 30});
  const packed = Buffer.concat([Buffer.of((pb * 5 + lp) * 9 + lc), stream]);
  const original = readFileSync(path);
  let back = null;
  try {
    back = unlzma(packed, original.length);
  } catch {}
  if (!back || Buffer.compare(Buffer.from(back), original) !== 0) {
    throw new Error(`build: the LZMA decoder does not give ${relative(root, path)} back`);
  }
  return packed;
}

/**
 * pkg/<domain>/index.mjs: the glue's exports, each a stub until its first call, which unpacks,
 * compiles and instantiates the wasm once and rebinds that export to the glue's own, so that its later calls go straight to
 * wasm-bindgen's function or class. Each stub names only its own glue export: a bundler drops the
 * glue of every export its code never calls.
 */
async function lazyModule(domain, out) {
  const glue = await import(pathToFileURL(join(root, out, 'partkit.js')).href + `?${Date.now()}`);
  const names = Object.keys(glue).filter((n) => n !== 'default' && n !== 'initSync').sort();
  const bytes = readFileSync(join(root, out, 'partkit_bg.wasm'));
  const stub = (n) => {
    const value = glue[n];
    if (typeof value !== 'function') throw new Error(`build: ${out}/partkit.js exports ${n}, not a function`);
    if (!/^class\b/.test(Function.prototype.toString.call(value))) {
      return `export let ${n} = function (...args) {\n  load();\n  ${n} = glue${n};\n  return glue${n}(...args);\n};`;
    }
    const statics = Object.getOwnPropertyNames(value)
      .filter((s) => !['length', 'name', 'prototype'].includes(s) && !s.startsWith('__') && typeof value[s] === 'function');
    return [`export let ${n} = class {`,
      `  constructor(...args) {\n    load();\n    ${n} = glue${n};\n    return new glue${n}(...args);\n  }`,
      ...statics.map((s) => `  static ${s}(...args) {\n    load();\n    ${n} = glue${n};\n    return glue${n}.${s}(...args);\n  }`),
      '};'].join('\n');
  };
  return [
    `// Generated by scripts/build.mjs: the exports of partkit's ${domain} WebAssembly (${bytes.length} bytes,`,
    `// dist/wasm/${domain}.json), which the first call of any of them compiles (js/wasm/load.mjs).`,
    `import {initSync, ${names.map((n) => `${n} as glue${n}`).join(', ')}} from './partkit.js';`,
    "import {wasmModule} from '../../js/wasm/load.mjs';",
    `import {wasmData} from '#wasm-data/${domain}';`,
    '',
    'let ready = false;',
    'function load() {',
    '  if (ready) return;',
    `  initSync({module: wasmModule(wasmData(), ${bytes.length})});`,
    '  ready = true;',
    '}',
    '',
    ...names.map(stub),
    '',
  ].join('\n');
}

// 4. JS entry points: for Node (require and import, jest, esbuild --platform=node) one CommonJS
// file per domain, dist/<domain>.cjs, which `require`s its own wasm (dist/wasm/<domain>.json)
// and nothing of the other domains, the code every domain shares in dist/common.cjs (one
// PartkitError class, one LZMA decoder per process), and dist/index.cjs,
// the root, re-exporting every domain; for browsers and bundlers dist/browser/ (index.mjs, one
// entry per domain, shared chunks), the same code. A bundler's tree shaking keeps only the
// domains a page uses ("sideEffects": false); a page without a bundler imports a domain's entry
// (`partkit/<domain>`, package.json "exports"). Both builds have TextDecoder/TextEncoder injected
// (js/wasm/text.mjs: jest's jsdom environment, which runs either, has neither; the platform's own
// classes where they exist).
const esbuild = await import('esbuild');
// `#wasm/<domain>` is pkg/<domain>/index.mjs (package.json "imports"); `#wasm-data/<domain>`, how
// it reads dist/wasm/<domain>.json, from dist/<domain>.cjs (`require`, on first use) or from
// dist/browser/ (a static JSON import, which bundlers inline and browsers fetch).
const wasmDomains = (format) => ({
  name: 'partkit-wasm',
  setup(build) {
    const domainOf = (path, prefix) => {
      const domain = path.slice(prefix.length);
      if (!DOMAINS.includes(domain)) throw new Error(`build: no wasm domain ${domain}`);
      return domain;
    };
    build.onResolve({filter: /^#wasm-data\//}, ({path}) => ({path: domainOf(path, '#wasm-data/'), namespace: 'wasm-data'}));
    build.onLoad({filter: /.*/, namespace: 'wasm-data'}, ({path: domain}) => ({
      contents: format === 'cjs'
        ? `export const wasmData = () => require('./wasm/${domain}.json');`
        : `import data from '../wasm/${domain}.json' with {type: 'json'};\nexport const wasmData = () => data;`,
      loader: 'js',
    }));
    build.onResolve({filter: /^\.\.?\/wasm\/[a-z]+\.json$/}, ({path}) => ({path, external: true}));
  },
});
const common = {bundle: true, absWorkingDir: root, logLevel: 'warning', legalComments: 'none'};
// The modules several domains share, in Node: dist/common.cjs (every domain), dist/serde.cjs
// (serde's words in JS words: lifecycle and sync only).
const SHARED_MODULES = ['js/errors.mjs', 'js/limits.mjs', 'js/packed.mjs', 'js/kit/args.mjs', 'js/wasm/load.mjs'];
const sharedFile = (target) => (target === join(root, 'js', 'kit', 'serde.mjs') ? './serde.cjs'
  : SHARED_MODULES.some((m) => join(root, m) === target) ? './common.cjs' : undefined);
const sharedModules = {
  name: 'partkit-common',
  setup(build) {
    build.onResolve({filter: /\.mjs$/}, ({path, resolveDir, kind}) => {
      const file = kind === 'entry-point' ? undefined : sharedFile(resolve(resolveDir, path));
      return file && {path: file, external: true};
    });
  },
};
// Virtual entries: `partkit-entry:<name>` is the source of dist/<name>.cjs.
const entries = (sources) => ({
  name: 'partkit-entries',
  setup(build) {
    build.onResolve({filter: /^partkit-entry:/}, ({path}) => ({path: path.slice('partkit-entry:'.length), namespace: 'partkit-entry'}));
    build.onLoad({filter: /.*/, namespace: 'partkit-entry'}, ({path}) => ({resolveDir: root, loader: 'js', contents: sources[path]}));
  },
});
// Each domain's file also gives tests the domain's raw wasm exports (tests/memory.test.js fills a
// domain's memory), under a registered symbol on PartkitError: not API, not enumerable, no types.
const nodeSources = {
  common: SHARED_MODULES.map((m) => `export * from './${m}';`).join('\n'),
  ...Object.fromEntries(DOMAINS.map((d) => [d, [
    `export * from './js/${d}.mjs';`,
    "import {PartkitError} from './js/errors.mjs';",
    `import * as raw from '#wasm/${d}';`,
    "const hook = Symbol.for('partkit.wasm');",
    'if (!Object.prototype.hasOwnProperty.call(PartkitError, hook)) Object.defineProperty(PartkitError, hook, {value: {}});',
    `PartkitError[hook].${d} = raw;`,
  ].join('\n')])),
};
const nodeCommon = {
  ...common,
  format: 'cjs',
  platform: 'node',
  target: 'node18',
  // whitespace and syntax only: names stay as written, for stack traces; lines broken from 160
  // characters on, since Node prints the source line of an uncaught error's throw site
  minifyWhitespace: true,
  minifySyntax: true,
  lineLimit: 160,
  // wasm-bindgen's async `init`, which reads import.meta.url, is never imported (tree-shaken)
  logOverride: {'empty-import-meta': 'silent'},
};
// Both builds are minified without esbuild's keepNames (which wraps every function in a naming
// call: 1 kB gzipped on the bucketing page); the names users see, those of the exported classes
// (errors' `name` is their class's), are kept by a static `name` on each (esbuild renames a class
// whose name another module's class has: the glue's own SyncTask, say).
const classNames = {
  name: 'partkit-class-names',
  setup(build) {
    build.onLoad({filter: /[\\/]js[\\/][a-z]+\.mjs$/}, ({path}) => ({
      loader: 'js',
      contents: readFileSync(path, 'utf8').replace(/^export class (\w+)((?: extends \w+)?) \{/gm,
        (_, name, ext) => `export class ${name}${ext} {static name = ${JSON.stringify(name)};`),
    }));
  },
};
await esbuildTo({...nodeCommon, entryPoints: ['partkit-entry:common'], outfile: 'dist/common.cjs', plugins: [entries(nodeSources), classNames]});
await esbuildTo({...nodeCommon, entryPoints: ['js/kit/serde.mjs'], outfile: 'dist/serde.cjs', plugins: [sharedModules]});
const domainExports = {};
for (const d of DOMAINS) {
  await esbuildTo({
    ...nodeCommon,
    entryPoints: [`partkit-entry:${d}`],
    outfile: `dist/${d}.cjs`,
    inject: ['js/wasm/text.mjs'],
    plugins: [entries(nodeSources), sharedModules, classNames, wasmDomains('cjs')],
  });
  domainExports[d] = Object.keys(createRequire(import.meta.url)(join(root, 'dist', `${d}.cjs`))).sort();
}
// The root: every domain, named one by one (Node's ES module loader reads the names of a
// CommonJS module's exports from the text esbuild writes for them).
const rootSource = ["export {PartkitError, BucketingError, PartitionError, ImportBucketError, LifecycleError, SyncError} from './dist/common.cjs';",
  ...DOMAINS.map((d) => `export {${domainExports[d].filter((n) => !/Error$/.test(n)).join(', ')}} from './dist/${d}.cjs';`)].join('\n');
await esbuildTo({
  ...nodeCommon,
  entryPoints: ['partkit-entry:index'],
  outfile: 'dist/index.cjs',
  plugins: [entries({index: rootSource}), {name: 'partkit-root', setup(build) {
    build.onResolve({filter: /^\.\/dist\//}, ({path}) => ({path: `./${path.slice('./dist/'.length)}`, external: true}));
  }}],
});
await esbuildTo({
  ...common,
  entryPoints: {index: 'js/index.mjs', ...Object.fromEntries(DOMAINS.map((d) => [d, `js/${d}.mjs`]))},
  outdir: 'dist/browser',
  outExtension: {'.js': '.mjs'},
  chunkNames: 'chunk-[hash]',
  // what a page without a bundler downloads
  minify: true,
  splitting: true,
  format: 'esm',
  platform: 'neutral',
  target: 'es2022',
  // the JSON import's `with {type: 'json'}` (browsers need it; es2022 predates it)
  supported: {'import-attributes': true},
  // no Node Buffer fast paths in browsers (js/packed.mjs, js/wasm/load.mjs): their portable
  // paths give the same bytes
  define: {'globalThis.Buffer': 'undefined'},
  inject: ['js/wasm/text.mjs'],
  plugins: [classNames, wasmDomains('esm')],
});
// The ES modules' types: types/index.d.ts and types/<domain>.d.ts read as ES modules (see step 5).
emit(join('dist', 'index.d.mts'), "export * from '../types/index.js';\n");
for (const d of DOMAINS) emit(join('dist', `${d}.d.mts`), `export * from '../types/${d}.js';\n`);

// 5. Node-only subpaths: package.json "exports" "./<name>" (with its types in types/<name>.d.ts),
// from js/<name>/index.mjs, bundled to dist/<name>.cjs (require) and dist/<name>.mjs (import).
// A subpath's imports of the root's modules (js/*.mjs) are not bundled again but left to
// dist/index.cjs, so that one partkit instance serves the root and every subpath (one SyncError
// class for `instanceof`, one wasm instance per domain); its npm dependencies (peer dependencies
// such as kafkajs) stay external. To add a subpath, add its name here and its "exports" entry:
//
//   "./<name>": {"import": {"types": "./dist/<name>.d.mts", "node": "./dist/<name>.mjs"},
//                "require": {"types": "./types/<name>.d.ts", "node": "./dist/<name>.cjs"}}
//
// with no "browser" or "default" condition: a browser bundler then refuses the import when it
// builds (no condition of "./<name>" matches) instead of shipping a module that fails when it
// runs, and no stub ends up in anyone's bundle. "types" comes first in each branch (TypeScript
// takes the first condition it knows), and the ES module's types are dist/<name>.d.mts, written
// here (re-exporting types/<name>.d.ts), so that TypeScript reads an ES module as one (not
// "masquerading as CJS"); "typesVersions" maps "<name>" for TypeScript's older `node` resolution.
const NODE_SUBPATHS = ['kafka', 's3'];
const sharedRoot = (name) => ({
  name: 'partkit-shared-root',
  setup(build) {
    const own = resolve(root, 'js', name) + sep;
    build.onResolve({filter: /^\.\.?\//}, ({path, resolveDir}) => {
      const target = resolve(resolveDir, path);
      if (sharedFile(target)) return {path: sharedFile(target), external: true};
      if (target.startsWith(own) || relative(join(root, 'js'), target).includes(sep)) return undefined;
      const domain = relative(join(root, 'js'), target).replace(/\.mjs$/, '');
      if (!DOMAINS.includes(domain)) throw new Error(`build: ${name} imports ${path}, neither a domain nor a shared module`);
      return {path: `./${domain}.cjs`, external: true};
    });
  },
});
// A subpath's optional peer dependencies, with the names its modules import from each: every
// import of one goes through js/peers/missing.mjs, so that loading the subpath without the peer
// throws PartkitError MISSING_PEER_DEPENDENCY (naming it and `npm install <peer>`) instead of
// Node's bare module-not-found error. The ES module imports the peer with a top-level `await
// import()`: a static import of a missing package fails at link time, before any code runs.
const PEERS = {kafkajs: ['default'], '@aws-sdk/client-s3': ['HeadObjectCommand', 'ListObjectsV2Command']};
const peerGuard = (subpath, format) => ({
  name: 'partkit-peer-guard',
  setup(build) {
    const filter = new RegExp(`^(${Object.keys(PEERS).map((p) => p.replace(/[/.]/g, '\\$&')).join('|')})$`);
    build.onResolve({filter}, ({path, namespace}) => (namespace === 'file' ? {path, namespace: 'partkit-peer'} : undefined));
    build.onLoad({filter: /.*/, namespace: 'partkit-peer'}, ({path}) => {
      const args = `${JSON.stringify(subpath)}, ${JSON.stringify(path)}`;
      const contents = format === 'cjs'
        ? `const {loadPeer} = require('./peers/missing.mjs');\nmodule.exports = loadPeer(() => require(${JSON.stringify(path)}), ${args});\n`
        : `import {loadPeerAsync} from './peers/missing.mjs';\nconst peer = await loadPeerAsync(() => import(${JSON.stringify(path)}), ${args});\n` +
          PEERS[path].map((n) => (n === 'default' ? 'export default peer.default;' : `export const ${n} = peer.${n};`)).join('\n');
      return {contents, resolveDir: join(root, 'js'), loader: 'js'};
    });
  },
});
for (const name of NODE_SUBPATHS) {
  for (const format of ['cjs', 'esm']) {
    await esbuildTo({
      ...common,
      entryPoints: [`js/${name}/index.mjs`],
      outfile: `dist/${name}.${format === 'cjs' ? 'cjs' : 'mjs'}`,
      format,
      platform: 'node',
      target: 'node18',
      packages: 'external',
      plugins: [peerGuard(name, format), sharedRoot(name)],
    });
  }
  emit(join('dist', `${name}.d.mts`), `export * from '../types/${name}.js';\n`);
  // Loading the ES module links its named imports against dist/index.cjs' exports: a subpath
  // that imports a root module's name that the root does not export fails the build here.
  await import(pathToFileURL(join(root, 'dist', `${name}.mjs`)).href);
}
// What this build did not write (a domain's chunk of an earlier build, say) goes.
const prune = (dir) => {
  for (const entry of readdirSync(dir, {withFileTypes: true})) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      prune(path);
      if (readdirSync(path).length === 0) rmdirSync(path);
    } else if (!written.has(path)) rmSync(path);
  }
};
prune(join(root, 'dist'));
log('done');
