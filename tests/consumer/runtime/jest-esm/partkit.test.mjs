// jest under native ESM (node --experimental-vm-modules), in the environment the command line
// names (jsdom, with no other setting: jsdom has no TextDecoder), importing the root and a subpath.
import {bucket, BucketingError, validateBucketingConfig} from 'partkit';
import {Bucketing} from 'partkit/bucketing';
import {ObjectPartitioner} from 'partkit/objects';

test(`partkit in jest, native ESM (${typeof window === 'undefined' ? 'node' : 'jsdom'})`, () => {
  expect(bucket('farosai/airbyte-github-source', 'ünïcødé/répo', 12)).toBe(4);
  expect(() => validateBucketingConfig({bucket_total: 4, bucket_id: 5})).toThrow(BucketingError);
  expect(Bucketing.create({partitionKey: 'k', config: {bucket_total: 3, bucket_id: 2}}).getBucketId()).toBe(2);
  const p = new ObjectPartitioner(4, {key: 'prefix/', partition: {type: 'regex', pattern: 'user(\\d+)'}});
  expect(p.indexOf('prefix/user123/file1.txt')).toBe(3);
  p[Symbol.dispose]();
});
