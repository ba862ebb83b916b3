// What every consumer runs: a connector config validated, an id bucketed, an object key
// partitioned (a second domain's wasm), each against the value the Node API gives.
import {bucket, validateBucketingConfig, BucketingError, ObjectPartitioner} from 'partkit';

export function check() {
  validateBucketingConfig({round_robin_bucket_execution: true, bucket_total: 6, bucket_ranges: '2-3,5'});
  let message = null;
  try {
    validateBucketingConfig({bucket_total: 4, bucket_id: 5});
  } catch (error) {
    if (!(error instanceof BucketingError)) throw error;
    message = `${error.code}: ${error.message}`;
  }
  if (message !== 'BUCKET_ID_OUT_OF_RANGE: bucket_id must be between 1 and 4') throw new Error(`unexpected: ${message}`);
  if (bucket('test-key', 'test-data', 5) !== 2) throw new Error('bucket');
  if (bucket('farosai/airbyte-github-source', 'ünïcødé/répo', 12) !== 4) throw new Error('bucket (non-ASCII)');
  return 'ok';
}

export function checkObjects() {
  const p = new ObjectPartitioner(4, {key: 'prefix/', partition: {type: 'regex', pattern: 'user(\\d+)'}});
  if (p.indexOf('prefix/user123/file1.txt') !== 3) throw new Error('objects');
  return 'ok';
}
