// The LZMA decoder that unpacks each domain's wasm (crates/unlzma, run by js/wasm/load.mjs): every
// shipped module unpacks to valid WebAssembly of the size its glue expects (the build also
// compares the bytes), and malformed data is an error, never a crash or a short result.
const {execFileSync} = require('node:child_process');
const {join} = require('node:path');

const report = JSON.parse(execFileSync(process.execPath, [join(__dirname, 'support', 'unlzma-check.mjs')], {encoding: 'utf8'}));

test('every domain unpacks to valid WebAssembly, packed in at most 40% of its size', () => {
  for (const domain of ['bucketing', 'objects', 'imports', 'lifecycle', 'sync']) {
    const {size, packed, valid} = report.domains[domain];
    expect({domain, valid}).toEqual({domain, valid: true});
    expect(packed).toBeLessThan(size * 0.4);
  }
});

test("what liblzma makes of generated data (0 to 300,000 bytes) unpacks to it", () => {
  expect(report.samples).toEqual([0, 1, 100, 70000, 300000].map((len) => ({len, same: true})));
});

test('malformed data is refused with one message', () => {
  expect(report.malformed.map((r) => r.name)).toHaveLength(8);
  for (const r of report.malformed) expect(r).toEqual({name: r.name, ok: false, message: 'partkit: malformed wasm data'});
});

test('a corrupted byte gives the error or the full length, nothing else', () => {
  expect(report.flips.other).toEqual([]);
  expect(report.flips.refused).toBeGreaterThan(0);
  expect(report.flips.decoded + report.flips.refused).toBe(300);
});
