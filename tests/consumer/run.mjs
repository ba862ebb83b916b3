#!/usr/bin/env node
// Packs partkit with `npm pack`, installs the tarball into this fixture like a connector would,
// type-checks it with tsc (strict; and strict/ and src/ with exactOptionalPropertyTypes and
// noUncheckedIndexedAccess under module resolution node16, nodenext and bundler), runs its
// ts-jest suite, and checks ESM and CJS loading of the
// root and of partkit/kafka.
import {execFileSync} from 'node:child_process';
import {readdirSync, rmSync} from 'node:fs';
import {dirname, join} from 'node:path';
import {fileURLToPath} from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const run = (cmd, args, cwd = here) => execFileSync(cmd, args, {cwd, stdio: 'inherit'});

for (const f of readdirSync(here)) if (f.endsWith('.tgz')) rmSync(join(here, f));
run('npm', ['pack', '--silent', '--pack-destination', here], root);
const tarball = readdirSync(here).find((f) => f.endsWith('.tgz'));
run('npm', ['install', '--no-audit', '--no-fund', '--no-package-lock', '--loglevel=error', `./${tarball}`]);
run('npx', ['tsc', '-p', '.', '--noEmit']);
// strict/ and src/: strict, exactOptionalPropertyTypes and noUncheckedIndexedAccess, per module resolution.
for (const resolution of ['node16', 'nodenext', 'bundler']) run('npx', ['tsc', '-p', `tsconfig.${resolution}.json`]);
run('npx', ['jest', '--ci']);
run(process.execPath, ['--input-type=module', '-e',
  "import {bucket} from 'partkit'; if (bucket('test-key', 'test-data', 5) !== 2) process.exit(1); console.log('esm import ok');"]);
run(process.execPath, ['-e',
  "const {bucket} = require('partkit'); if (bucket('test-key', 'test-data', 5) !== 2) process.exit(1); console.log('cjs require ok');"]);
// The root loads no kafkajs (it is an optional peer dependency); partkit/kafka does, and shares
// the root's instance (one SyncError class).
run(process.execPath, ['-e',
  "require('partkit'); if (Object.keys(require.cache).some((f) => f.includes('kafkajs'))) { console.error('the package root loaded kafkajs'); process.exit(1); } console.log('root without kafkajs ok');"]);
run(process.execPath, ['-e',
  "const {KafkaTaskSync} = require('partkit/kafka'); const {SyncError} = require('partkit'); " +
  "try { new KafkaTaskSync({}); process.exit(1); } catch (e) { if (!(e instanceof SyncError)) process.exit(1); } console.log('cjs require partkit/kafka ok');"]);
run(process.execPath, ['--input-type=module', '-e',
  "import {KafkaTaskSync} from 'partkit/kafka'; import {SyncError} from 'partkit'; " +
  "try { new KafkaTaskSync({}); process.exit(1); } catch (e) { if (!(e instanceof SyncError)) process.exit(1); } console.log('esm import partkit/kafka ok');"]);
// Without the optional peers, partkit/kafka and partkit/s3 say which package to install.
run(process.execPath, [join(here, 'peers.mjs'), join(here, tarball)]);
console.log('consumer fixture: ok');
