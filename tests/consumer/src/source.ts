// A connector's view of partkit, written exactly as against faros-airbyte-common/common.
import {
  applyRoundRobinBucketing,
  bucket,
  BucketExecutionState,
  Bucketing,
  BucketingCreateOptions,
  BucketingError,
  BucketingFilterOptions,
  bucketMany,
  BucketSet,
  nextBucketId,
  RoundRobinConfig,
  validateBucketingConfig,
} from 'partkit';

export interface MySourceConfig extends RoundRobinConfig {
  token: string;
}

export interface Repo {
  org: string;
  name: string;
}

const connectorKey = 'farosai/airbyte-github-source';

export function onBeforeRead(
  config: MySourceConfig,
  state: BucketExecutionState | undefined,
  log: (message: string) => void
): {config: MySourceConfig; state: BucketExecutionState | undefined} {
  validateBucketingConfig(config, log);
  // `state` is the given one (maybe undefined) when round robin is off
  const {config: cfg, state: st} = applyRoundRobinBucketing(config, state, log);
  return {config: cfg, state: st};
}

export function inBucket(cfg: MySourceConfig, repo: Repo): boolean {
  return bucket(connectorKey, `${repo.org}/${repo.name}`, cfg.bucket_total ?? 1) === (cfg.bucket_id ?? 1);
}

export function next(cfg: MySourceConfig, state?: BucketExecutionState): number {
  return nextBucketId(cfg, state);
}

export function select(cfg: MySourceConfig, state: BucketExecutionState, repos: ReadonlyArray<Repo>, log: (m: string) => void) {
  const options: BucketingCreateOptions = {partitionKey: connectorKey, config: cfg, state, logger: log};
  const bucketing = Bucketing.create(options);
  const filterOptions: BucketingFilterOptions = {logger: log, entityName: 'repositories'};
  const selected: ReadonlyArray<Repo> = bucketing.filter(repos, (r) => `${r.org}/${r.name}`, filterOptions);
  const newState: BucketExecutionState = bucketing.getState();
  const id: number = bucketing.getBucketId();
  const total: number = bucketing.getBucketTotal();
  return {selected, newState, id, total};
}

export function eligible(total: number, ranges: string | ReadonlyArray<string>): number[] {
  return new BucketSet(total, ranges).buckets();
}

export function many(names: ReadonlyArray<string>, total: number): Uint32Array {
  return bucketMany(connectorKey, names, total);
}

export function errorCode(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    if (e instanceof BucketingError) return e.code;
    throw e;
  }
  return undefined;
}
