// Partition lifecycle: replay of a synthetic build-event log (wants over 100k refs, job runs,
// failures, dep misses answered by derivative wants and retries, taints, cancels) in wasm vs
// the native Rust core, at 10k / 100k / 1M events; cost per event of the last tenth of each
// prefix (flat = about the same at every size); memory per partition instance.
//
// The log is generated once by the native example `bench_lifecycle` (deterministic) and written
// as NDJSON, so wasm and native replay exactly the same events.
import {execFileSync} from 'node:child_process';
import {mkdtempSync, readFileSync, rmSync} from 'node:fs';
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

/** Best-of-`repeat` milliseconds of a replay (the state is freed after each run). */
function replayMs(api, events, repeat) {
  let best = Infinity;
  let stats;
  for (let r = 0; r < repeat; r++) {
    const [ms, state] = timeMs(() => api.BuildState.replay(events));
    if (r === 0) {
      state.checkInvariants();
      stats = state.stats();
    }
    state.free();
    best = Math.min(best, ms);
  }
  return [best, stats];
}

/** Memory of one state built event by event in a fresh process (wasm memory only grows). */
function wasmMemory(file, count, instancesOnly) {
  const script = `
    const {BuildState} = require(${JSON.stringify(join(root, 'dist', 'index.cjs'))});
    const glue = require(${JSON.stringify(join(root, 'pkg', 'node', 'partkit.js'))});
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

    // Warm-up, then each prefix and its first nine tenths (last tenth = the difference), best
    // of 3 (of 2 at 1M) each.
    api.BuildState.replay(log.slice(0, Math.min(10_000, N))).free();
    const rows = [];
    for (const size of SIZES) {
      const prefix = log.slice(0, size);
      const head = log.slice(0, size - size / 10);
      const [msJson] = timeMs(() => JSON.stringify(prefix));
      const repeat = size >= 1_000_000 ? 2 : 3;
      const [ms, stats] = replayMs(api, prefix, repeat);
      const [msHead] = replayMs(api, head, repeat);
      const wasmNs = (ms * 1e6) / size;
      const wasmTailNs = Math.max(0, ((ms - msHead) * 1e6) / (size / 10));
      const n = nat.replay.find((r) => r.events === size);
      if (n.partitions !== stats.partitions || n.wants !== stats.wants) throw new Error('bench: wasm and native states differ');
      rows.push([
        size.toLocaleString('en'),
        stats.partitions.toLocaleString('en'),
        fmt(n.nsPerEvent),
        fmt(n.tailNsPerEvent),
        fmt(wasmNs),
        fmt(wasmTailNs),
        `${((msJson * 1e6) / size).toFixed(0)} ns`,
        ratio(wasmNs / n.nsPerEvent),
      ]);
    }
    report(
      `lifecycle: replay of a synthetic log (${N.toLocaleString('en')} events, 100k refs), wasm vs native`,
      ['events', 'partition instances', 'native / event', 'native, last tenth', 'wasm `BuildState.replay` / event', 'wasm, last tenth', 'of which JSON.stringify', 'wasm / native'],
      rows,
    );

    // One event at a time through `apply` (objects in, transitions out) on the first 100k.
    const k = Math.min(100_000, N);
    const s = new api.BuildState();
    const [msApply] = timeMs(() => {
      for (let i = 0; i < k; i++) s.apply(log[i]);
    });
    s.free();

    const mixed = wasmMemory(file, Math.min(N, 1_000_000), false);
    const only = wasmMemory(file, 100_000, true);
    const last = nat.replay[nat.replay.length - 1];
    report('lifecycle: `apply` one event at a time, and memory', ['measure', 'native', 'wasm'], [
      [`\`apply(event)\` per event (first ${k.toLocaleString('en')} events, transitions returned as objects)`, '—', fmt((msApply * 1e6) / k)],
      [
        `bytes per partition instance, whole state of the ${last.events.toLocaleString('en')}-event log (wants, job runs, indexes included)`,
        `${last.bytesPerPartition.toFixed(0)} B`,
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
