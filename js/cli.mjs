#!/usr/bin/env node
// The `partkit` command. Each domain registers its subcommands and its part of the demo.
// Conventions (js/cli/io.mjs, docs/cli.md): stdout carries only the result (text, or JSON with
// --json), everything else goes to stderr; exit 0 success, 1 the check or input failed, 2 usage.
import {createRequire} from 'node:module';
import {Command, CommanderError} from 'commander';
import * as bucketing from './cli/bucketing.mjs';
import * as objects from './cli/objects.mjs';
import * as imports from './cli/imports.mjs';
import * as lifecycle from './cli/lifecycle.mjs';
import * as sync from './cli/sync.mjs';
import {UsageError, failure, leaf, result, say, wantsJson} from './cli/io.mjs';

const require = createRequire(import.meta.url);
const api = require('../dist/index.cjs');
const {version} = require('../package.json');

const DOMAINS = [bucketing, objects, imports, lifecycle, sync];

// A reader that closed stdout (`partkit demo | head -2`) ends the command quietly.
const closedPipe = (error) => {
  if (error?.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
};
process.stdout.on('error', closedPipe);
process.stderr.on('error', closedPipe);

const program = new Command('partkit')
  .description('Deterministic partitioning for data connectors')
  .version(version)
  .showHelpAfterError('(partkit <command> --help shows its options and an example)')
  .exitOverride()
  .configureOutput({
    writeOut: (s) => process.stdout.write(s),
    writeErr: (s) => process.stderr.write(s),
    outputError: (s, write) => write(s.replace(/^error: /, 'partkit: error: ')),
  });

for (const domain of DOMAINS) domain.register(program, api);

leaf(program, 'demo', 'show what partkit does, on sample data shipped with the package', 'partkit demo | head -12').action(
  async (opts) => {
    const text = [];
    const out = (line = '') => (opts.json ? text.push(line) : process.stdout.write(`${line}\n`));
    for (const domain of DOMAINS) if (domain.demo) await domain.demo(api, out);
    if (!opts.json) return;
    // --json: the demo's sections, each with its heading and lines.
    const sections = [];
    for (const line of text) {
      const h = /^== (.*) ==$/.exec(line);
      if (h) sections.push({section: h[1], lines: []});
      else if (sections.length && line !== '') sections[sections.length - 1].lines.push(line);
    }
    result(opts, sections, () => []);
  },
);

program.parseAsync(process.argv).catch((error) => {
  if (error instanceof CommanderError) {
    // --help and --version exit 0; commander has already printed its own usage errors (on
    // stderr; with --json also as JSON on stdout).
    process.exitCode = error.exitCode === 0 ? 0 : 2;
    if (error.exitCode !== 0 && wantsJson()) {
      process.stdout.write(`${JSON.stringify(failure({code: 'USAGE', message: error.message.replace(/^error: /, '')}), null, 2)}\n`);
    }
    return;
  }
  say('error', `${error.code && !(error instanceof UsageError) ? `[${error.code}] ` : ''}${error.message}`);
  // --json: stdout is JSON on every path, a failure included
  if (wantsJson()) process.stdout.write(`${JSON.stringify(failure(error), null, 2)}\n`);
  process.exitCode = error instanceof UsageError ? 2 : 1;
});
