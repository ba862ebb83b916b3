// The message corpus: every export (root, partkit/kafka, partkit/s3) driven with the careless and
// hostile values of the fuzz suite (tests/hostile.js), every message collected. It fails on a
// message in serde's or Rust's words, and on a refusal of an argument's type or shape that names
// no argument or field. The table of real messages in docs/errors.md is checked here too: each
// row's call gives exactly that message.
const {readFileSync} = require('node:fs');
const {join} = require('node:path');
const fc = require('fast-check');
const p = require('partkit');
const k = require('partkit/kafka');
const s3 = require('partkit/s3');
const {calls, fixtures, hostileValues, subpathCalls} = require('./hostile');

jest.setTimeout(120000);

/** Words of serde, Rust or a careless template; none may reach a user. */
const FOREIGN = [
  /invalid type:/, /invalid value:/, /\b[ui](8|16|32|64|128|size)\b/, /\bf(32|64)\b/, /line \d+ column \d+/, /\ba undefined\b/,
  /expected a sequence/, /\bstruct [A-Z]/, /\bSome\(/, /\bVec</, /&str\b/, /\bserde\b/i, /variant identifier/, /unit value/,
  /\[object Object\]/, /\bundefined\.|\bnull\./, /panicked/, /RuntimeError/, /\bat line\b/,
];

/** Codes of refusals of an argument's type or shape (the others are a domain rule's, worded by it). */
const SHAPE_CODES = new Set([
  'INVALID_ARGUMENT', 'INPUT_TOO_LARGE', 'INVALID_EVENT', 'INVALID_SNAPSHOT',
  'SYNC_INVALID_OPTIONS', 'SYNC_INVALID_REBALANCE', 'SYNC_INVALID_PARTITION', 'SYNC_MALFORMED_MESSAGE',
]);

/** The prefixes a domain puts before the part that names the field. */
const PREFIX = /^((event \d+: )?(invalid event|invalid snapshot|invalid rebalance|invalid partition|invalid options|malformed sync message)|[\w.]+(\([\w{}, ]*\))?): /;
/** A JS name or path (`options.rebalanceTimeout`, `events[12].timestamp`, `the assigner's protocol({topics})`) followed by what is wrong with it. */
const PATH = String.raw`[A-Za-z_$][\w$]*(\([\w]*\))?(\.[\w$]+|\[\d+(\.\.\d+)?\]|\["(?:[^"\\]|\\.)*"\])*`;
const NAMES_A_FIELD = new RegExp(String.raw`^${PATH}( \(ms\)| \(\d+\))?( or ${PATH})*( must| is| has| cannot| could| supports)`);

function collect() {
  const corpus = new Map(); // message -> {code, call}
  const values = [
    ...Object.values(hostileValues()),
    ...fc.sample(fc.anything({withBigInt: true, withBoxedValues: true, withMap: true, withSet: true, withTypedArray: true, withNullPrototype: true}), {numRuns: 300, seed: 28}),
    undefined, null, NaN, -5, 1.5, 2 ** 53, '', 'x', true, [], {}, () => {}, new Date(0), ['a', 1], [{}], {token: 1}, {type: 'Nope'},
  ];
  const f = fixtures(p);
  const note = (name, error) => {
    if (error instanceof p.PartkitError && !corpus.has(error.message)) corpus.set(error.message, {code: error.code, call: name});
  };
  const pending = [];
  for (const v of values) {
    for (const [name, fn] of calls(p, v, f)) {
      try {
        fn();
      } catch (error) {
        note(name, error);
      }
    }
    for (const [name, fn] of subpathCalls(k, s3, v)) {
      try {
        const r = fn();
        if (r && typeof r.then === 'function') pending.push(r.then(() => {}, (error) => note(name, error)));
      } catch (error) {
        note(name, error);
      }
    }
  }
  return Promise.all(pending).then(() => corpus);
}

let corpus;
beforeAll(async () => {
  corpus = await collect();
});

describe('message corpus', () => {
  test('it is large: every export refused many values', () => {
    expect(corpus.size).toBeGreaterThan(500);
  });

  test("no message speaks serde's or Rust's words", () => {
    const bad = [...corpus].filter(([m]) => FOREIGN.some((re) => re.test(m))).map(([m, {call}]) => `${call}: ${m}`);
    expect(bad).toEqual([]);
  });

  test('every refusal of a type or shape names the argument or field', () => {
    const bad = [...corpus]
      .filter(([m, {code}]) => SHAPE_CODES.has(code) && !NAMES_A_FIELD.test(m.replace(PREFIX, '')))
      .map(([m, {code, call}]) => `${call} [${code}]: ${m.slice(0, 200)}`);
    expect(bad).toEqual([]);
  });

  test("docs/errors.md's table shows real messages", () => {
    const text = readFileSync(join(__dirname, '..', 'docs', 'errors.md'), 'utf8');
    const rows = [...text.matchAll(/^\| `(.+?)` \| `([A-Z_]+)` \| (.+) \|$/gm)];
    expect(rows.length).toBeGreaterThan(10);
    // eslint-disable-next-line no-new-func
    const run = new Function('p', 'k', 's3', 'code', 'try { code(p, k, s3); } catch (e) { return e; } return null;');
    for (const [, code, errorCode, message] of rows) {
      // eslint-disable-next-line no-new-func
      const fn = new Function('p', 'k', 's3', `const {${Object.keys(p).join(', ')}} = p; const {KafkaTaskSync, kafkaTopicNames, taskSyncAssigner} = k; ${code};`);
      const error = run(p, k, s3, fn);
      expect([code, error?.code, error?.message]).toEqual([code, errorCode, message.replace(/\\\|/g, '|')]);
      expect(error).toBeInstanceOf(p.PartkitError);
    }
  });
});
