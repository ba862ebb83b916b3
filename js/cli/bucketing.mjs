// `partkit bucket | validate | next | spread`, and the bucketing part of the demo.
import {integerOption, leaf, lines, readJson, readText, result, sample, say} from './io.mjs';

const DEMO_KEY = 'farosai/airbyte-github-source';

function histogram(dist, width = 40) {
  const top = Math.max(1, dist.max);
  const out = dist.counts.map((count, i) => {
    const bar = '█'.repeat(Math.round((count / top) * width));
    return `${String(i + 1).padStart(6)}  ${String(count).padStart(8)}  ${bar}`;
  });
  out.push(
    `entities ${dist.entities}, buckets ${dist.bucketTotal}: min ${dist.min}, max ${dist.max}, ` +
      `mean ${dist.mean.toFixed(2)}, spread ${(dist.spread * 100).toFixed(1)}%`,
  );
  return out;
}

/**
 * `{ok, warnings, notes, error?}`: the result of validating `config`; `warnings` are its keys
 * that nearly match a bucketing key (`bucketingConfigWarnings`), which do not fail it.
 */
function validation(api, config) {
  const notes = [];
  let warnings = [];
  try {
    warnings = api.bucketingConfigWarnings(config).map(({code, path, message}) => ({code, path, message}));
    api.validateBucketingConfig(config, (m) => notes.push(m));
  } catch (error) {
    if (!(error instanceof api.PartkitError)) throw error;
    return {ok: false, warnings, notes: plain(notes), error: {code: error.code, path: error.path, message: error.message}};
  }
  return {ok: true, warnings, notes: plain(notes)};
}

/** The logger's lines but its warnings (which `validation` gives apart). */
const plain = (notes) => notes.filter((n) => !n.startsWith('Warning: '));

/** `{bucket, config, state, log}`: the bucket of the next run and the new config and state. */
function next(api, config, state) {
  const log = [];
  api.validateBucketingConfig(config);
  const {config: cfg, state: st} = api.applyRoundRobinBucketing(config, state, (m) => log.push(m));
  return {bucket: cfg.bucket_id ?? 1, config: cfg, state: st ?? {}, log};
}

export function register(program, api) {
  leaf(
    program,
    'bucket',
    'print entity<TAB>bucket for each entity (- reads entities from stdin, one per line)',
    'partkit bucket --key farosai/airbyte-github-source --total 12 facebook/react torvalds/linux',
  )
    .requiredOption('--key <key>', 'the bucketing namespace, e.g. farosai/airbyte-github-source')
    .requiredOption('--total <n>', 'bucket_total', integerOption('--total'))
    .argument('[entities...]', 'entity ids, or - for stdin')
    .action((entities, opts) => {
      const list = entities.length === 1 && entities[0] === '-' ? lines(readText('-')) : entities;
      const buckets = api.bucketMany(opts.key, list, opts.total);
      const rows = list.map((entity, i) => ({entity, bucket: buckets[i]}));
      result(opts, rows, (r) => r.map((x) => `${x.entity}\t${x.bucket}`));
    });

  leaf(
    program,
    'validate',
    'check the bucketing fields of a connector config: ok, or the problem (exit 1)',
    `echo '{"bucket_total": 6, "round_robin_bucket_execution": true, "bucket_ranges": "2-3,5"}' | partkit validate -`,
  )
    .argument('<config>', 'CONFIG.json (- for stdin)')
    .action((file, opts) => {
      const v = validation(api, readJson(file));
      for (const w of v.warnings) say('warning', w.message);
      for (const n of v.notes) say('note', n);
      if (v.ok) result(opts, v, () => ['ok']);
      else if (opts.json) result(opts, v, () => []);
      else say('error', `[${v.error.code}] ${v.error.message}`);
      if (!v.ok) process.exitCode = 1;
    });

  leaf(
    program,
    'next',
    'choose the bucket of the next run: print the new state JSON (the bucket goes to stderr)',
    `echo '{"bucket_total": 3, "round_robin_bucket_execution": true}' | partkit next -`,
  )
    .argument('<config>', 'CONFIG.json (- for stdin)')
    .argument('[state]', 'STATE.json: the connector state of the previous run')
    .action((configFile, stateFile, opts) => {
      const n = next(api, readJson(configFile), stateFile ? readJson(stateFile) : undefined);
      for (const m of n.log) say('log', m);
      if (!opts.json) say('note', `bucket ${n.bucket}`);
      const {log, ...out} = n;
      result(opts, out, (r) => [JSON.stringify(r.state, null, 2)]);
    });

  leaf(
    program,
    'spread',
    'show how the entities of FILE (one per line) spread over buckets',
    'printf "a\\nb\\nc\\nd\\n" | partkit spread --key k --total 2 -',
  )
    .requiredOption('--key <key>', 'the bucketing namespace')
    .requiredOption('--total <n>', 'bucket_total', integerOption('--total'))
    .argument('<file>', 'entity ids, one per line (- for stdin)')
    .action((file, opts) => {
      result(opts, api.bucketDistribution(opts.key, lines(readText(file)), opts.total), histogram);
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
  const report = (config) => {
    const v = validation(api, config);
    for (const n of v.notes) out(`note: ${n}`);
    out(v.ok ? 'ok' : `error [${v.error.code}]: ${v.error.message}`);
  };
  out('$ partkit validate config.json   # {"bucket_total": 4, "bucket_id": 5}');
  report({bucket_total: 4, bucket_id: 5});
  out('$ partkit validate config.json   # {"bucket_total": 6, "round_robin_bucket_execution": true, "bucket_ranges": "2-3,5"}');
  const config = {bucket_total: 6, round_robin_bucket_execution: true, bucket_ranges: '2-3,5'};
  report(config);
  out();
  out('$ partkit next config.json state.json   # state: {"__bucket_execution_state": {"last_executed_bucket_id": 3}}');
  const n = next(api, config, {__bucket_execution_state: {last_executed_bucket_id: 3}});
  for (const m of n.log) out(`log: ${m}`);
  out(`bucket ${n.bucket}`);
  out(JSON.stringify(n.state, null, 2));
  out(`next 12 runs: ${api.roundRobinSchedule(config, undefined, 12).join(' ')}`);
  out();
  out(`$ partkit spread --key ${DEMO_KEY} --total 8 repos.txt   # ${repos.length} sample repositories`);
  for (const l of histogram(api.bucketDistribution(DEMO_KEY, repos, 8))) out(l);
  out();
}
