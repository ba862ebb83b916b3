#!/usr/bin/env node
// What `free()` (or `using`) saves in a tight synchronous loop: 4 rounds, each creating 50,000
// ObjectPartitioners, 20,000 BuildStates and 5,000 SyncTasks without yielding to the event loop,
// with each object freed (`free`) or left to the garbage collector (`gc`); prints the process's
// RSS after each round. Left to the collector, an object's wasm memory waits for its finalizer,
// which runs only between tasks, so a synchronous loop grows each domain's wasm memory, which
// never shrinks. Usage: node bench/free.mjs gc|free  (run each in its own process)
import {createRequire} from 'node:module';

const require = createRequire(import.meta.url);
const p = require(process.env.PARTKIT_DIST ?? '../dist/index.cjs');
const mode = process.argv[2] ?? 'gc';
const KINDS = [
  [50000, () => new p.ObjectPartitioner(4, {partition: {type: 'regex', pattern: 'user(\\d+)'}})],
  [20000, () => p.BuildState.replay([{type: 'WantCreate', timestamp: 1, wantId: 'w1', partitions: ['data/a']}])],
  [5000, () => {
    const t = new p.SyncTask('t1');
    t.onRebalance({generation: 1, leader: true, members: ['t1']}, 1);
    return t;
  }],
];
const mb = () => Math.round(process.memoryUsage().rss / 2 ** 20);
const line = [`${mode}: RSS ${mb()} MB`];
for (let round = 0; round < 4; round++) {
  for (const [n, make] of KINDS) {
    for (let i = 0; i < n; i++) {
      const o = make();
      if (mode === 'free') o.free();
    }
  }
  line.push(`${mb()} MB`);
  await new Promise((resolve) => setTimeout(resolve, 100)); // a task boundary: finalizers may run
}
console.log(line.join(' -> '));
