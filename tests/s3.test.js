// partkit/s3 against a real S3 API: moto's server on loopback (tests/support/moto_s3.py), with
// the AWS SDK v3 client. Each worker lists the bucket itself with ListObjectsV2, as Bacalhau's S3
// input source does, and keeps its partition: the workers' objects must be the listing (minus
// directories), each object in exactly one worker, identical to partitionObjects on the keys.
//
// Without moto these tests skip, loudly, unless PARTKIT_REQUIRE_S3=1 (set by .ci/run, which
// installs it through scripts/ensure-moto.sh): then they fail.
const partkit = require('partkit');
const s3 = require('partkit/s3');
const {PutObjectCommand, CreateBucketCommand} = require('@aws-sdk/client-s3');
const {findMotoPython, startMoto, s3Client} = require('./support/moto');
const {describeWith} = require('./support/service');
const {rejection} = require('./support/thrown');

const {partitionObjects, ObjectPartitioner, PartitionError} = partkit;
const {listPartition, stats, plan, parseS3Url} = s3;

const PYTHON = findMotoPython();
const d = describeWith(PYTHON, {what: 'S3 tests: moto', install: 'scripts/ensure-moto.sh installs it', env: 'PARTKIT_REQUIRE_S3'});

/** Keys with nested prefixes, directory markers, non-ASCII and spaces, some outside `data/`. */
function keys(n) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const day = String(1 + (i % 28)).padStart(2, '0');
    const dir = `data/2024-03-${day}/`;
    if (i % 500 === 0) out.push(dir); // a directory marker
    if (i % 97 === 0) out.push(`other/user${i}.json`); // outside the listing prefix
    const name = i % 7 === 0 ? `données ${i}` : i % 11 === 0 ? `файл ${i}` : `events-${i}`;
    out.push(i % 13 === 0 ? `data/${name}.txt` : `${dir}user${i % 331}/${name}.json`);
  }
  return [...new Set(out)];
}

/** S3's listing order: UTF-8 bytes, which for these keys is code point order. */
function s3Order(list) {
  return [...list].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
}

async function collect(iter) {
  const out = [];
  for await (const o of iter) out.push(o);
  return out;
}

const SOURCES = {
  object: {type: 'object'},
  regex: {type: 'regex', pattern: 'user(\\d+)'},
  date: {type: 'date', dateFormat: '2006-01-02'},
  substring: {type: 'substring', startIndex: 0, endIndex: 10},
};

/** Workers 0..total-1 list; checks the union, exactly-once and partitionObjects parity. */
async function checkWorkers(client, bucket, all, total, source, options = {}) {
  const prefix = partkit.listingPrefix(source.key ?? '');
  const listing = s3Order(all.filter((k) => k.startsWith(prefix)));
  const seen = new Map();
  for (let i = 0; i < total; i++) {
    const got = await collect(listPartition(client, {bucket, ...source}, total, i, options));
    const expected = partitionObjects(listing, total, i, source);
    expect(got.map((o) => o.key)).toEqual(expected);
    for (const o of got) {
      expect(o.isDir).toBe(false);
      expect(seen.has(o.key)).toBe(false);
      seen.set(o.key, i);
    }
  }
  const files = listing.filter((k) => !k.endsWith('/'));
  const noneType = !source.partition?.type || source.partition.type === 'none';
  if (!noneType || total === 1) expect([...seen.keys()].sort()).toEqual([...files].sort());
  return seen;
}

d('partkit/s3 on moto', () => {
  jest.setTimeout(120000);
  const SMALL = keys(2000);
  let server;
  let client;

  beforeAll(async () => {
    server = await startMoto(PYTHON, {small: SMALL});
    client = s3Client(server.endpoint);
    await client.send(new CreateBucketCommand({Bucket: 'single'}));
    await client.send(new PutObjectCommand({Bucket: 'single', Key: 'one/file.txt', Body: 'hello', ContentType: 'text/plain'}));
    await client.send(new PutObjectCommand({Bucket: 'single', Key: 'one/dir', Body: '', ContentType: 'application/x-directory'}));
    await client.send(new PutObjectCommand({Bucket: 'single', Key: 'one/dir/a.txt', Body: 'a', ContentType: 'text/plain'}));
  });
  afterAll(async () => {
    client?.destroy();
    await server?.stop();
  });

  for (const [type, partition] of Object.entries(SOURCES)) {
    test(`${type}: 3 workers, 100-key pages: the listing split exactly once, as partitionObjects`, async () => {
      let pages = 0;
      await checkWorkers(client, 'small', SMALL, 3, {key: 'data/*', partition}, {pageSize: 100, onPage: (p) => { pages = p.pages; }});
      expect(pages).toBeGreaterThan(15);
    });
  }

  test('no partitioning: every worker gets every file; the prefix is the key without spaces and one *', async () => {
    const got = await collect(listPartition(client, {bucket: 'small', key: ' data/2024-03-0*'}, 2, 1, {pageSize: 250}));
    const expected = s3Order(SMALL.filter((k) => k.startsWith('data/2024-03-0') && !k.endsWith('/')));
    expect(got.map((o) => o.key)).toEqual(expected);
    expect(got[0]).toEqual(expect.objectContaining({size: 0, isDir: false, etag: expect.any(String)}));
    // As in Bacalhau, the `*`/`/` test looks at the key before trimming: a trailing space makes
    // it one object's key (HeadObject), here a missing one.
    const e = await rejection(collect(listPartition(client, {bucket: 'small', key: 'data/2024-03-0* '}, 1, 0)));
    expect(e.code).toBe('S3_NOT_FOUND');
  });

  test('stats (and plan) count every partition over one listing, as ObjectPartitioner.stats', async () => {
    const source = {key: 'data/', partition: SOURCES.regex};
    const s = await stats(client, {bucket: 'small', ...source}, 4, {pageSize: 300});
    const listing = s3Order(SMALL.filter((k) => k.startsWith('data/')));
    const ref = new ObjectPartitioner(4, source).stats(listing);
    expect(s.counts).toEqual(ref.counts);
    expect(s.fallback).toBe(ref.fallback);
    expect(s.directories).toBe(ref.directories);
    expect(s.objects).toBe(listing.length);
    expect(s.pages).toBe(Math.ceil(listing.length / 300));
    expect(s.bytes).toEqual([0, 0, 0, 0]);
    expect(plan).toBe(stats);
  });

  test('a key naming one object: HeadObject, the object alone (in its partition)', async () => {
    const source = {bucket: 'single', key: 'one/file.txt', partition: {type: 'object'}};
    const idx = new ObjectPartitioner(3, source).indexOf('one/file.txt');
    for (let i = 0; i < 3; i++) {
      const got = await collect(listPartition(client, source, 3, i));
      expect(got).toEqual(i === idx ? [expect.objectContaining({key: 'one/file.txt', size: 5, isDir: false})] : []);
    }
    // Content-Type application/x-directory: listed as a prefix instead.
    const dir = await collect(listPartition(client, {bucket: 'single', key: 'one/dir'}, 1, 0));
    expect(dir.map((o) => o.key)).toEqual(['one/dir', 'one/dir/a.txt']);
    // A missing object is an error (as in Bacalhau), not an empty listing.
    const e = await rejection(collect(listPartition(client, {bucket: 'single', key: 'one/missing.txt'}, 1, 0)));
    expect(e).toBeInstanceOf(PartitionError);
    expect(e.code).toBe('S3_NOT_FOUND');
    expect(e.cause).toBeDefined();
  });

  test('no such bucket: PartitionError S3_NO_SUCH_BUCKET with the S3 error attached', async () => {
    const e = await rejection(collect(listPartition(client, {bucket: 'nope-nope', key: 'x/'}, 2, 0)));
    expect(e).toBeInstanceOf(PartitionError);
    expect(e).toBeInstanceOf(partkit.PartkitError);
    expect(e.code).toBe('S3_NO_SUCH_BUCKET');
    expect(e.cause.name).toBe('NoSuchBucket');
    expect(e.message).toMatch(/ListObjectsV2 s3:\/\/nope-nope\/x\//);
  });

  test('an AbortSignal stops a listing between pages and during a request', async () => {
    const ac = new AbortController();
    const got = [];
    const e = await rejection((async () => {
      for await (const o of listPartition(client, {bucket: 'small', key: 'data/'}, 1, 0, {
        pageSize: 100, signal: ac.signal, onPage: (p) => { if (p.pages === 2) ac.abort(new Error('enough')); },
      })) got.push(o);
    })());
    expect(e.code).toBe('ABORTED');
    expect(e.cause.message).toBe('enough');
    expect(got.length).toBeGreaterThan(190); // two pages of 100, minus directory markers
    expect(got.length).toBeLessThanOrEqual(200);
    const pre = AbortSignal.abort();
    expect((await rejection(collect(listPartition(client, {bucket: 'small', key: 'data/'}, 1, 0, {signal: pre})))).code).toBe('ABORTED');
    const soon = AbortSignal.timeout(1);
    expect((await rejection(collect(listPartition(client, {bucket: 'small'}, 1, 0, {signal: soon})))).code).toBe('ABORTED');
  });

  test('30,000 objects over 1,000-key pages: 2 workers split the listing exactly once, as partitionObjects', async () => {
    const big = keys(30000);
    const t0 = Date.now();
    const srv = await startMoto(PYTHON, {big});
    const c = s3Client(srv.endpoint);
    try {
      const filled = Date.now();
      let pages = 0;
      const seen = await checkWorkers(c, 'big', big, 2, {key: 'data/*', partition: SOURCES.regex}, {onPage: (p) => { pages = p.pages; }});
      expect(pages).toBe(Math.ceil(big.filter((k) => k.startsWith('data/')).length / 1000));
      expect(seen.size).toBeGreaterThan(28000);
      console.log(`S3 30k test: ${big.length} keys filled in ${filled - t0} ms, 2 listings of ${pages} pages in ${Date.now() - filled} ms`);
    } finally {
      c.destroy();
      await srv.stop();
    }
  }, 900000);
});

describe('partkit/s3 without a server', () => {
  const failing = (error) => ({send: async () => { throw error; }});
  const src = {bucket: 'b-1', key: 'data/'};

  test('arguments are checked (and the config validated) before any request', async () => {
    const noCall = {send: () => { throw new Error('no request expected'); }};
    const cases = [
      [() => listPartition(null, src, 1, 0), 'INVALID_ARGUMENT'],
      [() => listPartition(noCall, {key: 'x'}, 1, 0), 'INVALID_ARGUMENT'],
      [() => listPartition(noCall, src, 1, 0, {pageSize: 1001}), 'INVALID_ARGUMENT'],
      [() => listPartition(noCall, src, 1, 0, {signal: {}}), 'INVALID_ARGUMENT'],
      [() => listPartition(noCall, {...src, partition: {type: 'regex', pattern: '('}}, 2, 0), 'PARTITION_CONFIG_INVALID'],
      [() => listPartition(noCall, src, 0, 0), 'PARTITION_COUNT_INVALID'],
      [() => listPartition(noCall, src, 2, 2), 'PARTITION_INDEX_OUT_OF_RANGE'],
    ];
    for (const [fn, code] of cases) {
      const e = await rejection(collect(fn()));
      expect(e).toBeInstanceOf(PartitionError);
      expect(e.code).toBe(code);
    }
  });

  test('S3 errors become PartitionError codes, the SDK error attached', async () => {
    const sdkError = (name, status) => Object.assign(new Error(`${name} happened`), {name, $metadata: {httpStatusCode: status}});
    const cases = [
      [sdkError('AccessDenied', 403), 'S3_ACCESS_DENIED'],
      [sdkError('SlowDown', 503), 'S3_THROTTLED'],
      [sdkError('ThrottlingException', 400), 'S3_THROTTLED'],
      [sdkError('InternalError', 500), 'S3_ERROR'],
      [new TypeError('socket hang up'), 'S3_ERROR'],
    ];
    for (const [error, code] of cases) {
      const e = await rejection(stats(failing(error), src, 2));
      expect(e.code).toBe(code);
      expect(e.cause).toBe(error);
    }
  });

  test('a failing page after good ones: the objects so far, then the error (never a silent partial result)', async () => {
    let n = 0;
    const client = {send: async () => {
      n++;
      if (n === 1) return {Contents: [{Key: 'data/a', Size: 1}, {Key: 'data/b/', Size: 0}], IsTruncated: true, NextContinuationToken: 't'};
      throw Object.assign(new Error('boom'), {name: 'InternalError', $metadata: {httpStatusCode: 500}});
    }};
    const got = [];
    const e = await rejection((async () => { for await (const o of listPartition(client, src, 1, 0)) got.push(o.key); })());
    expect(got).toEqual(['data/a']);
    expect(e.code).toBe('S3_ERROR');
    // A truncated page without a token is an error too.
    const bad = {send: async () => ({Contents: [], IsTruncated: true})};
    expect((await rejection(collect(listPartition(bad, src, 1, 0)))).code).toBe('S3_ERROR');
  });

  test('parseS3Url', () => {
    expect(parseS3Url('s3://bucket/logs/*')).toEqual({bucket: 'bucket', key: 'logs/*'});
    expect(parseS3Url('s3://bucket')).toEqual({bucket: 'bucket', key: ''});
    expect(() => parseS3Url('http://x/y')).toThrow(PartitionError);
  });
});
