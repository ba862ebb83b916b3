// The faros-airbyte-common RoundRobinConfig contract, shape for shape.

// partkit/bucketing exports its error classes too (the same classes as the root's).
export {PartkitError, BucketingError} from './errors';

export interface BucketExecutionState {
  __bucket_execution_state?: {
    last_executed_bucket_id: number;
  } | undefined;
  [key: string]: any;
}

export interface RoundRobinConfig {
  round_robin_bucket_execution?: boolean | undefined;
  bucket_id?: number | undefined;
  bucket_ranges?: string | ReadonlyArray<string> | undefined;
  bucket_total?: number | undefined;
  [key: string]: any;
}

export interface BucketingCreateOptions {
  partitionKey: string;
  config: RoundRobinConfig;
  state?: BucketExecutionState | undefined;
  logger?: ((message: string) => void) | undefined;
}

export interface BucketingFilterOptions {
  logger: (message: string) => void;
  entityName?: string | undefined;
}

/**
 * The 1-based bucket of `data` under the namespace `key`: HMAC-MD5(key, data), first 8 hex
 * digits as an unsigned 32-bit integer, `% bucketTotal + 1`.
 * @throws BucketingError `bucket_total must be a positive integer` (code `BUCKET_TOTAL_INVALID`).
 */
export declare function bucket(key: string, data: string, bucketTotal?: number): number;

/**
 * A key of a config that nearly matches one of the four bucketing keys (case, `_` or camelCase,
 * an edit or two; one for `bucket_id`): ignored, as faros ignores every key it does not read, so a warning only.
 */
export interface BucketingConfigWarning {
  code: 'BUCKET_CONFIG_NEAR_MISS';
  /** `[key]`: where, as `PartkitError.path` says it. */
  path: [string];
  /** The key as written, e.g. `bucket_totl`. */
  key: string;
  /** The bucketing key it nearly matches, e.g. `bucket_total`. */
  suggestion: 'round_robin_bucket_execution' | 'bucket_id' | 'bucket_total' | 'bucket_ranges';
  /** `config.bucket_totl is not a bucketing key and is ignored: did you mean bucket_total?` */
  message: string;
}

/** The near-miss keys of `config` (none for a config that uses the four keys as spelled). @throws BucketingError when `config` is not an object */
export declare function bucketingConfigWarnings(config: RoundRobinConfig): BucketingConfigWarning[];

/**
 * Validates a config. Logs when `bucket_ranges` is ignored, and, first, a `Warning: …` line for
 * each near-miss key (`bucketingConfigWarnings`). @throws BucketingError
 */
export declare function validateBucketingConfig(
  config: RoundRobinConfig,
  logger?: (message: string) => void
): void;

/** The bucket to run next. @throws BucketingError */
export declare function nextBucketId(config: RoundRobinConfig, state?: BucketExecutionState): number;

/**
 * Applies round robin when enabled; never mutates its inputs. With round robin on:
 * `{config: {...config, bucket_id: next}, state: {...state, __bucket_execution_state:
 * {last_executed_bucket_id: next}}}`; otherwise `{config, state}` as given (so `state` is
 * `undefined` when none was given). @throws BucketingError
 */
export declare function applyRoundRobinBucketing<C extends RoundRobinConfig>(
  config: C,
  state?: BucketExecutionState,
  logger?: (message: string) => void
): {config: C & {bucket_id?: number | undefined}; state: BucketExecutionState | undefined};

/** Validation, round robin and filtering in one object. */
export declare class Bucketing {
  private constructor();
  static create(options: BucketingCreateOptions): Bucketing;
  /** The items whose key falls in the active bucket, in input order (a new array). */
  filter<T>(items: ReadonlyArray<T>, getKey: (item: T) => string, options?: BucketingFilterOptions): T[];
  getState(): BucketExecutionState;
  getBucketId(): number;
  getBucketTotal(): number;
}

/** The eligible buckets of `bucket_ranges`. */
export declare class BucketSet {
  constructor(bucketTotal: number, bucketRanges: string | ReadonlyArray<string>);
  /** The smallest eligible bucket greater than `bucketId`, wrapping to the smallest. */
  next(bucketId: number): number;
  /** The eligible buckets, ascending. */
  buckets(): number[];
  /** How many buckets are eligible. */
  readonly size: number;
  has(bucketId: number): boolean;
  /**
   * Frees the wasm memory now instead of at garbage collection. Every later call throws
   * BucketingError `OBJECT_FREED` (from JS, without entering wasm); a second `free()` does nothing.
   */
  free(): void;
  /** `free()`, for `using` (TypeScript >= 5.2): frees at the end of the scope. */
  [Symbol.dispose](): void;
}

/** Buckets of many entities in one call (one boundary crossing). */
export declare function bucketMany(key: string, data: ReadonlyArray<string>, bucketTotal?: number): Uint32Array;

/** A bucketer bound to one key and total, reusing its HMAC key state. */
export declare class Bucketer {
  constructor(key: string, bucketTotal?: number);
  readonly key: string;
  readonly bucketTotal: number;
  bucket(data: string): number;
  bucketMany(data: ReadonlyArray<string>): Uint32Array;
  /**
   * Frees the wasm memory now instead of at garbage collection. Every later call throws
   * BucketingError `OBJECT_FREED` (from JS, without entering wasm); a second `free()` does nothing.
   */
  free(): void;
  /** `free()`, for `using` (TypeScript >= 5.2): frees at the end of the scope. */
  [Symbol.dispose](): void;
}

/** The bucket ids of the next `runs` runs. */
export declare function roundRobinSchedule(
  config: RoundRobinConfig,
  state: BucketExecutionState | undefined,
  runs: number
): number[];

export interface JsonSchemaProperty {
  type: 'boolean' | 'integer' | 'array';
  title: string;
  description: string;
  default?: boolean | number | undefined;
  minimum?: number | undefined;
  items?: {type: 'string'} | undefined;
  examples?: string[][] | undefined;
  order?: number | undefined;
}

/** The spec's four bucketing properties for a connector's spec.json. */
export declare function bucketingSpecProperties(options?: {order?: number | undefined}): {
  round_robin_bucket_execution: JsonSchemaProperty;
  bucket_total: JsonSchemaProperty;
  bucket_id: JsonSchemaProperty;
  bucket_ranges: JsonSchemaProperty;
};

export interface BucketDistribution {
  bucketTotal: number;
  entities: number;
  /** Entities per bucket; index 0 is bucket 1. */
  counts: number[];
  min: number;
  max: number;
  mean: number;
  /** (max − min) / mean; 0 is perfectly even. */
  spread: number;
}

/** How a sample of entity ids spreads over `bucketTotal` buckets. */
export declare function bucketDistribution(key: string, data: ReadonlyArray<string>, bucketTotal: number): BucketDistribution;
