// `partkit objects`: which keys of a listing one partition processes, Go-compatible; and the
// object-partitioning part of the demo.
import {createReadStream} from 'node:fs';
import {once} from 'node:events';
import {integerOption, lines, readText, sample} from './io.mjs';

const TYPES = ['', 'none', 'object', 'regex', 'substring', 'date'];

/** The SourceSpec of the options; an unknown --type gets Go's message from the core. */
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

function planReport(api, keys, total, src, write) {
  const p = new api.ObjectPartitioner(total, src);
  const s = p.stats(keys);
  const width = String(Math.max(...s.counts, 0)).length;
  s.counts.forEach((count, i) => write(`partition ${i}\t${String(count).padStart(width)}`));
  write(`keys ${keys.length}, directories ${s.directories}, fallback to partition 0: ${s.fallback}`);
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
async function fromS3(api, opts, write) {
  if (opts.prefix !== undefined) throw new Error('--prefix and --s3 exclude each other: the key is the s3:// URL\'s path');
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
      const width = String(Math.max(...s.counts, 0)).length;
      s.counts.forEach((count, i) => write(`partition ${i}\t${String(count).padStart(width)}\t${s.bytes[i]} bytes`));
      write(`keys ${s.objects}, directories ${s.directories}, fallback to partition 0: ${s.fallback}, pages ${s.pages}`);
      return;
    }
    if (opts.index === undefined) throw new Error('--index is required unless --plan is given');
    let buf = '';
    for await (const o of s3.listPartition(client, src, opts.total, opts.index, options)) {
      buf += `${o.key}\n`;
      if (buf.length > 1 << 16) {
        process.stdout.write(buf);
        buf = '';
      }
    }
    p.done();
    process.stdout.write(buf);
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
  program
    .command('objects')
    .description('print the keys (one per line) that partition INDEX of TOTAL processes, exactly as the Go S3 partitioner does')
    .requiredOption('--total <n>', 'number of partitions (job count)', integerOption('--total'))
    .option('--index <i>', '0-based partition index (required unless --plan)', integerOption('--index'))
    .option('--prefix <p>', 'the listing prefix (SourceSpec.Key), e.g. logs/*')
    .option('--type <t>', `partition key type: ${TYPES.filter(Boolean).join(', ')}`)
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
      if (opts.s3) {
        await fromS3(api, opts, (l) => console.log(l));
        return;
      }
      const src = source(opts);
      if (opts.plan) {
        planReport(api, lines(readText(file)), opts.total, src, (l) => console.log(l));
        return;
      }
      if (opts.index === undefined) throw new Error('--index is required unless --plan is given');
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
    planReport(api, keys, 3, src, out);
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
