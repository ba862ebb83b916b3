// What the registry's page and a user's tools read of the package, and what a release checks
// (docs/releasing.md): the license text ships in the tarball, package.json names the repository
// (README links to its docs/ at the version's tag), the homepage, where bugs go, and keywords;
// the changelog's newest entry is package.json's version; the tarball holds only what runs and
// is read.
const {execFileSync} = require('node:child_process');
const {readFileSync} = require('node:fs');
const {join} = require('node:path');

const root = join(__dirname, '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

test('LICENSE is the Apache License 2.0 that package.json names, and the tarball ships it', () => {
  expect(pkg.license).toBe('Apache-2.0');
  const text = readFileSync(join(root, 'LICENSE'), 'utf8');
  expect(text).toMatch(/^\s+Apache License\n\s+Version 2\.0, January 2004\n/);
  expect(text).toContain('END OF TERMS AND CONDITIONS');
  const [{files}] = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {cwd: root, encoding: 'utf8'}));
  expect(files.map((f) => f.path)).toContain('LICENSE');
});

test('package.json names the repository, homepage, bugs and keywords', () => {
  expect(pkg.repository).toEqual({type: 'git', url: 'git+https://github.com/partkit/partkit.git'});
  expect(pkg.homepage).toBe('https://github.com/partkit/partkit#readme');
  expect(pkg.bugs).toEqual({url: 'https://github.com/partkit/partkit/issues'});
  expect(pkg.keywords).toEqual(expect.arrayContaining(['partitioning', 'bucketing', 'webassembly']));
});

// The release (docs/releasing.md): what `npm pack` puts in the tarball, and the changelog's newest
// entry naming package.json's version.
const packed = () => {
  const [{files}] = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts', '--loglevel=error'], {cwd: root, encoding: 'utf8'}));
  return files.map((f) => f.path).sort();
};

test("CHANGELOG.md's newest release is package.json's version, in Keep a Changelog form, and ships", () => {
  const text = readFileSync(join(root, 'CHANGELOG.md'), 'utf8');
  const versions = [...text.matchAll(/^## \[([^\]]+)\](.*)$/gm)].map((m) => [m[1], m[2]]);
  expect(versions[0]).toEqual(['Unreleased', '']);
  const [version, rest] = versions[1];
  expect(version).toBe(pkg.version);
  expect(rest).toMatch(/^ - \d{4}-\d{2}-\d{2}$/);
  expect(text).toContain(`\n[${pkg.version}]: https://github.com/partkit/partkit/releases/tag/v${pkg.version}\n`);
  expect(text).toContain(`\n[Unreleased]: https://github.com/partkit/partkit/compare/v${pkg.version}...HEAD\n`);
  // No version twice, newest first.
  const released = versions.slice(1).map(([v]) => v.split('.').map(Number));
  for (let i = 1; i < released.length; i++) {
    const [a, b] = [released[i - 1], released[i]];
    expect(a[0] - b[0] || a[1] - b[1] || a[2] - b[2]).toBeGreaterThan(0);
  }
  expect(packed()).toEqual(expect.arrayContaining(['CHANGELOG.md', 'SECURITY.md', 'README.md', 'LICENSE', 'package.json']));
});

test('README.md links to the repository at the tag of this version', () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const tags = [...readme.matchAll(/https:\/\/github\.com\/partkit\/partkit\/blob\/([^/]+)\//g)].map((m) => m[1]);
  expect(tags.length).toBeGreaterThan(0);
  expect([...new Set(tags)]).toEqual([`v${pkg.version}`]);
});

test('the tarball holds what runs and is read, and nothing else', () => {
  const files = packed();
  if (!files.includes('dist/index.cjs')) throw new Error('no dist/: build first (node scripts/build.mjs)');
  // Every file package.json names (main, module, types, exports, typesVersions, bin) ships.
  const named = new Set();
  const walk = (v) => (typeof v === 'string' ? named.add(v.replace(/^\.\//, '')) : v && Object.values(v).forEach(walk));
  walk([pkg.main, pkg.module, pkg.types, pkg.exports, pkg.typesVersions, pkg.bin]);
  named.delete('package.json');
  expect([...named].filter((f) => !files.includes(f))).toEqual([]);
  // Only these kinds of files, so that no source, test, doc or build intermediate slips in.
  const allowed = [
    /^(README\.md|LICENSE|CHANGELOG\.md|SECURITY\.md|package\.json)$/,
    /^dist\/[\w.-]+\.(cjs|mjs|d\.mts)$/,
    /^dist\/browser\/[\w.-]+\.mjs$/,
    /^dist\/wasm\/[\w-]+\.json$/,
    /^js\/cli\.mjs$/,
    /^js\/cli\/[\w-]+\.mjs$/,
    /^types\/([\w-]+\/)?[\w-]+\.d\.ts$/,
    /^data\/[\w-]+\.txt$/,
    /^examples\/kafka-connector\/[\w-]+\.mjs$/,
  ];
  expect(files.filter((f) => !allowed.some((re) => re.test(f)))).toEqual([]);
  // Each domain's wasm once, packed.
  for (const d of ['bucketing', 'objects', 'imports', 'lifecycle', 'sync']) expect(files).toContain(`dist/wasm/${d}.json`);
});

test('the Kafka connector skeleton that docs/kafka.md points at ships in the tarball', () => {
  expect(packed()).toContain('examples/kafka-connector/connector.mjs');
  expect(readFileSync(join(root, 'docs', 'kafka.md'), 'utf8')).toContain('examples/kafka-connector/connector.mjs');
});
