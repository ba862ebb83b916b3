// UUID buckets for bulk imports.

// partkit/imports exports its error classes too (the same classes as the root's).
export {PartkitError, ImportBucketError} from './errors';

/** The NIL UUID, the bucket of dataset-level documents. */
export declare const NIL_UUID: '00000000-0000-0000-0000-000000000000';

export interface ImportBucketOptions<F extends string = string> {
  /** N, an integer in [1, 50]: the most buckets one dataset gets in one import. Default `importBucketsDefault()`. */
  buckets?: number | undefined;
  /** The dataset field of an item. Default `'datasetName'`. */
  datasetField?: string | undefined;
  /** The bucket field of an item. Default `'bucket'`. */
  bucketField?: F | undefined;
  /**
   * When set (non-empty), bucket `j` of dataset `d` is the v5 UUID of `(importId, d, j)` instead
   * of a random v4 UUID: retrying the same import (same items, same order, same N) gives the same
   * buckets.
   */
  importId?: string | undefined;
}

/** The options `partitionKeyOf` and `groupByPartitionKey` read. */
export type PartitionKeyOptions = Pick<ImportBucketOptions, 'datasetField' | 'bucketField'>;

/** A hierarchical partition key `[dataset, bucket]`, the bucket in canonical lower-case form. */
export type PartitionKey = [string, string];

/**
 * Fields are read as own properties (the ones `{...item}` copies), never from a prototype.
 *
 * Shallow copies (`{...item}`) of `items`, each with its bucket field set to a canonical UUID
 * string. Per dataset, items without a bucket (field absent, `undefined` or `null`) get
 * `k = max(1, min(N, count))` buckets, assigned round-robin in input order (`buckets[i % k]`);
 * items with a bucket keep it, normalised to lower case. Input items are never mutated.
 * @throws ImportBucketError before assigning anything: `BUCKETS_INVALID`, `ITEM_NOT_OBJECT`,
 * `DATASET_MISSING`, `BUCKET_NOT_UUID`, `IMPORT_ID_INVALID`, `INVALID_ARGUMENT`.
 */
export declare function assignImportBuckets<T extends object, F extends string = 'bucket'>(
  items: readonly T[],
  options?: ImportBucketOptions<F>,
): Array<T & {[K in F]: string}>;

/**
 * `GTC_IMPORT_BUCKETS_DEFAULT` from `env` (default `process.env`), else 5. Blank means unset.
 * @throws ImportBucketError `BUCKETS_INVALID` when it is not an integer in [1, 50].
 */
export declare function importBucketsDefault(env?: Record<string, string | undefined>): number;

/**
 * `[dataset, bucket]` of an item, the bucket normalised.
 * @throws ImportBucketError `ITEM_NOT_OBJECT`, `DATASET_MISSING`, `BUCKET_MISSING`, `BUCKET_NOT_UUID`.
 */
export declare function partitionKeyOf(item: object, options?: PartitionKeyOptions): PartitionKey;

/**
 * Items grouped by partition key for bulk writes: groups in order of first appearance, items (the
 * originals, not copies) in input order within each group.
 * @throws ImportBucketError as `partitionKeyOf`, for the first offending item.
 */
export declare function groupByPartitionKey<T>(
  items: readonly T[],
  options?: PartitionKeyOptions,
): Array<{partitionKey: PartitionKey; items: T[]}>;

/** Whether `value` is a string in the 8-4-4-4-12 hyphenated UUID form, any case (NIL included). */
export declare function isUuid(value: unknown): boolean;

/**
 * The canonical lower-case form of a UUID string.
 * @throws ImportBucketError `UUID_INVALID` when `isUuid(value)` is false.
 */
export declare function normalizeUuid(value: string): string;
