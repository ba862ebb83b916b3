// Partition lifecycle: an event-sourced build state with partition UUIDs. Type checks of JS
// arguments happen here; every rule lives in the Rust core (src/lifecycle).
import * as wasm from '#wasm/lifecycle';
import {LifecycleError, PartkitError, WasmObject, describe, freeWasm, freedOnTrap, live, rethrow, tooLarge} from './errors.mjs';
// partkit/lifecycle exports its error classes too (the same classes as the root's).
export {PartkitError, LifecycleError} from './errors.mjs';
import {MAX_BATCH_ITEMS, MAX_JSON, MAX_SNAPSHOT_JSON, MAX_STRING} from './limits.mjs';
import {packedFor} from './packed.mjs';
import {argumentKit, isPlainObject as isObject} from './kit/args.mjs';
import {inJsWords} from './kit/serde.mjs';

const {reserveUnits} = packedFor({PackedStrings: wasm.PackedStrings, reserveMemory: wasm.reserveMemory, wasmMemory: wasm.wasmMemory});

const kit = argumentKit(LifecycleError, {base: PartkitError, maxString: MAX_STRING});
const {fail: argError, requireString, requireMillis} = kit;
const INTERNAL = Symbol('partkit.lifecycle.internal');
const REPLAY_CHUNK = 10_000;

/** JSON `text` of `what`, bounded by `bound` code units. */
function boundedJson(text, what, bound) {
  if (text.length > bound) throw tooLarge(LifecycleError, what, text.length, bound, 'UTF-16 code units of JSON');
  return text;
}

/** A view the wasm side wrote as JSON text, or `undefined` (none). */
const parsed = (text) => (text === undefined ? undefined : JSON.parse(text));

/** Calls wasm, rethrowing its errors as LifecycleError and keeping `eventIndex` (replay). */
function run(fn) {
  try {
    return fn();
  } catch (error) {
    const index = error?.eventIndex;
    try {
      rethrow(error, LifecycleError);
    } catch (mapped) {
      if (typeof index === 'number' && mapped instanceof LifecycleError) {
        mapped.eventIndex = index;
        // a replay's event is `events[index]`, not `event`
        if (mapped.path?.[0] === 'event') mapped.path = ['events', index, ...mapped.path.slice(1)];
      }
      throw mapped;
    }
  }
}

/** JSON text of `value`, or the reason JSON cannot carry it (BigInt, cycles, too deep). */
function jsonOf(value) {
  try {
    return {text: JSON.stringify(value)};
  } catch (error) {
    return {reason: kit.reading(() => String(error?.message ?? error))};
  }
}

/**
 * The JSON text of one event. Events are log entries: plain JSON objects. Converting here, in
 * JS, means no user code (getters, proxies, toJSON) runs and nothing recurses while wasm holds
 * the state.
 */
function eventJson(event, index) {
  const at = index === undefined ? '' : `event ${index}: `;
  const path = index === undefined ? 'event' : `events[${index}]`;
  const fail = (message) => {
    const error = new LifecycleError(`${at}invalid event: ${message}`, 'INVALID_EVENT');
    if (index !== undefined) error.eventIndex = index;
    return error;
  };
  let object;
  try {
    object = isObject(event);
  } catch (error) {
    throw fail(`${path} cannot be read: ${error?.message}`);
  }
  if (!object) throw fail(`${path} must be an event object {type, timestamp, …}, got ${describe(event)}`);
  const {text, reason} = jsonOf(event);
  if (text === undefined) throw fail(`${path} cannot be serialized as JSON: ${reason}`);
  return boundedJson(text, path, MAX_JSON);
}

/**
 * The build state: wants (by partition ref), job runs (by partition UUID), partition instances
 * (one canonical per ref, older ones kept as history) and taints, changed only by `apply`.
 */
export class BuildState extends WasmObject {
  constructor(...args) {
    super(args[0] === INTERNAL ? args[1] : run(() => new wasm.BuildState()), LifecycleError, 'BuildState');
  }

  /**
   * Runs a call on the wasm state. `text` (if any) is the string it passes: room for it is
   * reserved first, so copying it in cannot trap. A trap (out of memory, which the wasm side
   * also reserves against up front) would leave the wasm object borrowed forever, so the state
   * is dropped: the call throws OUT_OF_MEMORY and every later one OBJECT_FREED.
   */
  #call(fn, text = '') {
    const inner = live(this);
    if (text.length > 4096) reserveUnits(LifecycleError, text.length);
    return run(() => freedOnTrap(this, () => fn(inner)));
  }

  /**
   * A state rebuilt from a log of events, applied in order. Stops at the first refused event:
   * throws its LifecycleError with `eventIndex` set.
   */
  static replay(events) {
    const log = kit.reading(() => {
      if (!Array.isArray(events)) throw argError(`events must be an array, got ${describe(events)}`);
      if (events.length > MAX_BATCH_ITEMS) throw tooLarge(LifecycleError, 'events', events.length, MAX_BATCH_ITEMS, 'items');
      const log = Array.prototype.slice.call(events);
      // Each item an event object (an array would pass serde's tagged enum as a sequence).
      for (let i = 0; i < log.length; i++) if (!isObject(log[i])) eventJson(log[i], i);
      return log;
    }, 'events');
    // The log crosses as JSON text in chunks: few boundary crossings, and wasm memory (which
    // never shrinks) grows by one chunk of text at most, not by the whole log.
    const inner = run(() => new wasm.BuildState());
    try {
      for (let start = 0; start < log.length; start += REPLAY_CHUNK) {
        const chunk = log.slice(start, start + REPLAY_CHUNK);
        const {text} = jsonOf(chunk);
        // Not JSON, or too large as one text: each event checked on its own says which.
        if (text === undefined || text.length > MAX_SNAPSHOT_JSON) chunk.forEach((event, i) => eventJson(event, start + i));
        boundedJson(text, `events[${start}..${start + chunk.length - 1}]`, MAX_SNAPSHOT_JSON);
        reserveUnits(LifecycleError, text.length);
        try {
          run(() => inner.applyLogJson(text, start));
        } catch (error) {
          const i = error?.eventIndex;
          if (typeof i !== 'number' || i < start || i >= start + chunk.length) throw error;
          let event;
          try {
            event = JSON.stringify(JSON.parse(text)[i - start]);
          } catch {
            throw error;
          }
          throw inJsWords(LifecycleError, error, event, `events[${i}]`);
        }
      }
    } catch (error) {
      freeWasm(inner);
      throw error;
    }
    return new BuildState(INTERNAL, inner);
  }

  /**
   * A state restored from `snapshot()` output (or its JSON). Every invariant is checked.
   * @throws LifecycleError `INVALID_SNAPSHOT` when it is malformed or inconsistent.
   */
  static fromSnapshot(snapshot) {
    kit.reading(() => {
      if (!isObject(snapshot)) throw argError(`snapshot must be an object, got ${describe(snapshot)}`);
    }, 'snapshot');
    // Snapshots are JSON data by definition: they cross as JSON text, checked strictly
    // (unknown fields refused) by the core.
    const {text, reason} = jsonOf(snapshot);
    if (text === undefined) throw new LifecycleError(`invalid snapshot: snapshot cannot be serialized as JSON: ${reason}`, 'INVALID_SNAPSHOT');
    boundedJson(text, 'snapshot', MAX_SNAPSHOT_JSON);
    try {
      return new BuildState(INTERNAL, run(() => wasm.BuildState.fromSnapshotJson(text)));
    } catch (error) {
      throw inJsWords(LifecycleError, error, text, 'snapshot');
    }
  }

  /**
   * Applies one event; returns the state changes it caused, in order. The whole event is
   * checked first: a refused event throws LifecycleError and leaves the state unchanged.
   */
  apply(event) {
    live(this);
    const text = eventJson(event);
    try {
      return this.#call((inner) => inner.applyJson(text), text);
    } catch (error) {
      throw inJsWords(LifecycleError, error, text, 'event');
    }
  }

  /** The canonical (current) instance of a partition ref, if any job run built it. */
  canonicalPartition(ref) {
    requireString(ref, 'ref');
    return parsed(this.#call((inner) => inner.canonicalPartition(ref)));
  }

  /** The partition instance with this UUID (any case). */
  partition(uuid) {
    requireString(uuid, 'uuid');
    return parsed(this.#call((inner) => inner.partition(uuid)));
  }

  /** Every instance of a ref, oldest first; the canonical one is last. */
  partitionHistory(ref) {
    requireString(ref, 'ref');
    return JSON.parse(this.#call((inner) => inner.partitionHistory(ref)));
  }

  /** The want with this id. */
  want(wantId) {
    requireString(wantId, 'wantId');
    return this.#call((inner) => inner.want(wantId));
  }

  /** Ids of every want naming this ref, in creation order, whatever their state. */
  wantsForPartition(ref) {
    requireString(ref, 'ref');
    return this.#call((inner) => inner.wantsForPartition(ref));
  }

  /** The job run with this id. */
  jobRun(jobRunId) {
    requireString(jobRunId, 'jobRunId');
    return parsed(this.#call((inner) => inner.jobRun(jobRunId)));
  }

  /** The taint with this id. */
  taint(taintId) {
    requireString(taintId, 'taintId');
    return this.#call((inner) => inner.taint(taintId));
  }

  /**
   * Idle wants none of whose refs is leased, failed or otherwise blocked, in creation order.
   * With `now` (integer ms), without the wants whose TTL has ended: `createdAt + ttlSeconds *
   * 1000 <= now` (no TTL never expires). Expiry changes no state.
   */
  schedulableWants(now) {
    if (now !== undefined) requireMillis(now, 'now');
    return this.#call((inner) => inner.schedulableWants(now));
  }

  /**
   * Wants still Idle, Building or UpstreamBuilding although `createdAt + slaSeconds * 1000 <=
   * now` (integer ms), in creation order. SLA is an alarm threshold: it changes no state.
   */
  wantsPastSla(now) {
    requireMillis(now, 'now');
    return this.#call((inner) => inner.wantsPastSla(now));
  }

  /** The whole state as plain JSON-safe data. */
  snapshot() {
    return JSON.parse(this.#call((inner) => inner.snapshotJson()));
  }

  /** Throws LifecycleError `INVARIANT_VIOLATION` naming the first broken invariant. */
  checkInvariants() {
    this.#call((inner) => inner.checkInvariants());
  }

  /** How many partition instances, wants, job runs and refs the state holds. */
  stats() {
    const [partitions, wants, jobRuns, refs] = this.#call((inner) => inner.counts());
    return {partitions, wants, jobRuns, refs};
  }
}

/**
 * The UUID of the partition instance a job run builds for a ref: SHA-256 of the 8-byte
 * big-endian UTF-8 length of `jobRunId`, then `jobRunId`, then `partitionRef` (UTF-8); the
 * first 16 bytes with UUIDv8 version and RFC 9562 variant bits.
 */
export function derivePartitionUuid(jobRunId, partitionRef) {
  requireString(jobRunId, 'jobRunId');
  requireString(partitionRef, 'partitionRef');
  return run(() => wasm.derivePartitionUuid(jobRunId, partitionRef));
}
