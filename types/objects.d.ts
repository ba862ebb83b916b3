// Object-store key partitioning with exact parity with Go (Bacalhau's S3 input source).

// partkit/objects exports its error classes too (the same classes as the root's).
export {PartkitError, PartitionError} from './errors';

/** Go's partition key types; `''` and `'none'` mean no partitioning. */
export type PartitionKeyType = '' | 'none' | 'object' | 'regex' | 'substring' | 'date';

/** Go's `PartitionConfig`. Absent or `null` fields are Go's zero values. */
export interface PartitionConfig {
  type?: PartitionKeyType | null | undefined;
  /** `regex`: a Go (RE2) pattern. */
  pattern?: string | null | undefined;
  /** `substring`: first code point (inclusive) of the trimmed key. */
  startIndex?: number | null | undefined;
  /** `substring`: last code point (exclusive). */
  endIndex?: number | null | undefined;
  /** `date`: a Go time layout, e.g. `2006-01-02`. */
  dateFormat?: string | null | undefined;
}

/**
 * What the partitioner reads of an object: its `key`, and `isDir`, which decides when it is a
 * boolean (absent or `null`: a key ending in `/` is a directory). Any object type with these
 * fields will do (an interface of your own, `partkit/s3`'s `S3Object`); the same objects come back.
 */
export interface ObjectKey {
  readonly key: string;
  readonly isDir?: boolean | null | null | undefined;
}

/** One listed object (the fields beyond `key` and `isDir` are not read). */
export interface ObjectSummary extends ObjectKey {
  key: string;
  isDir?: boolean | null | null | undefined;
  size?: number | null | undefined;
  etag?: string | null | undefined;
  versionId?: string | null | undefined;
}

/** Go's `SourceSpec`: `key` is the listing prefix (trimmed of spaces and one trailing `*`). */
export interface SourceSpec {
  bucket?: string | null | undefined;
  key?: string | null | undefined;
  partition?: PartitionConfig | null | undefined;
}

/** Distribution of a sample of keys over the partitions. */
export interface PartitionStats {
  /** Objects per partition (with no partitioning, every partition counts every object). */
  counts: number[];
  /** Objects that fell back to partition 0: no regex match, unparsable date, key too short. */
  fallback: number;
  /** Directories (selected by no partition). */
  directories: number;
}

/** `indexOf` of a directory key. */
export declare const DIRECTORY: -1;
/** `indexOf` of every key when nothing is partitioned (type `''`/`'none'` or one partition). */
export declare const ALL_PARTITIONS: -2;

/**
 * Go's `PartitionConfig.Validate`.
 * @throws PartitionError with Go's message, code `PARTITION_CONFIG_INVALID`
 *   (`INVALID_ARGUMENT` for a field of the wrong type).
 */
export declare function validatePartitionConfig(config: PartitionConfig): void;

/**
 * Go's `PartitionObjects`: the objects of 0-based partition `partitionIndex` of
 * `totalPartitions`, as the same references, in input order. Directories are never selected.
 * @throws PartitionError `PARTITION_CONFIG_INVALID`, `PARTITION_COUNT_INVALID`,
 *   `PARTITION_INDEX_OUT_OF_RANGE` (Go's messages), `INVALID_ARGUMENT`.
 */
export declare function partitionObjects<T extends string | ObjectKey>(
  objects: readonly T[],
  totalPartitions: number,
  partitionIndex: number,
  source: SourceSpec
): T[];

/** A partitioner for one total and source: the config (regex, layout) is compiled once. */
export declare class ObjectPartitioner {
  /** @throws PartitionError as `partitionObjects` (totals up to 2^31 - 1). */
  constructor(totalPartitions: number, source: SourceSpec);
  readonly totalPartitions: number;
  /** The trimmed listing prefix. */
  readonly prefix: string;
  /** False when every partition gets every object. */
  readonly isPartitioned: boolean;
  /** 0-based partition of one key; -1 for a directory key; -2 when nothing is partitioned. */
  indexOf(key: string): number;
  /** `indexOf` of every key, in one call. */
  indexMany(keys: readonly string[]): Int32Array;
  /**
   * The bytes path: a streaming selector of partition `partitionIndex` over a listing given as
   * newline-separated UTF-8 keys (a file, stdin, a response body), fed chunk by chunk.
   */
  lineSelector(partitionIndex: number): LineSelector;
  /** The bytes path: every key line's partition, chunk by chunk. */
  lineIndexer(): LineIndexer;
  /** `indexMany` of the key lines of a whole listing given as bytes (at most 2^32 − 1 bytes). */
  partitionLines(bytes: Uint8Array): Int32Array;
  /** `[start, end)` byte ranges into `bytes` of the key lines partition `partitionIndex` keeps. */
  selectLines(bytes: Uint8Array, partitionIndex: number): Uint32Array;
  /** The objects of one partition, in input order. */
  select<T extends string | ObjectKey>(objects: readonly T[], partitionIndex: number): T[];
  /** Every partition at once, in one pass. */
  plan<T extends string | ObjectKey>(objects: readonly T[]): T[][];
  /** Counts per partition, fallbacks to partition 0, directories. */
  stats(keys: readonly (string | ObjectKey)[]): PartitionStats;
  /**
   * Frees the wasm memory now instead of at garbage collection. Every later call throws
   * PartitionError `OBJECT_FREED` (from JS, without entering wasm); a second `free()` does nothing.
   */
  free(): void;
  /** `free()`, for `using` (TypeScript >= 5.2): frees at the end of the scope. */
  [Symbol.dispose](): void;
}

/** Go's `sanitizeKeyForPatternMatching`: `key` without `prefix`, then without ONE leading `/`. */
export declare function sanitizeKeyForPatternMatching(key: string, prefix: string): string;

/** The prefix Go trims from keys: `TrimSuffix(TrimSpace(sourceKey), "*")`. */
export declare function listingPrefix(sourceKey: string): string;

/** 32-bit FNV-1a (Go's `hash/fnv` New32a) of the UTF-8 bytes of `text`. */
export declare function fnv1a32(text: string): number;

/** `{final: true}` on the last chunk of a stream (its last line needs no newline). */
export interface LineChunkOptions {
  final?: boolean | undefined;
}

/** State shared by the streaming objects of the bytes path. */
export interface LineStream {
  /** Bytes of an unfinished line carried (inside wasm) to the next chunk. */
  readonly carried: number;
  /** Forgets any carried line: the next chunk starts a new stream. */
  reset(): void;
  /** Frees the wasm memory; later calls throw `OBJECT_FREED`. */
  free(): void;
  /** `free()`, for `using` (TypeScript >= 5.2): frees at the end of the scope. */
  [Symbol.dispose](): void;
}

/**
 * One partition's key lines of a listing given as bytes. Lines: split at `\n`, one trailing
 * `\r` dropped, empty lines skipped, a line ending in `/` is a directory, invalid UTF-8 is the
 * key its U+FFFD decoding gives. Chunks: at most 64 MiB; lines: at most 1 MiB.
 */
export interface LineSelector extends LineStream {
  /**
   * `ranges`: `[start, end)` byte pairs into `chunk` of the kept lines it completes; `head`: the
   * bytes from earlier chunks of the line of `ranges[0..2]` (then `ranges[0]` is 0), else empty.
   */
  selectLines(chunk: Uint8Array, options?: LineChunkOptions): {ranges: Uint32Array; head: Uint8Array};
  /** The kept lines `chunk` completes, each followed by `\n`, as one Uint8Array. */
  selectBytes(chunk: Uint8Array, options?: LineChunkOptions): Uint8Array;
}

/** Every key line's partition of a listing given as bytes. */
export interface LineIndexer extends LineStream {
  /** The partition of every key line `chunk` completes (DIRECTORY, ALL_PARTITIONS as in `indexOf`). */
  indexLines(chunk: Uint8Array, options?: LineChunkOptions): Int32Array;
}
