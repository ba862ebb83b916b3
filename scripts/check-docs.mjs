#!/usr/bin/env node
// The docs check (`npm run test:docs`, part of `npm test` right after the build), so the docs
// cannot rot:
// - README.md has at most 200 lines;
// - every relative link and image in README.md, CONTRIBUTING.md and docs/*.md points to a file
//   that exists, and every `#anchor` (in the same file or in another Markdown file) to a heading
//   there (GitHub's heading ids);
// - every code block marked js, javascript, mjs, cjs, ts or typescript parses (esbuild);
// - a block preceded by `<!-- docs-check: run -->` also runs, against the built package
//   (`require('partkit')` resolves to this package's `exports`, i.e. dist/), and each line
//   `expression; // => value` asserts that the expression deep-equals the value.
// Every problem is reported as file:line; the exit code is 1 if there is any.
// `node scripts/check-docs.mjs [--parse-only] [FILE...]` checks only those files; `--parse-only`
// runs no block (no build needed).
import {spawnSync} from 'node:child_process';
import {chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {createRequire} from 'node:module';
import {dirname, join, relative, resolve} from 'node:path';
import {fileURLToPath} from 'node:url';
import {inspect, isDeepStrictEqual} from 'node:util';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const README_MAX_LINES = 200;
const JS_LANGS = new Map([
  ['js', 'js'], ['javascript', 'js'], ['mjs', 'js'], ['cjs', 'js'], ['jsx', 'jsx'],
  ['ts', 'ts'], ['typescript', 'ts'], ['tsx', 'tsx'],
]);
const RUN_MARKER = /^<!--\s*docs-check:\s*run\s*-->$/;

/** GitHub's heading id: lower case, punctuation dropped, each space a hyphen. */
export function slug(heading) {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // links: their text
    .replace(/<[^>]+>/g, '') // inline HTML
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/**
 * Reads one Markdown text: headings (as ids, duplicates numbered like GitHub), links outside
 * code (with their line), and fenced code blocks (language, first line, text, run marker).
 */
export function parseMarkdown(text) {
  const lines = text.split('\n');
  const anchors = new Set();
  const seen = new Map();
  const links = [];
  const blocks = [];
  let fence = null;
  let prev = ''; // the last non-blank line outside code
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (fence) {
      if (line.trimStart().startsWith(fence.marker) && line.trim().replace(/[`~]/g, '') === '') {
        blocks.push({lang: fence.lang, line: fence.line, code: fence.body.join('\n'), run: fence.run});
        fence = null;
        prev = line.trim();
      } else fence.body.push(line);
      continue;
    }
    const open = /^\s{0,3}(`{3,}|~{3,})\s*([\w+-]*)/.exec(line);
    if (open) {
      fence = {marker: open[1], lang: open[2].toLowerCase(), line: i + 2, body: [], run: RUN_MARKER.test(prev)};
      continue;
    }
    const heading = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const base = slug(heading[1].replace(/`/g, ''));
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      anchors.add(n === 0 ? base : `${base}-${n}`);
    }
    // Links outside inline code: [text](target), ![alt](target), [ref]: target.
    const prose = line.replace(/(`+)[^`]*?\1/g, (m) => ' '.repeat(m.length));
    for (const m of prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) links.push({target: m[1], line: i + 1});
    const def = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(\s|$)/.exec(prose);
    if (def) links.push({target: def[1], line: i + 1});
    if (line.trim() !== '') prev = line.trim();
  }
  if (fence) blocks.push({lang: fence.lang, line: fence.line, code: fence.body.join('\n'), run: fence.run, unclosed: true});
  return {lines: lines.length, anchors, links, blocks};
}

const isExternal = (target) => /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//');

/** Problems with the links of one parsed file (`file` relative to `base`). */
export function checkLinks(file, parsed, readParsed, base = root) {
  const problems = [];
  for (const {target, line} of parsed.links) {
    if (isExternal(target)) continue;
    const hash = target.indexOf('#');
    const path = decodeURIComponent(hash < 0 ? target : target.slice(0, hash));
    const anchor = hash < 0 ? null : decodeURIComponent(target.slice(hash + 1));
    let targetFile = file;
    if (path !== '') {
      const abs = resolve(base, dirname(file), path);
      if (!existsSync(abs)) {
        problems.push(`${file}:${line}: broken link ${target}: ${relative(base, abs)} does not exist`);
        continue;
      }
      targetFile = relative(base, abs);
      if (anchor === null) continue;
      if (!targetFile.endsWith('.md') || statSync(abs).isDirectory()) {
        problems.push(`${file}:${line}: link ${target}: an anchor into a file that is not Markdown`);
        continue;
      }
    }
    if (anchor === null || anchor === '') continue;
    const anchors = targetFile === file ? parsed.anchors : readParsed(targetFile).anchors;
    if (!anchors.has(anchor)) {
      problems.push(`${file}:${line}: broken anchor ${target}: ${targetFile} has no heading #${anchor}` +
        ` (its headings: ${[...anchors].map((a) => `#${a}`).join(' ') || 'none'})`);
    }
  }
  return problems;
}

/**
 * Turns `expr; // => value` lines into assertions. Returns the rewritten code and how many
 * assertions it holds; a `// =>` after a statement that is not an expression is a problem.
 */
export function instrument(code, firstLine, file) {
  let count = 0;
  const problems = [];
  const out = code.split('\n').map((text, i) => {
    const m = /^(\s*)(.+?);?\s*\/\/ => (.+?)\s*$/.exec(text);
    if (!m) return text;
    if (/^(const|let|var|if|for|while|return|import|export|function|class|throw|try|\})\b/.test(m[2])) {
      problems.push(`${file}:${firstLine + i}: '// =>' must follow an expression, not '${m[2].split(' ')[0]}'`);
      return text;
    }
    count++;
    return `${m[1]}__expect((${m[2]}), (${m[3]}), ${firstLine + i});`;
  });
  return {code: out.join('\n'), count, problems};
}

async function checkBlocks(file, parsed, esbuild, requireFromRoot) {
  const problems = [];
  let parsedCount = 0;
  let ran = 0;
  let assertions = 0;
  for (const block of parsed.blocks) {
    if (block.unclosed) problems.push(`${file}:${block.line - 1}: code block never closed`);
    const loader = JS_LANGS.get(block.lang);
    if (!loader) {
      if (block.run) problems.push(`${file}:${block.line - 1}: docs-check: run on a block that is not JS/TS (${block.lang || 'no language'})`);
      continue;
    }
    // Parse: as an ES module, so top-level await and imports are fine.
    try {
      await esbuild.transform(block.code, {loader, format: 'esm', logLevel: 'silent'});
      parsedCount++;
    } catch (e) {
      for (const err of e.errors ?? [{text: e.message}]) {
        const at = err.location ? block.line + err.location.line - 1 : block.line;
        problems.push(`${file}:${at}: ${block.lang} code block does not parse: ${err.text}`);
      }
      continue;
    }
    if (!block.run || !requireFromRoot) continue;
    const inst = instrument(block.code, block.line, file);
    problems.push(...inst.problems);
    let js;
    try {
      js = (await esbuild.transform(inst.code, {loader, format: 'cjs', logLevel: 'silent'})).code;
    } catch (e) {
      problems.push(`${file}:${block.line}: code block cannot be compiled to run: ${e.errors?.[0]?.text ?? e.message}`);
      continue;
    }
    const expect = (actual, expected, line) => {
      if (!isDeepStrictEqual(actual, expected)) {
        throw Object.assign(new Error(`expected ${inspect(expected)}, got ${inspect(actual)}`), {docLine: line});
      }
      assertions++;
    };
    try {
      const module = {exports: {}};
      // eslint-disable-next-line no-new-func
      new Function('require', 'module', 'exports', '__expect', js)(requireFromRoot, module, module.exports, expect);
      ran++;
    } catch (e) {
      problems.push(`${file}:${e.docLine ?? block.line}: code block failed when run: ${e.message}`);
    }
  }
  return {problems, parsedCount, ran, assertions};
}

const SHELL_LANGS = new Set(['sh', 'bash', 'shell', 'console']);
const CALLS_PARTKIT = /(^|[|;&]\s*|\$\(\s*)(npx\s+)?partkit(\s|$)/;

/**
 * The commands of a shell block: `{command, expected, status, line}` for each `$ ` line (the
 * lines after it are its stdout), and problems for lines that call partkit without `$ `.
 */
export function shellCommands(block, file) {
  const commands = [];
  const problems = [];
  block.code.split('\n').forEach((text, i) => {
    const line = block.line + i;
    const m = /^\$ (.*)$/.exec(text);
    if (m) {
      const status = /#\s*exit\s+(\d+)\s*$/.exec(m[1]);
      commands.push({command: m[1], expected: [], status: status ? Number(status[1]) : 0, line});
    } else if (commands.length) {
      commands[commands.length - 1].expected.push(text);
    } else if (CALLS_PARTKIT.test(text.trim())) {
      problems.push(`${file}:${line}: a partkit command line must be written '$ partkit …' (followed by its output) so that it runs`);
    }
  });
  for (const c of commands) while (c.expected.length && c.expected[c.expected.length - 1].trim() === '') c.expected.pop();
  return {commands, problems};
}

/** A scratch directory with `partkit` and `npx` on PATH (npx runs its arguments). */
function shellSandbox() {
  const dir = mkdtempSync(join(tmpdir(), 'partkit-docs-'));
  const bin = join(dir, '.bin');
  spawnSync('mkdir', [bin]);
  writeFileSync(join(bin, 'partkit'), `#!/bin/sh\nexec node ${JSON.stringify(join(root, 'js', 'cli.mjs'))} "$@"\n`);
  writeFileSync(join(bin, 'npx'), '#!/bin/sh\nexec "$@"\n');
  chmodSync(join(bin, 'partkit'), 0o755);
  chmodSync(join(bin, 'npx'), 0o755);
  return {dir, env: {...process.env, PATH: `${bin}:${process.env.PATH}`, NO_COLOR: '1'}};
}

/** Runs the shell blocks of one file; returns problems and how many commands ran. */
function checkShell(file, parsed, run) {
  const problems = [];
  let ran = 0;
  let box = null;
  for (const block of parsed.blocks) {
    if (!SHELL_LANGS.has(block.lang)) continue;
    const {commands, problems: p} = shellCommands(block, file);
    problems.push(...p);
    if (!run) continue;
    for (const c of commands) {
      box ??= shellSandbox();
      const r = spawnSync('bash', ['-o', 'pipefail', '-c', c.command], {cwd: box.dir, env: box.env, encoding: 'utf8', timeout: 60000});
      ran++;
      const got = r.stdout.replace(/\s+$/, '').split('\n').map((l) => l.replace(/\s+$/, ''));
      const want = c.expected.map((l) => l.replace(/\s+$/, ''));
      if (r.status !== c.status) {
        problems.push(`${file}:${c.line}: '${c.command}' exited ${r.status ?? r.signal}, expected ${c.status}${r.stderr ? `; stderr: ${r.stderr.trim().slice(0, 500)}` : ''}`);
      } else if (want.length && !isDeepStrictEqual(got, want)) {
        problems.push(`${file}:${c.line}: '${c.command}' printed:\n${got.join('\n')}\n  expected:\n${want.join('\n')}`);
      }
    }
  }
  if (box) rmSync(box.dir, {recursive: true, force: true});
  return {problems, ran};
}

/** Runs the checker on a small synthetic tree, so a checker that finds nothing cannot pass. */
function selfTest() {
  const fails = [];
  const same = (a, b, what) => isDeepStrictEqual(a, b) || fails.push(`${what}: ${inspect(a)} != ${inspect(b)}`);
  same(slug("Where Go's code differs from its documentation"), 'where-gos-code-differs-from-its-documentation', 'slug');
  same(slug('The Kafka broker (tansu)'), 'the-kafka-broker-tansu', 'slug');
  same(slug('Task coordination: the protocol'), 'task-coordination-the-protocol', 'slug');
  const md = parseMarkdown([
    '# A', '## A', 'See [b](#a-1), [c](#nope), `[x](not-a-link.md)` and [d](missing.md).',
    '<!-- docs-check: run -->', '```ts', 'f(1); // => 2', '```', '```js', 'const x = ;', '```',
  ].join('\n'));
  same([...md.anchors], ['a', 'a-1'], 'anchors');
  same(md.links.map((l) => l.target), ['#a-1', '#nope', 'missing.md'], 'links');
  same(md.blocks.map((b) => [b.lang, b.line, b.run]), [['ts', 6, true], ['js', 9, false]], 'blocks');
  const problems = checkLinks('docs/self-test.md', md, () => md);
  same(problems.length, 2, `broken links found (${problems.join('; ')})`);
  same(instrument('f(1); // => 2', 6, 'x').code, '__expect((f(1)), (2), 6);', 'instrument');
  const sh = shellCommands({line: 3, code: '$ partkit a | x  # exit 1\nout\n\n$ echo\nnpx partkit b'}, 'f');
  same(sh.commands.map((c) => [c.command, c.expected, c.status, c.line]), [['partkit a | x  # exit 1', ['out'], 1, 3], ['echo', ['npx partkit b'], 0, 6]], 'shell commands');
  same(shellCommands({line: 1, code: 'npx partkit b\ncat x | partkit c\nnpm run demo'}, 'f').problems.length, 2, 'unrun partkit lines');
  if (fails.length) {
    console.error(`check-docs: self-test failed:\n  ${fails.join('\n  ')}`);
    process.exit(1);
  }
}

async function main() {
  selfTest();
  const parseOnly = process.argv.includes('--parse-only');
  const args = process.argv.slice(2).filter((a) => a !== '--parse-only');
  const files = args.length
    ? args.map((f) => relative(root, resolve(f)))
    : ['README.md', 'CONTRIBUTING.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];
  const cache = new Map();
  const readParsed = (file) => {
    if (!cache.has(file)) cache.set(file, parseMarkdown(readFileSync(join(root, file), 'utf8')));
    return cache.get(file);
  };
  if (!parseOnly && !existsSync(join(root, 'dist', 'index.cjs'))) {
    console.error('check-docs: dist/index.cjs is missing: build first (node scripts/build.mjs)');
    process.exit(1);
  }
  const esbuild = await import('esbuild');
  const requireFromRoot = createRequire(join(root, 'scripts', 'check-docs.mjs'));
  const problems = [];
  const totals = {links: 0, blocks: 0, ran: 0, assertions: 0, commands: 0};
  for (const file of files) {
    const parsed = readParsed(file);
    if (file === 'README.md' && parsed.lines - 1 > README_MAX_LINES) {
      problems.push(`README.md:${README_MAX_LINES + 1}: README.md has ${parsed.lines - 1} lines; the front door keeps to ${README_MAX_LINES} (move reference material to docs/)`);
    }
    problems.push(...checkLinks(file, parsed, readParsed));
    const b = await checkBlocks(file, parsed, esbuild, parseOnly ? null : requireFromRoot);
    problems.push(...b.problems);
    totals.links += parsed.links.filter((l) => !isExternal(l.target)).length;
    totals.blocks += b.parsedCount;
    totals.ran += b.ran;
    totals.assertions += b.assertions;
    const sh = checkShell(file, parsed, !parseOnly);
    problems.push(...sh.problems);
    totals.commands += sh.ran;
  }
  if (problems.length) {
    console.error(`check-docs: ${problems.length} problem(s):\n${problems.map((p) => `  ${p}`).join('\n')}`);
    process.exit(1);
  }
  console.error(`check-docs: ${files.length} files ok: ${totals.links} relative links, ${totals.blocks} JS/TS blocks parsed, ` +
    `${totals.ran} run with ${totals.assertions} checked results, ${totals.commands} CLI lines run`);
}

await main();
