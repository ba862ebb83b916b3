// The tarball's consumer smoke, run by tests/consumer/nodes.mjs with each Node.js version, from a
// copy in a project that installed the tarball and the optional peers: every entry of
// package.json's `exports` (read from the installed package) loads with require() and import(),
// the root and the Node-only subpaths work, and the `partkit` command runs.
'use strict';
const {execFileSync} = require('node:child_process');
const {readFileSync} = require('node:fs');
const {join} = require('node:path');

const installed = join(__dirname, 'node_modules', 'partkit');
const pkg = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
const specifiers = Object.keys(pkg.exports)
  .filter((k) => k !== './package.json')
  .map((k) => (k === '.' ? 'partkit' : `partkit/${k.slice(2)}`));

const fail = (what) => {
  console.error(`smoke on Node ${process.version}: ${what}`);
  process.exit(1);
};

/** What each entry must do beyond loading; any other entry must export something. */
const checks = {
  partkit: (m) => {
    if (m.bucket('test-key', 'test-data', 5) !== 2) fail('partkit: bucket() gave a wrong bucket');
    const p = new m.ObjectPartitioner(4, {bucket: 'b', key: 'prefix/*', partition: {type: 'regex', pattern: 'user(\\d+)'}});
    if (p.indexOf('prefix/user123/file1.txt') !== 3) fail('partkit: ObjectPartitioner gave a wrong index');
  },
  // Loading it loads kafkajs (the peer); its errors are the root's SyncError (one instance).
  'partkit/kafka': (m, root) => {
    try {
      new m.KafkaTaskSync({});
    } catch (e) {
      if (e instanceof root.SyncError) return;
      fail(`partkit/kafka: new KafkaTaskSync({}) threw ${e}, not a SyncError`);
    }
    fail('partkit/kafka: new KafkaTaskSync({}) did not throw');
  },
  // Loading it loads @aws-sdk/client-s3 (the peer).
  'partkit/s3': (m) => {
    if (typeof m.listPartition !== 'function') fail('partkit/s3: no listPartition');
  },
};

async function main() {
  const cjsRoot = require('partkit');
  const esmRoot = await import('partkit');
  for (const spec of specifiers) {
    for (const [how, load, root] of [['require', () => require(spec), cjsRoot], ['import', () => import(spec), esmRoot]]) {
      let m;
      try {
        m = await load();
      } catch (e) {
        fail(`${how}('${spec}') failed: ${e && e.stack}`);
      }
      if (Object.keys(m).filter((k) => k !== 'default').length === 0) fail(`${how}('${spec}') exports nothing`);
      if (checks[spec]) checks[spec](m, root);
    }
  }
  const env = {...process.env, NO_COLOR: '1'};
  const partkit = (...args) => execFileSync(join(__dirname, 'node_modules', '.bin', 'partkit'), args, {encoding: 'utf8', env});
  if (partkit('--version').trim() !== pkg.version) fail('partkit --version is not the package version');
  if (partkit('bucket', '--key', 'test-key', '--total', '5', 'test-data').trim() !== 'test-data\t2') fail('partkit bucket gave a wrong bucket');
  if (!partkit('demo').includes('bucket')) fail('partkit demo printed no bucketing');
  console.log(`smoke on Node ${process.version}: ${specifiers.join(', ')} by require and import; the partkit command: ok`);
}

main().catch((e) => fail(e && e.stack));
