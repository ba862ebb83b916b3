// What the registry's page and a user's tools read of the package: the license text ships in the
// tarball, and package.json names the repository (README links to its docs/ at the version's tag),
// the homepage, where bugs go, and keywords.
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

test('the Kafka connector skeleton that docs/kafka.md points at ships in the tarball', () => {
  const [{files}] = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {cwd: root, encoding: 'utf8'}));
  expect(files.map((f) => f.path)).toContain('examples/kafka-connector/connector.mjs');
  expect(readFileSync(join(root, 'docs', 'kafka.md'), 'utf8')).toContain('examples/kafka-connector/connector.mjs');
});
