// What a strict TypeScript project writes against partkit's declarations, type-checked by
// tests/consumer/run.mjs under `strict`, `exactOptionalPropertyTypes` and
// `noUncheckedIndexedAccess`, with module resolution node16, nodenext and bundler
// (tsconfig.<resolution>.json). Each `@ts-expect-error` is a misuse the types must refuse.
import {
  applyRoundRobinBucketing,
  assignImportBuckets,
  Bucketing,
  BucketingError,
  BuildState,
  ObjectPartitioner,
  PartkitError,
  partitionObjects,
  SyncTask,
  type BucketExecutionState,
  type BucketingErrorCode,
  type PartkitErrorCode,
  type SourceSpec,
  type SyncRecordOutput,
} from 'partkit';
import type {S3Object} from 'partkit/s3';

// exactOptionalPropertyTypes: an optional field takes a value that may be undefined.
declare const maybeState: BucketExecutionState | undefined;
declare const maybeLogger: ((message: string) => void) | undefined;
declare const maybeNumber: number | undefined;
declare const maybeString: string | undefined;
Bucketing.create({partitionKey: 'k', config: {bucket_total: maybeNumber}, state: maybeState, logger: maybeLogger});
new SyncTask('t', {stateRefreshInterval: maybeNumber});
const build = new BuildState();
build.apply({type: 'WantCreate', timestamp: 1, wantId: 'w', partitions: ['p'], ttlSeconds: maybeNumber, comment: maybeString});
const source: SourceSpec = {key: maybeString, partition: {type: 'regex', pattern: maybeString}};

// Inputs are the caller's own shapes: interfaces, without index signatures.
interface Listed {
  key: string;
  size: number;
  isDir?: boolean;
}
declare const listed: Listed[];
export const mine: Listed[] = partitionObjects(listed, 4, 0, source);
declare const s3Objects: S3Object[];
export const fromS3: S3Object[] = new ObjectPartitioner(4, {key: 'logs/'}).select(s3Objects, 1);

interface Item {
  id: string;
  datasetName: string;
}
declare const items: Item[];
const assigned = assignImportBuckets(items, {buckets: 2, importId: maybeString});
const first = assigned[0];
if (first) {
  const bucket: string = first.bucket; // the result has the bucket field...
  const id: string = first.id; // ...and the item's own fields
  void [bucket, id];
}
export const shards = assignImportBuckets(items, {bucketField: 'shard'}).map((item) => item.shard.toUpperCase());

// Results as they are at run time.
const applied = applyRoundRobinBucketing({round_robin_bucket_execution: false, bucket_total: 2});
// @ts-expect-error: `state` is undefined when round robin is off and no state was given
void applied.state.__bucket_execution_state;
export const appliedId: number | undefined = applied.config.bucket_id;
// @ts-expect-error: no canonical partition for an unknown ref
void build.canonicalPartition('nope').state;
const task = new SyncTask('t', {publishAs: 'records'});
const out: SyncRecordOutput = task.tick(0);
export const fenced: string | undefined = out.fenced;
const due = task.pollTimeout();
// @ts-expect-error: `pollTimeout()` is undefined when nothing is due
setTimeout(() => task.tick(Date.now()), due - Date.now());

// Each class's `code` is the union of its codes.
export function describe(error: unknown): string {
  if (error instanceof BucketingError) {
    const code: BucketingErrorCode = error.code;
    // @ts-expect-error: a SyncError code, never a BucketingError's
    if (error.code === 'SYNC_UNKNOWN_PARTITION') return 'never';
    return code;
  }
  if (error instanceof PartkitError) {
    const code: PartkitErrorCode = error.code;
    return code === 'MISSING_PEER_DEPENDENCY' ? 'install the peer' : code;
  }
  return 'not partkit';
}
