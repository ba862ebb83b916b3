// Small I/O helpers shared by the CLI subcommands, and the conventions every command follows:
// stdout carries only the command's result (text, or JSON with --json); notes, warnings, logs
// and errors go to stderr; exit 0 on success, 1 when the check or the input failed, 2 on a usage
// error (a UsageError, or one of commander's); a closed stdout ends the command quietly;
// NO_COLOR turns colour off.
import {readFileSync} from 'node:fs';
import {dirname, join} from 'node:path';
import {fileURLToPath} from 'node:url';

/** A usage error: wrong options or arguments (exit 2). */
export class UsageError extends Error {
  code = 'USAGE';
}

/**
 * An input file that cannot be read (`INPUT_UNREADABLE`) or parsed (`INPUT_INVALID_JSON`): exit 1,
 * and with --json a `{"ok": false, "error": {code, message}}` like any other failure.
 */
export class InputError extends Error {
  constructor(message, code) {
    super(message);
    this.code = code;
  }
}

/** Whether the command line asks for JSON output (before commander has parsed it, or after it failed). */
export const wantsJson = (argv = process.argv) => argv.slice(2).includes('--json');

/** The JSON a failed command prints on stdout with --json. */
export function failure(error) {
  return {ok: false, error: {code: error.code ?? 'ERROR', message: error.message, ...(error.path === undefined ? {} : {path: error.path})}};
}

/** Throws a UsageError. */
export function usage(message) {
  throw new UsageError(message);
}

/** Whether colour goes to stderr: a terminal, or FORCE_COLOR; never with NO_COLOR set. */
export function colour() {
  if (process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== '') return false;
  if (process.env.FORCE_COLOR !== undefined && process.env.FORCE_COLOR !== '0') return true;
  return Boolean(process.stderr.isTTY);
}

const paint = (code, text) => (colour() ? `\x1b[${code}m${text}\x1b[0m` : text);

/** One line on stderr: `partkit: <kind>: message` (kind coloured on a terminal). */
export function say(kind, message) {
  const label = kind === 'error' ? paint('31', 'error') : kind === 'warning' ? paint('33', 'warning') : kind;
  process.stderr.write(`partkit: ${label}: ${message}\n`);
}

/** Writes the result: `value` as JSON with --json, else the text lines of `text(value)`. */
export function result(opts, value, text) {
  if (opts.json) process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  else {
    const lines = text(value);
    if (lines.length) process.stdout.write(`${lines.join('\n')}\n`);
  }
}

/**
 * A leaf command of `parent`: `--json`, and an Example section in its --help (`example`: a
 * command line that runs as it is, from any directory).
 */
export function leaf(parent, name, description, example) {
  return parent
    .command(name)
    .description(description)
    .option('--json', 'print the result as JSON on stdout')
    .addHelpText('after', `\nExample:\n  $ ${example}\n`);
}

/** The text of FILE, or of stdin when FILE is `-`. */
export function readText(file) {
  try {
    return readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (error) {
    const where = file === '-' ? 'stdin' : file;
    if (error.code === 'ENOENT') throw new InputError(`${where}: no such file`, 'INPUT_UNREADABLE');
    if (error.code === 'EISDIR') throw new InputError(`${where}: is a directory`, 'INPUT_UNREADABLE');
    throw new InputError(`${where}: cannot be read: ${error.message}`, 'INPUT_UNREADABLE');
  }
}

/** Parsed JSON from FILE (or stdin), with the file name in the error. */
export function readJson(file) {
  const text = readText(file);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InputError(`${file === '-' ? 'stdin' : file}: invalid JSON: ${error.message}`, 'INPUT_INVALID_JSON');
  }
}

/**
 * Values from JSON text that is either one array (`[…]`) or JSON lines (one value per non-blank
 * line); `lines` tells which, so output can keep the input's format.
 */
export function parseJsonArrayOrLines(text, file) {
  const where = file === '-' ? 'stdin' : file;
  if (text.trimStart().startsWith('[')) {
    try {
      return {items: JSON.parse(text), lines: false};
    } catch (error) {
      throw new InputError(`${where}: invalid JSON: ${error.message}`, 'INPUT_INVALID_JSON');
    }
  }
  const items = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.replace(/\r$/, '');
    if (line.trim() === '') return;
    try {
      items.push(JSON.parse(line));
    } catch (error) {
      throw new InputError(`${where}:${i + 1}: invalid JSON line: ${error.message}`, 'INPUT_INVALID_JSON');
    }
  });
  return {items, lines: true};
}

/** Non-empty lines, without trailing CR. */
export function lines(text) {
  return text.split('\n').map((l) => l.replace(/\r$/, '')).filter((l) => l.length > 0);
}

/** A non-negative integer option, or a usage error naming the option. */
export function integerOption(name) {
  return (value) => {
    if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) {
      usage(`${name} must be a non-negative integer, got '${value}'`);
    }
    return Number(value);
  };
}

/** Path of a sample file shipped under data/. */
export function sample(name) {
  return join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'data', name);
}
