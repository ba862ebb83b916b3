import {eligible, errorCode, inBucket, many, MySourceConfig, next, onBeforeRead, select} from '../src/source';
import {bucket, validateBucketingConfig} from 'partkit';

describe('a connector using partkit from the packed tarball', () => {
  const base: MySourceConfig = {token: 'secret', bucket_total: 12, round_robin_bucket_execution: true};

  it('rotates buckets through state and keeps its own fields', () => {
    const logs: string[] = [];
    const first = onBeforeRead(base, undefined, (m) => logs.push(m));
    expect(first.config.bucket_id).toBe(1);
    expect(first.config.token).toBe('secret');
    const second = onBeforeRead(base, first.state, (m) => logs.push(m));
    expect(second.config.bucket_id).toBe(2);
    expect(logs).toEqual([
      'Using round robin bucket execution. Bucket id: 1',
      'Using round robin bucket execution. Bucket id: 2',
    ]);
    expect(next(base, second.state)).toBe(3);
  });

  it('filters with the spec vectors', () => {
    const cfg: MySourceConfig = {token: 't', bucket_total: 12, bucket_id: 9};
    expect(inBucket(cfg, {org: 'facebook', name: 'react'})).toBe(true);
    expect(bucket('farosai/airbyte-github-source', 'vercel/next.js', 12)).toBe(7);
    const repos = [{org: 'facebook', name: 'react'}, {org: 'vercel', name: 'next.js'}, {org: 'torvalds', name: 'linux'}];
    const {selected, id, total, newState} = select(cfg, {}, repos, () => undefined);
    expect(selected.map((r) => r.name)).toEqual(['react', 'linux']);
    expect([id, total]).toEqual([9, 12]);
    expect(newState).toEqual({});
    expect(Array.from(many(['facebook/react', 'vercel/next.js'], 12))).toEqual([9, 7]);
  });

  it('throws typed errors with faros messages', () => {
    expect(errorCode(() => validateBucketingConfig({bucket_id: 2}))).toBe('BUCKET_ID_OUT_OF_RANGE');
    expect(() => validateBucketingConfig({bucket_total: 0})).toThrow('bucket_total must be a positive integer');
    expect(eligible(9, ['1-3', '5'])).toEqual([1, 2, 3, 5]);
  });
});
