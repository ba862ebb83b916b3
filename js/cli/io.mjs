// Small I/O helpers shared by the CLI subcommands.
import {readFileSync} from 'node:fs';
import {dirname, join} from 'node:path';
import {fileURLToPath} from 'node:url';

/** The text of FILE, or of stdin when FILE is `-`. */
export function readText(file) {
  return readFileSync(file === '-' ? 0 : file, 'utf8');
}

/** Parsed JSON from FILE (or stdin), with the file name in the error. */
export function readJson(file) {
  const text = readText(file);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`${file === '-' ? 'stdin' : file}: invalid JSON: ${error.message}`);
  }
}

/** Non-empty lines, without trailing CR. */
export function lines(text) {
  return text.split('\n').map((l) => l.replace(/\r$/, '')).filter((l) => l.length > 0);
}

/** A positive integer option, or an error naming the option. */
export function integerOption(name) {
  return (value) => {
    if (!/^\d+$/.test(value)) throw new Error(`${name} must be a non-negative integer, got '${value}'`);
    return Number(value);
  };
}

/** Path of a sample file shipped under data/. */
export function sample(name) {
  return join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'data', name);
}
