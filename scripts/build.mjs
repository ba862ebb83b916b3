#!/usr/bin/env node
// Builds the package: toolchain check, npm dependencies when missing, the wasm for Node and
// for browsers, then the JS entry points. Every step is skipped when its output is current.
import {execFileSync} from 'node:child_process';
import {existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync} from 'node:fs';
import {dirname, join, relative, resolve, sep} from 'node:path';
import {fileURLToPath, pathToFileURL} from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const run = (cmd, args, opts = {}) => execFileSync(cmd, args, {cwd: root, stdio: 'inherit', ...opts});
const quiet = process.argv.includes('--quiet');
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
if (!existsSync(join(root, 'node_modules', 'esbuild')) || !existsSync(join(root, 'node_modules', 'commander'))) {
  log('installing npm dependencies');
  run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error']);
}

// 2. Rust toolchain pieces (wasm target, wasm-pack, matching wasm-bindgen CLI).
run('bash', [join(root, 'scripts', 'ensure-toolchain.sh')]);

// 3. The wasm, for Node (synchronous CommonJS) and for browsers (ES module, async init).
const rustInputs = newest(['src', 'Cargo.toml', 'Cargo.lock']);
const env = {...process.env, PATH: `${process.env.HOME}/.cargo/bin:${process.env.PATH}`};
for (const target of ['nodejs', 'web']) {
  const out = `pkg/${target === 'nodejs' ? 'node' : 'web'}`;
  if (mtime(`${out}/partkit_bg.wasm`) > rustInputs) continue;
  log(`wasm-pack build --target ${target}`);
  run('wasm-pack', ['build', '--release', '--target', target, '--out-dir', out, '--out-name', 'partkit', '--no-pack'], {env});
  rmSync(join(root, out, '.gitignore'), {force: true});
  if (target === 'web') writeFileSync(join(root, out, 'package.json'), '{"type": "module"}\n');
}

// 4. JS entry points.
const esbuild = await import('esbuild');
const wasmAlias = (target) => ({
  name: 'partkit-wasm',
  setup(build) {
    build.onResolve({filter: /^#wasm$/}, () => ({path: `../pkg/${target}/partkit.js`, external: true}));
  },
});
mkdirSync(join(root, 'dist'), {recursive: true});
const common = {bundle: true, absWorkingDir: root, logLevel: 'warning', legalComments: 'none'};
await esbuild.build({
  ...common,
  entryPoints: ['js/index.mjs'],
  outfile: 'dist/index.cjs',
  format: 'cjs',
  platform: 'node',
  target: 'node18',
  plugins: [wasmAlias('node')],
});
await esbuild.build({
  ...common,
  entryPoints: ['js/browser.mjs'],
  outfile: 'dist/browser.mjs',
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  plugins: [wasmAlias('web')],
});

// 5. Node-only subpaths: package.json "exports" "./<name>" (with its types in types/<name>.d.ts),
// from js/<name>/index.mjs, bundled to dist/<name>.cjs (require) and dist/<name>.mjs (import).
// A subpath's imports of the root's modules (js/*.mjs) are not bundled again but left to
// dist/index.cjs, so that one partkit instance serves the root and every subpath (one SyncError
// class for `instanceof`, one wasm instance); its npm dependencies (peer dependencies such as
// kafkajs) stay external. To add a subpath, add its name here and its "exports" entry:
//
//   "./<name>": {"types": "./types/<name>.d.ts",
//                "node": {"import": "./dist/<name>.mjs", "require": "./dist/<name>.cjs"}}
//
// with no "browser" or "default" condition: a browser bundler then refuses the import when it
// builds (no condition of "./<name>" matches) instead of shipping a module that fails when it
// runs, and no stub ends up in anyone's bundle. "types" comes first (TypeScript takes the first
// condition it knows); "typesVersions" maps "<name>" for TypeScript's older `node` resolution.
const NODE_SUBPATHS = ['kafka', 's3'];
const sharedRoot = (name) => ({
  name: 'partkit-shared-root',
  setup(build) {
    const own = resolve(root, 'js', name) + sep;
    build.onResolve({filter: /^\.\.?\//}, ({path, resolveDir}) => {
      const target = resolve(resolveDir, path);
      if (target.startsWith(own) || relative(join(root, 'js'), target).includes(sep)) return undefined;
      return {path: './index.cjs', external: true};
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
    await esbuild.build({
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
  // Loading the ES module links its named imports against dist/index.cjs' exports: a subpath
  // that imports a root module's name that the root does not export fails the build here.
  await import(pathToFileURL(join(root, 'dist', `${name}.mjs`)).href);
}
log('done');
