// `partkit/s3`: list an S3 bucket with ListObjectsV2 and keep one worker's objects, exactly as
// Bacalhau's S3 input source does (pkg/storage/s3 `explodeKey`, then pkg/s3/partitioning.go
// `PartitionObjects`), one page at a time. Node only; `@aws-sdk/client-s3` v3 is a peer
// dependency (the caller's `S3Client` does the requests, signing and retries).
//
// Bacalhau's listing rules, followed here:
// - a source key that is not empty and ends in neither `*` nor `/` names one object: HeadObject
//   it; unless its Content-Type is `application/x-directory…` (or absent), that object is the
//   whole listing; otherwise the key is listed as a prefix. A missing object is an error.
// - the listing prefix is `TrimSuffix(TrimSpace(key), "*")` (`listingPrefix`);
// - ListObjectsV2 pages are followed through `NextContinuationToken` while `IsTruncated`;
// - a key ending in `/` is a directory: listed, never selected by any partition;
// - the partition of each key is `partitionObjects`' (the key sanitised against the prefix).
//
// Its imports of partkit's own modules are left to dist/objects.cjs and dist/common.cjs
// (scripts/build.mjs), so errors thrown here are the root's `PartitionError` and the wasm module
// is the root's.
import {HeadObjectCommand, ListObjectsV2Command} from '@aws-sdk/client-s3';
import {PartitionError, PartkitError} from '../errors.mjs';
import {ALL_PARTITIONS, ObjectPartitioner, listingPrefix, partitionObjects} from '../objects.mjs';
import {argumentKit, describe, isPlainObject} from '../kit/args.mjs';

const MAX_KEYS = 1000; // ListObjectsV2's largest page
const MAX_NAME = 1024; // S3 keys and bucket names are at most 1,024 bytes; a bound on arguments
const MAX_LISTED_PARTITIONS = 1 << 24; // as ObjectPartitioner#stats

const kit = argumentKit(PartitionError, {base: PartkitError});
const argError = kit.fail;

/** The arguments of a listing call, read once into plain values (getters run here, once). */
function listingArgs(client, source, options) {
  const isClient = kit.reading(() => client !== null && typeof client === 'object' && typeof client.send === 'function', 'client');
  if (!isClient) throw argError(`client must be an S3Client (an object with send()), got ${describe(client)}`);
  // A plain copy, each key read once; ObjectPartitioner refuses the keys a source does not have.
  const copy = kit.reading(() => (isPlainObject(source) ? {...source} : null), 'source');
  if (copy === null) throw argError(`source must be an object, got ${describe(source)}`);
  const {bucket, key, versionId} = copy;
  if (typeof bucket !== 'string' || bucket.length === 0 || bucket.length > MAX_NAME) {
    throw argError(`source.bucket must be a non-empty string of at most ${MAX_NAME} characters, got ${describe(bucket)}`);
  }
  if (key !== undefined && key !== null && (typeof key !== 'string' || key.length > 4 * MAX_NAME)) {
    throw argError(`source.key must be a string of at most ${4 * MAX_NAME} characters, got ${describe(key)}`);
  }
  if (versionId !== undefined && versionId !== null && (typeof versionId !== 'string' || versionId.length > MAX_NAME)) {
    throw argError(`source.versionId must be a string of at most ${MAX_NAME} characters, got ${describe(versionId)}`);
  }
  const opts = kit.reading(() => {
    const o = options ?? {};
    if (!isPlainObject(o)) throw argError(`options must be an object {signal?, pageSize?, onPage?}, got ${describe(o)}`);
    kit.knownKeys(o, ['signal', 'pageSize', 'onPage'], 'options');
    const {signal, pageSize, onPage} = o;
    if (signal !== undefined && signal !== null && !(signal instanceof AbortSignal)) {
      throw argError(`options.signal must be an AbortSignal, got ${describe(signal)}`);
    }
    return {signal, pageSize, onPage};
  }, 'options');
  const {signal, pageSize, onPage} = opts;
  if (pageSize !== undefined && pageSize !== null
    && (!Number.isSafeInteger(pageSize) || pageSize < 1 || pageSize > MAX_KEYS)) {
    throw argError(`options.pageSize must be an integer from 1 to ${MAX_KEYS}, got ${describe(pageSize)}`);
  }
  if (onPage !== undefined && onPage !== null && typeof onPage !== 'function') {
    throw argError(`options.onPage must be a function, got ${describe(onPage)}`);
  }
  return {
    client,
    // The source as partitionObjects reads it (it copies and checks the config itself).
    source: {...copy, key: key ?? '', versionId: undefined},
    versionId: versionId ?? undefined,
    signal: signal ?? undefined,
    pageSize: pageSize ?? undefined,
    onPage: onPage ?? undefined,
  };
}

const THROTTLED = new Set(['SlowDown', 'Throttling', 'ThrottlingException', 'ThrottledException',
  'RequestLimitExceeded', 'RequestThrottled', 'RequestThrottledException', 'TooManyRequestsException']);
const DENIED = new Set(['AccessDenied', 'AllAccessDisabled', 'InvalidAccessKeyId', 'SignatureDoesNotMatch',
  'ExpiredToken', 'InvalidToken', 'AccountProblem']);

/** The `PartitionError` of a failed S3 request (the SDK error as `cause`). */
export function s3Error(error, what, signal) {
  if (error instanceof PartitionError) return error;
  let out;
  if (signal?.aborted) {
    out = new PartitionError(`${what}: aborted`, 'ABORTED');
    out.cause = signal.reason ?? error;
    return out;
  }
  const name = error?.name ?? error?.Code ?? 'Error';
  const status = error?.$metadata?.httpStatusCode;
  let code = 'S3_ERROR';
  if (name === 'NoSuchBucket') code = 'S3_NO_SUCH_BUCKET';
  else if (name === 'NotFound' || name === 'NoSuchKey' || (status === 404 && what.startsWith('HeadObject'))) code = 'S3_NOT_FOUND';
  else if (DENIED.has(name) || status === 403) code = 'S3_ACCESS_DENIED';
  else if (THROTTLED.has(name) || status === 429 || status === 503) code = 'S3_THROTTLED';
  else if (name === 'AbortError') code = 'ABORTED';
  const detail = [name, status && `HTTP ${status}`].filter(Boolean).join(', ');
  out = new PartitionError(`${what}: ${error?.message || name} (${detail})`, code);
  out.cause = error;
  return out;
}

function checkAborted(signal, what) {
  if (signal?.aborted) {
    const e = new PartitionError(`${what}: aborted`, 'ABORTED');
    e.cause = signal.reason;
    throw e;
  }
}

/** Sends one command, as a PartitionError on failure. */
async function send(state, command, what) {
  checkAborted(state.signal, what);
  try {
    return await state.client.send(command, state.signal ? {abortSignal: state.signal} : undefined);
  } catch (error) {
    throw s3Error(error, what, state.signal);
  }
}

/**
 * The listing, page by page: arrays of `{key, size, etag, lastModified, isDir}` in ListObjectsV2
 * order (every object, directories included), as Bacalhau's `explodeKey` lists them.
 */
async function* pages(state) {
  const {bucket, key} = state.source;
  const where = `s3://${bucket}/${key}`;
  if (key !== '' && !key.endsWith('*') && !key.endsWith('/')) {
    const head = await send(state, new HeadObjectCommand({Bucket: bucket, Key: key, VersionId: state.versionId}),
      `HeadObject ${where}`);
    if (typeof head.ContentType === 'string' && !head.ContentType.startsWith('application/x-directory')) {
      state.pages++;
      yield [{key, size: Number(head.ContentLength ?? 0), etag: head.ETag, versionId: state.versionId,
        lastModified: head.LastModified, isDir: false}];
      return;
    }
  }
  const prefix = listingPrefix(key);
  let token;
  for (;;) {
    const resp = await send(state, new ListObjectsV2Command({
      Bucket: bucket, Prefix: prefix, ContinuationToken: token, MaxKeys: state.pageSize,
    }), `ListObjectsV2 s3://${bucket}/${prefix}`);
    state.pages++;
    const contents = resp.Contents ?? [];
    const page = new Array(contents.length);
    for (let i = 0; i < contents.length; i++) {
      const o = contents[i];
      const k = String(o.Key ?? '');
      page[i] = {key: k, size: Number(o.Size ?? 0), etag: o.ETag, lastModified: o.LastModified, isDir: k.endsWith('/')};
    }
    yield page;
    if (!resp.IsTruncated) return;
    token = resp.NextContinuationToken;
    if (typeof token !== 'string' || token === '') {
      throw new PartitionError(`ListObjectsV2 s3://${bucket}/${prefix}: a truncated page without a continuation token`, 'S3_ERROR');
    }
  }
}

/** The compiled partitioner, or null when the total is beyond ObjectPartitioner's (2^31 - 1). */
function partitioner(total, index, source) {
  // Validates config, total and index (Go's order) before any request.
  partitionObjects([], total, index ?? 0, source);
  try {
    return new ObjectPartitioner(total, source);
  } catch (error) {
    if (error?.code === 'PARTITION_COUNT_UNSUPPORTED') return null;
    throw error;
  }
}

/**
 * Lists `s3://bucket/key` and yields the objects of partition `partitionIndex` (0-based) of
 * `totalPartitions` as the pages arrive: the same objects, in the same order, as
 * `partitionObjects` on the whole listing, without holding more than one page.
 */
export async function* listPartition(client, source, totalPartitions, partitionIndex, options) {
  const args = listingArgs(client, source, options);
  const p = partitioner(totalPartitions, partitionIndex, args.source);
  const state = {...args, pages: 0, keys: 0, selected: 0};
  try {
    for await (const page of pages(state)) {
      let picked;
      if (p) {
        const idx = p.indexMany(page.map((o) => o.key));
        picked = [];
        for (let i = 0; i < idx.length; i++) {
          if (idx[i] === partitionIndex || idx[i] === ALL_PARTITIONS) picked.push(page[i]);
        }
      } else {
        picked = partitionObjects(page, totalPartitions, partitionIndex, args.source);
      }
      state.keys += page.length;
      state.selected += picked.length;
      state.onPage?.({pages: state.pages, keys: state.keys, selected: state.selected});
      for (const o of picked) {
        yield o;
      }
      checkAborted(state.signal, `listing s3://${args.source.bucket}/${args.source.key}`);
    }
  } finally {
    p?.free();
  }
}

/**
 * Lists `s3://bucket/key` once and counts, per partition of `totalPartitions`, the objects and
 * bytes each would process, how many fell back to partition 0 and how many were directories,
 * without keeping the objects.
 */
export async function stats(client, source, totalPartitions, options) {
  const args = listingArgs(client, source, options);
  // Counts of every partition are listed: bounded as ObjectPartitioner#stats bounds them.
  if (Number.isSafeInteger(totalPartitions) && totalPartitions > MAX_LISTED_PARTITIONS) {
    throw argError(`stats supports at most ${MAX_LISTED_PARTITIONS} partitions, got ${totalPartitions}`);
  }
  const p = partitioner(totalPartitions, undefined, args.source);
  if (!p) throw argError(`stats supports at most ${MAX_LISTED_PARTITIONS} partitions`);
  const state = {...args, pages: 0, keys: 0, selected: 0};
  const out = {counts: new Array(totalPartitions).fill(0), bytes: new Array(totalPartitions).fill(0),
    fallback: 0, directories: 0, objects: 0, pages: 0};
  const warnings = p.warnings;
  if (warnings.length) out.warnings = warnings;
  try {
    for await (const page of pages(state)) {
      const keys = page.map((o) => o.key);
      const s = p.stats(keys);
      const idx = p.indexMany(keys);
      for (let i = 0; i < totalPartitions; i++) out.counts[i] += s.counts[i];
      out.fallback += s.fallback;
      out.directories += s.directories;
      for (let i = 0; i < idx.length; i++) {
        const k = idx[i];
        if (k >= 0) out.bytes[k] += page[i].size;
        else if (k === ALL_PARTITIONS) for (let j = 0; j < totalPartitions; j++) out.bytes[j] += page[i].size;
      }
      state.keys += page.length;
      out.objects = state.keys;
      out.pages = state.pages;
      state.onPage?.({pages: state.pages, keys: state.keys, selected: state.keys});
    }
  } finally {
    p.free();
  }
  return out;
}

/** `stats` under the name of the in-memory `ObjectPartitioner.plan`: counts, not objects. */
export const plan = stats;

/** `s3://bucket/key` as `{bucket, key}` (the key may be empty). */
export function parseS3Url(url) {
  kit.requireString(url, 'url');
  const m = /^s3:\/\/([^/]+)(?:\/(.*))?$/s.exec(url);
  if (!m) throw argError(`url must be an s3://bucket/key URL, got ${describe(url)}`);
  return {bucket: m[1], key: m[2] ?? ''};
}
