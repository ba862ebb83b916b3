// `partkit objects`: which keys of a listing one partition processes, Go-compatible; and the
// object-partitioning part of the demo.
import {createReadStream} from 'node:fs';
import {once} from 'node:events';
import {integerOption, leaf, lines, readText, result, sample, say, usage} from './io.mjs';

const TYPES = ['none', 'object', 'regex', 'substring', 'date'];
/** The options that apply to one --type only. */
const TYPE_OPTIONS = [
  ['pattern', '--pattern', 'regex'],
  ['start', '--start', 'substring'],
  ['end', '--end', 'substring'],
  ['dateFormat', '--date-format', 'date'],
];
/** The options that apply with --s3 only. */
const S3_OPTIONS = [
  ['endpoint', '--endpoint'],
  ['region', '--region'],
  ['pageSize', '--page-size'],
];

/** Refuses options that do not apply to the chosen --type (or mode), naming what they belong to. */
function checkOptions(opts) {
  if (opts.type !== undefined && !TYPES.includes(opts.type)) {
    usage(`--type must be one of ${TYPES.join(', ')}, got '${opts.type}'`);
  }
  for (const [key, flag, type] of TYPE_OPTIONS) {
    if (opts[key] !== undefined && opts.type !== type) {
      usage(`${flag} applies to --type ${type} only, ${opts.type === undefined ? 'and no --type was given' : `not to --type ${opts.type}`}`);
    }
  }
  if (!opts.s3) {
    for (const [key, flag] of S3_OPTIONS) if (opts[key] !== undefined) usage(`${flag} applies with --s3 only`);
  }
  if (opts.plan && opts.index !== undefined) usage('--index does not apply with --plan, which prints every partition');
  if (!opts.plan && opts.index === undefined) usage('--index is required unless --plan is given');
}

/** Warnings about the source (e.g. a date layout with no Go layout element), on stderr. */
function warn(warnings) {
  for (const w of warnings ?? []) say('warning', w);
}

/** The SourceSpec of the options. */
function source(opts) {
  return {
    key: opts.prefix ?? '',
    partition: {
      type: opts.type ?? '',
      pattern: opts.pattern,
      startIndex: opts.start,
      endIndex: opts.end,
      dateFormat: opts.dateFormat,
    },
  };
}

/** `{counts, fallback, directories, keys, warnings}` of a listing. */
function plan(api, keys, total, src) {
  const p = new api.ObjectPartitioner(total, src);
  try {
    const s = p.stats(keys);
    return {counts: s.counts, fallback: s.fallback, directories: s.directories, keys: keys.length, warnings: s.warnings ?? []};
  } finally {
    p.free();
  }
}

function planText(s) {
  const width = String(Math.max(...s.counts, 0)).length;
  const out = s.counts.map((count, i) => `partition ${i}\t${String(count).padStart(width)}`);
  out.push(`keys ${s.keys}, directories ${s.directories}, fallback to partition 0: ${s.fallback}`);
  return out;
}

/** Progress on stderr (pages, keys, rate) when it is a terminal. */
function progress() {
  if (!process.stderr.isTTY) return {onPage: undefined, done: () => {}};
  const start = Date.now();
  let last = '';
  return {
    onPage: ({pages, keys, selected}) => {
      const rate = keys / Math.max(1e-3, (Date.now() - start) / 1000);
      last = `pages ${pages}, keys ${keys}, selected ${selected}, ${Math.round(rate)} keys/s`;
      process.stderr.write(`\r${last}\x1b[K`);
    },
    done: () => last && process.stderr.write('\n'),
  };
}

/** `--s3`: list with partkit/s3 and print this partition's keys (or the plan). */
async function fromS3(api, opts) {
  if (opts.prefix !== undefined) usage('--prefix does not apply with --s3: the key is the s3:// URL\'s path');
  const s3 = await import('../s3/index.mjs');
  const {S3Client} = await import('@aws-sdk/client-s3');
  const {bucket, key} = s3.parseS3Url(opts.s3);
  const src = {...source({...opts, prefix: key}), bucket};
  const client = new S3Client({
    region: opts.region ?? process.env.AWS_REGION ?? 'us-east-1',
    ...(opts.endpoint ? {endpoint: opts.endpoint, forcePathStyle: true} : {}),
  });
  const ac = new AbortController();
  const stop = () => ac.abort(new Error('interrupted'));
  process.once('SIGINT', stop);
  const p = progress();
  const options = {signal: ac.signal, pageSize: opts.pageSize, onPage: p.onPage};
  try {
    if (opts.plan) {
      const s = await s3.stats(client, src, opts.total, options);
      p.done();
      warn(s.warnings);
      result(opts, s, () => {
        const width = String(Math.max(...s.counts, 0)).length;
        const out = s.counts.map((count, i) => `partition ${i}\t${String(count).padStart(width)}\t${s.bytes[i]} bytes`);
        out.push(`keys ${s.objects}, directories ${s.directories}, fallback to partition 0: ${s.fallback}, pages ${s.pages}`);
        return out;
      });
      return;
    }
    let buf = '';
    const keys = [];
    for await (const o of s3.listPartition(client, src, opts.total, opts.index, options)) {
      if (opts.json) {
        keys.push(o.key);
        continue;
      }
      buf += `${o.key}\n`;
      if (buf.length > 1 << 16) {
        process.stdout.write(buf);
        buf = '';
      }
    }
    p.done();
    if (opts.json) result(opts, keys, () => []);
    else process.stdout.write(buf);
  } finally {
    process.removeListener('SIGINT', stop);
    client.destroy();
  }
}

/**
 * The bytes path: FILE (or stdin) streamed through a LineSelector, only the kept lines written
 * to stdout as raw bytes (no key becomes a JS string).
 */
async function selectStream(api, file, total, index, src) {
  const p = new api.ObjectPartitioner(total, src);
  const selector = p.lineSelector(index);
  const input = file === '-' ? process.stdin : createReadStream(file, {highWaterMark: 1 << 20});
  try {
    for await (const chunk of input) {
      const out = selector.selectBytes(chunk);
      if (out.length > 0 && !process.stdout.write(out)) await once(process.stdout, 'drain');
    }
    const out = selector.selectBytes(new Uint8Array(0), {final: true});
    if (out.length > 0) process.stdout.write(out);
  } finally {
    selector.free();
    p.free();
  }
}

export function register(program, api) {
  leaf(
    program,
    'objects',
    'print the keys (one per line) that partition INDEX of TOTAL processes, exactly as the Go S3 partitioner does',
    "printf 'logs/user1/a\\nlogs/user2/b\\nlogs/user3/c\\n' | partkit objects --total 2 --index 1 --prefix 'logs/*' --type regex --pattern 'user(\\d+)' -",
  )
    .requiredOption('--total <n>', 'number of partitions (job count)', integerOption('--total'))
    .option('--index <i>', '0-based partition index (required unless --plan)', integerOption('--index'))
    .option('--prefix <p>', 'the listing prefix (SourceSpec.Key), e.g. logs/*')
    .option('--type <t>', `partition key type: ${TYPES.join(', ')}`)
    .option('--pattern <re>', 'regex: Go (RE2) pattern')
    .option('--start <n>', 'substring: start index (code points)', integerOption('--start'))
    .option('--end <n>', 'substring: end index (exclusive)', integerOption('--end'))
    .option('--date-format <layout>', 'date: Go time layout, e.g. 2006-01-02')
    .option('--plan', "print every partition's count and the fallback count instead")
    .option('--s3 <url>', 'list s3://bucket/key with ListObjectsV2 instead of reading keys (partkit/s3; credentials from the AWS SDK default chain)')
    .option('--endpoint <url>', 'with --s3: an S3-compatible endpoint (path-style requests)')
    .option('--region <r>', 'with --s3: the region (default: AWS_REGION, else us-east-1)')
    .option('--page-size <n>', 'with --s3: ListObjectsV2 MaxKeys (1-1000)', integerOption('--page-size'))
    .argument('[file]', 'keys, one per line; a key ending in / is a directory (- or nothing: stdin)', '-')
    .action(async (file, opts) => {
      checkOptions(opts);
      if (opts.s3) {
        if (file !== '-') usage(`a FILE does not apply with --s3 (got '${file}')`);
        await fromS3(api, opts);
        return;
      }
      const src = source(opts);
      if (opts.plan) {
        const s = plan(api, lines(readText(file)), opts.total, src);
        warn(s.warnings);
        result(opts, s, planText);
        return;
      }
      if (opts.json) {
        const keys = lines(readText(file));
        const p = new api.ObjectPartitioner(opts.total, src);
        try {
          warn(p.stats([]).warnings);
          result(opts, p.select(keys, opts.index), () => []);
        } finally {
          p.free();
        }
        return;
      }
      warn(plan(api, [], opts.total, src).warnings);
      await selectStream(api, file, opts.total, opts.index, src);
    });
}

export function demo(api, out) {
  const keys = lines(readText(sample('s3-keys.txt')));
  out('== Object partitioning: 3 workers split one S3 listing exactly as Go workers would ==');
  out(`listing (${keys.length} keys, data/s3-keys.txt): ${keys.slice(0, 3).join(', ')}, …`);
  const runs = [
    ['object', {key: 'logs/*', partition: {type: 'object'}}, ''],
    ['regex', {key: 'logs/*', partition: {type: 'regex', pattern: 'user(\\d+)'}}, " --pattern 'user(\\d+)'"],
    ['date', {key: 'logs/*', partition: {type: 'date', dateFormat: '2006-01-02'}}, ' --date-format 2006-01-02'],
    ['substring', {key: 'logs/', partition: {type: 'substring', startIndex: 5, endIndex: 10}}, ' --start 5 --end 10'],
  ];
  for (const [type, src, flags] of runs) {
    out();
    out(`$ partkit objects --total 3 --prefix '${src.key}' --type ${type}${flags} --plan keys.txt`);
    for (const l of planText(plan(api, keys, 3, src))) out(l);
  }
  out();
  out("$ partkit objects --total 3 --index 2 --prefix 'logs/*' --type regex --pattern 'user(\\d+)' keys.txt | head -4");
  for (const k of api.partitionObjects(keys, 3, 2, runs[1][1]).slice(0, 4)) out(k);
  out();
  out('Go layout tokens apply: "2024-02-30" is "day out of range" and falls back to partition 0;');
  out('Go RE2 syntax applies: \\d is ASCII, (?=…) is rejected with Go\'s message:');
  for (const partition of [{type: 'regex', pattern: 'user(?=\\d)'}, {type: 'date', dateFormat: '12006'}, {type: 'substring', startIndex: 4, endIndex: 4}]) {
    try {
      api.validatePartitionConfig(partition);
    } catch (error) {
      out(`  ${JSON.stringify(partition)} -> [${error.code}] ${error.message}`);
    }
  }
  out();
}
