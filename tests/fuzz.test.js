// Fuzz suite (issue 16): fast-check over every export and method with hostile values mixed into
// ordinary ones. After every run: each call answered or threw a PartkitError, refused inputs
// changed no state, and a canary through every domain answers exactly as on a fresh module.
// Short by default (1,000 runs, part of `npm test`); PARTKIT_FUZZ_LONG=1 runs 100,000.
const fc = require('fast-check');
const p = require('partkit');
const {INTERNAL, CALLBACKS, calls, canary, fixtures, hostileValues, stateOf} = require('./hostile');

const LONG = process.env.PARTKIT_FUZZ_LONG === '1';
const RUNS = LONG ? 100000 : 1000;
jest.setTimeout(LONG ? 4 * 3600 * 1000 : 60000);

const expected = canary(p);
const named = Object.entries(hostileValues());
const NAMES = calls(p, undefined, fixtures(p)).map(([name]) => name);

/**
 * A hostile value, as a recipe fast-check can print and shrink: `{named: i}` (the i-th named
 * value: proxies that throw must not reach fast-check itself), `{list: [...]}` (an array mixing
 * recipes), or a plain value fast-check makes (nested, odd keys, -0, boxed, typed arrays, …).
 */
const recipe = fc.letrec((tie) => ({
  value: fc.oneof(
    {weight: 3, arbitrary: fc.nat(named.length - 1).map((i) => ({named: i}))},
    {weight: 3, arbitrary: fc.anything({withBigInt: true, withBoxedValues: true, withMap: true, withSet: true, withTypedArray: true, withSparseArray: true, withNullPrototype: true}).map((plain) => ({plain}))},
    {weight: 2, arbitrary: fc.string({unit: 'binary'}).map((plain) => ({plain}))},
    {weight: 1, arbitrary: fc.array(tie('value'), {maxLength: 4}).map((list) => ({list}))},
    {weight: 1, arbitrary: fc.oneof(fc.double(), fc.integer()).map((plain) => ({plain}))},
  ),
})).value;

/** The value of a recipe. */
function make(r) {
  if ('named' in r) return named[r.named][1];
  if ('list' in r) return r.list.map(make);
  return r.plain;
}

function check(f, name, v) {
  const entry = calls(p, v, f).find(([n]) => n === name);
  try {
    entry[1]();
  } catch (error) {
    if (INTERNAL.test(String(error?.message))) throw new Error(`${name}: ${error.message}`);
    if (error instanceof p.PartkitError) {
      // every refusal says what (code) and where (path), in a bounded message
      if (typeof error.code !== 'string' || !Array.isArray(error.path) || error.message.length > 1000) {
        throw new Error(`${name}: a refusal without a code or a path, or too long: ${error.code} ${JSON.stringify(error.path)} ${error.message.slice(0, 200)}`);
      }
      return;
    }
    if (CALLBACKS.has(name) && typeof v === 'function') return;
    throw new Error(`${name} threw ${error?.constructor?.name}: ${error?.message}`);
  }
}

describe('fuzz: every export with hostile values', () => {
  test(`${RUNS} runs of 1-8 calls: only PartkitErrors, no state change from refused input, canary intact`, () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom(...NAMES), recipe), {minLength: 1, maxLength: 8}), (steps) => {
        // Fresh objects per run: a counterexample replays alone, and states do not grow.
        const f = fixtures(p);
        for (const [name, r] of steps) {
          const v = make(r);
          const before = stateOf(f);
          let refused = false;
          const entry = calls(p, v, f).find(([n]) => n === name);
          try {
            entry[1]();
          } catch (error) {
            refused = true;
            if (INTERNAL.test(String(error?.message))) throw new Error(`${name}: ${error.message}`);
            if (!(error instanceof p.PartkitError) && !(CALLBACKS.has(name) && typeof v === 'function')) {
              throw new Error(`${name} threw ${error?.constructor?.name}: ${error?.message}`);
            }
          }
          // A refused input changes nothing. (An accepted one may: e.g. a valid event.)
          if (refused) expect(stateOf(f)).toBe(before);
        }
        for (const o of Object.values(f)) o.free?.();
        expect(canary(p)).toBe(expected);
      }),
      {numRuns: RUNS},
    );
  });

  test('every export, every named hostile value, in every position the table lists', () => {
    const f = fixtures(p);
    const before = stateOf(f);
    for (const name of NAMES) for (const [, v] of named) check(f, name, v);
    expect(stateOf(f)).toBe(before);
    expect(canary(p)).toBe(expected);
  });

  test('batches mixing good and hostile items: a bad item refuses the whole call, nothing changes', () => {
    const o = new p.ObjectPartitioner(5, {partition: {type: 'regex', pattern: '(\\w+)'}});
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.string({unit: 'binary'}), recipe), {maxLength: 20}), (recipes) => {
        const items = recipes.map((r) => (typeof r === 'string' ? r : make(r)));
        const allStrings = items.every((s) => typeof s === 'string' && s.length <= 1 << 20);
        for (const fn of [() => o.indexMany(items), () => p.bucketMany('k', items, 7)]) {
          try {
            const out = fn();
            expect(allStrings).toBe(true);
            expect(out).toHaveLength(items.length);
          } catch (error) {
            expect(error).toBeInstanceOf(p.PartkitError);
          }
        }
        if (allStrings) {
          const one = items.map((s) => o.indexOf(s));
          expect(Array.from(o.indexMany(items))).toEqual(one);
        }
      }),
      {numRuns: RUNS},
    );
    expect(canary(p)).toBe(expected);
  });
});
