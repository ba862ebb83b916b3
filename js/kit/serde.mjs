// serde_json's error messages in JS words: the field path, what was expected, what was given
// (js/kit/args.mjs re-exports them; sync and lifecycle use them). Pure functions, importing
// nothing but the argument kit.

import {boundMessage, pathOf, unknownKey} from './args.mjs';

// ---- serde's words, in JS words -------------------------------------------------------------

/** What serde names a Rust type, in JS words. */
const EXPECTED = [
  [/^u(8|16|32|64|128|size)$/, 'a non-negative integer'],
  [/^i(8|16|32|64|128|size)$/, 'an integer'],
  [/^f(32|64)$/, 'a number'],
  [/^a boolean$/, 'a boolean'],
  [/^(a string|a borrowed string|a character|a UUID string)$/, 'a string'],
  [/^(a sequence|a tuple.*|an array.*)$/, 'an array'],
  [/^(struct \w+|a map|map|internally tagged enum.*|enum \w+)$/, 'an object'],
  [/^option$/, 'a value or null'],
  [/^variant identifier$/, 'the name of a type (a string)'],
];

/** What serde says was given (`string "x"`, `integer \`-5\``, `map`), in JS words. */
function given(text) {
  let m;
  if ((m = /^string "(.*)"$/s.exec(text))) return `the string ${JSON.stringify(shorten(m[1]))}`;
  if ((m = /^(?:integer|floating point) `(.*)`$/.exec(text))) return `the number ${m[1]}`;
  if ((m = /^boolean `(.*)`$/.exec(text))) return `the boolean ${m[1]}`;
  if (text === 'null' || text === 'unit value') return 'null';
  if (text === 'sequence') return 'an array';
  if (text === 'map') return 'an object';
  return text;
}

const shorten = (s) => (s.length > 40 ? `${s.slice(0, 39)}…` : s);

function expectedWords(text) {
  const t = text.trim();
  for (const [re, words] of EXPECTED) if (re.test(t)) return words;
  return t.replace(/\bu64\b/g, 'a non-negative integer');
}

/** serde's `` `a`, `b` `` list as `'a', 'b'`. */
const oneOf = (list) => list.replace(/`([^`]*)`/g, "'$1'").replace(/ or /g, ', ');

/**
 * A serde_json error message `message` about JSON `text` (the caller's value at path `base`,
 * as JSON.stringify made it; `bytes` its UTF-8 when the core read bytes), in JS words: the field
 * path, what was expected, what was given; no Rust type names or line/column. Anything not
 * recognised is kept, without its position.
 */
export function fromSerde(message, text, base) {
  const at = / at line (\d+) column (\d+)$/.exec(message);
  let body = at ? message.slice(0, at.index) : message;
  let path = base;
  // Without a position (serde_json::from_value), the whole text is the value to search.
  let value = typeof text === 'string' ? [0, text.length] : undefined;
  if (at && typeof text === 'string') {
    const offset = offsetOf(text, Number(at[1]), Number(at[2]));
    const found = pathAt(text, offset);
    path = base + found.path;
    value = found.closed;
  }
  let m;
  if ((m = /^invalid (?:type|value): (.*), expected (.*)$/s.exec(body))) {
    const got = given(m[1]);
    const expected = expectedWords(m[2]);
    // Inside a tagged object serde points after the object: find the field holding the value.
    if (value !== undefined) path += fieldOf(text, value, m[1], path) ?? '';
    return `${path} must be ${expected}, got ${got}`;
  }
  if ((m = /^missing field `(.*)`$/.exec(body))) return `${path}.${m[1]} is missing`;
  if ((m = /^unknown field `(.*)`, expected (?:one of )?(.*)$/.exec(body))) {
    const known = [...m[2].matchAll(/`([^`]*)`/g)].map((x) => x[1]);
    // serde points after the key: the path ends with it; without a position, find its object.
    const quoted = `[${JSON.stringify(m[1])}]`;
    let parent = path.endsWith(`.${m[1]}`) ? path.slice(0, -m[1].length - 1) : path.endsWith(quoted) ? path.slice(0, -quoted.length) : path;
    if (!at && value !== undefined) parent += ownerOf(text, value, m[1]) ?? '';
    return unknownKey(m[1], known, parent);
  }
  if ((m = /^unknown field `(.*)`, there are no fields$/.exec(body))) return `${path} has no fields, got ${m[1]}`;
  if ((m = /^unknown variant `(.*)`, expected (?:one of )?(.*)$/.exec(body))) {
    if (value !== undefined) path += fieldOf(text, value, `string ${JSON.stringify(m[1])}`, path) ?? '';
    return `${path} must be one of ${oneOf(m[2])}, got ${JSON.stringify(m[1])}`;
  }
  // (serde reads a struct from an array too, by position: the caller meant an object)
  if ((m = /^invalid length (\d+), expected struct \w+ with \d+ elements?$/.exec(body))) return `${path} must be an object, got an array`;
  if ((m = /^invalid length (\d+), expected (.*)$/.exec(body))) return `${path} must have ${m[2]}, got ${m[1]} items`;
  if (/^(lone leading surrogate in hex escape|unexpected end of hex escape|invalid unicode code point)$/.test(body)) {
    return `${path} must be well-formed Unicode, got a string with a lone surrogate`;
  }
  // Syntax: only a record value the caller read can be malformed JSON (partkit makes the rest).
  if ((m = /^EOF while parsing (?:an? )?(.*)$/.exec(body))) return `${base} is not valid JSON: it ends inside ${m[1] === 'list' ? 'an array' : m[1] === 'object' ? 'an object' : `a ${m[1]}`}`;
  if (/^(trailing characters|expected .*|key must be a string|control character .*|invalid (escape|number|unicode code point)|lone leading surrogate.*|recursion limit exceeded)$/.test(body)) {
    return `${base} is not valid JSON: ${body}${at ? ` (line ${at[1]}, byte ${at[2]})` : ''}`;
  }
  body = body.replace(/\bu64\b/g, 'non-negative integer');
  return path === base && !at ? `${base}: ${body}` : `${path}: ${body}`;
}

/** The UTF-16 index in `text` of serde's 1-based line and (byte) column. */
function offsetOf(text, line, column) {
  let i = 0;
  for (let l = 1; l < line; l++) {
    const nl = text.indexOf('\n', i);
    if (nl < 0) return text.length;
    i = nl + 1;
  }
  // Columns count UTF-8 bytes.
  let bytes = 0;
  while (i < text.length && bytes < column) {
    const c = text.codePointAt(i);
    bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
    i += c > 0xffff ? 2 : 1;
  }
  return i;
}

/**
 * The JS path (`[3].timestamp`) of the value that ends at `offset` of JSON `text` (an error
 * position of serde_json), and when the last thing read was a whole object or array, `closed`:
 * its [start, end) in `text`.
 */
function pathAt(text, offset) {
  const stack = []; // {array, key, index, expectKey}
  let closed;
  let i = 0;
  while (i < offset && i < text.length) {
    const c = text[i];
    const top = stack[stack.length - 1];
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      if (top && !top.array && top.expectKey) {
        try {
          top.key = JSON.parse(text.slice(i, j + 1));
        } catch {
          top.key = text.slice(i + 1, j);
        }
      }
      closed = undefined;
      i = j + 1;
      continue;
    }
    if (c === '{' || c === '[') {
      stack.push({array: c === '[', key: undefined, index: 0, expectKey: c === '{', start: i});
      closed = undefined;
    } else if (c === '}' || c === ']') {
      const frame = stack.pop();
      closed = frame ? [frame.start, i + 1] : undefined;
    } else if (c === ':' && top && !top.array) {
      top.expectKey = false;
    } else if (c === ',' && top) {
      if (top.array) top.index++;
      else top.expectKey = true;
      closed = undefined;
    } else if (!/\s/.test(c)) {
      closed = undefined;
    }
    i++;
  }
  let path = '';
  for (const f of stack) {
    if (f.array) path += `[${f.index}]`;
    else if (f.key !== undefined) path += /^[A-Za-z_$][\w$]*$/.test(f.key) ? `.${f.key}` : `[${JSON.stringify(f.key)}]`;
  }
  return {path, closed};
}

/** The serde_json phrases a message from the core starts its serde part with. */
const SERDE = /(lone leading surrogate|unexpected end of hex escape|invalid unicode code point|invalid type: |invalid value: |missing field `|unknown field `|unknown variant `|invalid length \d|expected .* at line \d+ column \d+|trailing characters|EOF while parsing|recursion limit exceeded)/;

/**
 * `message` with its serde part (if any) in JS words (`fromSerde`): the core's prefix (`event 3:
 * invalid event: `) is kept.
 */
export function reword(message, text, base) {
  const i = message.search(SERDE);
  if (i < 0) return message;
  try {
    return message.slice(0, i) + fromSerde(message.slice(i), text, base);
  } catch {
    return message;
  }
}

/**
 * `error`, when it is a `Class` from the core, with serde's words about JSON `text` (the value at
 * `path`) in JS words (`reword`): the field path, what was expected, what was given.
 */
export function inJsWords(Class, error, text, path) {
  if (error instanceof Class && typeof text === 'string') {
    error.message = boundMessage(reword(error.message, text, path));
    // the path the reworded message names, unless the error's own is more precise
    const named = pathOf(error.message, error.code);
    if (named.length >= (error.path?.length ?? 0)) error.path = named;
  }
  return error;
}

/** The path inside the value at `range` of `text` of the one object that has own key `key`. */
function ownerOf(text, range, key) {
  let object;
  try {
    object = JSON.parse(text.slice(range[0], range[1]));
  } catch {
    return undefined;
  }
  const found = [];
  const visit = (v, path, depth) => {
    if (v === null || typeof v !== 'object' || depth > 8) return;
    if (!Array.isArray(v) && Object.prototype.hasOwnProperty.call(v, key)) found.push(path);
    for (const [k, x] of Object.entries(v)) {
      visit(x, Array.isArray(v) ? `${path}[${k}]` : /^[A-Za-z_$][\w$]*$/.test(k) ? `${path}.${k}` : `${path}[${JSON.stringify(k)}]`, depth + 1);
    }
  };
  visit(object, '', 0);
  return found.length === 0 ? undefined : found.slice(0, 3).map((f, i) => (i === 0 ? f : ` or ${pathName}${f}`)).join('');
}

/** The path inside the object at `range` of `text` of the one field whose value serde describes. */
function fieldOf(text, range, serdeGiven, pathName = '') {
  let object;
  try {
    object = JSON.parse(text.slice(range[0], range[1]));
  } catch {
    return undefined;
  }
  let m;
  let match;
  if ((m = /^string "(.*)"$/s.exec(serdeGiven))) match = (v) => v === m[1];
  else if ((m = /^(?:integer|floating point) `(.*)`$/.exec(serdeGiven))) match = (v) => typeof v === 'number' && String(v) === m[1];
  else if ((m = /^boolean `(.*)`$/.exec(serdeGiven))) match = (v) => v === (m[1] === 'true');
  else if (serdeGiven === 'null' || serdeGiven === 'unit value') match = (v) => v === null;
  else if (serdeGiven === 'sequence') match = (v) => Array.isArray(v);
  else if (serdeGiven === 'map') match = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
  else return undefined;
  const found = [];
  const visit = (v, path, depth) => {
    if (depth > 0 && match(v)) found.push(path);
    if (v !== null && typeof v === 'object' && depth < 8) {
      for (const [k, x] of Object.entries(v)) {
        visit(x, Array.isArray(v) ? `${path}[${k}]` : /^[A-Za-z_$][\w$]*$/.test(k) ? `${path}.${k}` : `${path}[${JSON.stringify(k)}]`, depth + 1);
      }
    }
  };
  visit(object, '', 0);
  return found.length === 1 ? found[0] : undefined;
}
