// Error classes of the package, and the one place wasm errors become them.
import {boundMessage, pathOf, quote, tooLargeError} from './kit/args.mjs';

/**
 * Base class of every error partkit throws on purpose: a stable `message`, a `code`, and a
 * `path`: where the refused value is (docs/errors.md, "Where: path").
 */
export class PartkitError extends Error {
  constructor(message, code, path) {
    super(boundMessage(message));
    this.name = new.target.name;
    this.code = code;
    this.path = path === undefined ? pathOf(message, code) : path;
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

const RuntimeError = globalThis.WebAssembly?.RuntimeError;

/**
 * A core's message with every run of over 100 characters without a space or punctuation (only
 * a caller's value makes one: a range, a token, an id) cut by `quote`. The sync and lifecycle
 * cores cut their quotes themselves (src/quote.rs); bucketing's messages are faros' and its core
 * quotes whole (cutting there costs its wasm kilobytes), so this is where they are cut.
 */
const cutLongRuns = (message) => (typeof message === 'string' && message.length > 100 ? message.replace(/[^\s.,:;'"()…]{101,}/g, quote) : message);

/**
 * Rethrows an error from wasm as its domain's class; anything else unchanged. A trap (the only
 * one an export can hit is a failed allocation: partkit never panics) becomes `OUT_OF_MEMORY`
 * in the class `Class`.
 */
export function rethrow(error, Class = PartkitError) {
  if (error instanceof Error && !(error instanceof PartkitError)) {
    const Domain = BY_DOMAIN[error.domain];
    if (Domain && typeof error.code === 'string') throw new Domain(cutLongRuns(error.message), error.code, Array.isArray(error.path) ? error.path : undefined);
    if (RuntimeError && error instanceof RuntimeError) throw outOfMemory(Class, error);
  }
  throw error;
}

/**
 * The `OUT_OF_MEMORY` error of a call that trapped (`trap`, whose message ends it), or of a
 * reservation of wasm memory that failed (no `trap`).
 */
export function outOfMemory(Class, trap) {
  const message = 'partkit: out of WebAssembly memory (wasm32 has at most 4 GiB); free objects or pass a smaller batch';
  return new Class(trap === undefined ? message : `${message} (${trap?.message})`, 'OUT_OF_MEMORY');
}

/** Whether `error` is a wasm trap (see `rethrow`). */
export function isTrap(error) {
  return Boolean(RuntimeError) && error instanceof RuntimeError;
}

/** Calls `fn`, rethrowing wasm errors as partkit errors (`Class` for a trap). */
export function call(fn, Class) {
  try {
    return fn();
  } catch (error) {
    rethrow(error, Class);
  }
}

/** `INPUT_TOO_LARGE` of `Class`: `what` is over `bound` (its unit in `unit`). */
export {tooLargeError as tooLarge};

export {describe} from './kit/args.mjs';

/**
 * Frees a wasm object a class has let go of (`free()` of the JS classes, or one made for a call
 * that failed). A call that trapped may have left it borrowed: it is then left to the garbage
 * collector.
 */
export function freeWasm(inner) {
  try {
    inner?.free();
  } catch {
    // still borrowed by a call that trapped
  }
}

/** The wasm object a `WasmObject` holds; OBJECT_FREED from JS, without entering wasm, once freed. */
export let live;

/**
 * The base of every JS class that holds a wasm object users `free()` (docs/ARCHITECTURE.md, "The
 * boundary rule"): `live(this)` is the wasm object, or, once freed, `OBJECT_FREED` of the
 * domain's class naming `this <name>`; `free()` (and `using`) lets it go, and a second `free()`
 * does nothing.
 */
export class WasmObject {
  #inner;
  #Class;
  #name;

  /** `inner`: the wasm object; `Class`: the domain's error class; `name`: the class as users know it. */
  constructor(inner, Class, name) {
    this.#inner = inner;
    this.#Class = Class;
    this.#name = name;
  }

  static {
    live = (object) => {
      if (object.#inner === null) {
        throw new object.#Class(`this ${object.#name} was freed: free() ends an object's use, create a new one`, 'OBJECT_FREED');
      }
      return object.#inner;
    };
  }

  /**
   * Frees the wasm memory now instead of at garbage collection. Every later call throws
   * `OBJECT_FREED` (from JS, without entering wasm); a second `free()` does nothing.
   */
  free() {
    const inner = this.#inner;
    this.#inner = null;
    freeWasm(inner);
  }

  /** `free()`, under the name `using` calls (explicit resource management): `using x = …` frees `x` at the end of its scope. */
  [Symbol.dispose]() {
    this.free();
  }
}

/**
 * `fn()`, a call on the wasm object of `object` (a `WasmObject`). A trap (out of memory) would
 * leave that borrowed for ever in wasm-bindgen's bookkeeping: `object` is freed, the call
 * throws as it did and every later one `OBJECT_FREED`.
 */
export function freedOnTrap(object, fn) {
  try {
    return fn();
  } catch (error) {
    if (isTrap(error)) object.free();
    throw error;
  }
}
