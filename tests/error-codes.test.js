// Each error class's `code` in types/errors.d.ts is exactly the set of codes it is thrown with:
// the Rust core's `code()` strings (src/<domain>/error.rs, thrown as that domain's class by
// js/errors.mjs) and the codes the JS layer of the domain throws (js/), plus the codes every
// domain uses. A code added on either side without its type (or a typed code nothing throws)
// fails here.
const {readFileSync, readdirSync} = require('node:fs');
const {join} = require('node:path');

const root = join(__dirname, '..');
const read = (p) => readFileSync(join(root, p), 'utf8');
const dts = read('types/errors.d.ts');

/** The string literals of `export type <name> = ...;` (following the unions it names). */
function union(name) {
  const m = new RegExp(`export type ${name} =([^;]*);`).exec(dts);
  if (!m) throw new Error(`types/errors.d.ts has no type ${name}`);
  const codes = new Set();
  for (const part of m[1].split('|').map((s) => s.trim()).filter(Boolean)) {
    if (/^'[A-Z0-9_]+'$/.test(part)) codes.add(part.slice(1, -1));
    else for (const c of union(part)) codes.add(c);
  }
  return codes;
}

/** The strings `code()` returns in a Rust error module. */
function rustCodes(file) {
  const text = read(file);
  const body = text.slice(text.indexOf('pub fn code(&self)'));
  const end = body.indexOf('\n    }\n');
  return new Set([...body.slice(0, end).matchAll(/"([A-Z][A-Z0-9_]+)"/g)].map((m) => m[1]));
}

/** The code-like string literals of JS files: 'SCREAMING_SNAKE' (and 'ABORTED'). */
// BUCKET_CONFIG_NEAR_MISS: the code of a warning (bucketingConfigWarnings), never thrown
const NOT_CODES = new Set(['BUCKET_CONFIG_NEAR_MISS', 'GTC_IMPORT_BUCKETS_DEFAULT', 'TOPIC_ALREADY_EXISTS', 'MODULE_NOT_FOUND', 'ERR_MODULE_NOT_FOUND']);
function jsCodes(...paths) {
  const codes = new Set();
  for (const p of paths) {
    const files = p.endsWith('.mjs') ? [p] : readdirSync(join(root, p)).filter((f) => f.endsWith('.mjs')).map((f) => `${p}/${f}`);
    for (const f of files) {
      for (const m of read(f).matchAll(/'([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|ABORTED)'/g)) if (!NOT_CODES.has(m[1])) codes.add(m[1]);
    }
  }
  return codes;
}

const common = union('CommonErrorCode');
const domains = [
  ['BucketingErrorCode', 'src/bucketing/error.rs', ['js/bucketing.mjs']],
  ['PartitionErrorCode', 'src/objects/error.rs', ['js/objects.mjs', 'js/s3']],
  ['ImportBucketErrorCode', 'src/imports/error.rs', ['js/imports.mjs']],
  ['LifecycleErrorCode', 'src/lifecycle/error.rs', ['js/lifecycle.mjs']],
  ['SyncErrorCode', 'src/sync/error.rs', ['js/sync.mjs', 'js/kafka']],
];

test.each(domains)('%s is every code its class is thrown with', (type, rust, js) => {
  const thrown = new Set([...common, ...rustCodes(rust), ...jsCodes(...js)]);
  expect([...union(type)].sort()).toEqual([...thrown].sort());
});

test('the codes every domain uses are the ones js/errors.mjs and js/packed.mjs throw', () => {
  expect([...jsCodes('js/errors.mjs', 'js/packed.mjs')].every((c) => common.has(c))).toBe(true);
  expect([...common].sort()).toEqual(['INPUT_TOO_LARGE', 'INVALID_ARGUMENT', 'OBJECT_FREED', 'OUT_OF_MEMORY']);
});

test('PartkitErrorCode is every code, MISSING_PEER_DEPENDENCY (js/peers) and WASM_UNSAFE_EVAL_REQUIRED (js/wasm) included', () => {
  const all = new Set([...domains.flatMap(([type]) => [...union(type)]), ...jsCodes('js/peers', 'js/wasm')]);
  expect([...union('PartkitErrorCode')].sort()).toEqual([...all].sort());
});

test('docs/errors.md lists every class\'s codes, as the types do', () => {
  const docs = read('docs/errors.md');
  const row = (cls) => {
    const line = docs.split('\n').find((l) => l.startsWith(`| \`${cls}\` (`) || l.startsWith(`| \`${cls}\` itself`));
    if (!line) throw new Error(`docs/errors.md has no row for ${cls}`);
    return new Set([...line.split('|')[2].matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]));
  };
  for (const [type] of domains) {
    const typed = [...union(type)].filter((c) => !common.has(c)).sort();
    expect([type, [...row(type.replace(/Code$/, ''))].sort()]).toEqual([type, typed]);
  }
  expect([...row('PartkitError')].sort()).toEqual([...union('PackageErrorCode')].sort());
  for (const c of common) expect(docs).toContain(`| \`${c}\` |`);
});
