#!/usr/bin/env node
// A user who installs partkit without an optional peer dependency and loads the subpath that
// needs it gets a PartkitError MISSING_PEER_DEPENDENCY naming the package and the command that
// installs it, from require() and from import: partkit/kafka without kafkajs, partkit/s3 without
// @aws-sdk/client-s3. The root loads without either. Runs on the packed tarball
// (`node tests/consumer/peers.mjs [partkit-x.y.z.tgz]`; without one it packs), installed in a
// project under the OS temp dir that has neither peer.
import {execFileSync} from 'node:child_process';
import {mkdtempSync, readdirSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {dirname, join, resolve} from 'node:path';
import {fileURLToPath} from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'partkit-peers-'));
try {
  let tarball = process.argv[2] && resolve(process.argv[2]);
  if (!tarball) {
    execFileSync('npm', ['pack', '--silent', '--pack-destination', dir], {cwd: root, stdio: ['ignore', 'ignore', 'inherit']});
    tarball = join(dir, readdirSync(dir).find((f) => f.endsWith('.tgz')));
  }
  writeFileSync(join(dir, 'package.json'), '{"name": "partkit-without-peers", "private": true}\n');
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--no-package-lock', '--loglevel=error', tarball], {cwd: dir, stdio: 'inherit'});
  const node = (args) => execFileSync(process.execPath, args, {cwd: dir, encoding: 'utf8'});
  const check = (loaded, subpath, peer) => `
    const expected = 'partkit/${subpath} needs ${peer}, an optional peer dependency that is not installed: npm install ${peer}';
    if (!(e instanceof PartkitError) || e.code !== 'MISSING_PEER_DEPENDENCY' || e.message !== expected) {
      console.error('${loaded} partkit/${subpath} without ${peer}: expected PartkitError MISSING_PEER_DEPENDENCY, got', e);
      process.exit(1);
    }`;
  for (const [subpath, peer] of [['kafka', 'kafkajs'], ['s3', '@aws-sdk/client-s3']]) {
    node(['-e', `const {PartkitError} = require('partkit');
      try { require('partkit/${subpath}'); console.error('require partkit/${subpath} loaded without ${peer}'); process.exit(1); }
      catch (e) { ${check('require', subpath, peer)} }`]);
    node(['--input-type=module', '-e', `import {PartkitError} from 'partkit';
      try { await import('partkit/${subpath}'); console.error('import partkit/${subpath} loaded without ${peer}'); process.exit(1); }
      catch (e) { ${check('import', subpath, peer)} }`]);
    console.log(`partkit/${subpath} without ${peer}: MISSING_PEER_DEPENDENCY from require and import`);
  }
  node(['-e', "if (require('partkit').bucket('test-key', 'test-data', 5) !== 2) process.exit(1)"]);
  console.log('missing peers: ok (the root loads without them)');
} finally {
  rmSync(dir, {recursive: true, force: true});
}
