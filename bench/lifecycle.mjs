// Partition lifecycle: replay of a synthetic build-event log (wants over 100k refs, job runs,
// failures, dep misses answered by derivative wants and retries, taints, cancels) in wasm vs
// the native Rust core, at 10k / 100k / 1M events: cost per event of each prefix and of its
// last tenth (flat = about the same at every size); memory per partition instance. Both sides
// apply the same JSON chunks of 1,000 events and keep the best of two runs per chunk.
//
// The log is generated once by the native example `bench_lifecycle` (deterministic) and written
// as NDJSON, so wasm and native replay exactly the same events.
import {execFileSync} from 'node:child_process';
import {mkdtempSync, readFileSync, rmSync} from 'node:fs';
import {createRequire} from 'node:module';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {fmt, native, ratio, root} from './_util.mjs';

const N = Number(process.env.BENCH_LIFECYCLE_N ?? process.env.BENCH_N ?? 1_000_000);
const SIZES = [10_000, 100_000, 1_000_000].filter((s) => s <= N);

function readLog(file) {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l));
}

function timeMs(fn) {
  const start = process.hrtime.bigint();
  const value = fn();
  return [Number(process.hrtime.bigint() - start) / 1e6, value];
}



/** Memory of one state built event by event in a fresh process (wasm memory only grows). */
function wasmMemory(file, count, instancesOnly) {
  const script = `
    const {BuildState, PartkitError} = require(${JSON.stringify(join(root, 'dist', 'index.cjs'))});
    const glue = PartkitError[Symbol.for('partkit.wasm')].lifecycle;
    const events = ${instancesOnly}
      ? Array.from({length: ${count}}, (_, i) => [
          {type: 'JobRunBuffer', timestamp: i, jobRunId: 'j' + i, buildingPartitions: ['data/p' + (i % 50000)]},
          {type: 'JobRunSuccess', timestamp: i, jobRunId: 'j' + i}]).flat()
      : require('fs').readFileSync(${JSON.stringify(file)}, 'utf8').split('\\n').slice(0, ${count}).map((l) => JSON.parse(l));
    const s = new BuildState();
    const before = glue.lifecycleMemoryBytes();
    for (const e of events) s.apply(e);
    const bytes = glue.lifecycleMemoryBytes() - before;
    console.log(JSON.stringify({bytes, ...s.stats()}));`;
  return JSON.parse(execFileSync(process.execPath, ['-e', script], {encoding: 'utf8', maxBuffer: 1 << 20}).trim());
}

export async function run(api, report) {
  const dir = mkdtempSync(join(tmpdir(), 'partkit-lifecycle-bench-'));
  try {
    const file = join(dir, 'events.ndjson');
    const nat = native('bench_lifecycle', ['--events', N, '--emit', file, '--json']);
    const log = readLog(file);
    if (log.length !== N) throw new Error(`bench: expected ${N} events, got ${log.length}`);

    // Chunks of 1,000 events, each turned into JSON text before timing, applied in order to
    // one state through the binding `BuildState.replay` uses; the best of two runs per chunk.
    // Prefix cost = sum of its chunks; last tenth = its last tenth of chunks.
    // the lifecycle module's own exports (wasm-bindgen's), which dist/index.cjs gives tests and
    // benches under a registered symbol
    const glue = createRequire(import.meta.url)(join(root, 'dist', 'index.cjs')).PartkitError[Symbol.for('partkit.wasm')].lifecycle;
    const CHUNK = 1000;
    const texts = [];
    const [msJson] = timeMs(() => {
      for (let i = 0; i < N; i += CHUNK) texts.push(JSON.stringify(log.slice(i, i + CHUNK)));
    });
    const best = new Array(texts.length).fill(Infinity);
    for (let run = 0; run < 2; run++) {
      const inner = new glue.BuildState();
      texts.forEach((text, c) => {
        const start = process.hrtime.bigint();
        inner.applyLogJson(text, c * CHUNK);
        best[c] = Math.min(best[c], Number(process.hrtime.bigint() - start));
      });
      if (run === 0) inner.checkInvariants();
      inner.free();
    }
    const sum = (from, to) => best.slice(from / CHUNK, to / CHUNK).reduce((a, b) => a + b, 0);
    const [msReplay, whole] = timeMs(() => api.BuildState.replay(log));
    const stats = whole.stats();
    whole.free();
    const rows = [];
    for (const size of SIZES) {
      const n = nat.replay.find((r) => r.events === size);
      const wasmNs = sum(0, size) / size;
      const wasmTailNs = sum(size - size / 10, size) / (size / 10);
      rows.push([
        size.toLocaleString('en'),
        n.partitions.toLocaleString('en'),
        `${fmt(n.nsPerEvent)} / ${fmt(n.tailNsPerEvent)}`,
        `${fmt(wasmNs)} / ${fmt(wasmTailNs)}`,
        ratio(wasmNs / n.nsPerEvent),
        `${fmt(n.parsedNsPerEvent)} / ${fmt(n.parsedTailNsPerEvent)}`,
        n.tailTransitionsPerEvent.toFixed(2),
      ]);
    }
    const last = nat.replay[nat.replay.length - 1];
    if (last.partitions !== stats.partitions || last.wants !== stats.wants) throw new Error('bench: wasm and native states differ');
    report(
      `lifecycle: replay of a synthetic log (${N.toLocaleString('en')} events, 100k refs), per event: whole prefix / its last tenth`,
      ['events', 'partition instances', 'native, JSON → state', 'wasm, JSON → state', 'wasm / native', 'native, parsed events → state', 'transitions per event (last tenth)'],
      rows,
    );
    report('lifecycle: the whole log through the public API', ['measure', 'time', 'per event'], [
      [`\`BuildState.replay(log)\` (${N.toLocaleString('en')} event objects; JSON in 10k-event chunks)`, `${msReplay.toFixed(0)} ms`, fmt((msReplay * 1e6) / N)],
      ['of which `JSON.stringify` of the events (measured alone)', `${msJson.toFixed(0)} ms`, fmt((msJson * 1e6) / N)],
    ]);

    // One event at a time through `apply` (objects in, transitions out) on the first 100k.
    const k = Math.min(100_000, N);
    const s = new api.BuildState();
    const [msApply] = timeMs(() => {
      for (let i = 0; i < k; i++) s.apply(log[i]);
    });
    s.free();

    const mixed = wasmMemory(file, Math.min(N, 1_000_000), false);
    const only = wasmMemory(file, 100_000, true);
    report('lifecycle: `apply` one event at a time, and memory', ['measure', 'native', 'wasm'], [
      [`\`apply(event)\` per event (first ${k.toLocaleString('en')} events, transitions returned as objects)`, '—', fmt((msApply * 1e6) / k)],
      [
        `bytes per partition instance, whole state of the ${nat.memory.events.toLocaleString('en')}-event log (wants, job runs, indexes included)`,
        `${nat.memory.bytesPerPartition.toFixed(0)} B`,
        `${(mixed.bytes / mixed.partitions).toFixed(0)} B`,
      ],
      [
        'bytes per partition instance, 100k buffer+success pairs over 50k refs',
        `${nat.instancesOnly.bytesPerPartition.toFixed(0)} B`,
        `${(only.bytes / only.partitions).toFixed(0)} B`,
      ],
    ]);
    return rows.length;
  } finally {
    rmSync(dir, {recursive: true, force: true});
  }
}
