// The kinds of JS values crossing into wasm are numbered once: js/kit/args.mjs `KIND` and
// src/wasm/kinds.rs hold the same table.
const {readFileSync} = require('node:fs');
const {join} = require('node:path');

test('KIND in js/kit/args.mjs and src/wasm/kinds.rs agree', () => {
  const root = join(__dirname, '..');
  const js = readFileSync(join(root, 'js', 'kit', 'args.mjs'), 'utf8');
  const rs = readFileSync(join(root, 'src', 'wasm', 'kinds.rs'), 'utf8');
  const table = /export const KIND = Object\.freeze\(\{([^}]*)\}\)/.exec(js)[1];
  const fromJs = Object.fromEntries(table.split(',').map((e) => e.trim().split(/:\s*/)).map(([k, v]) => [k, Number(v)]));
  const fromRs = Object.fromEntries([...rs.matchAll(/pub\(crate\) const (\w+): u8 = (\d+);/g)].map((m) => [m[1], Number(m[2])]));
  expect(Object.keys(fromJs).length).toBe(10);
  expect(fromJs).toEqual(fromRs);
  // no other numbering of kinds is left in the bindings
  for (const f of ['bucketing.rs', 'imports.rs']) {
    expect(readFileSync(join(root, 'src', 'wasm', f), 'utf8')).not.toMatch(/const [KN]_\w+: u8 = \d/);
  }
});
