// partkit/s3 (Node only): one worker's objects of an S3 listing, as Bacalhau's S3 input source
// lists and partitions them. Requires `@aws-sdk/client-s3` v3 (a peer dependency).
import type {PartitionConfig} from './objects';

/** Bacalhau's `SourceSpec` fields this reads. */
export interface S3Source {
  bucket: string;
  /** A prefix (`logs/`, `logs/2024-*`) or one object's key; see `listPartition`. */
  key?: string | undefined;
  /** For a key naming one object: the version to HeadObject. */
  versionId?: string | undefined;
  partition?: PartitionConfig | undefined;
}

/** One listed object. */
export interface S3Object {
  key: string;
  size: number;
  etag?: string | undefined;
  lastModified?: Date | undefined;
  versionId?: string | undefined;
  /** Always false for yielded objects: directories are never selected. */
  isDir: boolean;
}

export interface ListOptions {
  /** Stops the listing: the iterator throws PartitionError `ABORTED` (cause: the reason). */
  signal?: AbortSignal | undefined;
  /** ListObjectsV2 `MaxKeys`, 1..1000 (default: the server's, 1,000 on S3). */
  pageSize?: number | undefined;
  /** Called after each page: pages and keys so far, and objects selected so far. */
  onPage?: ((progress: {pages: number; keys: number; selected: number}) => void) | undefined;
}

/** What `stats` counts over one listing. */
export interface S3ListingStats {
  /** Objects per partition. */
  counts: number[];
  /** Bytes (object sizes) per partition. */
  bytes: number[];
  /** Objects that fell back to partition 0 (no regex match, unparsable date, key too short). */
  fallback: number;
  /** Directory keys (ending in `/`), in no partition. */
  directories: number;
  /** Keys listed. */
  objects: number;
  /** Requests answered (ListObjectsV2 pages, or 1 HeadObject). */
  pages: number;
}

/** The minimal client shape used: an `S3Client` from `@aws-sdk/client-s3` v3. */
export interface S3ClientLike {
  send(command: unknown, options?: {abortSignal?: AbortSignal}): Promise<any>;
}

/**
 * Lists `s3://bucket/key` with ListObjectsV2 (or HeadObject, for a key naming one object) and
 * yields the objects of partition `partitionIndex` of `totalPartitions` as pages arrive: the
 * objects `partitionObjects` selects from the whole listing, in listing order.
 * @throws PartitionError: the validation codes of `partitionObjects` (before any request);
 *   `S3_NO_SUCH_BUCKET`, `S3_NOT_FOUND`, `S3_ACCESS_DENIED`, `S3_THROTTLED`, `S3_ERROR`
 *   (the SDK error as `cause`); `ABORTED`.
 */
export declare function listPartition(
  client: S3ClientLike,
  source: S3Source,
  totalPartitions: number,
  partitionIndex: number,
  options?: ListOptions
): AsyncGenerator<S3Object, void, undefined>;

/** One listing, counted per partition without keeping the objects. Errors as `listPartition`. */
export declare function stats(
  client: S3ClientLike,
  source: S3Source,
  totalPartitions: number,
  options?: ListOptions
): Promise<S3ListingStats>;

/** The same function as `stats`. */
export declare const plan: typeof stats;

/** `s3://bucket/key` as `{bucket, key}`. */
export declare function parseS3Url(url: string): {bucket: string; key: string};

/** The PartitionError of a failed SDK call (used by `listPartition`). */
export declare function s3Error(error: unknown, what: string, signal?: AbortSignal): Error;
