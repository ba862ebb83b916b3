// `partkit objects`: which keys of a listing one partition processes, Go-compatible; and the
// object-partitioning part of the demo.
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
    .argument('[file]', 'keys, one per line; a key ending in / is a directory (- or nothing: stdin)', '-')
    .action((file, opts) => {
      const keys = lines(readText(file));
      const src = source(opts);
      if (opts.plan) {
        planReport(api, keys, opts.total, src, (l) => console.log(l));
        return;
      }
      if (opts.index === undefined) throw new Error('--index is required unless --plan is given');
      const picked = api.partitionObjects(keys, opts.total, opts.index, src);
      process.stdout.write(picked.map((k) => `${k}\n`).join(''));
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
