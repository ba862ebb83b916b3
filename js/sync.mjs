// Task coordination: the leader/epoch/partition-sharing protocol of a multi-task connector, as a
// sans-IO state machine. Type checks of JS arguments happen here; every rule lives in the Rust
// core (src/sync). Inputs cross as UTF-8 JSON made here (no user code runs inside wasm), or as a
// record's value as read from the topic, passed as it is; outputs come back as JSON text, parsed
// here, their messages either parsed too or, with `publishAs: 'records'`, kept as the JSON text to
// publish.
import * as wasm from '#wasm/sync';
import {PartkitError, SyncError, WasmObject, call as callWasm, describe, freedOnTrap, live, tooLarge} from './errors.mjs';
// partkit/sync exports its error classes too (the same classes as the root's).
export {PartkitError, SyncError} from './errors.mjs';
import {MAX_BATCH_ITEMS, MAX_JSON, MAX_SNAPSHOT_JSON, MAX_STRING} from './limits.mjs';
import {packedFor} from './packed.mjs';
import {argumentKit, isPlainObject, unknownKey} from './kit/args.mjs';
import {inJsWords} from './kit/serde.mjs';

const {reserveUnits} = packedFor({PackedStrings: wasm.PackedStrings, reserveMemory: wasm.reserveMemory, wasmMemory: wasm.wasmMemory});

const kit = argumentKit(SyncError, {base: PartkitError, maxString: MAX_STRING});
const {fail: argError, isObject, requireString} = kit;
const utf8 = new TextEncoder();
const call = (fn) => callWasm(fn, SyncError);

const requireNow = (now) => kit.requireMillis(now, 'now');

/** The SyncTask options that are times or sizes (non-negative integers), and the others. */
const NUMBER_OPTIONS = ['rebalanceTimeout', 'epochAckTimeout', 'removalDelay', 'tombstoneTtl', 'stateRefreshInterval', 'maxRecordBytes'];
const OPTIONS = [...NUMBER_OPTIONS, 'publishAs'];

/**
 * The SyncTask options read once into a plain copy, each checked: the keys known, each time a
 * non-negative integer of milliseconds (`maxRecordBytes`: of bytes), `publishAs` one of two
 * words. The core checks the values' rules (e.g. the least `maxRecordBytes`).
 */
function readOptions(options) {
  const fail = (message) => new SyncError(`invalid options: ${message}`, 'SYNC_INVALID_OPTIONS');
  return kit.reading(() => {
    if (!isPlainObject(options)) throw argError(`options must be an object, got ${describe(options)}`);
    const copy = {};
    for (const key of Object.keys(options)) {
      if (!OPTIONS.includes(key)) throw fail(unknownKey(key, OPTIONS, 'options'));
      const value = options[key];
      if (value === undefined) continue;
      if (key === 'publishAs') {
        if (value !== 'messages' && value !== 'records') throw fail(`options.publishAs must be 'messages' or 'records', got ${describe(value)}`);
      } else if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
        const unit = key === 'maxRecordBytes' ? 'bytes' : 'milliseconds';
        throw fail(`options.${key} must be a non-negative integer of ${unit}, got ${describe(value)}`);
      }
      copy[key] = value;
    }
    return copy;
  }, 'options');
}

/**
 * The SyncTask options (absent: the core's defaults) as the core takes them: `text`, the JSON of
 * the core's options, and its UTF-8 `bytes` (both undefined when absent); `records`: whether
 * outputs publish records (`publishAs`, which is not the core's).
 */
function coreOptions(options) {
  if (options === undefined) return {text: undefined, bytes: undefined, records: false};
  const {publishAs, ...core} = readOptions(options);
  const text = jsonOf(core, 'SYNC_INVALID_OPTIONS', 'invalid options', 'options');
  return {text, bytes: utf8.encode(text), records: publishAs === 'records'};
}

const REBALANCE = ['generation', 'leader', 'members'];

/** A rebalance event read once into a plain copy, each field checked. */
function readRebalance(event) {
  const fail = (message) => new SyncError(`invalid rebalance: ${message}`, 'SYNC_INVALID_REBALANCE');
  return kit.reading(() => {
    if (!isPlainObject(event)) throw fail(`event must be an object {generation, leader, members?}, got ${describe(event)}`);
    for (const key of Object.keys(event)) if (!REBALANCE.includes(key)) throw fail(unknownKey(key, REBALANCE, 'event'));
    const {generation, leader, members} = event;
    if (typeof generation !== 'number' || !Number.isSafeInteger(generation) || generation < 0) {
      throw fail(`event.generation must be a non-negative integer, got ${describe(generation)}`);
    }
    if (typeof leader !== 'boolean') {
      throw fail(`event.leader must be a boolean (whether this task leads the generation; kafkajs gives the leader's member id: compare it with this member's), got ${describe(leader)}`);
    }
    const copy = {generation, leader};
    if (members !== undefined && members !== null) {
      if (!Array.isArray(members)) throw fail(`event.members must be an array of task ids, got ${describe(members)}`);
      const list = Array.prototype.slice.call(members);
      list.forEach((m, i) => {
        if (typeof m !== 'string') throw fail(`event.members[${i}] must be a string (a task id), got ${describe(m)}`);
      });
      copy.members = list;
    }
    return copy;
  }, 'event');
}

/** JSON text of `value`, or a SyncError with `code` saying why JSON cannot carry it (passed to
 * wasm as its UTF-8 bytes: `utf8.encode` copies them in one go, where a string crosses character
 * by character). */
function jsonOf(value, code, what, name) {
  let text;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    const reason = kit.reading(() => String(error?.message ?? error));
    throw new SyncError(`${what}: ${name} cannot be serialized as JSON: ${reason}`, code);
  }
  if (text === undefined) throw new SyncError(`${what}: ${name} cannot be serialized as JSON`, code);
  if (text.length > MAX_JSON) throw tooLarge(SyncError, `${what}: the JSON text`, text.length, MAX_JSON, 'UTF-16 code units');
  return text;
}

/**
 * One connector task's side of the protocol. Every input takes the caller's clock `now`
 * (integer milliseconds) and returns what the caller must do: `{publish, start, stop}` — append
 * `publish` to the sync topic in order, start and stop reading the listed partitions. Everything
 * read from the sync topic, the task's own messages included, goes to `onMessage` in topic
 * order. A refused input throws SyncError and leaves the task unchanged.
 */
class SyncTask extends WasmObject {
  /** Whether outputs give their messages as records (`publishAs: 'records'`). */
  #records = false;

  /**
   * A call on the wasm task; `fn(inner, bytes)` gets JSON `text` (if any) as its UTF-8 bytes,
   * room for which is reserved first, so copying them in cannot trap. A trap (out of memory)
   * would leave the task borrowed forever: the task is dropped, the call throws OUT_OF_MEMORY
   * and every later one OBJECT_FREED.
   */
  #call(fn, text) {
    const inner = live(this);
    let bytes;
    if (text !== undefined) {
      if (text.length > 4096) reserveUnits(SyncError, text.length);
      bytes = utf8.encode(text);
    }
    return call(() => freedOnTrap(this, () => fn(inner, bytes)));
  }

  /** `#call` of a method that answers with JSON text: its value. */
  #json(fn, text) {
    return JSON.parse(this.#call(fn, text));
  }

  /**
   * `#call` of an input: its output. With `publishAs: 'records'` the output's messages come as
   * records `{key, type, value}`, taken in the same call (the value is the JSON text the core
   * wrote, never parsed here).
   */
  #output(fn, text) {
    if (!this.#records) return this.#json(fn, text);
    let flat;
    const out = JSON.parse(this.#call((inner, bytes) => {
      const answer = fn(inner, bytes);
      flat = inner.takeRecords();
      return answer;
    }, text));
    const publish = new Array(flat.length / 3);
    for (let i = 0, k = 0; k < flat.length; i++, k += 3) publish[i] = {key: flat[k], type: flat[k + 1], value: flat[k + 2]};
    out.publish = publish;
    return out;
  }

  /**
   * `#output` of an input given as JSON `text`: a refusal in serde's words is worded in JS words,
   * naming the field of the argument `name` it is about.
   */
  #jsonInput(fn, text, name) {
    try {
      return this.#output(fn, text);
    } catch (error) {
      throw inJsWords(SyncError, error, text, name);
    }
  }

  /**
   * @param taskId unique id of this task (new on every restart).
   * @param options `{rebalanceTimeout, epochAckTimeout, removalDelay, tombstoneTtl,
   *   stateRefreshInterval}` in ms, and `maxRecordBytes` (bytes of JSON per published record);
   *   `publishAs`: `'messages'` (default: `publish` lists SyncMessage objects) or `'records'`
   *   (`publish` lists `{key, type, value}`: the record to append, `value` its JSON text, which a
   *   transport writes as it is instead of stringifying a message parsed for it).
   */
  constructor(taskId, options) {
    requireString(taskId, 'taskId');
    const {text, bytes, records} = coreOptions(options);
    let inner;
    try {
      inner = call(() => new wasm.SyncTask(taskId, bytes, records));
    } catch (error) {
      throw inJsWords(SyncError, error, text, 'options');
    }
    super(inner, SyncError, 'SyncTask');
    this.#records = records;
  }

  /**
   * The options this task runs with, every one of them (the core's defaults filled in), as
   * `resolveSyncOptions` gives them; `publishAs` is not among them.
   */
  options() {
    return JSON.parse(call(() => live(this).optionsJson()));
  }

  /** A group rebalance: `{generation, leader, members?}` (`members` required for the leader). */
  onRebalance(event, now) {
    requireNow(now);
    const text = jsonOf(readRebalance(event), 'SYNC_INVALID_REBALANCE', 'invalid rebalance', 'event');
    return this.#jsonInput((inner, bytes) => inner.onRebalanceJson(bytes, now), text, 'event');
  }

  /**
   * A message read from the sync topic (any shape: a malformed one is refused): the parsed
   * message, or the record's value as read (a `Uint8Array` such as a Buffer, or a string of
   * JSON), which goes to the core as it is (parsed once, in wasm).
   */
  onMessage(message, now) {
    requireNow(now);
    if (typeof message === 'string') {
      if (message.length > MAX_JSON) throw tooLarge(SyncError, 'the sync message', message.length, MAX_JSON, 'UTF-16 code units');
      return this.#jsonInput((inner, bytes) => inner.onMessageJson(bytes, now), message, 'message');
    }
    // (a Proxy's traps run in `instanceof` and in the copy: both before wasm is entered)
    if (kit.reading(() => message instanceof Uint8Array, 'message')) {
      // a copy of the caller's bytes, made before wasm is entered (over a detached buffer: refused)
      const bytes = kit.reading(() => new Uint8Array(message), 'message');
      if (bytes.length > MAX_JSON) throw tooLarge(SyncError, 'the sync message', bytes.length, MAX_JSON, 'bytes');
      if (bytes.length > 4096) reserveUnits(SyncError, bytes.length);
      try {
        return this.#output((inner) => inner.onMessageJson(bytes, now));
      } catch (error) {
        let text;
        if (error?.code === 'SYNC_MALFORMED_MESSAGE') {
          try {
            text = new TextDecoder('utf-8', {fatal: true}).decode(bytes);
          } catch {
            text = ''; // not UTF-8: no field to name, the syntax error is worded all the same
          }
        }
        throw inJsWords(SyncError, error, text, 'message');
      }
    }
    if (!isObject(message, 'message')) {
      throw new SyncError(`malformed sync message: message must be an object, or a record value (a Uint8Array or a string), got ${describe(message)}`, 'SYNC_MALFORMED_MESSAGE');
    }
    const text = jsonOf(message, 'SYNC_MALFORMED_MESSAGE', 'malformed sync message', 'message');
    return this.#jsonInput((inner, bytes) => inner.onMessageJson(bytes, now), text, 'message');
  }

  /** Initial partitions, or children read from a partition this task runs. */
  addPartitions(partitions, now) {
    requireNow(now);
    kit.reading(() => {
      if (!Array.isArray(partitions)) throw argError(`partitions must be an array, got ${describe(partitions)}`);
      // Each item takes at least 2 characters of JSON: a longer array cannot fit MAX_JSON.
      const max = MAX_JSON / 2;
      if (partitions.length > max) throw tooLarge(SyncError, 'partitions', partitions.length, max, 'items');
      // (an array item would pass as a spec with positional fields: JSON of a Rust struct)
      for (let i = 0; i < partitions.length; i++) {
        const item = partitions[i];
        if (!isObject(item, `partitions[${i}]`)) {
          throw new SyncError(`invalid partition: partitions[${i}] must be an object {token, parents?, ...}, got ${describe(item)}`, 'SYNC_INVALID_PARTITION');
        }
      }
    }, 'partitions');
    const text = jsonOf(partitions, 'SYNC_INVALID_PARTITION', 'invalid partition', 'partitions');
    return this.#jsonInput((inner, bytes) => inner.addPartitionsJson(bytes, now), text, 'partitions');
  }

  /** The caller started reading a partition it was told to start. */
  partitionStarted(token, now) {
    requireString(token, 'token');
    requireNow(now);
    return this.#output((inner) => inner.partitionStarted(token, now));
  }

  /** The caller finished reading a partition (after passing its children to addPartitions). */
  partitionFinished(token, now) {
    requireString(token, 'token');
    requireNow(now);
    return this.#output((inner) => inner.partitionFinished(token, now));
  }

  /** Time passed: leader timeout, epoch re-publication, delayed removal. See `pollTimeout`. */
  tick(now) {
    requireNow(now);
    return this.#output((inner) => inner.tick(now));
  }

  /**
   * The caller found a hole in the sync log it fed (e.g. Kafka offsets jumped): the task stops
   * everything and fences itself (`fenced` in the output, `stop` lists what it ran); every later
   * input is a no-op.
   */
  fence(reason, now) {
    requireString(reason, 'reason');
    requireNow(now);
    return this.#output((inner) => inner.fence(reason, now));
  }

  /**
   * The task stops cleanly: call it once the connector stopped every partition the task ran,
   * before leaving the group. It starts nothing more and publishes a final checkpoint as soon as
   * everything it published is read back (at once when it is), so that a connector whose tasks
   * all closed finds its state after a stop shorter than the retention. Keep feeding it what
   * is read (and ticking at `pollTimeout()`) until `closed()` is true, then leave.
   */
  close(now) {
    requireNow(now);
    return this.#output((inner) => inner.close(now));
  }

  /** Whether a task told to `close` is done: its final checkpoint went out (or none was needed). */
  closed() {
    return this.#call((inner) => inner.closed());
  }

  /** This task's id. */
  taskId() {
    return this.#call((inner) => inner.taskId());
  }

  /** Partitions this task owns, tombstones included. */
  ownedPartitions() {
    return this.#json((inner) => inner.ownedPartitions());
  }

  /** Partitions this task hands to others, each with its `assignee`. */
  sharedPartitions() {
    return this.#json((inner) => inner.sharedPartitions());
  }

  /** Every task state this task knows, its own included, by task id. */
  knownTasks() {
    return this.#json((inner) => inner.knownTasks());
  }

  /** Id of the epoch in force, or undefined before the first one. */
  epoch() {
    return this.#call((inner) => inner.epoch());
  }

  /** Members of the epoch in force. */
  epochMembers() {
    return this.#call((inner) => inner.epochMembers());
  }

  /** Whether the latest rebalance made this task the leader. */
  isLeader() {
    return this.#call((inner) => inner.isLeader());
  }

  /** Whether this task may share partitions now (member of the epoch, no rebalance pending). */
  sharingEnabled() {
    return this.#call((inner) => inner.sharingEnabled());
  }

  /** Whether this task read messages of an epoch it missed (its leader re-publishes it). */
  isBehind() {
    return this.#call((inner) => inner.isBehind());
  }

  /**
   * Why this task fenced itself (it read the sync log with a hole, or stayed behind with no
   * epoch it could apply), or undefined. A fenced task does nothing more.
   */
  fenced() {
    return this.#call((inner) => inner.fenced());
  }

  /** Members a leader still waits for (empty unless collecting answers). */
  waitingFor() {
    return this.#call((inner) => inner.waitingFor());
  }

  /** Load of a task in this task's view: owned unfinished partitions + shares addressed to it. */
  loadOf(taskId) {
    requireString(taskId, 'taskId');
    return this.#call((inner) => inner.loadOf(taskId));
  }

  /** The earliest `now` at which `tick` has work, or undefined. */
  pollTimeout() {
    return this.#call((inner) => inner.pollTimeout());
  }
}

/**
 * `SyncTask` as exported: the class, and a call without `new` refused with a coded error in JS
 * words (a class called as a function throws a TypeError naming the class as a bundler renamed
 * it, e.g. `SyncTask3`).
 */
const SyncTaskClass = new Proxy(SyncTask, {
  apply() {
    throw argError('SyncTask is a class: create a task with new SyncTask(taskId, options)');
  },
});
export {SyncTaskClass as SyncTask};

// Where a new task starts reading the sync log: the core's start rule (`find_epoch_start` in
// src/sync/start.rs), for any transport (`partkit/kafka` exports it as `findEpochStart`; its
// SyncLogReader uses it). The caller's
// values are read once, checked and copied here into plain data, sent as JSON.

const count = (v) => Number.isSafeInteger(v) && v >= 0;
// (a chunk index or count the core's 32 bits cannot hold is one no log can complete: 2^32 - 1)
const u32 = (v) => Math.min(v, 2 ** 32 - 1);

/**
 * The header fields the start rule reads of a parsed SyncMessage, each read once; a field of the
 * wrong type counts as absent (the message came from the log, whatever is in it).
 */
function startHeader(what, m) {
  if (m === null || m === undefined) return null;
  if (!isObject(m, what.replace(/^\w+: /, ''))) throw argError(`${what} must be a SyncMessage object or null, got ${describe(m)}`);
  return kit.reading(() => {
    const {type, syncEpoch, baseEpoch, resend, taskID, messageSeq, checkpoint, epochGeneration, chunk} = m;
    const h = {};
    if (typeof type === 'string') h.type = type;
    if (typeof syncEpoch === 'string') h.syncEpoch = syncEpoch;
    if (typeof baseEpoch === 'string') h.baseEpoch = baseEpoch;
    if (resend === true) h.resend = true;
    if (typeof taskID === 'string') h.taskID = taskID;
    if (count(messageSeq)) h.messageSeq = messageSeq;
    if (count(epochGeneration)) h.epochGeneration = epochGeneration;
    if (checkpoint !== null && typeof checkpoint === 'object' && !Array.isArray(checkpoint)) {
      const {afterTaskID, afterSeq} = checkpoint;
      if (typeof afterTaskID === 'string' && count(afterSeq)) h.checkpoint = {afterTaskID, afterSeq};
    }
    if (chunk !== null && typeof chunk === 'object' && !Array.isArray(chunk)) {
      const {index, count: n} = chunk;
      if (count(index) && count(n) && index < n) h.chunk = {index: u32(index), count: u32(n)};
    }
    return h;
  }, what);
}

/** The core's answer for `options` (read and checked as `new SyncTask` reads them): `{options, minRetention}`. */
function syncOptions(options) {
  const {text, bytes} = coreOptions(options);
  try {
    return JSON.parse(call(() => wasm.syncOptionsJson(bytes)));
  } catch (error) {
    throw inJsWords(SyncError, error, text, 'options');
  }
}

/**
 * The options a SyncTask made with `options` runs with: every one of them, the core's defaults
 * filled in (`publishAs`, which is not the core's, is left out). Invalid options throw
 * SYNC_INVALID_OPTIONS as `new SyncTask` does.
 *
 * @param {object} [options]
 */
export function resolveSyncOptions(options) {
  return syncOptions(options).options;
}

/**
 * The least `retention.ms` of a sync topic for tasks made with `options` (or an infinite
 * retention): `stateRefreshInterval` times the core's number of refreshes that must fit in the
 * retention (docs/sync.md). Invalid options throw SYNC_INVALID_OPTIONS as `new SyncTask` does.
 *
 * @param {object} [options]
 */
export function minSyncRetention(options) {
  return syncOptions(options).minRetention;
}

/**
 * Where a task that has applied no epoch starts reading the sync log, given the records of its
 * tail (`[{offset, message}]` in offset order, `message` the parsed SyncMessage or `null` for an
 * unreadable record) and `{atLow, low}` (whether they start at the earliest retained offset,
 * `low`): the rule of docs/sync-design.md, "Where a new task starts reading". Returns `{offset}`, or
 * `{offset, checkpoint[, chunks]}` (apply `checkpointMessage` of the checkpoint's records, at
 * `chunks` or else `checkpoint`, first, then replay from `offset`; offsets as strings), or
 * `{extend: true}` when the records do not reach back far enough and more of the log exists
 * before them. Wrong arguments throw a SyncError with code `INVALID_ARGUMENT`.
 *
 * @param {{offset: string|number|bigint, message: object|null}[]} records
 * @param {{atLow: boolean, low: string|number|bigint}} where
 */
export function syncLogStart(records, where) {
  const isArray = kit.reading(() => Array.isArray(records), 'findEpochStart: records');
  if (!isArray) throw argError(`findEpochStart: records must be an array, got ${describe(records)}`);
  const n = kit.reading(() => records.length, 'findEpochStart: records');
  if (n > MAX_BATCH_ITEMS) throw tooLarge(SyncError, 'findEpochStart: records', n, MAX_BATCH_ITEMS, 'items');
  const out = [];
  let last = -1n;
  for (let i = 0; i < n; i++) {
    const what = `findEpochStart: records[${i}]`;
    const r = kit.reading(() => records[i], what);
    if (!isObject(r, `records[${i}]`)) throw argError(`${what} must be an object {offset, message}, got ${describe(r)}`);
    const [offset, message] = kit.reading(() => [r.offset, r.message], what);
    const o = kit.requireOffset(offset, `${what}.offset`);
    if (BigInt(o) <= last) throw argError(`${what}.offset must be greater than the one before it (records in offset order)`);
    last = BigInt(o);
    out.push({offset: o, message: startHeader(`${what}.message`, message)});
  }
  if (!isObject(where, 'where')) throw argError(`findEpochStart: where must be an object {atLow, low}, got ${describe(where)}`);
  const [atLow, low] = kit.reading(() => [where.atLow, where.low], 'findEpochStart: where');
  if (typeof atLow !== 'boolean') throw argError(`findEpochStart: where.atLow must be a boolean, got ${describe(atLow)}`);
  const text = JSON.stringify({records: out, atLow, low: kit.requireOffset(low, 'findEpochStart: where.low')});
  if (text.length > MAX_SNAPSHOT_JSON) throw tooLarge(SyncError, 'findEpochStart: the JSON text of the records', text.length, MAX_SNAPSHOT_JSON, 'UTF-16 code units');
  if (text.length > 4096) reserveUnits(SyncError, text.length);
  const bytes = utf8.encode(text);
  return JSON.parse(call(() => wasm.findEpochStartJson(bytes)));
}

/**
 * What a task that starts after a checkpoint (`syncLogStart` answered `{offset, checkpoint}`)
 * applies first: the checkpoint joined from its records' parsed messages (`messages`, in order:
 * one, or its chunks) as a SyncTask joins chunks, without `chunk` and `messageSeq` (it is read
 * again at its place); the SyncTask checks the message when it reads it. Records that are not
 * the chunks of one message throw INVALID_ARGUMENT.
 *
 * @param {object[]} messages
 */
export function checkpointMessage(messages) {
  const isArray = kit.reading(() => Array.isArray(messages), 'checkpointMessage: messages');
  if (!isArray) throw argError(`checkpointMessage: messages must be an array of SyncMessage objects, got ${describe(messages)}`);
  const n = kit.reading(() => messages.length, 'checkpointMessage: messages');
  // (a message has at most MAX_CHUNKS records: 2^16)
  if (n > 2 ** 16) throw tooLarge(SyncError, 'checkpointMessage: messages', n, 2 ** 16, 'items');
  const copy = [];
  for (let i = 0; i < n; i++) {
    const m = kit.reading(() => messages[i], 'checkpointMessage: messages');
    if (!isObject(m, `messages[${i}]`)) throw argError(`checkpointMessage: messages[${i}] must be a SyncMessage object, got ${describe(m)}`);
    copy.push(m);
  }
  const text = jsonOf(copy, 'INVALID_ARGUMENT', 'checkpointMessage', 'messages');
  if (text.length > 4096) reserveUnits(SyncError, text.length);
  const bytes = utf8.encode(text);
  try {
    return JSON.parse(call(() => wasm.checkpointMessageJson(bytes)));
  } catch (error) {
    throw inJsWords(SyncError, error, text, 'messages');
  }
}
