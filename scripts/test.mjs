#!/usr/bin/env node
// `npm test`: the build, then every suite, stopping at the first failure. The Kafka broker
// suites (`npm run test:kafka`: KafkaTaskSync on tansu, each task in its own process) spend most
// of their minutes waiting on session and rebalance timeouts (about half of one core), so they
// run beside the others from the end of the build on; the others run at a lower CPU priority
// (nice 19) so that the broker's and the tasks' timers are not starved, and the Kafka suites'
// output is printed in one block when they end. PARTKIT_SIM_FULL_SCALE=<tasks>x<partitions> (set
// by .ci/run) adds one scale simulation run of that shape (one seed, one core), started beside
// the others once test:sim has built the simulation, at nice 19 too. PARTKIT_TEST_SERIAL=1 runs
// every suite one after another instead (the Kafka suites after test:js, the scale run last).
import {spawn} from 'node:child_process';
import os from 'node:os';

const serial = process.env.PARTKIT_TEST_SERIAL === '1';
const suites = ['test:size', 'test:docs', 'test:rust', 'test:sim', 'test:js', 'test:consumer', 'test:browser'];
const KAFKA = 'test:kafka';
const LOWER = 19;
const fullScale = process.env.PARTKIT_SIM_FULL_SCALE;
if (fullScale !== undefined && !/^\d+x\d+$/.test(fullScale)) {
  console.error(`npm test: PARTKIT_SIM_FULL_SCALE must be <tasks>x<partitions>, like 100x1000 (got ${JSON.stringify(fullScale)})`);
  process.exit(2);
}
const SCALE = fullScale && ['run', 'sim', '--', '--scale', '--shape', fullScale, '--seeds', '1'];

// npm as npm test started it (npm_execpath), else the one on PATH.
const npmCommand = (args) =>
  process.env.npm_execpath
    ? [process.execPath, [process.env.npm_execpath, ...args]]
    : [process.platform === 'win32' ? 'npm.cmd' : 'npm', args];

function start(cmd, args, {capture = false, nice = 0} = {}) {
  const child = spawn(cmd, args, {
    stdio: capture ? ['ignore', 'pipe', 'pipe'] : 'inherit',
    // its own process group, so that a stop ends everything it started (brokers, task processes)
    detached: process.platform !== 'win32',
    shell: process.platform === 'win32',
  });
  if (nice) {
    try {
      os.setPriority(child.pid, nice);
    } catch {
      // (a platform without priorities: the suites still run, only closer to each other)
    }
  }
  const output = [];
  if (capture) {
    child.stdout.on('data', (b) => output.push(b));
    child.stderr.on('data', (b) => output.push(b));
  }
  const done = new Promise((resolve) => {
    child.on('error', (e) => resolve({code: 1, error: e}));
    child.on('close', (code, signal) => resolve({code: code ?? (signal ? 1 : 0), signal}));
  });
  return {child, done, output};
}

const running = new Set();
function stopAll() {
  for (const c of running) {
    try {
      if (process.platform === 'win32') c.kill();
      else process.kill(-c.pid, 'SIGTERM');
    } catch {
      // (already gone)
    }
  }
}
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    stopAll();
    process.exit(130);
  });
}

async function run(cmd, args, opts) {
  const s = start(cmd, args, opts);
  running.add(s.child);
  const r = await s.done;
  running.delete(s.child);
  return r;
}

function fail(what, r) {
  console.error(`npm test: ${what} failed${r.error ? ` (${r.error.message})` : ''}`);
  stopAll();
  process.exit(r.code || 1);
}

const build = await run(process.execPath, ['scripts/build.mjs']);
if (build.code !== 0) fail('the build', build);

// Suites beside the others: their output in one block when each ends; a failure stops the run
// before the next suite.
const besides = [];
function beside(label, args, nice = 0) {
  const job = start(...npmCommand(args), {capture: true, nice});
  running.add(job.child);
  job.label = label;
  job.done.then((r) => {
    running.delete(job.child);
    job.result = r;
    process.stdout.write(`\n--- ${label} (beside the other suites) ---\n`);
    for (const b of job.output) process.stdout.write(b);
    process.stdout.write(`--- end of ${label}: ${r.code === 0 ? 'passed' : 'FAILED'} ---\n\n`);
  });
  besides.push(job);
}
const besideFailed = () => besides.find((j) => j.result && j.result.code !== 0);

if (!serial) beside(`npm run ${KAFKA}`, ['run', KAFKA]);
const order = serial ? [...suites.slice(0, 5), KAFKA, ...suites.slice(5)] : suites;
for (const suite of order) {
  const failed = besideFailed();
  if (failed) fail(failed.label, failed.result);
  const r = await run(...npmCommand(['run', suite]), {nice: serial ? 0 : LOWER});
  if (r.code !== 0) fail(`npm run ${suite}`, r);
  if (suite === 'test:sim' && SCALE && !serial) beside(`npm ${SCALE.join(' ')}`, SCALE, LOWER);
}
if (SCALE && serial) {
  const r = await run(...npmCommand(SCALE));
  if (r.code !== 0) fail(`npm ${SCALE.join(' ')}`, r);
}
for (const job of besides) {
  const r = await job.done;
  if (r.code !== 0) fail(job.label, r);
}
