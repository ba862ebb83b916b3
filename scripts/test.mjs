#!/usr/bin/env node
// `npm test`: the build, then every suite, stopping at the first failure. The Kafka broker
// suites (`npm run test:kafka`: KafkaTaskSync on tansu, each task in its own process) spend most
// of their minutes waiting on session and rebalance timeouts (about half of one core), so they
// run beside the others from the end of the build on; the others run at a lower CPU priority
// (nice 19) so that the broker's and the tasks' timers are not starved, and the Kafka suites'
// output is printed in one block when they end. PARTKIT_TEST_SERIAL=1 runs every suite one after
// another instead (the Kafka suites after test:js).
import {spawn} from 'node:child_process';
import os from 'node:os';

const serial = process.env.PARTKIT_TEST_SERIAL === '1';
const suites = ['test:size', 'test:docs', 'test:rust', 'test:sim', 'test:js', 'test:consumer', 'test:browser'];
const KAFKA = 'test:kafka';
const LOWER = 19;

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

let kafka = null;
let kafkaResult = null;
if (!serial) {
  kafka = start(...npmCommand(['run', KAFKA]), {capture: true});
  running.add(kafka.child);
  kafka.done.then((r) => {
    running.delete(kafka.child);
    kafkaResult = r;
    process.stdout.write(`\n--- npm run ${KAFKA} (beside the other suites) ---\n`);
    for (const b of kafka.output) process.stdout.write(b);
    process.stdout.write(`--- end of npm run ${KAFKA}: ${r.code === 0 ? 'passed' : 'FAILED'} ---\n\n`);
  });
}

const order = serial ? [...suites.slice(0, 5), KAFKA, ...suites.slice(5)] : suites;
for (const suite of order) {
  if (kafkaResult && kafkaResult.code !== 0) fail(`npm run ${KAFKA}`, kafkaResult);
  const r = await run(...npmCommand(['run', suite]), {nice: serial ? 0 : LOWER});
  if (r.code !== 0) fail(`npm run ${suite}`, r);
}
if (kafka) {
  const r = await kafka.done;
  if (r.code !== 0) fail(`npm run ${KAFKA}`, r);
}
