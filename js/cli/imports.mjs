// `partkit import-buckets`, and the import-bucket part of the demo.
import {integerOption, leaf, parseJsonArrayOrLines, readText} from './io.mjs';

function formatItems(items, lines) {
  return lines ? items.map((x) => `${JSON.stringify(x)}\n`).join('') : `${JSON.stringify(items, null, 2)}\n`;
}

export function register(program, api) {
  leaf(
    program,
    'import-buckets',
    'assign UUID buckets to the items of an import: FILE holds a JSON array or JSON lines; ' +
      'the same format is written to stdout with each item\'s bucket set (--json: always an array)',
    `printf '{"id": 1, "datasetName": "faq"}\\n{"id": 2, "datasetName": "faq"}\\n' | partkit import-buckets --buckets 2 --import-id run-1 -`,
  )
    .option('--buckets <n>', 'N, buckets per dataset, 1..50 (default: $GTC_IMPORT_BUCKETS_DEFAULT, else 5)', integerOption('--buckets'))
    .option('--import-id <id>', 'derive buckets from this id (v5 UUIDs): retries give the same buckets')
    .option('--dataset-field <name>', 'the dataset field', 'datasetName')
    .option('--bucket-field <name>', 'the bucket field', 'bucket')
    .argument('<file>', 'FILE.json, or - for stdin')
    .action((file, opts) => {
      const {items, lines} = parseJsonArrayOrLines(readText(file), file);
      const out = api.assignImportBuckets(items, {
        buckets: opts.buckets,
        importId: opts.importId,
        datasetField: opts.datasetField,
        bucketField: opts.bucketField,
      });
      process.stdout.write(formatItems(out, lines && !opts.json));
    });
}

export function demo(api, out) {
  out('== Import buckets: spreading a bulk import over [datasetName, bucket] partitions ==');
  const items = [
    ...Array.from({length: 7}, (_, i) => ({id: `faq-${i + 1}`, datasetName: 'faq'})),
    ...Array.from({length: 2}, (_, i) => ({id: `kb-${i + 1}`, datasetName: 'kb'})),
    {id: 'faq-instructions', datasetName: 'faq', bucket: api.NIL_UUID},
  ];
  out(`$ partkit import-buckets --buckets 3 --import-id import-2024-06-01 items.jsonl   # ${items.length} items`);
  const assigned = api.assignImportBuckets(items, {buckets: 3, importId: 'import-2024-06-01'});
  for (const x of assigned) out(JSON.stringify(x));
  out();
  out('partitions for the bulk writes (groupByPartitionKey):');
  for (const g of api.groupByPartitionKey(assigned)) {
    out(`  [${g.partitionKey.map((p) => JSON.stringify(p)).join(', ')}]  ${g.items.map((x) => x.id).join(' ')}`);
  }
  const retry = api.assignImportBuckets(items, {buckets: 3, importId: 'import-2024-06-01'});
  const same = retry.every((x, i) => x.bucket === assigned[i].bucket);
  out(`retry with the same --import-id: ${same ? 'identical buckets (no duplicate documents)' : 'DIFFERENT buckets'}`);
  const random = api.assignImportBuckets(items, {buckets: 3});
  const moved = random.filter((x, i) => x.bucket !== assigned[i].bucket).length;
  out(`without --import-id: fresh random v4 buckets each run (${moved} of ${items.length} items differ here)`);
  out();
}
