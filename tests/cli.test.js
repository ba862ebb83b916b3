// The CLI's conventions (docs/cli.md): stdout carries only the result (text, or JSON with
// --json on every command), everything else goes to stderr; exit 0 success, 1 the check or the
// input failed, 2 usage; a closed pipe ends quietly; NO_COLOR; options that do not apply to the
// chosen type are refused; every --help has an example that runs.
const {spawnSync} = require('node:child_process');
const {mkdtempSync, writeFileSync, rmSync} = require('node:fs');
const {tmpdir} = require('node:os');
const {join} = require('node:path');

const CLI = join(__dirname, '..', 'js', 'cli.mjs');
const ENV = {...process.env, NO_COLOR: '1', FORCE_COLOR: ''};
let dir;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'partkit-cli-'));
  writeFileSync(join(dir, 'config.json'), JSON.stringify({bucket_total: 6, round_robin_bucket_execution: true, bucket_ranges: '2-3,5'}));
  writeFileSync(join(dir, 'state.json'), JSON.stringify({__bucket_execution_state: {last_executed_bucket_id: 3}}));
  writeFileSync(join(dir, 'bad.json'), JSON.stringify({bucket_total: 4, bucket_id: 5}));
  writeFileSync(join(dir, 'keys.txt'), 'logs/user1/a\nlogs/user2/b\nlogs/user3/c\nlogs/dir/\n');
  writeFileSync(join(dir, 'ids.txt'), 'a\nb\nc\n');
  writeFileSync(join(dir, 'items.jsonl'), '{"id": 1, "datasetName": "faq"}\n{"id": 2, "datasetName": "kb"}\n');
  writeFileSync(
    join(dir, 'events.json'),
    JSON.stringify([
      {type: 'WantCreate', timestamp: 1, wantId: 'w1', partitions: ['sales/daily']},
      {type: 'JobRunBuffer', timestamp: 2, jobRunId: 'job-1', buildingPartitions: ['sales/daily']},
      {type: 'JobRunSuccess', timestamp: 3, jobRunId: 'job-1'},
    ]),
  );
});
afterAll(() => rmSync(dir, {recursive: true, force: true}));

/** Runs `partkit ...args` in the scratch directory. */
function partkit(args, {input, env = ENV} = {}) {
  const r = spawnSync(process.execPath, [CLI, ...args], {cwd: dir, input, env, encoding: 'utf8'});
  return {status: r.status, stdout: r.stdout, stderr: r.stderr};
}

/** Runs a shell line with `partkit` on PATH. */
function shell(line, env = ENV) {
  const bin = join(dir, '.bin');
  spawnSync('mkdir', ['-p', bin]);
  writeFileSync(join(bin, 'partkit'), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} "$@"\n`, {mode: 0o755});
  const r = spawnSync('bash', ['-o', 'pipefail', '-c', line], {cwd: dir, env: {...env, PATH: `${bin}:${env.PATH}`}, encoding: 'utf8'});
  return {status: r.status, stdout: r.stdout, stderr: r.stderr};
}

/** Every leaf command, and a call of it that succeeds (from the scratch directory). */
const COMMANDS = [
  ['bucket', ['--key', 'k', '--total', '3', 'a', 'b']],
  ['validate', ['config.json']],
  ['next', ['config.json', 'state.json']],
  ['spread', ['--key', 'k', '--total', '2', 'ids.txt']],
  ['objects', ['--total', '2', '--index', '1', '--type', 'object', 'keys.txt']],
  ['import-buckets', ['--buckets', '2', '--import-id', 'x', 'items.jsonl']],
  ['lifecycle replay', ['--ref', 'sales/daily', 'events.json']],
  ['lifecycle uuid', ['job-1', 'sales/daily']],
  ['sync simulate', ['--partitions', '7']],
  ['demo', []],
];

describe('partkit CLI', () => {
  test('the command list is complete: every command of --help is in COMMANDS', () => {
    const names = (help) => [...help.split('Commands:')[1].split('\n\n')[0].matchAll(/^ {2}(\S+)/gm)].map((m) => m[1]).filter((n) => n !== 'help');
    const top = names(partkit(['--help']).stdout);
    const leaves = top.flatMap((name) => {
      const sub = partkit([name, '--help']).stdout;
      return sub.includes('Commands:') ? names(sub).map((n) => `${name} ${n}`) : [name];
    });
    expect(leaves.sort()).toEqual(COMMANDS.map(([n]) => n).sort());
  });

  test.each(COMMANDS)('%s: --json prints one JSON value on stdout, exit 0', (name, args) => {
    const r = partkit([...name.split(' '), ...args, '--json']);
    expect(r.status).toBe(0);
    expect(() => JSON.parse(r.stdout)).not.toThrow();
  });

  test.each([...COMMANDS, ['lifecycle', []], ['sync', []]])('%s: --help shows an example that runs', (name) => {
    const help = partkit([...name.split(' '), '--help']);
    expect(help.status).toBe(0);
    const example = /Example:\n\s+\$ (.+)\n/.exec(help.stdout);
    expect(example).not.toBeNull();
    const r = shell(example[1]);
    expect(r.stderr.match(/error/) ?? []).toEqual([]);
    expect(r.status).toBe(0);
    expect(r.stdout.length).toBeGreaterThan(0);
  });

  test('next: stdout is the new state JSON only (logs and the bucket on stderr)', () => {
    const r = partkit(['next', 'config.json', 'state.json']);
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({__bucket_execution_state: {last_executed_bucket_id: 5}});
    expect(r.stderr).toContain('bucket 5');
    expect(r.stderr).toContain('Using round robin');
    const j = JSON.parse(partkit(['next', 'config.json', 'state.json', '--json']).stdout);
    expect(j.bucket).toBe(5);
    expect(j.config.bucket_id).toBe(5);
  });

  test('validate: a failed check prints nothing on stdout, the error on stderr, exit 1', () => {
    const r = partkit(['validate', 'bad.json']);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('bucket_id must be between 1 and 4');
    const j = partkit(['validate', 'bad.json', '--json']);
    expect(j.status).toBe(1);
    expect(JSON.parse(j.stdout)).toMatchObject({ok: false, error: {code: 'BUCKET_ID_OUT_OF_RANGE'}});
    expect(partkit(['validate', 'config.json']).stdout).toBe('ok\n');
  });

  test('--json is JSON on stdout on every path: unreadable, invalid and refused input, usage errors', () => {
    writeFileSync(join(dir, 'broken.json'), '{"bucket_total": ');
    for (const [args, code, status, input] of [
      [['validate', '--json', 'missing.json'], 'INPUT_UNREADABLE', 1],
      [['validate', '--json', '.'], 'INPUT_UNREADABLE', 1],
      [['validate', '--json', 'broken.json'], 'INPUT_INVALID_JSON', 1],
      [['validate', '--json', '-'], 'INPUT_INVALID_JSON', 1, 'nope'],
      [['validate', '--json', 'bad.json'], 'BUCKET_ID_OUT_OF_RANGE', 1],
      [['bucket', '--json', '--key', 'k', '--total', 'x'], 'USAGE', 2],
      [['objects', '--json', '--total', '2', '--index', '0', 'missing.txt'], 'INPUT_UNREADABLE', 1],
      [['objects', '--json', '--total', '2', 'missing.txt'], 'USAGE', 2],
    ]) {
      const r = partkit(args, {input});
      expect([args.join(' '), r.status]).toEqual([args.join(' '), status]);
      const j = JSON.parse(r.stdout);
      expect(j.ok).toBe(false);
      if (code) expect([args.join(' '), j.error.code]).toEqual([args.join(' '), code]);
      expect(typeof j.error.message).toBe('string');
    }
    expect(JSON.parse(partkit(['validate', '--json', 'bad.json']).stdout).error.path).toEqual(['bucket_id']);
  });

  test('validate warns of a key that nearly matches a bucketing key (faros ignores unknown keys: still ok)', () => {
    const r = partkit(['validate', '-'], {input: '{"bucket_totl": 4}'});
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('ok\n');
    expect(r.stderr).toContain('warning: config.bucket_totl is not a bucketing key and is ignored: did you mean bucket_total?');
    const j = partkit(['validate', '--json', '-'], {input: '{"bucketTotal": 4, "bucketId": 3, "connector": "x"}'});
    expect(j.status).toBe(0);
    expect(JSON.parse(j.stdout)).toMatchObject({ok: true, warnings: [
      {code: 'BUCKET_CONFIG_NEAR_MISS', path: ['bucketTotal']}, {code: 'BUCKET_CONFIG_NEAR_MISS', path: ['bucketId']}]});
    const bad = JSON.parse(partkit(['validate', '--json', '-'], {input: '{"bucket_totl": 4, "bucket_id": 3}'}).stdout);
    expect(bad).toMatchObject({ok: false, warnings: [{path: ['bucket_totl']}], error: {code: 'BUCKET_ID_OUT_OF_RANGE', path: ['bucket_id']}});
  });

  test('usage errors exit 2; failed input exits 1', () => {
    for (const args of [['nosuch'], ['bucket', '--total', '3'], ['bucket', '--key', 'k', '--total', 'x'], ['validate'], ['objects', '--total', '2'], ['sync', 'simulate', '--tasks', '-1'], ['bucket', '--key', 'k', '--total', '3', '--nope']]) {
      const r = partkit(args);
      expect([args.join(' '), r.status]).toEqual([args.join(' '), 2]);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/error/);
    }
    expect(partkit(['validate', 'missing.json']).status).toBe(1);
    expect(partkit(['bucket', '--key', 'k', '--total', '0', 'a']).status).toBe(1);
  });

  test('a closed pipe ends the command quietly', () => {
    const r = shell('partkit demo | head -2');
    expect(r.status).toBe(0);
    expect(r.stdout.split('\n')).toHaveLength(3);
    expect(r.stderr).toBe('');
    const big = shell('seq 1 200000 | partkit bucket --key k --total 7 - | head -1');
    expect(big.status).toBe(0);
    expect(big.stderr).toBe('');
  });

  test('options that do not apply to the chosen --type are refused, naming their type', () => {
    const cases = [
      [['--pattern', 'x'], '--pattern applies to --type regex only'],
      [['--type', 'object', '--pattern', 'x'], '--pattern applies to --type regex only, not to --type object'],
      [['--type', 'regex', '--pattern', 'x', '--start', '1'], '--start applies to --type substring only'],
      [['--type', 'substring', '--start', '1', '--end', '2', '--date-format', '2006'], '--date-format applies to --type date only'],
      [['--type', 'object', '--region', 'eu-west-1'], '--region applies with --s3 only'],
      [['--type', 'nope'], "--type must be one of none, object, regex, substring, date, got 'nope'"],
    ];
    for (const [extra, message] of cases) {
      const r = partkit(['objects', '--total', '2', '--index', '0', ...extra, 'keys.txt']);
      expect(r.status).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain(message);
    }
  });

  test('lifecycle replay --ref REF EVENTS.json (the docs/lifecycle.md form), repeatable', () => {
    const r = partkit(['lifecycle', 'replay', '--ref', 'sales/daily', 'events.json']);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('sales/daily:');
    const j = JSON.parse(partkit(['lifecycle', 'replay', '--ref', 'sales/daily', '--ref', 'x/y', 'events.json', '--json']).stdout);
    expect(j.histories.map((h) => h.ref)).toEqual(['sales/daily', 'x/y']);
  });

  test('a refused event exits 1 naming the event and the field', () => {
    const r = partkit(['lifecycle', 'replay', '-'], {input: '{"type": "WantCreate", "timestamp": "2026-01-01", "wantId": "w", "partitions": ["a"]}\n'});
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('events[0].timestamp must be a non-negative integer');
  });

  test('NO_COLOR turns colour off; FORCE_COLOR turns it on off a terminal', () => {
    const coloured = partkit(['validate', 'bad.json'], {env: {...process.env, FORCE_COLOR: '1', NO_COLOR: ''}});
    expect(coloured.stderr).toContain('\x1b[');
    const plain = partkit(['validate', 'bad.json'], {env: {...process.env, FORCE_COLOR: '1', NO_COLOR: '1'}});
    expect(plain.stderr).not.toContain('\x1b[');
    expect(plain.stderr).toContain('error');
  });

  test('a date layout with no Go layout element: a warning on stderr, the result unchanged', () => {
    const args = ['objects', '--total', '3', '--plan', '--prefix', 'logs/', '--type', 'date', '--date-format', 'YYYY-MM-DD', 'keys.txt'];
    const r = partkit(args);
    expect(r.status).toBe(0);
    expect(r.stderr).toMatch(/warning: .*YYYY-MM-DD.*no Go layout element/);
    expect(r.stdout).toContain('fallback to partition 0: 3');
    const good = partkit(['objects', '--total', '3', '--plan', '--type', 'date', '--date-format', '2006-01-02', 'keys.txt']);
    expect(good.stderr).toBe('');
  });

  test('sync simulate --verbose: events on stderr, the summary alone on stdout', () => {
    const r = partkit(['sync', 'simulate', '--partitions', '7', '--verbose', '--json']);
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout).finished).toBe(7);
    expect(r.stderr).toContain('rebalance');
  });
});
