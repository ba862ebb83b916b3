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
      throw new Error(`${where}: invalid JSON: ${error.message}`);
    }
  }
  const items = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.replace(/\r$/, '');
    if (line.trim() === '') return;
    try {
      items.push(JSON.parse(line));
    } catch (error) {
      throw new Error(`${where}:${i + 1}: invalid JSON line: ${error.message}`);
    }
  });
  return {items, lines: true};
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
