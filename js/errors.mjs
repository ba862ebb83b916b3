// Error classes of the package, and the one place wasm errors become them.

/** Base class of every error partkit throws on purpose: a stable `message` and a `code`. */
export class PartkitError extends Error {
  constructor(message, code) {
    super(message);
    this.name = new.target.name;
    this.code = code;
  }
}
/** Bucketing and round-robin errors (faros-airbyte-common messages). */
export class BucketingError extends PartkitError {}
/** Object-key partitioning errors (the Go implementation's messages). */
export class PartitionError extends PartkitError {}
/** Import bucket assignment errors. */
export class ImportBucketError extends PartkitError {}
/** Partition lifecycle errors. */
export class LifecycleError extends PartkitError {}
/** Task coordination errors. */
export class SyncError extends PartkitError {}

const BY_DOMAIN = {
  bucketing: BucketingError,
  partition: PartitionError,
  import: ImportBucketError,
  lifecycle: LifecycleError,
  sync: SyncError,
};

/** Rethrows an error from wasm as its domain's class; anything else unchanged. */
export function rethrow(error) {
  if (error instanceof Error && !(error instanceof PartkitError)) {
    const Class = BY_DOMAIN[error.domain];
    if (Class && typeof error.code === 'string') throw new Class(error.message, error.code);
  }
  throw error;
}

/** Calls `fn`, rethrowing wasm errors as partkit errors. */
export function call(fn) {
  try {
    return fn();
  } catch (error) {
    rethrow(error);
  }
}

/** A short, safe description of a value's type for messages. */
export function describe(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  const type = typeof value;
  if (type === 'number') return Number.isNaN(value) ? 'NaN' : `the number ${value}`;
  if (type === 'object') return 'an object';
  return `a ${type}`;
}
