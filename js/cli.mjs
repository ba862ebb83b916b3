#!/usr/bin/env node
// The `partkit` command. Each domain registers its subcommands and its part of the demo.
import {createRequire} from 'node:module';
import {Command} from 'commander';
import * as bucketing from './cli/bucketing.mjs';
import * as objects from './cli/objects.mjs';
import * as imports from './cli/imports.mjs';
import * as lifecycle from './cli/lifecycle.mjs';
import * as sync from './cli/sync.mjs';

const require = createRequire(import.meta.url);
const api = require('../dist/index.cjs');
const {version} = require('../package.json');

const DOMAINS = [bucketing, objects, imports, lifecycle, sync];

const program = new Command('partkit')
  .description('Deterministic partitioning for data connectors')
  .version(version)
  .showHelpAfterError();

for (const domain of DOMAINS) domain.register(program, api);

program
  .command('demo')
  .description('show what partkit does, on sample data shipped with the package')
  .action(async () => {
    const out = (line = '') => process.stdout.write(`${line}\n`);
    for (const domain of DOMAINS) if (domain.demo) await domain.demo(api, out);
  });

program.parseAsync(process.argv).catch((error) => {
  process.stderr.write(`partkit: ${error.code ? `[${error.code}] ` : ''}${error.message}\n`);
  process.exitCode = 1;
});
