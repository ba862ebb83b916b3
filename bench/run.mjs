#!/usr/bin/env node
// `npm run bench`: runs every bench/<domain>.mjs (each exports `run(api, report)`) and prints
// markdown tables. Ratios compare implementations measured in this same run.
import {readdirSync} from 'node:fs';
import {createRequire} from 'node:module';
import {dirname, join} from 'node:path';
import {fileURLToPath, pathToFileURL} from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const api = createRequire(import.meta.url)('../dist/index.cjs');
const only = process.argv.slice(2);

function report(title, columns, rows) {
  console.log(`\n### ${title}\n`);
  console.log(`| ${columns.join(' | ')} |`);
  console.log(`| ${columns.map(() => '---').join(' | ')} |`);
  for (const row of rows) console.log(`| ${row.join(' | ')} |`);
}

console.log(`partkit bench — node ${process.version}, ${process.platform}/${process.arch}`);
for (const file of readdirSync(here).sort()) {
  if (!file.endsWith('.mjs') || file === 'run.mjs' || file.startsWith('_')) continue;
  if (only.length && !only.includes(file.replace(/\.mjs$/, ''))) continue;
  const mod = await import(pathToFileURL(join(here, file)).href);
  await mod.run(api, report);
}
