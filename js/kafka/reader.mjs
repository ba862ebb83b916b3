// The sync-topic reader of KafkaTaskSync as a pure state machine: records (offset + value) in,
// actions out (deliver a message to the SyncTask, seek and fetch again, fence, warn, ready). No
// I/O and no timers: a refetch delay is an output, the driver waits it out.
//
// Also here: `findEpochStart`, the rule for where a task that applied no epoch starts reading.
import {PartkitError, SyncError} from '../errors.mjs';
import {argumentKit, describe, isPlainObject} from '../kit/args.mjs';

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

/** `value` (a string, number or bigint naming a Kafka offset) as a non-negative BigInt. */
export function toOffset(what, value) {
  const type = typeof value;
  if (type === 'bigint') {
    if (value >= 0n) return value;
  } else if (type === 'number') {
    if (Number.isSafeInteger(value) && value >= 0) return BigInt(value);
  } else if (type === 'string') {
    if (/^(0|[1-9][0-9]*)$/.test(value)) return BigInt(value);
  }
  throw argError(`${what} must be a non-negative integer offset (a string, number or bigint), got ${type === 'string' ? JSON.stringify(value.slice(0, 40)) : kind(value)}`);
}

/** Whether `value` is a non-array object (a revoked Proxy is an INVALID_ARGUMENT SyncError). */
export function isObjectArg(what, value) {
  return readArg(what, () => isPlainObject(value));
}

/**
 * A copy of a parsed SyncMessage with the fields `findEpochStart` looks at, each read once;
 * fields of the wrong type count as absent (the message came from the log, whatever is in it).
 */
function snapshotMessage(what, m) {
  if (m === null || m === undefined) return null;
  if (!isObjectArg(what, m)) throw argError(`${what} must be a SyncMessage object or null, got ${kind(m)}`);
  return readArg(what, () => {
    const str = (v) => (typeof v === 'string' ? v : undefined);
    const {type, syncEpoch, baseEpoch, resend, taskID, messageSeq, checkpoint, epochGeneration, chunk} = m;
    let cp;
    if (checkpoint !== null && typeof checkpoint === 'object' && !Array.isArray(checkpoint)) {
      const {afterTaskID, afterSeq} = checkpoint;
      if (typeof afterTaskID === 'string' && Number.isSafeInteger(afterSeq)) cp = {afterTaskID, afterSeq};
    }
    let ch;
    if (chunk !== null && typeof chunk === 'object' && !Array.isArray(chunk)) {
      const {index, count} = chunk;
      if (Number.isSafeInteger(index) && Number.isSafeInteger(count) && index >= 0 && index < count) ch = {index, count};
    }
    return {
      type: str(type),
      syncEpoch: str(syncEpoch),
      baseEpoch: str(baseEpoch),
      resend: resend === true,
      taskID: str(taskID),
      messageSeq: Number.isSafeInteger(messageSeq) ? messageSeq : undefined,
      epochGeneration: Number.isSafeInteger(epochGeneration) ? epochGeneration : 0,
      checkpoint: cp,
      chunk: ch,
    };
  });
}

/** Copies and checks findEpochStart's arguments, reading each value once. */
function epochStartArgs(records, where) {
  const isArray = readArg('findEpochStart(records)', () => Array.isArray(records));
  if (!isArray) throw argError(`findEpochStart: records must be an array, got ${kind(records)}`);
  const n = readArg('findEpochStart(records)', () => records.length);
  const out = [];
  for (let i = 0; i < n; i++) {
    const what = `findEpochStart: records[${i}]`;
    const r = readArg(what, () => records[i]);
    if (!isObjectArg(what, r)) throw argError(`${what} must be an object {offset, message}, got ${kind(r)}`);
    const [offset, message] = readArg(what, () => [r.offset, r.message]);
    const o = toOffset(`${what}.offset`, offset);
    if (out.length && o <= out[out.length - 1].offset) throw argError(`${what}.offset must be greater than the one before it (records in offset order)`);
    out.push({offset: o, message: snapshotMessage(`${what}.message`, message)});
  }
  if (!isObjectArg('findEpochStart(where)', where)) throw argError(`findEpochStart: where must be an object {atLow, low}, got ${kind(where)}`);
  const [atLow, low] = readArg('findEpochStart(where)', () => [where.atLow, where.low]);
  if (typeof atLow !== 'boolean') throw argError(`findEpochStart: where.atLow must be a boolean, got ${kind(atLow)}`);
  return {records: out, atLow, low: toOffset('findEpochStart: where.low', low)};
}

/**
 * Given the records of the tail of the sync topic (`[{offset, message}]` in offset order, where
 * `message` is the parsed SyncMessage or `null` for an unreadable record), returns where a task
 * that has applied no epoch must start reading so that its replay reaches the same state as the
 * tasks that read everything:
 *
 * - at the latest *checkpoint*: a NewEpoch with `resend: true` and
 *   `checkpoint: {afterTaskID, afterSeq}` naming the last record its author had read. It holds
 *   the whole state of the epoch in force as its author saw it after that record. If the record
 *   right before it is the one it names (it is *clean*), the reader starts at it; otherwise the
 *   reader starts right after the named record (its first place in the records) and applies the
 *   checkpoint first (`{offset, checkpoint}`: the offset of the checkpoint to apply before
 *   reading from `offset`), so that the records between are read on top of the view they came
 *   after. Either way the records after it (a newer NewEpoch included) are replayed as the
 *   running tasks read them. A checkpoint larger than `maxRecordBytes` is chunked: it stands at
 *   its first chunk, is clean if its chunks follow the named record one after the other, counts
 *   only if every chunk is in the records, and is applied joined (`chunks`: the offsets of its
 *   chunks, in order). A checkpoint whose named record is not in the records, or that was
 *   written by a task still behind (some record before the named one was written from a later
 *   epoch by a task that had applied it, or is a whole NewEpoch of a later generation built on
 *   the checkpoint's epoch, which its author missed), is passed over;
 * - with no such checkpoint in the records: the latest NewEpoch names the epoch it was computed
 *   from (`baseEpoch`); the reader starts at the first NewEpoch of that base epoch not written
 *   by a task still behind. Its leader had applied the base, so the base is an epoch every
 *   reader applied; replaying from there applies the current epoch exactly as the others did,
 *   and still ignores the latest NewEpoch if it was a stale one that every task ignored;
 * - if the latest NewEpoch has no base (the first epoch of the connector), or no NewEpoch is
 *   retained at all, the reader replays the whole retained log.
 *
 * Returns `{offset}` or `{offset, checkpoint[, chunks]}` (strings) or, when the records do not reach back
 * far enough and more of the log exists before them (`atLow` false), `{extend: true}`. Wrong
 * arguments throw a SyncError with code `INVALID_ARGUMENT`.
 *
 * @param {{offset: string|number|bigint, message: object|null}[]} records
 * @param {{atLow: boolean, low: string|number|bigint}} where
 */
export function findEpochStart(records, where) {
  const {records: rs, atLow, low} = epochStartArgs(records, where);
  // ahead[i]: the highest epoch generation a task that had applied its epoch wrote with in
  // rs[0..i) (a fresh NewEpoch attempt is left out: it may be one that every task ignored)
  const ahead = [0];
  for (const r of rs) {
    const m = r.message;
    const applied = m !== null && (m.type !== 'NewEpoch' || m.resend);
    ahead.push(Math.max(ahead[ahead.length - 1], applied ? m.epochGeneration : 0));
  }
  for (let i = rs.length - 1; i > 0; i--) {
    const m = rs[i].message;
    if (m?.type !== 'NewEpoch' || !m.resend || !m.checkpoint) continue;
    // a chunked checkpoint stands at its first chunk, and counts only if every chunk is there
    if (m.chunk && m.chunk.index > 0) continue;
    const chunks = chunksOf(rs, i);
    if (!chunks) continue;
    // the record it names, at its first place in the records
    const j = rs.findIndex((r, k) => k < i && r.message?.taskID === m.checkpoint.afterTaskID && r.message.messageSeq === m.checkpoint.afterSeq);
    if (j < 0) continue;
    // every offset from there to the checkpoint must be in the records
    if (rs[i].offset - rs[j].offset !== BigInt(i - j)) continue;
    // written by a task still behind an epoch that some task had already written from
    if (m.epochGeneration < ahead[j + 1]) continue;
    // written by a task that missed a NewEpoch built on the checkpoint's epoch, read before the
    // record it names (a whole one applies wherever its base is in force)
    if (rs.some((r, p) => p <= j && r.message?.type === 'NewEpoch' && r.message.epochGeneration > m.epochGeneration && r.message.baseEpoch === m.syncEpoch && !(r.message.chunk?.index > 0) && chunksOf(rs, p) !== null)) continue;
    const contiguous = chunks.every((k, n) => k === i + n);
    if (j === i - 1 && contiguous) return {offset: String(rs[i].offset)}; // clean
    const found = {offset: String(rs[j + 1].offset), checkpoint: String(rs[i].offset)};
    if (chunks.length > 1) found.chunks = chunks.map((k) => String(rs[k].offset));
    return found;
  }
  const fromLow = () => (atLow ? {offset: String(low)} : {extend: true});
  let last = -1;
  for (let i = rs.length - 1; i >= 0; i--) {
    if (rs[i].message?.type === 'NewEpoch') {
      last = i;
      break;
    }
  }
  if (last < 0) return fromLow();
  const latest = rs[last].message;
  const base = latest.baseEpoch || null;
  if (!base) return fromLow();
  // (a re-publication of the base written after some task wrote from a later epoch is stale)
  const first = rs.findIndex((r, k) => r.message?.type === 'NewEpoch' && r.message.syncEpoch === base && r.message.epochGeneration >= ahead[k]);
  if (first >= 0) return {offset: String(rs[first].offset)};
  if (!atLow) return {extend: true};
  // the base epoch is no longer retained: start at the latest epoch itself, the best left
  const own = rs.findIndex((r) => r.message?.type === 'NewEpoch' && r.message.syncEpoch === latest.syncEpoch);
  return {offset: String(rs[own].offset)};
}

/**
 * The indexes in `rs` of the records of the message whose first record is `rs[i]`: `[i]`, or its
 * chunks (the records of its sender with the next counters, in order); null if one is missing.
 */
function chunksOf(rs, i) {
  const first = rs[i].message;
  if (!first.chunk) return [i];
  if (first.messageSeq === undefined || first.taskID === undefined) return null;
  const out = [i];
  let at = i;
  for (let n = 1; n < first.chunk.count; n++) {
    const seq = first.messageSeq + n;
    let next = -1;
    for (let k = at + 1; k < rs.length; k++) {
      const m = rs[k].message;
      if (m !== null && m.taskID === first.taskID && m.messageSeq === seq) {
        next = k;
        break;
      }
    }
    if (next < 0 || rs[next].message.chunk?.index !== n) return null;
    out.push(next);
    at = next;
  }
  return out;
}

/**
 * The whole message of a chunked one, from its chunks' parsed values in order: the first chunk's
 * header (without `chunk`) and every chunk's `connectorState` joined (a task's state may go on
 * in the next chunk: its partitions and shares are appended), as the SyncTask joins them.
 */
export function joinChunks(messages) {
  const {chunk: _chunk, ...whole} = messages[0];
  const states = [];
  for (const m of messages) {
    for (const st of m.connectorState ?? []) {
      const last = states[states.length - 1];
      if (last && last.taskID === st.taskID) {
        last.data = {...last.data, partitions: [...(last.data?.partitions ?? []), ...(st.data?.partitions ?? [])]};
        last.share = {...last.share, partitions: [...(last.share?.partitions ?? []), ...(st.share?.partitions ?? [])]};
      } else {
        states.push({...st});
      }
    }
  }
  whole.connectorState = states;
  return whole;
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
 * `findEpochStart`; the window grows fourfold towards the earliest retained offset while the
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
    const found = findEpochStart(this.buffer, {atLow: this.from === this.low, low: this.low});
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
      // a checkpoint after its start: its author's view as of the record before the start,
      // applied first (without its counter, which belongs to its place in the log) and then
      // read again where it is
      const at = BigInt(found.checkpoint);
      const offsets = (found.chunks ?? [found.checkpoint]).map(BigInt);
      const parts = offsets.map((o) => this.buffer.find((r) => r.offset === o).message);
      const {messageSeq: _seq, ...first} = parts.length > 1 ? joinChunks(parts) : parts[0];
      actions.push({type: 'deliver', offset: at, message: first});
    }
    for (const r of this.buffer) {
      if (r.offset >= start) this.deliver(r.offset, r.message === null ? null : r.value, actions);
      else this.lastOffset = r.offset;
    }
    this.buffer = [];
    actions.push({type: 'ready'});
  }
}
