/** Base class of every error partkit throws on purpose. */
export declare class PartkitError extends Error {
  constructor(message: string, code: string);
  /**
   * A stable machine-readable code, e.g. `BUCKET_TOTAL_INVALID`. Codes every domain uses (see
   * docs/robustness.md): `INVALID_ARGUMENT` (wrong type, or an argument that cannot be read:
   * revoked proxy, throwing getter), `INPUT_TOO_LARGE` (over a documented bound, named in the
   * message), `OUT_OF_MEMORY` (wasm memory exhausted; nothing changed, the module keeps working),
   * `OBJECT_FREED` (a method of a `BuildState`, `SyncTask`, `ObjectPartitioner`, `Bucketer` or
   * `BucketSet` called after `free()`).
   */
  readonly code: string;
}
/** Bucketing and round-robin errors, with faros-airbyte-common's messages. */
export declare class BucketingError extends PartkitError {}
/** Object-key partitioning errors, with the Go implementation's messages. */
export declare class PartitionError extends PartkitError {}
/** Import bucket assignment errors. */
export declare class ImportBucketError extends PartkitError {}
/** Partition lifecycle errors. */
export declare class LifecycleError extends PartkitError {}
/** Task coordination errors. */
export declare class SyncError extends PartkitError {}
