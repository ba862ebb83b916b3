// The package root: every public export that runs anywhere (Node and browsers). Each domain adds
// one line. Node-only parts live on subpaths (partkit/kafka: js/kafka/index.mjs), built by
// scripts/build.mjs.
export {PartkitError, BucketingError, PartitionError, ImportBucketError, LifecycleError, SyncError} from './errors.mjs';
export * from './bucketing.mjs';
export * from './objects.mjs';
export * from './imports.mjs';
export * from './lifecycle.mjs';
export * from './sync.mjs';
