// The package root: every public export. Each domain adds one line.
export {PartkitError, BucketingError, PartitionError, ImportBucketError, LifecycleError, SyncError} from './errors.mjs';
export * from './bucketing.mjs';
export * from './objects.mjs';
export * from './imports.mjs';
export * from './lifecycle.mjs';
export * from './sync.mjs';
export {KafkaTaskSync, SyncLogReader, taskSyncAssigner, findEpochStart, kafkaTopicNames} from './kafka.mjs';
