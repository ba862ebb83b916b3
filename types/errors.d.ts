// Error classes and their codes. Each class's `code` is the union of the codes it is thrown with;
// tests/error-codes.test.js checks every union against the codes the Rust core (`code()` of
// src/<domain>/error.rs) and the JS layer (js/) throw, so a new code cannot go untyped.

/**
 * Codes every domain uses (docs/errors.md): `INVALID_ARGUMENT` (wrong type, or an argument that
 * cannot be read: revoked proxy, throwing getter), `INPUT_TOO_LARGE` (over a documented bound,
 * named in the message), `OUT_OF_MEMORY` (wasm memory exhausted; nothing changed, the module keeps
 * working), `OBJECT_FREED` (a method of a `BuildState`, `SyncTask`, `ObjectPartitioner`,
 * `Bucketer` or `BucketSet` called after `free()`).
 */
export type CommonErrorCode = 'INVALID_ARGUMENT' | 'INPUT_TOO_LARGE' | 'OUT_OF_MEMORY' | 'OBJECT_FREED';

/** `BucketingError` codes (docs/bucketing.md#errors). */
export type BucketingErrorCode =
  | CommonErrorCode
  | 'BUCKET_TOTAL_INVALID'
  | 'BUCKET_ID_OUT_OF_RANGE'
  | 'BUCKET_RANGES_EMPTY'
  | 'BUCKET_RANGES_TYPE'
  | 'BUCKET_RANGE_FORMAT'
  | 'BUCKET_RANGE_NUMBER'
  | 'BUCKET_RANGE_ORDER'
  | 'BUCKET_RANGE_BOUNDS'
  | 'BUCKET_CONFIG_INVALID'
  | 'BUCKET_STATE_INVALID';

/** `PartitionError` codes (docs/objects.md#errors; `S3_*` and `ABORTED` from `partkit/s3`, docs/s3.md). */
export type PartitionErrorCode =
  | CommonErrorCode
  | 'PARTITION_CONFIG_INVALID'
  | 'PARTITION_COUNT_INVALID'
  | 'PARTITION_INDEX_OUT_OF_RANGE'
  | 'PARTITION_COUNT_UNSUPPORTED'
  | 'S3_NO_SUCH_BUCKET'
  | 'S3_NOT_FOUND'
  | 'S3_ACCESS_DENIED'
  | 'S3_THROTTLED'
  | 'S3_ERROR'
  | 'ABORTED';

/** `ImportBucketError` codes (docs/imports.md#errors). */
export type ImportBucketErrorCode =
  | CommonErrorCode
  | 'BUCKETS_INVALID'
  | 'BUCKET_NOT_UUID'
  | 'BUCKET_MISSING'
  | 'DATASET_MISSING'
  | 'ITEM_NOT_OBJECT'
  | 'IMPORT_ID_INVALID'
  | 'UUID_INVALID'
  | 'RANDOM_UNAVAILABLE';

/** `LifecycleError` codes (docs/lifecycle.md#errors). */
export type LifecycleErrorCode =
  | CommonErrorCode
  | 'INVALID_EVENT'
  | 'UNKNOWN_WANT'
  | 'DUPLICATE_WANT'
  | 'WANT_WRONG_STATE'
  | 'UNKNOWN_JOB_RUN'
  | 'DUPLICATE_JOB_RUN'
  | 'JOB_RUN_WRONG_STATE'
  | 'DUPLICATE_REF_IN_JOB'
  | 'PARTITION_LEASED'
  | 'DUPLICATE_TAINT'
  | 'DEPENDENCY_CYCLE'
  | 'TIMESTAMP_NOT_MONOTONIC'
  | 'INVALID_SNAPSHOT'
  | 'INVARIANT_VIOLATION';

/** `SyncError` codes: the SyncTask's `SYNC_*` (docs/sync.md), `KafkaTaskSync`'s `KAFKA_*` (docs/kafka.md). */
export type SyncErrorCode =
  | CommonErrorCode
  | 'SYNC_INVALID_TASK_ID'
  | 'SYNC_INVALID_OPTIONS'
  | 'SYNC_INVALID_REBALANCE'
  | 'SYNC_INVALID_PARTITION'
  | 'SYNC_UNKNOWN_PARTITION'
  | 'SYNC_INVALID_TRANSITION'
  | 'SYNC_MALFORMED_MESSAGE'
  | 'KAFKA_BAD_STATE'
  | 'KAFKA_CONNECTOR_MISMATCH'
  | 'KAFKA_DUPLICATE_TASK_ID'
  | 'KAFKA_HEARTBEAT_CRASHED'
  | 'KAFKA_LISTENER_FAILED'
  | 'KAFKA_MEMBER_REFUSED'
  | 'KAFKA_PUBLISH_FAILED'
  | 'KAFKA_READER_CRASHED'
  | 'KAFKA_RETENTION_TOO_SHORT'
  | 'KAFKA_SESSION_LOST'
  | 'KAFKA_START_FAILED'
  | 'KAFKA_START_TIMEOUT'
  | 'KAFKA_SYNC_TASK_FAILED'
  | 'KAFKA_SYNC_TOPIC_COMPACTED'
  | 'KAFKA_SYNC_TOPIC_PARTITIONS'
  | 'KAFKA_TASK_FENCED'
  | 'KAFKA_TOPIC_CHECK_FAILED'
  | 'KAFKA_TOPIC_LOST'
  | 'KAFKA_TOPIC_MISSING';

/**
 * Codes of the `PartkitError` itself (not a subclass): `MISSING_PEER_DEPENDENCY` when
 * `partkit/kafka` or `partkit/s3` is loaded without its optional peer dependency (kafkajs,
 * `@aws-sdk/client-s3`), the message naming the package and the command that installs it;
 * `WASM_UNSAFE_EVAL_REQUIRED` when a page's Content-Security-Policy keeps the browser from
 * compiling WebAssembly (its `script-src` needs `'wasm-unsafe-eval'`).
 */
export type PackageErrorCode = 'MISSING_PEER_DEPENDENCY' | 'WASM_UNSAFE_EVAL_REQUIRED';

/** Every code partkit throws. */
export type PartkitErrorCode =
  | BucketingErrorCode
  | PartitionErrorCode
  | ImportBucketErrorCode
  | LifecycleErrorCode
  | SyncErrorCode
  | PackageErrorCode;

/** Base class of every error partkit throws on purpose. */
export declare class PartkitError extends Error {
  constructor(message: string, code: PartkitErrorCode, path?: PartkitErrorPath);
  /** A stable machine-readable code, e.g. `BUCKET_TOTAL_INVALID`: narrowed by each subclass. */
  readonly code: PartkitErrorCode;
  /**
   * Where the refused value is, for a UI to point at: the argument or config field, then keys
   * and indexes into it, e.g. `['partitions', 0, 'parents']`, `['bucket_id']`,
   * `['options', 'rebalanceTimeout']`, `['events', 3, 'timestamp']`; `[]` when the refusal is
   * about the call as a whole (`OUT_OF_MEMORY`, `OBJECT_FREED`, a state conflict of a task).
   */
  readonly path: PartkitErrorPath;
}

/** `PartkitError.path`: keys of objects (strings) and indexes of arrays (numbers). */
export type PartkitErrorPath = ReadonlyArray<string | number>;
/** Bucketing and round-robin errors, with faros-airbyte-common's messages. */
export declare class BucketingError extends PartkitError {
  readonly code: BucketingErrorCode;
}
/** Object-key partitioning errors, with the Go implementation's messages. */
export declare class PartitionError extends PartkitError {
  readonly code: PartitionErrorCode;
}
/** Import bucket assignment errors. */
export declare class ImportBucketError extends PartkitError {
  readonly code: ImportBucketErrorCode;
}
/** Partition lifecycle errors. */
export declare class LifecycleError extends PartkitError {
  readonly code: LifecycleErrorCode;
}
/** Task coordination errors. */
export declare class SyncError extends PartkitError {
  readonly code: SyncErrorCode;
}

declare global {
  /**
   * `Symbol.dispose` (explicit resource management), declared here for compilers whose `lib`
   * predates it (as @types/node does): every partkit class with `free()` has `[Symbol.dispose]()`.
   */
  interface SymbolConstructor {
    readonly dispose: unique symbol;
  }
}
