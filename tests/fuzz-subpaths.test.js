// partkit/kafka and partkit/s3 under the rule of the root's fuzz suite (tests/fuzz.test.js): every
// export, with the hostile values of tests/hostile.js and fast-check's careless ones, answers or
// refuses with a PartkitError whose code is INVALID_ARGUMENT or INPUT_TOO_LARGE (a value of the
// right type that a domain rule refuses keeps its domain's code). No broker, no S3: the calls
// that reach the network get in-memory stand-ins. Short by default (1,000 runs, part of
// `npm test`); PARTKIT_FUZZ_LONG=1 runs 100,000.
const fc = require('fast-check');
const p = require('partkit');
const k = require('partkit/kafka');
const s3 = require('partkit/s3');
const {hostileValues, revoked, subpathCalls, SUBPATH_FIXTURES} = require('./hostile');
const {client, SOURCE, BASE} = SUBPATH_FIXTURES;

const LONG = process.env.PARTKIT_FUZZ_LONG === '1';
const RUNS = LONG ? 100000 : 1000;
jest.setTimeout(LONG ? 4 * 3600 * 1000 : 60000);

/** Codes a refusal of a value of the right type may carry (a rule of the value's domain). */
const VALUE_CODES = new Set(['INVALID_ARGUMENT', 'INPUT_TOO_LARGE', 'PARTITION_CONFIG_INVALID', 'PARTITION_COUNT_INVALID', 'PARTITION_COUNT_UNSUPPORTED', 'PARTITION_INDEX_OUT_OF_RANGE', 'KAFKA_RETENTION_TOO_SHORT', 'SYNC_INVALID_OPTIONS']);

const calls = (v) => subpathCalls(k, s3, v);

const NAMES = calls(undefined).map(([name]) => name);
const named = Object.entries(hostileValues());

/** Runs one call; returns the error it refused with (sync or async), or null. */
async function refusal(name, v) {
  const entry = calls(v).find(([n]) => n === name);
  try {
    await entry[1]();
    return null;
  } catch (error) {
    return error;
  }
}

/** Calls that hand `v` to the caller's own code (a callback): its exceptions are the caller's. */
const CALLBACKS = new Set(['new KafkaTaskSync.createSyncTask', 'new KafkaTaskSync.clock', 'new KafkaTaskSync.onStart', 'taskSyncAssigner.onAssign']);

function checkRefusal(name, v, error) {
  if (error === null) return;
  if (CALLBACKS.has(name) && typeof v === 'function') return;
  if (!(error instanceof p.PartkitError)) {
    throw new Error(`${name} threw ${error?.constructor?.name}: ${error?.message}`);
  }
  if (!VALUE_CODES.has(error.code)) throw new Error(`${name} refused with code ${error.code}: ${error.message}`);
  // a refusal of a value says where it is
  if (!Array.isArray(error.path) || error.message.length > 1000) throw new Error(`${name}: no path, or a message over 1,000 characters: ${JSON.stringify(error.path)} ${error.message.slice(0, 200)}`);
}

const recipe = fc.oneof(
  {weight: 3, arbitrary: fc.nat(named.length - 1).map((i) => () => named[i][1])},
  {weight: 3, arbitrary: fc.anything({withBigInt: true, withBoxedValues: true, withMap: true, withSet: true, withTypedArray: true, withSparseArray: true, withNullPrototype: true}).map((x) => () => x)},
  {weight: 2, arbitrary: fc.string({unit: 'binary'}).map((x) => () => x)},
  {weight: 1, arbitrary: fc.oneof(fc.double(), fc.integer()).map((x) => () => x)},
);

describe('fuzz: partkit/kafka and partkit/s3 with hostile values', () => {
  test('every export, every named hostile value: only PartkitErrors, INVALID_ARGUMENT or INPUT_TOO_LARGE', async () => {
    for (const name of NAMES) {
      for (const [vname, v] of named) {
        const error = await refusal(name, v);
        try {
          checkRefusal(name, v, error);
        } catch (e) {
          throw new Error(`${e.message} (value: ${vname})`);
        }
      }
    }
  });

  test(`${RUNS} runs of careless values`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...NAMES), recipe, async (name, make) => {
        const v = make();
        checkRefusal(name, v, await refusal(name, v));
      }),
      {numRuns: RUNS},
    );
  });

  // The raw errors found by fuzzing from outside before this suite existed.
  test.each([
    ['kafkaTopicNames(Symbol())', () => k.kafkaTopicNames(Symbol('s')), 'INVALID_ARGUMENT'],
    ['kafkaTopicNames(revoked proxy)', () => k.kafkaTopicNames(revoked({})), 'INVALID_ARGUMENT'],
    ['kafkaTopicNames(null-prototype object)', () => k.kafkaTopicNames(Object.create(null)), 'INVALID_ARGUMENT'],
    ['new KafkaTaskSync(revoked proxy)', () => new k.KafkaTaskSync(revoked({})), 'INVALID_ARGUMENT'],
    ['taskSyncAssigner(...).protocol with a 65,541-character topic', () => k.taskSyncAssigner({taskId: 't'})().protocol({topics: ['x'.repeat(65541)]}), 'INVALID_ARGUMENT'],
    ['new SyncLogReader()', () => new k.SyncLogReader(), 'INVALID_ARGUMENT'],
    ['parseS3Url(revoked proxy)', () => s3.parseS3Url(revoked({})), 'INVALID_ARGUMENT'],
  ])('%s: a PartkitError', (_, fn, code) => {
    let error;
    try {
      fn();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(p.PartkitError);
    expect(error.code).toBe(code);
  });

  test.each([
    ['a revoked client', () => s3.stats(revoked({}), SOURCE, 2)],
    ['a revoked source', () => s3.stats(client, revoked({}), 2)],
    ['an unknown option', () => s3.stats(client, SOURCE, 2, {pagesize: 10})],
    ['an unknown source key', () => s3.stats(client, {...SOURCE, prefix: 'x'}, 2)],
  ])('partkit/s3 stats with %s: INVALID_ARGUMENT', async (_, fn) => {
    await expect(fn()).rejects.toMatchObject({code: 'INVALID_ARGUMENT'});
    await expect(fn()).rejects.toBeInstanceOf(p.PartkitError);
  });

  test('unknown option keys are refused with the nearest known key, as in the root', async () => {
    expect(() => new k.KafkaTaskSync({...BASE, sessionTimout: 100})).toThrow('options.sessionTimout is not a known key: did you mean options.sessionTimeout?');
    await expect(s3.stats(client, SOURCE, 2, {pagesize: 10})).rejects.toThrow('options.pagesize is not a known key: did you mean options.pageSize?');
    expect(() => new k.KafkaTaskSync({...BASE, syncOptions: {removalDelai: 5}})).toThrow('options.syncOptions.removalDelai is not a known key: did you mean options.syncOptions.removalDelay?');
    expect(() => new k.KafkaTaskSync({...BASE, syncOptions: {removalDelay: -1}})).toThrow('options.syncOptions.removalDelay must be a non-negative integer of milliseconds, got the number -1');
  });
});
