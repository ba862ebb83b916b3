// The sync-topic reader of KafkaTaskSync as a pure state machine: records (offset + value) in,
// actions out (deliver a message to the SyncTask, seek and fetch again, fence, warn, ready). No
// I/O and no timers: a refetch delay is an output, the driver waits it out.
//
// Where a task that applied no epoch starts reading, and the checkpoint it applies first, are the
// core's (`syncLogStart`, exported here as `findEpochStart`, and `checkpointMessage` of the
// package root: src/sync/start.rs).
import {PartkitError, SyncError} from '../errors.mjs';
import {argumentKit, describe, isPlainObject} from '../kit/args.mjs';
import {checkpointMessage, syncLogStart} from '../sync.mjs';

// How often a fetch that skipped sync-topic offsets is repeated before the gap fences the task,
// and the delay before the first repeat (ms; the n-th waits n times as long).
export const REFETCHES = 3;
export const REFETCH_DELAY = 50;

const kit = argumentKit(SyncError, {base: PartkitError});
const argError = kit.fail;
const kind = describe;

/** Reads `fn()`; anything it throws (a getter, a revoked Proxy) becomes an INVALID_ARGUMENT SyncError. */
export function readArg(what, fn) {
  return kit.reading(fn, what);
}

/** `value` (a string, number or bigint naming a Kafka offset) as a non-negative BigInt: the kit's offset rule. */
export function toOffset(what, value) {
  return BigInt(kit.requireOffset(value, what));
}

/** Whether `value` is a non-array object (a revoked Proxy is an INVALID_ARGUMENT SyncError). */
export function isObjectArg(what, value) {
  return readArg(what, () => isPlainObject(value));
}

/** The value of a record as a parsed SyncMessage-shaped object, or null when it is not one. */
export function parseRecordValue(value) {
  if (value === null || value === undefined) return null;
  try {
    const text = typeof value === 'string' ? value : new TextDecoder().decode(value);
    const m = JSON.parse(text);
    if (m && typeof m === 'object' && !Array.isArray(m) && typeof m.type === 'string') return m;
  } catch {}
  return null;
}

/**
 * The sync-topic reader's state machine. The driver creates it with the topic's offsets at start
 * (`low`: the earliest retained, `high`: the end), carries out the actions of `begin()`, then
 * passes every record its consumer delivers to `record(offset, value)` and carries out the
 * actions returned, in order:
 *
 * - `{type: 'deliver', offset, message}`: feed `message` to the SyncTask (`offset` is a BigInt):
 *   the record's value as read (the SyncTask parses it, and refuses what is not a message), or,
 *   for a checkpoint the replay starts from, the message joined from its chunks;
 * - `{type: 'warning', message}`: report it;
 * - `{type: 'seek', offset, delay}`: wait `delay` ms, then seek the consumer to `offset` (a
 *   BigInt), before it delivers any other record: the next record passed in must come from that
 *   fetch (kafkajs' `eachMessage` runs one record at a time, so the driver awaits the delay in it);
 * - `{type: 'fence', reason}`: the log has a hole here: fence the SyncTask;
 * - `{type: 'ready'}`: the replay reached the end offset seen at start.
 *
 * Phases: `scan` (reading a window of the log's tail to find where the replay starts, see
 * `syncLogStart`; the window grows fourfold towards the earliest retained offset while the
 * start is not in it), then `live`. In both, every offset must come, in order: a record after a
 * gap makes the reader fetch again from the missing offset (REFETCHES times, REFETCH_DELAY ms
 * apart, a little longer each time) before the gap counts. A gap that stays is a hole (`fence`)
 * when live; during the scan, a gap that stays at the window's start means that retention moved
 * the earliest retained offset past it, so the window starts at the first record there is. A
 * record at or before the last one read (a redelivery after a seek or a consumer rebalance) is
 * dropped. After a fence, every record is dropped.
 */
export class SyncLogReader {
  /**
   * @param {{topic: string, low: string|number|bigint, high: string|number|bigint, scanWindow: number,
   *   refetches?: number, refetchDelay?: number}} options
   */
  constructor(options) {
    const what = 'options';
    if (!isObjectArg(what, options)) throw argError(`options must be an object {topic, low, high, scanWindow, refetches?, refetchDelay?}, got ${kind(options)}`);
    const copy = readArg(what, () => ({...options}));
    kit.knownKeys(copy, ['topic', 'low', 'high', 'scanWindow', 'refetches', 'refetchDelay'], 'options');
    const {topic, low, high, scanWindow, refetches = REFETCHES, refetchDelay = REFETCH_DELAY} = copy;
    this.topic = kit.requireString(topic, 'options.topic', {nonEmpty: true});
    this.low = toOffset('options.low', low);
    this.high = toOffset('options.high', high);
    if (this.high < this.low) throw argError(`options.high (${this.high}) must not be below options.low (${this.low})`);
    kit.requireInteger(scanWindow, 'options.scanWindow', {min: 1});
    kit.requireInteger(refetches, 'options.refetches', {min: 0});
    kit.requireInteger(refetchDelay, 'options.refetchDelay (ms)', {min: 0});
    this.refetches = refetches;
    this.refetchDelay = refetchDelay;
    this.window = BigInt(scanWindow);
    /** 'scan' | 'live' | 'fenced' */
    this.phase = this.high > this.low ? 'scan' : 'live';
    this.from = this.windowStart();
    this.buffer = [];
    /** The last offset read (delivered, or passed over before the replay's start); -1 before any. */
    this.lastOffset = this.high - 1n;
    this.missing = undefined; // the offset being fetched again
    this.tries = 0; // how many times it was
  }

  windowStart() {
    return this.high - this.window > this.low ? this.high - this.window : this.low;
  }

  /** The first actions: seek to the window's start (scan), or to the end and `ready` (empty log). */
  begin() {
    if (this.phase === 'scan') return [{type: 'seek', offset: this.from, delay: 0}];
    return [{type: 'seek', offset: this.high, delay: 0}, {type: 'ready'}];
  }

  /** The offset the next record must have. */
  expected() {
    if (this.phase === 'scan') return this.buffer.length ? this.buffer[this.buffer.length - 1].offset + 1n : this.from;
    return this.lastOffset + 1n;
  }

  /**
   * A record arrived at `offset` while `expected` is missing: fetch again (an action) while tries
   * are left, else undefined. A later record (the gap closed) resets the count.
   */
  refetch(expected) {
    if (this.missing !== expected) {
      this.missing = expected;
      this.tries = 0;
    }
    if (this.tries >= this.refetches) return undefined;
    this.tries++;
    return {type: 'seek', offset: expected, delay: this.refetchDelay * this.tries};
  }

  /** The expected offset came: warn if it had to be fetched again. */
  arrived(offset, actions) {
    if (this.missing === undefined) return;
    if (this.missing === offset && this.tries > 0) {
      actions.push({type: 'warning', message: `offset ${offset} of ${this.topic} was missing from a fetch and came on a later one`});
    }
    this.missing = undefined;
    this.tries = 0;
  }

  /** `message`: a record's value as read (or null: none), or a parsed message. */
  deliver(offset, message, actions) {
    this.lastOffset = offset;
    if (message === null || message === undefined) actions.push({type: 'warning', message: `skipped an unreadable record at offset ${offset} of ${this.topic}`});
    else actions.push({type: 'deliver', offset, message});
  }

  /**
   * One record from the consumer: `value` is its bytes (Buffer, string) or null. Returns the
   * actions to carry out, in order.
   * @param {string|number|bigint} offset
   */
  record(offset, value) {
    const o = toOffset('offset', offset);
    const actions = [];
    if (this.phase === 'fenced') return actions;
    if (this.phase === 'scan') this.scanRecord(o, value, actions);
    else this.liveRecord(o, value, actions);
    return actions;
  }

  liveRecord(offset, value, actions) {
    const expected = this.lastOffset + 1n;
    if (offset < expected) return; // redelivered after a seek or a reader rebalance
    if (offset > expected) {
      const again = this.refetch(expected);
      if (again) {
        actions.push(again);
        return;
      }
      // records were deleted (retention) or skipped before this task read them, and fetching
      // them again did not bring them: the task cannot know what it missed, e.g. a NewEpoch
      // that moved its partitions
      this.phase = 'fenced';
      this.lastOffset = offset;
      actions.push({type: 'fence', reason: `offsets ${expected}..${offset - 1n} of ${this.topic} were never read (fetched ${this.refetches + 1} times)`});
      return;
    }
    this.arrived(offset, actions);
    // the value as read: the SyncTask parses it (once, in wasm) and refuses what is not a message
    this.deliver(offset, value, actions);
  }

  scanRecord(offset, value, actions) {
    const expected = this.expected();
    if (offset < expected) return;
    if (offset > expected) {
      const again = this.refetch(expected);
      if (again) {
        actions.push(again);
        return;
      }
      if (this.buffer.length) {
        // a hole inside the window: retention cannot make one (it deletes from the start), so
        // the replay could not know what it missed
        this.phase = 'fenced';
        actions.push({type: 'fence', reason: `offsets ${expected}..${offset - 1n} of ${this.topic} were never read while replaying it (fetched ${this.refetches + 1} times)`});
        return;
      }
      // the window's start is gone: retention moved the earliest retained offset to (at least)
      // here; the window starts at the first record there is
      actions.push({type: 'warning', message: `offsets ${expected}..${offset - 1n} of ${this.topic} were deleted (retention) while this task started; replaying from ${offset}`});
      this.low = offset;
      this.from = offset;
      this.missing = undefined;
      this.tries = 0;
    } else {
      this.arrived(offset, actions);
    }
    this.buffer.push({offset, value, message: parseRecordValue(value)});
    if (offset < this.high - 1n) return;
    const found = syncLogStart(this.buffer, {atLow: this.from === this.low, low: this.low});
    if (found.extend) {
      this.window *= 4n;
      this.from = this.windowStart();
      this.buffer = [];
      actions.push({type: 'seek', offset: this.from, delay: 0});
      return;
    }
    const start = BigInt(found.offset);
    this.phase = 'live';
    if (found.checkpoint !== undefined) {
      // a checkpoint after its start: its author's view as of the record it names (the one
      // before the start, or one after the first chunk of a message it falls in the middle of),
      // applied first (without its counter, which belongs to its place in the log) and then
      // read again where it is
      const at = BigInt(found.checkpoint);
      const offsets = (found.chunks ?? [found.checkpoint]).map(BigInt);
      const parts = offsets.map((o) => this.buffer.find((r) => r.offset === o).message);
      let first;
      try {
        first = checkpointMessage(parts);
      } catch (error) {
        // chunks the core cannot read as one message: the checkpoint is refused, as a SyncTask
        // refuses a malformed record (every task skips it alike)
        if (!(error instanceof SyncError)) throw error;
        actions.push({type: 'warning', message: `skipped the checkpoint at offset ${at} of ${this.topic}: ${error.message}`});
      }
      if (first) actions.push({type: 'deliver', offset: at, message: first});
    }
    for (const r of this.buffer) {
      if (r.offset >= start) this.deliver(r.offset, r.message === null ? null : r.value, actions);
      else this.lastOffset = r.offset;
    }
    this.buffer = [];
    actions.push({type: 'ready'});
  }
}
