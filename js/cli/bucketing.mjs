// `partkit bucket | validate | next | spread`, and the bucketing part of the demo.
import {integerOption, lines, readJson, readText, sample} from './io.mjs';

const DEMO_KEY = 'farosai/airbyte-github-source';

function histogram(dist, write, width = 40) {
  const top = Math.max(1, dist.max);
  dist.counts.forEach((count, i) => {
    const bar = '█'.repeat(Math.round((count / top) * width));
    write(`${String(i + 1).padStart(6)}  ${String(count).padStart(8)}  ${bar}`);
  });
  write(
    `entities ${dist.entities}, buckets ${dist.bucketTotal}: min ${dist.min}, max ${dist.max}, ` +
      `mean ${dist.mean.toFixed(2)}, spread ${(dist.spread * 100).toFixed(1)}%`,
  );
}

function validateReport(api, config, write) {
  const notes = [];
  try {
    api.validateBucketingConfig(config, (m) => notes.push(m));
  } catch (error) {
    for (const n of notes) write(`note: ${n}`);
    write(`error [${error.code ?? 'ERROR'}]: ${error.message}`);
    return false;
  }
  for (const n of notes) write(`note: ${n}`);
  write('ok');
  return true;
}

function nextReport(api, config, state, write) {
  const {config: cfg, state: st} = api.applyRoundRobinBucketing(config, state ?? undefined, (m) => write(`log: ${m}`));
  write(`bucket ${cfg.bucket_id ?? 1}`);
  write(JSON.stringify(st ?? {}, null, 2));
}

export function register(program, api) {
  program
    .command('bucket')
    .description('print entity<TAB>bucket for each entity (- reads entities from stdin, one per line)')
    .requiredOption('--key <key>', 'the bucketing namespace, e.g. farosai/airbyte-github-source')
    .requiredOption('--total <n>', 'bucket_total', integerOption('--total'))
    .argument('[entities...]', 'entity ids, or - for stdin')
    .action((entities, opts) => {
      const list = entities.length === 1 && entities[0] === '-' ? lines(readText('-')) : entities;
      const buckets = api.bucketMany(opts.key, list, opts.total);
      process.stdout.write(list.map((e, i) => `${e}\t${buckets[i]}\n`).join(''));
    });

  program
    .command('validate')
    .description('validate the bucketing fields of a connector config; exit 1 on error')
    .argument('<config>', 'CONFIG.json (- for stdin)')
    .action((file) => {
      if (!validateReport(api, readJson(file), (l) => console.log(l))) process.exitCode = 1;
    });

  program
    .command('next')
    .description('choose the bucket of the next run and print it with the new state')
    .argument('<config>', 'CONFIG.json')
    .argument('[state]', 'STATE.json (the connector state of the previous run)')
    .action((configFile, stateFile) => {
      const config = readJson(configFile);
      api.validateBucketingConfig(config);
      nextReport(api, config, stateFile ? readJson(stateFile) : undefined, (l) => console.log(l));
    });

  program
    .command('spread')
    .description('show how the entities of FILE (one per line) spread over buckets')
    .requiredOption('--key <key>', 'the bucketing namespace')
    .requiredOption('--total <n>', 'bucket_total', integerOption('--total'))
    .argument('<file>', 'entity ids, one per line (- for stdin)')
    .action((file, opts) => {
      histogram(api.bucketDistribution(opts.key, lines(readText(file)), opts.total), (l) => console.log(l));
    });
}

export function demo(api, out) {
  const repos = lines(readText(sample('repos.txt')));
  out('== Bucketing: which worker syncs which repository ==');
  out(`$ partkit bucket --key ${DEMO_KEY} --total 4 ${repos.slice(0, 6).join(' ')}`);
  const first = repos.slice(0, 6);
  const b = api.bucketMany(DEMO_KEY, first, 4);
  first.forEach((r, i) => out(`${r}\t${b[i]}`));
  out();
  out('$ partkit validate config.json   # {"bucket_total": 4, "bucket_id": 5}');
  validateReport(api, {bucket_total: 4, bucket_id: 5}, out);
  out('$ partkit validate config.json   # {"bucket_total": 6, "round_robin_bucket_execution": true, "bucket_ranges": "2-3,5"}');
  const config = {bucket_total: 6, round_robin_bucket_execution: true, bucket_ranges: '2-3,5'};
  validateReport(api, config, out);
  out();
  out('$ partkit next config.json state.json   # state: {"__bucket_execution_state": {"last_executed_bucket_id": 3}}');
  nextReport(api, config, {__bucket_execution_state: {last_executed_bucket_id: 3}}, out);
  out(`next 12 runs: ${api.roundRobinSchedule(config, undefined, 12).join(' ')}`);
  out();
  out(`$ partkit spread --key ${DEMO_KEY} --total 8 repos.txt   # ${repos.length} sample repositories`);
  histogram(api.bucketDistribution(DEMO_KEY, repos, 8), out);
  out();
}
