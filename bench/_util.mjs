// Shared timing helpers for the benches.
import {execFileSync} from 'node:child_process';
import {dirname, join} from 'node:path';
import {fileURLToPath} from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Best-of-`repeat` wall time of `fn()` in nanoseconds per item. */
export function nsPer(items, fn, repeat = 3) {
  let best = Infinity;
  for (let r = 0; r < repeat; r++) {
    const start = process.hrtime.bigint();
    fn();
    best = Math.min(best, Number(process.hrtime.bigint() - start) / items);
  }
  return best;
}

/** Runs a native Rust example in release mode and parses the JSON it prints. */
export function native(example, args) {
  const out = execFileSync('cargo', ['run', '--quiet', '--release', '--example', example, '--', ...args.map(String)], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return JSON.parse(out.trim().split('\n').pop());
}

export const fmt = (ns) => (ns >= 1000 ? `${(ns / 1000).toFixed(2)} µs` : `${ns.toFixed(0)} ns`);
export const ratio = (x) => `${x.toFixed(1)}×`;
