// The argument kit: how every domain (and partkit/kafka, partkit/s3) reads, checks and words
// refusals of caller values. A refusal names the argument or field path in JS terms
// (`options.rebalanceTimeout`, `events[12].timestamp`), says what was expected in JS words and
// what was given. docs/ARCHITECTURE.md ("The boundary rule") says which forms data then takes.
//
// Pure functions with no state and no classes of their own, importing nothing: the build bundles
// them into the root and into each Node-only subpath alike (a subpath's imports of js/*.mjs go to
// the root's dist/index.cjs instead), so every entry words its refusals with the same code.

/** A short, safe description of a value for messages (never throws, runs no user code). */
export function describe(value) {
  if (value === null) return 'null';
  const type = typeof value;
  if (type === 'number') return Number.isNaN(value) ? 'NaN' : `the number ${Object.is(value, -0) ? '-0' : value}`;
  if (type === 'boolean') return `the boolean ${value}`;
  if (type === 'undefined') return 'undefined';
  if (type === 'string') return value.length <= 40 ? `the string ${JSON.stringify(value)}` : `a string of ${value.length} characters`;
  if (type === 'object') {
    try {
      if (Array.isArray(value)) return 'an array';
    } catch {
      return 'a revoked proxy';
    }
    return 'an object';
  }
  return `a ${type}`;
}

/**
 * The one numbering of the kinds of JS values that cross into wasm as a kind byte
 * (src/wasm/kinds.rs is the same table; tests/kinds.test.js checks that they agree).
 */
export const KIND = Object.freeze({UNDEFINED: 0, NULL: 1, FALSE: 2, TRUE: 3, NUMBER: 4, STRING: 5, BIGINT: 6, ARRAY: 7, OBJECT: 8, OTHER: 9});

/**
 * The kind of `value` by `typeof` alone (an array is OBJECT: a caller that needs ARRAY asks
 * `Array.isArray` itself, inside `reading`). Runs no user code.
 */
export function kindOf(value) {
  switch (typeof value) {
    case 'undefined':
      return KIND.UNDEFINED;
    case 'boolean':
      return value ? KIND.TRUE : KIND.FALSE;
    case 'number':
      return KIND.NUMBER;
    case 'string':
      return KIND.STRING;
    case 'bigint':
      return KIND.BIGINT;
    case 'object':
      return value === null ? KIND.NULL : KIND.OBJECT;
    default:
      return KIND.OTHER;
  }
}

/** Whether `value` is an object that is not an array (a revoked proxy throws: call it inside `reading`). */
export function isPlainObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * The checks of one error class (a domain's, or SyncError for partkit/kafka, PartitionError for
 * partkit/s3): every refusal is `INVALID_ARGUMENT` or `INPUT_TOO_LARGE` of `Class`. `base`: the
 * class whose errors pass through `reading` as they are (PartkitError); `maxString`: the bound of
 * one string argument (js/limits.mjs `MAX_STRING`). Every check takes the value first, then its
 * name in messages.
 */
export function argumentKit(Class, {base = Class, maxString = 1 << 20} = {}) {
  const MAX_STRING = maxString;
  const fail = (message) => new Class(message, 'INVALID_ARGUMENT');
  /**
   * The one reader of caller values: runs `read`, which reads and copies them (getters, proxies
   * and `Array.isArray` on a revoked proxy run here, in JS, before wasm is entered). Anything it
   * throws that is not a `base` (an error of partkit's own) becomes an INVALID_ARGUMENT,
   * `<name> could not be read: …` (`name`: the argument or field path read, with any `fn: `
   * prefix the message takes).
   */
  const reading = (read, name) => {
    try {
      return read();
    } catch (error) {
      if (error instanceof base) throw error;
      throw fail(`${name ? `${name} could not be read` : 'the arguments could not be read'}: ${errorText(error)}`);
    }
  };
  const tooLarge = (what, size, bound, unit) => tooLargeError(Class, what, size, bound, unit);
  return {
    Class,
    fail,
    reading,
    tooLarge,
    /** Whether `value` is an object that is not an array, asked inside `reading` (a revoked proxy is refused as `name`). */
    isObject(value, name) {
      return reading(() => isPlainObject(value), name);
    },
    /** A string of at most MAX_STRING code units (`nonEmpty`: not ''). */
    requireString(value, name, {nonEmpty = false} = {}) {
      if (typeof value !== 'string' || (nonEmpty && value === '')) {
        throw fail(`${name} must be a ${nonEmpty ? 'non-empty ' : ''}string, got ${describe(value)}`);
      }
      if (value.length > MAX_STRING) throw tooLarge(name, value.length, MAX_STRING, 'UTF-16 code units');
      return value;
    },
    /** A safe integer (`min`: its least value). */
    requireInteger(value, name, {min} = {}) {
      if (typeof value !== 'number' || !Number.isSafeInteger(value) || (min !== undefined && value < min)) {
        const what = min === 0 ? 'a non-negative integer' : min === 1 ? 'a positive integer' : min !== undefined ? `an integer of at least ${min}` : 'an integer';
        throw fail(`${name} must be ${what}, got ${describe(value)}`);
      }
      return value;
    },
    /**
     * A log offset (Kafka's, or any transport's): a string, number or bigint naming a
     * non-negative integer, as its decimal text.
     */
    requireOffset(value, name) {
      const type = typeof value;
      if (type === 'bigint') {
        if (value >= 0n) return String(value);
      } else if (type === 'number') {
        if (Number.isSafeInteger(value) && value >= 0) return String(value);
      } else if (type === 'string') {
        if (/^(0|[1-9][0-9]*)$/.test(value)) return value;
      }
      throw fail(`${name} must be a non-negative integer offset (a string, number or bigint), got ${type === 'string' ? JSON.stringify(value.slice(0, 40)) : describe(value)}`);
    },
    /** A time in integer milliseconds: a safe integer >= 0 (event timestamps, `now`). */
    requireMillis(value, name) {
      if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
        throw fail(`${name} must be a non-negative integer of milliseconds (at most Number.MAX_SAFE_INTEGER), got ${describe(value)}`);
      }
      return value;
    },
    /** Refuses own keys of `object` not in `known`, suggesting the nearest known key. */
    knownKeys(object, known, name) {
      const keys = reading(() => Object.keys(object), name);
      for (const key of keys) {
        if (!known.includes(key)) throw fail(unknownKey(key, known, name));
      }
    },
  };
}

/** `INPUT_TOO_LARGE` of `Class`: `what` is over `bound` (its unit in `unit`). */
export function tooLargeError(Class, what, size, bound, unit) {
  return new Class(`${what} has ${size} ${unit}, more than the bound of ${bound} ${unit}`, 'INPUT_TOO_LARGE');
}

/** The message of a thrown value, without running more user code than a string read. */
export function errorText(error) {
  try {
    if (error instanceof Error) return String(error.message);
    return describe(error);
  } catch {
    return 'an exception';
  }
}

/** Longest quote of a caller's value in a message, in characters (src/quote.rs is the same rule). */
export const QUOTE_CHARS = 100;

/** `text` for a message: whole up to QUOTE_CHARS characters, else cut there, `…` and its length. */
export function quote(text) {
  const s = String(text);
  return s.length <= QUOTE_CHARS ? s : `${s.slice(0, QUOTE_CHARS)}… (${s.length} characters)`;
}

/** Longest message of any error (a safety net over `quote`): longer ones are cut, saying so. */
export const MAX_MESSAGE = 1000;

/** `message` cut to MAX_MESSAGE characters. */
export function boundMessage(message) {
  if (typeof message !== 'string' || message.length <= MAX_MESSAGE) return message;
  const tail = `… (a message of ${message.length} characters, cut)`;
  return message.slice(0, MAX_MESSAGE - tail.length) + tail;
}

/** `name.key is not a known key[: did you mean name.near?] (known keys: …)`. */
export function unknownKey(key, known, name) {
  const near = nearest(key, known);
  const shown = JSON.stringify(quote(key)).slice(1, -1);
  const path = /^[A-Za-z_$][\w$]*$/.test(key) ? `${name}.${shown}` : `${name}[${JSON.stringify(shown)}]`;
  return `${path} is not a known key${near ? `: did you mean ${name}.${near}?` : ''} (known keys: ${known.join(', ')})`;
}

/** The known key nearest to `key` (case, `_` and `-` aside, or within a few edits), if any. */
export function nearest(key, known) {
  const fold = (s) => s.toLowerCase().replace(/[_-]/g, '');
  const k = fold(String(key).slice(0, 64));
  let best;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const d = fold(candidate) === k ? 0 : distance(k, fold(candidate));
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return bestDistance <= Math.max(2, Math.floor(k.length / 3)) ? best : undefined;
}

/** Levenshtein distance. */
export function distance(a, b) {
  let prev = Array.from({length: b.length + 1}, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length];
}

// ---- where: the path of a refusal -----------------------------------------------------------

/** Codes whose refused value is always the same argument or field (their messages name none). */
const CODE_PATHS = {
  BUCKET_TOTAL_INVALID: ['bucket_total'],
  BUCKET_ID_OUT_OF_RANGE: ['bucket_id'],
  BUCKET_RANGES_EMPTY: ['bucket_ranges'],
  BUCKET_RANGES_TYPE: ['bucket_ranges'],
  BUCKET_RANGE_FORMAT: ['bucket_ranges'],
  BUCKET_RANGE_NUMBER: ['bucket_ranges'],
  BUCKET_RANGE_ORDER: ['bucket_ranges'],
  BUCKET_RANGE_BOUNDS: ['bucket_ranges'],
  SYNC_INVALID_TASK_ID: ['taskId'],
  SYNC_UNKNOWN_PARTITION: ['token'],
  SYNC_INVALID_TRANSITION: ['token'],
  PARTITION_COUNT_INVALID: ['totalPartitions'],
  PARTITION_COUNT_UNSUPPORTED: ['totalPartitions'],
  PARTITION_INDEX_OUT_OF_RANGE: ['partitionIndex'],
  // lifecycle: the event refused (`events[i]` in a replay: js/lifecycle.mjs), by the field that conflicts
  UNKNOWN_WANT: ['event', 'wantId'],
  DUPLICATE_WANT: ['event', 'wantId'],
  WANT_WRONG_STATE: ['event', 'wantId'],
  UNKNOWN_JOB_RUN: ['event', 'jobRunId'],
  DUPLICATE_JOB_RUN: ['event', 'jobRunId'],
  JOB_RUN_WRONG_STATE: ['event', 'type'],
  DUPLICATE_REF_IN_JOB: ['event', 'buildingPartitions'],
  PARTITION_LEASED: ['event', 'buildingPartitions'],
  DUPLICATE_TAINT: ['event', 'taintId'],
  DEPENDENCY_CYCLE: ['event', 'missingDeps'],
  TIMESTAMP_NOT_MONOTONIC: ['event', 'timestamp'],
};

/**
 * A message's subject: after any `what: ` prefixes (`invalid event: `, `event 3: `), a JS path
 * (`options.rebalanceTimeout`, `events[12].timestamp`, `config["a b"]`) that a verb follows.
 */
const SUBJECT = /^(?:[a-z][\w ]{0,40}: )*([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*|\[\d+\]|\["(?:[^"\\]|\\.)*"\])*) (?:must|is|has|have|could|cannot|was|were|needs|are|does|do|should|holds)\b/;
const STEP = /\.([A-Za-z_$][\w$]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]/g;

/**
 * Where a refusal points: the keys and indexes from the argument that holds the refused value
 * (`['partitions', 0, 'parents']`), read from the message's subject, which every refusal names
 * in JS words (docs/errors.md), or fixed by `code` where its messages keep another library's
 * words; `[]` when the refusal is about the call as a whole (a freed object, memory). The one
 * place paths are made: an error built with an explicit path (a third argument) skips it.
 */
export function pathOf(message, code) {
  const fixed = CODE_PATHS[code];
  if (fixed) return fixed.slice();
  const m = typeof message === 'string' ? SUBJECT.exec(message.slice(0, 400)) : null;
  if (!m || ['this', 'it', 'a', 'an', 'the', 'there'].includes(m[1])) return [];
  const subject = m[1];
  const head = /^[A-Za-z_$][\w$]*/.exec(subject)[0];
  const path = [head];
  for (const step of subject.slice(head.length).matchAll(STEP)) {
    path.push(step[1] ?? (step[2] !== undefined ? Number(step[2]) : JSON.parse(step[3])));
  }
  return path;
}
