// The per-domain subpaths from an ES module: each resolves to its declarations under node16,
// nodenext and bundler, exports its error class and PartkitError (the root's), and every class
// with free() is disposable (`[Symbol.dispose]`, typed even where `lib` predates it).
import {Bucketing, BucketingError, PartkitError, bucketingConfigWarnings, type BucketingConfigWarning} from 'partkit/bucketing';
import {ObjectPartitioner, PartitionError} from 'partkit/objects';
import {assignImportBuckets, ImportBucketError} from 'partkit/imports';
import {BuildState, LifecycleError} from 'partkit/lifecycle';
import {SyncTask, SyncError} from 'partkit/sync';
import type {PartkitErrorPath} from 'partkit';

export const id: number = Bucketing.create({partitionKey: 'k', config: {bucket_total: 2}}).getBucketId();
export const warnings: BucketingConfigWarning[] = bucketingConfigWarnings({bucket_totl: 2});
export const suggestion: 'round_robin_bucket_execution' | 'bucket_id' | 'bucket_total' | 'bucket_ranges' | undefined = warnings[0]?.suggestion;
export const items = assignImportBuckets([{datasetName: 'faq'}], {buckets: 2});
export function where(e: unknown): PartkitErrorPath | undefined {
  if (e instanceof BucketingError || e instanceof PartitionError || e instanceof ImportBucketError || e instanceof LifecycleError || e instanceof SyncError) return e.path;
  return e instanceof PartkitError ? e.path : undefined;
}
export function disposeAll(): void {
  new ObjectPartitioner(4, {partition: {type: 'regex', pattern: '(\\d+)'}})[Symbol.dispose]();
  new BuildState()[Symbol.dispose]();
  new SyncTask('t1')[Symbol.dispose]();
}
