#!/usr/bin/env node
// The packed tarball on every Node.js major version package.json's `engines` claims (18, 20, 22,
// 24): each is installed as the npm package `node@<major>` into ~/.cache/partkit/node<major>
// (once; PARTKIT_NODE_CACHE moves it), the tarball is installed once in a project under the OS
// temp dir with the optional peers (kafkajs, @aws-sdk/client-s3, linked from this repository's
// node_modules), and tests/consumer/smoke.cjs runs there on each version: require and import of every
// entry of package.json's `exports` (subpaths read from the installed package, so a new subpath
// is covered without a change here), partkit/kafka and partkit/s3 with their peers, and the CLI
// (`partkit` from node_modules/.bin, run by that version's `node`).
//
// `node tests/consumer/nodes.mjs [--tarball partkit-x.y.z.tgz] [18 20 ...]`.
import {execFileSync} from 'node:child_process';
import {copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync} from 'node:fs';
import {homedir, tmpdir} from 'node:os';
import {dirname, join, resolve} from 'node:path';
import {fileURLToPath} from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const args = process.argv.slice(2);
const tarballArg = args.includes('--tarball') ? resolve(args[args.indexOf('--tarball') + 1]) : null;
const asked = args.filter((a, i) => /^\d+$/.test(a) && args[i - 1] !== '--tarball');

// The majors `engines` claims: from its lowest (`>=18`) to the newest even (LTS) release tested.
const NEWEST = 24;
const lowest = Number(/^>=\s*(\d+)/.exec(pkg.engines?.node ?? '')?.[1]);
if (!Number.isInteger(lowest)) throw new Error(`package.json engines.node is not '>=N': ${pkg.engines?.node}`);
const majors = asked.length ? asked.map(Number) : Array.from({length: (NEWEST - lowest) / 2 + 1}, (_, i) => lowest + 2 * i);

const cache = process.env.PARTKIT_NODE_CACHE ?? join(homedir(), '.cache', 'partkit');
const quiet = ['--no-audit', '--no-fund', '--loglevel=error'];

/** That major's `node` binary, installed from the npm package `node@<major>` when missing. */
function nodeBinary(major) {
  const dir = join(cache, `node${major}`);
  const bin = join(dir, 'node_modules', 'node', 'bin', 'node');
  if (!existsSync(bin)) {
    console.log(`nodes: installing node@${major} into ${dir}`);
    mkdirSync(dir, {recursive: true});
    writeFileSync(join(dir, 'package.json'), `{"name": "partkit-node${major}", "private": true}\n`);
    execFileSync('npm', ['install', ...quiet, '--no-package-lock', `node@${major}`], {cwd: dir, stdio: 'inherit'});
  }
  const version = execFileSync(bin, ['--version'], {encoding: 'utf8'}).trim();
  if (!version.startsWith(`v${major}.`)) throw new Error(`${bin} is ${version}, not Node ${major}`);
  return {bin, version};
}

const dir = mkdtempSync(join(tmpdir(), 'partkit-nodes-'));
try {
  let tarball = tarballArg;
  if (!tarball) {
    execFileSync('npm', ['pack', '--silent', '--pack-destination', dir], {cwd: root, stdio: ['ignore', 'ignore', 'inherit']});
    tarball = join(dir, readdirSync(dir).find((f) => f.endsWith('.tgz')));
  }
  const project = join(dir, 'project');
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), '{"name": "partkit-nodes", "private": true}\n');
  execFileSync('npm', ['install', ...quiet, '--no-package-lock', tarball], {cwd: project, stdio: 'inherit'});
  for (const name of Object.keys(pkg.peerDependencies ?? {})) {
    const link = join(project, 'node_modules', name);
    mkdirSync(dirname(link), {recursive: true});
    if (!existsSync(link)) symlinkSync(join(root, 'node_modules', name), link, 'dir');
  }
  // A copy in the project, so that `partkit` resolves to the installed tarball, not this repository.
  copyFileSync(join(here, 'smoke.cjs'), join(project, 'smoke.cjs'));
  const failed = [];
  for (const major of majors) {
    const {bin, version} = nodeBinary(major);
    try {
      execFileSync(bin, ['smoke.cjs'], {
        cwd: project,
        stdio: 'inherit',
        env: {...process.env, PATH: `${dirname(bin)}:${process.env.PATH}`, NO_COLOR: '1'},
      });
    } catch {
      failed.push(`Node ${version}`);
    }
  }
  if (failed.length) {
    console.error(`nodes: the tarball fails on ${failed.join(', ')} (engines: ${pkg.engines.node})`);
    process.exit(1);
  }
  console.log(`nodes: ok on Node ${majors.join(', ')}`);
} finally {
  rmSync(dir, {recursive: true, force: true});
}
