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
 * one string argument (js/limits.mjs `MAX_STRING`).
 */
export function argumentKit(Class, {base = Class, maxString = 1 << 20} = {}) {
  const MAX_STRING = maxString;
  const fail = (message) => new Class(message, 'INVALID_ARGUMENT');
  /** Runs `read` (reads of caller values); a foreign exception becomes INVALID_ARGUMENT. */
  const reading = (read, name) => readingAs(fail, base, read, name);
  const tooLarge = (what, size, bound, unit) => tooLargeError(Class, what, size, bound, unit);
  return {
    fail,
    reading,
    tooLarge,
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

/**
 * Runs `read`, which reads and copies caller values (getters, proxies and `Array.isArray` on a
 * revoked proxy run here, in JS, before wasm is entered). Anything it throws that is not a
 * `base` (an error of partkit's own) becomes `fail(message)`: an `INVALID_ARGUMENT`.
 */
export function readingAs(fail, base, read, name) {
  try {
    return read();
  } catch (error) {
    if (error instanceof base) throw error;
    throw fail(`${name ? `${name} could not be read` : 'the arguments could not be read'}: ${errorText(error)}`);
  }
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

/** `name.key is not a known key[: did you mean name.near?] (known keys: …)`. */
export function unknownKey(key, known, name) {
  const near = nearest(key, known);
  const shown = JSON.stringify(key).slice(1, -1);
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
function distance(a, b) {
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
