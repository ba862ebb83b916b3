#!/usr/bin/env node
// The docs check (`npm run test:docs`, part of `npm test` right after the build), so the docs
// cannot rot:
// - README.md has at most 200 lines, none over 200 characters;
// - every relative link and image in README.md, CONTRIBUTING.md, CHANGELOG.md and docs/*.md points to a file
//   that exists, and every `#anchor` (in the same file or in another Markdown file) to a heading
//   there (GitHub's heading ids); a link to a file of this repository
//   (`https://github.com/partkit/partkit/blob/v<version>/<path>`) is checked the same way, and
//   names the tag of package.json's version;
// - README.md is read where the package is installed: its relative links point only to files
//   the tarball ships (`npm pack --dry-run`), and in the installed tarball every relative link
//   of its Markdown files (README.md, CHANGELOG.md, ...) resolves to an installed file;
// - every speed figure of README.md and docs/ (a ratio such as `9.1×`; in README's Speed section
//   and in paragraphs that cite `npm run bench` or benchmarks.md, times too) appears in
//   docs/benchmarks.md, where the bench's results are written (pages that log past measurements,
//   such as docs/wasm-design.md, are exempt);
// - every code block marked js, javascript, mjs, cjs, ts or typescript parses (esbuild);
// - every such block type-checks with tsc under `strict`, `exactOptionalPropertyTypes` and
//   `noUncheckedIndexedAccess` (module resolution nodenext) against the types of the PACKED
//   package: `npm pack`, the tarball installed in a project under the OS temp dir, as a user has it;
// - a block preceded by `<!-- docs-check: run -->` also runs there (`partkit` is the installed
//   tarball), and each line `expression; // => value` asserts that the expression deep-equals
//   the value. The comment may go on over more lines: `before: FILE` / `after: FILE` put a
//   TypeScript module of this repository before / after the block (an in-memory transport, then
//   assertions), other lines are TypeScript put before the block for the type check only
//   (`declare const taskId: string;` for a name the prose around it defines);
//   `<!-- docs-check: declare ... -->` is that without running.
// Every problem is reported as file:line; the exit code is 1 if there is any.
// `node scripts/check-docs.mjs [--parse-only] [--keep] [FILE...]` checks only those files;
// `--parse-only` packs nothing, type-checks and runs no block or CLI line; `--keep` keeps the
// temp project.
import {execFileSync, spawnSync} from 'node:child_process';
import {chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {dirname, join, relative, resolve} from 'node:path';
import {fileURLToPath, pathToFileURL} from 'node:url';
import {inspect, isDeepStrictEqual} from 'node:util';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const README_MAX_LINES = 200;
const README_MAX_COLUMNS = 200;
const JS_LANGS = new Map([
  ['js', 'js'], ['javascript', 'js'], ['mjs', 'js'], ['cjs', 'js'], ['jsx', 'jsx'],
  ['ts', 'ts'], ['typescript', 'ts'], ['tsx', 'tsx'],
]);
const DIRECTIVE_START = /^<!--\s*docs-check:/;

/**
 * A `<!-- docs-check: ... -->` comment right before a code block: `run` (the block runs), and/or
 * `declare` followed by TypeScript on the same line (`declare const taskId: string;`) or on the
 * lines below. The lines after the first: `before: FILE` and
 * `after: FILE` (TypeScript modules, relative to the repository, put before and after the block
 * for the type check and the run: an in-memory transport, then assertions), or TypeScript put
 * before the block for the type check only (e.g. `declare const taskId: string;` for a name the
 * surrounding prose defines).
 */
function parseDirective(lines, firstLine) {
  const text = lines.join('\n').replace(DIRECTIVE_START, '').replace(/-->\s*$/, '');
  const [head, ...rest] = text.split('\n');
  // `run`, then `declare`: on one line, `declare ...` is TypeScript (`declare const x: T; ...`).
  const m = /^\s*(run\b)?\s*(declare\b.*)?$/.exec(head);
  const d = {run: Boolean(m?.[1]), prelude: '', before: null, after: null, directiveLine: firstLine, problems: []};
  if (!m) d.problems.push(`a docs-check comment starts with 'run' or 'declare', not '${head.trim()}'`);
  const prelude = m?.[2] && m[2].trim() !== 'declare' ? [m[2].trim()] : [];
  for (const line of rest) {
    const m = /^\s*(before|after):\s*(\S+)\s*$/.exec(line);
    if (m) d[m[1]] = m[2];
    else prelude.push(line);
  }
  d.prelude = prelude.join('\n').trim();
  return d;
}

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
  let directive = null; // a `<!-- docs-check: ... -->` comment, while it is the last non-blank line
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (fence) {
      if (line.trimStart().startsWith(fence.marker) && line.trim().replace(/[`~]/g, '') === '') {
        blocks.push({lang: fence.lang, line: fence.line, code: fence.body.join('\n'), ...fence.directive});
        fence = null;
        prev = line.trim();
        directive = null;
      } else fence.body.push(line);
      continue;
    }
    if (DIRECTIVE_START.test(line)) {
      const start = i;
      while (i < lines.length - 1 && !lines[i].includes('-->')) i++;
      directive = parseDirective(lines.slice(start, i + 1), start + 1);
      prev = lines[i].trim();
      continue;
    }
    const open = /^\s{0,3}(`{3,}|~{3,})\s*([\w+-]*)/.exec(line);
    if (open) {
      const d = directive && prev.endsWith('-->') ? directive : {run: false, prelude: '', before: null, after: null};
      fence = {marker: open[1], lang: open[2].toLowerCase(), line: i + 2, body: [], directive: d};
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
    if (line.trim() !== '') {
      prev = line.trim();
      directive = null;
    }
  }
  if (fence) blocks.push({lang: fence.lang, line: fence.line, code: fence.body.join('\n'), ...fence.directive, unclosed: true});
  return {lines: lines.length, anchors, links, blocks};
}

const isExternal = (target) => /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//');
const VERSION = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
/** A link to a file of this repository at a tag: `https://github.com/partkit/partkit/blob/<ref>/<path>`. */
const REPO_BLOB = /^https:\/\/github\.com\/partkit\/partkit\/blob\/([^/]+)\/([^#]+)(#.*)?$/;

/**
 * Problems with the links of one parsed file (`file` relative to `base`). Links to this
 * repository's files (REPO_BLOB, from the files users read outside the repository) are checked
 * like relative ones, from `root`, and must name the tag of this version, `v<version>`.
 */
export function checkLinks(file, parsed, readParsed, base = root, version = VERSION) {
  const problems = [];
  for (const {target: written, line} of parsed.links) {
    const repo = base === root ? REPO_BLOB.exec(written) : null;
    if (repo && repo[1] !== `v${version}`) {
      problems.push(`${file}:${line}: link ${written}: a link to the repository names the tag of this version, v${version}, not ${repo[1]}`);
      continue;
    }
    const target = repo ? `/${repo[2]}${repo[3] ?? ''}` : written;
    if (isExternal(target)) continue;
    const hash = target.indexOf('#');
    const path = decodeURIComponent(hash < 0 ? target : target.slice(0, hash));
    const anchor = hash < 0 ? null : decodeURIComponent(target.slice(hash + 1));
    let targetFile = file;
    if (path !== '') {
      const abs = path.startsWith('/') ? join(base, path) : resolve(base, dirname(file), path);
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
  const lines = [];
  const problems = [];
  const out = code.split('\n').map((text, i) => {
    const m = /^(\s*)(.+?);?\s*\/\/ => (.+?)\s*$/.exec(text);
    if (!m) return text;
    if (/^(const|let|var|if|for|while|return|import|export|function|class|throw|try|\})\b/.test(m[2])) {
      problems.push(`${file}:${firstLine + i}: '// =>' must follow an expression, not '${m[2].split(' ')[0]}'`);
      return text;
    }
    count++;
    lines.push(firstLine + i);
    return `${m[1]}__expect((${m[2]}), (${m[3]}), ${firstLine + i});`;
  });
  return {code: out.join('\n'), count, lines, problems};
}

/** The compiler options every TS/JS block is type-checked with: a strict project of today. */
export const STRICT_OPTIONS = {
  strict: true,
  exactOptionalPropertyTypes: true,
  noUncheckedIndexedAccess: true,
  module: 'nodenext',
  moduleResolution: 'nodenext',
  moduleDetection: 'force',
  target: 'es2022',
  lib: ['es2023'],
  types: ['node'],
  allowJs: true,
  checkJs: true,
  noEmit: true,
  skipLibCheck: true,
};

/**
 * The extension a block is checked and run as: `.cts`/`.cjs` when it uses `require` and no
 * `import` statement, else an ES module (`.mts`/`.mjs`, top-level await allowed).
 */
function extensionOf(block, loader) {
  const commonjs = block.lang === 'cjs' || (block.lang !== 'mjs' && /\brequire\(/.test(block.code) && !/^\s*import\s/m.test(block.code));
  if (loader === 'ts') return commonjs ? '.cts' : '.mts';
  return commonjs ? '.cjs' : '.mjs';
}

/**
 * A block as one module: its `before` file, its prelude, the block, its `after` file; with a map
 * from the module's lines back to where they were written.
 */
function assemble(file, block, code, ext) {
  const parts = [];
  const problems = [];
  const read = (rel) => {
    try {
      return readFileSync(join(root, rel), 'utf8').replace(/\n$/, '');
    } catch {
      problems.push(`${file}:${block.directiveLine}: docs-check file ${rel} does not exist`);
      return '';
    }
  };
  if (block.before) parts.push({text: read(block.before), where: (l) => `${block.before}:${l}`});
  if (block.prelude) parts.push({text: block.prelude, where: () => `${file}:${block.directiveLine}`});
  parts.push({text: code, where: (l) => `${file}:${block.line + l - 1}`});
  if (block.after) parts.push({text: read(block.after), where: (l) => `${block.after}:${l}`});
  const lines = [];
  const origin = [];
  for (const part of parts) {
    part.text.split('\n').forEach((text, i) => {
      lines.push(text);
      origin.push(part.where(i + 1));
    });
  }
  return {text: `${lines.join('\n')}\n`, origin, problems};
}

/**
 * Type-checks every JS/TS block of `files` in `project` (the packed tarball installed) with tsc
 * and `STRICT_OPTIONS`. Returns problems as file:line.
 */
function typeCheck(project, blocks) {
  const dir = join(project, 'blocks');
  rmSync(dir, {recursive: true, force: true});
  mkdirSync(dir);
  const origins = new Map();
  const problems = [];
  blocks.forEach(({file, block, loader}, i) => {
    const ext = extensionOf(block, loader);
    const name = `${file.replace(/[^\w]+/g, '_')}_${block.line}${ext}`;
    const a = assemble(file, block, block.code, ext);
    problems.push(...a.problems);
    writeFileSync(join(dir, name), a.text);
    origins.set(`blocks/${name}`, a.origin);
  });
  writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({compilerOptions: STRICT_OPTIONS, include: ['blocks']}, null, 2));
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  if (!existsSync(tsc)) return [...problems, 'check-docs: node_modules/typescript is missing: npm install (it is a devDependency)'];
  let out = '';
  try {
    execFileSync(process.execPath, [tsc, '-p', project, '--pretty', 'false'], {cwd: project, encoding: 'utf8'});
  } catch (e) {
    out = `${e.stdout ?? ''}${e.stderr ?? ''}`;
    if (!out.trim()) out = String(e.message);
  }
  let last = null;
  for (const line of out.split('\n')) {
    const m = /^(.+?)\((\d+),(\d+)\): error (TS\d+): (.*)$/.exec(line);
    if (m) {
      const origin = origins.get(m[1].replace(/\\/g, '/'));
      const at = origin ? origin[Number(m[2]) - 1] ?? m[1] : `${m[1]}:${m[2]}`;
      last = `${at}: ${m[4]} (strict TypeScript): ${m[5]}`;
      problems.push(last);
    } else if (line.trim() && last) {
      problems[problems.length - 1] += ` ${line.trim()}`; // a continued message
    } else if (line.trim()) {
      problems.push(`tsc: ${line.trim()}`);
    }
  }
  return problems;
}

/**
 * Runs the blocks marked `run` as modules of `project`, so `partkit` is the installed tarball.
 * `// => value` lines become assertions.
 */
async function runBlocks(project, blocks, esbuild) {
  const dir = join(project, 'run');
  rmSync(dir, {recursive: true, force: true});
  mkdirSync(dir);
  const problems = [];
  let ran = 0;
  let assertions = 0;
  const reached = new Set();
  globalThis.__expect = (actual, expected, line) => {
    reached.add(line);
    if (!isDeepStrictEqual(actual, expected)) {
      throw Object.assign(new Error(`expected ${inspect(expected)}, got ${inspect(actual)}`), {docLine: line});
    }
    assertions++;
  };
  for (const {file, block, loader} of blocks) {
    if (!block.run) continue;
    const inst = instrument(block.code, block.line, file);
    problems.push(...inst.problems);
    const ext = extensionOf(block, loader);
    const a = assemble(file, block, inst.code, ext);
    problems.push(...a.problems);
    let js;
    try {
      const format = /^\.c/.test(ext) ? 'cjs' : 'esm';
      js = (await esbuild.transform(a.text, {loader, format, logLevel: 'silent', sourcefile: file})).code;
    } catch (e) {
      problems.push(`${file}:${block.line}: code block cannot be compiled to run: ${e.errors?.[0]?.text ?? e.message}`);
      continue;
    }
    const path = join(dir, `${file.replace(/[^\w]+/g, '_')}_${block.line}${ext.replace('t', 'j')}`);
    writeFileSync(path, js);
    try {
      await import(pathToFileURL(path).href);
      ran++;
      for (const line of inst.lines) if (!reached.has(line)) problems.push(`${file}:${line}: '// =>' line never reached when the block ran`);
    } catch (e) {
      problems.push(`${e.docLine ? `${file}:${e.docLine}` : `${file}:${block.line}`}: code block failed when run: ${e.message}`);
    }
  }
  delete globalThis.__expect;
  return {problems, ran, assertions};
}

/** Parses every JS/TS block of one file (esbuild, as an ES module). */
async function parseBlocks(file, parsed, esbuild) {
  const problems = [];
  const ok = [];
  for (const block of parsed.blocks) {
    if (block.unclosed) problems.push(`${file}:${block.line - 1}: code block never closed`);
    for (const p of block.problems ?? []) problems.push(`${file}:${block.directiveLine}: ${p}`);
    const loader = JS_LANGS.get(block.lang);
    if (!loader) {
      if (block.run || block.prelude || block.before || block.after) {
        problems.push(`${file}:${block.line - 1}: docs-check on a block that is not JS/TS (${block.lang || 'no language'})`);
      }
      continue;
    }
    try {
      await esbuild.transform(block.code, {loader, format: 'esm', logLevel: 'silent'});
      ok.push({file, block, loader});
    } catch (e) {
      for (const err of e.errors ?? [{text: e.message}]) {
        const at = err.location ? block.line + err.location.line - 1 : block.line;
        problems.push(`${file}:${at}: ${block.lang} code block does not parse: ${err.text}`);
      }
    }
  }
  return {problems, ok};
}

// Speed figures: a ratio (`9.1×`; `4 × x`, with a space, is a product, not a figure) and, where a
// text quotes the bench (README's Speed section, a paragraph naming `npm run bench` or
// benchmarks.md), a time (`64 ms`, `0.19 s`). Ranges and pairs (`1.5–1.8×`, `2 to 3 µs`, `1.07 / 0.95 µs`)
// are two figures.
const RATIO = /(?<![\w.,])(\d[\d,]*(?:\.\d+)?)(?:[–-](\d[\d,]*(?:\.\d+)?))?×/g;
const TIME = /(?<![\w.,])(\d[\d,]*(?:\.\d+)?)(?:(?:[–-]|\s(?:to|\/)\s)(\d[\d,]*(?:\.\d+)?))?\s(ns|µs|ms|s)\b/g;
/** Pages that keep a log of past measurements (before and after a change), not current claims. */
const MEASUREMENT_LOGS = new Set(['docs/benchmarks.md', 'docs/wasm-design.md', 'docs/history.md']);

/** The figures of one text: `9.1×`, `64 ms`; `times` adds the times. */
export function figures(text, times) {
  const found = [];
  for (const m of text.matchAll(RATIO)) found.push(...[m[1], m[2]].filter(Boolean).map((n) => `${n}×`));
  if (times) for (const m of text.matchAll(TIME)) found.push(...[m[1], m[2]].filter(Boolean).map((n) => `${n} ${m[3]}`));
  return found;
}

/**
 * Every speed figure README.md and docs/ quote appears in docs/benchmarks.md, where `npm run
 * bench` results are written: a quoted figure that disagrees with the measurement is a problem.
 */
export function speedFigureProblems(file, text, measured) {
  const problems = [];
  const lines = text.split('\n');
  let inCode = false;
  let speedSection = false;
  let paragraph = [];
  const CITES = /npm run bench(?!:)|benchmarks\.md/;
  const report = (f, i) => {
    if (!measured.has(f)) problems.push(`${file}:${i + 1}: speed figure ${f} is not in docs/benchmarks.md (quote what \`npm run bench\` measured there)`);
  };
  // A paragraph's sentences: the times of a sentence that cites the bench are quoted figures.
  const flush = () => {
    let text = '';
    const starts = [];
    for (const {t, i} of paragraph) {
      starts.push({at: text.length, i});
      text += t + ' ';
    }
    const lineAt = (pos) => starts.filter((s) => s.at <= pos).pop().i;
    for (const m of text.matchAll(/[^]+?(?:[.;](?=\s+[A-Z(`*])|$)/g)) {
      const sentence = m[0];
      const times = speedSection || CITES.test(sentence);
      const prose = sentence.replace(/`[^`]*`/g, (c) => ' '.repeat(c.length));
      for (const r of [...prose.matchAll(RATIO), ...(times ? prose.matchAll(TIME) : [])]) {
        for (const f of figures(r[0], times)) report(f, lineAt(m.index + r.index));
      }
    }
    paragraph = [];
  };
  lines.forEach((t, i) => {
    if (/^\s{0,3}(```|~~~)/.test(t)) {
      inCode = !inCode;
      return;
    }
    if (inCode) return;
    if (/^#{1,6}\s/.test(t)) {
      flush();
      speedSection = file === 'README.md' && /^##\s+Speed\b/.test(t);
      return;
    }
    if (t.trim() === '' || /^\s*([-*]|\d+\.)\s|^\s*\|/.test(t)) flush();
    if (t.trim() !== '') paragraph.push({t, i});
  });
  flush();
  return problems;
}

/** The files `npm pack` puts in the tarball (its dry run, without the build). */
function packedFiles() {
  const [{files}] = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts', '--loglevel=error'], {cwd: root, encoding: 'utf8'}));
  return new Set(files.map((f) => f.path));
}

/**
 * README.md is read where the package is installed (and on the registry's page): each of its
 * relative links must point to a file the tarball ships; links to docs/ and the rest of the
 * repository are absolute (REPO_BLOB, checked above against this repository).
 */
function unshippedLinks(file, parsed, shipped = packedFiles()) {
  const problems = [];
  for (const {target, line} of parsed.links) {
    if (isExternal(target) || target.startsWith('#')) continue;
    const path = decodeURIComponent(target.split('#')[0]);
    if (!shipped.has(path)) {
      problems.push(`${file}:${line}: link ${target}: the tarball does not ship ${path}; link https://github.com/partkit/partkit/blob/v${VERSION}/${path} or add it to package.json "files"`);
    }
  }
  return problems;
}

/**
 * The Markdown files of the installed package (README.md, CHANGELOG.md, ...): every relative link
 * resolves to a file installed with it, and every anchor to a heading there.
 */
function installedLinkProblems(project) {
  const dir = join(project, 'node_modules', 'partkit');
  const problems = [];
  const read = (f) => parseMarkdown(readFileSync(join(dir, f), 'utf8'));
  for (const f of readdirSync(dir).filter((f) => f.endsWith('.md'))) {
    for (const p of checkLinks(f, read(f), read, dir)) problems.push(`installed tarball: ${p}`);
  }
  return problems;
}

/**
 * `npm pack`, then a project under the OS temp dir that installs the tarball as a user does,
 * with the optional peers and Node's types linked from this repository's node_modules.
 */
function packedProject() {
  const dir = mkdtempSync(join(tmpdir(), 'partkit-docs-'));
  const quiet = {cwd: dir, stdio: ['ignore', 'ignore', 'inherit']};
  execFileSync('npm', ['pack', '--silent', '--pack-destination', dir], {...quiet, cwd: root});
  const tarball = readdirSync(dir).find((f) => f.endsWith('.tgz'));
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({name: 'partkit-docs-check', private: true, type: 'module'})}\n`);
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--no-package-lock', '--loglevel=error', `./${tarball}`], quiet);
  for (const name of ['kafkajs', '@aws-sdk/client-s3', '@types/node']) {
    const link = join(dir, 'node_modules', name);
    mkdirSync(dirname(link), {recursive: true});
    if (!existsSync(link)) symlinkSync(join(root, 'node_modules', name), link, 'dir');
  }
  return dir;
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
  const d = parseMarkdown(['<!-- docs-check: declare', 'declare const x: number;', 'after: a.ts', '-->', '```ts', 'x;', '```'].join('\n'));
  same(d.blocks.map((b) => [b.run, b.prelude, b.after, b.line]), [[false, 'declare const x: number;', 'a.ts', 6]], 'directive');
  const one = parseMarkdown(['<!-- docs-check: declare const y: string; -->', '```ts', 'y;', '```'].join('\n'));
  same(one.blocks.map((b) => [b.run, b.prelude]), [[false, 'declare const y: string;']], 'one-line directive');
  const problems = checkLinks('docs/self-test.md', md, () => md);
  same(problems.length, 2, `broken links found (${problems.join('; ')})`);
  const blob = 'https://github.com/partkit/partkit/blob';
  const abs = parseMarkdown(`[a](${blob}/v9.9.9/README.md) [b](${blob}/v1.0.0/README.md) [c](${blob}/v9.9.9/nope.md) [d](${blob}/v9.9.9/README.md#nope)`);
  same(checkLinks('README.md', abs, () => parseMarkdown('# partkit'), root, '9.9.9').length, 3, 'repository links checked against the repository and the version');
  same(figures('about 9.1× and 1.5–1.8×, 4 × 5, 64 ms / 0.19 s, 2,000 ms, 1.2 / 3 µs, 4 to 5 ns', true), ['9.1×', '1.5×', '1.8×', '64 ms', '0.19 s', '2,000 ms', '1.2 µs', '3 µs', '4 ns', '5 ns'], 'figures');
  same(speedFigureProblems('README.md', '## Speed\n\n| a | 9× and 3 ms |\n\n## More\n\n5 ms here, 2.0× there', new Set(['3 ms'])).length, 2, 'speed figures');
  same(unshippedLinks('README.md', parseMarkdown('[a](LICENSE) [b](docs/x.md) [c](#a) [d](https://x.org)'), new Set(['LICENSE'])).length, 1, 'unshipped links');
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
  const keep = process.argv.includes('--keep');
  const args = process.argv.slice(2).filter((a) => !a.startsWith('--'));
  const files = args.length
    ? args.map((f) => relative(root, resolve(f)))
    : ['README.md', 'CONTRIBUTING.md', 'CHANGELOG.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];
  const cache = new Map();
  const readParsed = (file) => {
    if (!cache.has(file)) cache.set(file, parseMarkdown(readFileSync(join(root, file), 'utf8')));
    return cache.get(file);
  };
  const esbuild = await import('esbuild');
  const bench = readFileSync(join(root, 'docs', 'benchmarks.md'), 'utf8');
  const measured = new Set(figures(bench, true));
  const problems = [];
  const blocks = [];
  let links = 0;
  let commands = 0;
  for (const file of files) {
    const parsed = readParsed(file);
    if (file === 'README.md' && parsed.lines - 1 > README_MAX_LINES) {
      problems.push(`README.md:${README_MAX_LINES + 1}: README.md has ${parsed.lines - 1} lines; the front door keeps to ${README_MAX_LINES} (move reference material to docs/)`);
    }
    if (file === 'README.md') {
      readFileSync(join(root, file), 'utf8').split('\n').forEach((text, i) => {
        if (text.length > README_MAX_COLUMNS) problems.push(`README.md:${i + 1}: a line of ${text.length} characters; README keeps to ${README_MAX_COLUMNS} (wrap it)`);
      });
      problems.push(...unshippedLinks(file, parsed));
    }
    problems.push(...checkLinks(file, parsed, readParsed));
    if (!MEASUREMENT_LOGS.has(file)) problems.push(...speedFigureProblems(file, readFileSync(join(root, file), 'utf8'), measured));
    const b = await parseBlocks(file, parsed, esbuild);
    problems.push(...b.problems);
    blocks.push(...b.ok);
    links += parsed.links.filter((l) => !isExternal(l.target)).length;
    const sh = checkShell(file, parsed, !parseOnly);
    problems.push(...sh.problems);
    commands += sh.ran;
  }
  let summary = `${files.length} files ok: ${links} relative links, ${blocks.length} JS/TS blocks parsed`;
  if (!parseOnly) {
    const project = packedProject();
    try {
      problems.push(...installedLinkProblems(project));
      problems.push(...typeCheck(project, blocks));
      const r = await runBlocks(project, blocks, esbuild);
      problems.push(...r.problems);
      summary += ` and type-checked (strict, exactOptionalPropertyTypes, noUncheckedIndexedAccess) against the packed tarball, ${r.ran} run with ${r.assertions} checked results, ${commands} CLI lines run`;
    } finally {
      if (keep) console.error(`check-docs: the project is kept in ${project}`);
      else rmSync(project, {recursive: true, force: true});
    }
  }
  if (problems.length) {
    console.error(`check-docs: ${problems.length} problem(s):\n${problems.map((p) => `  ${p}`).join('\n')}`);
    process.exit(1);
  }
  console.error(`check-docs: ${summary}`);
}

await main();
