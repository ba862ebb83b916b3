// jest, CommonJS, in whichever testEnvironment the command line names (node, or jsdom with no
// other setting: no custom export conditions, no polyfills). The checks of app/check.mjs.
const {bucket, validateBucketingConfig, BucketingError, PartkitError, ObjectPartitioner} = require('partkit');

test(`partkit in jest (${typeof window === 'undefined' ? 'node' : 'jsdom'})`, () => {
  validateBucketingConfig({round_robin_bucket_execution: true, bucket_total: 6, bucket_ranges: '2-3,5'});
  let error;
  try {
    validateBucketingConfig({bucket_total: 4, bucket_id: 5});
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(BucketingError);
  expect(error).toBeInstanceOf(PartkitError);
  expect(`${error.code}: ${error.message}`).toBe('BUCKET_ID_OUT_OF_RANGE: bucket_id must be between 1 and 4');
  expect(bucket('test-key', 'test-data', 5)).toBe(2);
  expect(bucket('farosai/airbyte-github-source', 'ünïcødé/répo', 12)).toBe(4);
  const p = new ObjectPartitioner(4, {key: 'prefix/', partition: {type: 'regex', pattern: 'user(\\d+)'}});
  expect(p.indexOf('prefix/user123/file1.txt')).toBe(3);
  expect(p.plan(['prefix/user123/a', 'prefix/ü/b'])).toHaveLength(4);
});
