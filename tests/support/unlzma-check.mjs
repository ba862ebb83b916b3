// Run by tests/unlzma.test.js (jest runs CommonJS): unpacks every domain's dist/wasm/<domain>.json
// with js/wasm/load.mjs's decoder and feeds it malformed data, printing what happened as JSON.
import {readFileSync} from 'node:fs';
import {join} from 'node:path';
import {fileURLToPath} from 'node:url';
import {unlzma} from '../../js/wasm/load.mjs';

const root = join(fileURLToPath(import.meta.url), '..', '..', '..');
const DOMAINS = ['bucketing', 'objects', 'imports', 'lifecycle', 'sync'];
const outcome = (f) => {
  try {
    const out = f();
    return {ok: true, length: out.length};
  } catch (e) {
    return {ok: false, message: e.message};
  }
};
const report = {domains: {}, malformed: [], flips: {decoded: 0, refused: 0, other: []}};
const packedOf = (name) => Buffer.from(JSON.parse(readFileSync(join(root, 'dist', 'wasm', `${name}.json`), 'utf8')), 'base64');
for (const domain of DOMAINS) {
  const packed = packedOf(domain);
  const glue = readFileSync(join(root, 'pkg', domain, 'index.mjs'), 'utf8');
  const size = Number(/\((\d+) bytes,/.exec(glue)[1]);
  const wasm = unlzma(packed, size);
  report.domains[domain] = {size, packed: packed.length, valid: WebAssembly.validate(wasm)};
  if (domain !== 'bucketing') continue;
  const cases = {
    empty: [new Uint8Array(0), size],
    'properties byte out of range': [Uint8Array.of(225, ...packed.subarray(1)), size],
    'lc + lp over 4': [Uint8Array.of(4 + 9 * 1, ...packed.subarray(1)), size],
    'range coder not starting with 0': [Uint8Array.of(packed[0], 1, ...packed.subarray(2)), size],
    'truncated to half': [packed.subarray(0, packed.length >> 1), size],
    'truncated by 8 bytes': [packed.subarray(0, packed.length - 8), size],
    'one byte too many asked': [packed, size + 1],
    'one byte too few asked': [packed, size - 1],
  };
  for (const [name, [data, n]] of Object.entries(cases)) report.malformed.push({name, ...outcome(() => unlzma(data, n))});
  // single corrupted bytes: LZMA cannot detect every one, but each is an error or `size` bytes
  let seed = 12345;
  const next = () => (seed = (seed * 1103515245 + 12345) >>> 0);
  for (let i = 0; i < 300; i++) {
    const data = Uint8Array.from(packed);
    data[1 + (next() % (data.length - 1))] ^= 1 + (next() % 255);
    const r = outcome(() => unlzma(data, size));
    if (r.ok && r.length === size) report.flips.decoded++;
    else if (!r.ok && r.message === 'partkit: malformed wasm data') report.flips.refused++;
    else report.flips.other.push(r);
  }
}
console.log(JSON.stringify(report));
