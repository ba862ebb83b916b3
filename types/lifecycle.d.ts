// Partition lifecycle: an event-sourced build state with partition UUIDs.

/** Names of partition instance states. Building and UpstreamBuilding hold the ref's lease. */
export type PartitionStateName =
  | 'Building'
  | 'UpstreamBuilding'
  | 'UpForRetry'
  | 'Live'
  | 'Failed'
  | 'UpstreamFailed'
  | 'Tainted';

/** Names of want states. (`New` appears only as `from` of a want's first transition.) */
export type WantStateName =
  | 'Idle'
  | 'Building'
  | 'UpstreamBuilding'
  | 'Successful'
  | 'Failed'
  | 'UpstreamFailed'
  | 'Canceled';

/** Names of job run states. */
export type JobRunStateName = 'Queued' | 'Running' | 'Succeeded' | 'Failed' | 'DepMissed' | 'Canceled';

/** The job's partitions `impacted` need the upstream refs `missing` to be Live first. */
export interface MissingDeps {
  impacted: string[];
  missing: string[];
}

/**
 * Events are plain JSON: timestamps are integer milliseconds in `0..=Number.MAX_SAFE_INTEGER`,
 * strings well-formed Unicode; unknown fields are refused. Events are applied in timestamp
 * order: a timestamp earlier than the last applied event's is refused
 * (`TIMESTAMP_NOT_MONOTONIC`); an equal one is fine.
 */
interface EventBase {
  timestamp: number;
}

export interface WantCreateEvent extends EventBase {
  type: 'WantCreate';
  wantId: string;
  /** Partition refs, non-empty, no repeats. */
  partitions: string[];
  dataTimestamp?: number;
  /**
   * How long after creation the orchestrator keeps trying: `schedulableWants(now)` leaves the
   * want out once `createdAt + ttlSeconds * 1000 <= now`, and only a taint before that reopens
   * it once it is Successful. Without it the want never expires. Expiry is not a state.
   */
  ttlSeconds?: number;
  /** Alarm threshold: `wantsPastSla(now)` lists the want while it is open past `createdAt + slaSeconds * 1000`. */
  slaSeconds?: number;
  comment?: string;
  /**
   * Set on a derivative want: the dep-missed job run that asked for these partitions. The job
   * run must be DepMissed and every partition must be one of its missing deps.
   */
  sourceJobRunId?: string;
}
export interface WantCancelEvent extends EventBase {
  type: 'WantCancel';
  wantId: string;
}
export interface JobRunBufferEvent extends EventBase {
  type: 'JobRunBuffer';
  jobRunId: string;
  jobLabel?: string;
  /** Refs built, non-empty, no repeats; instance UUIDs are `derivePartitionUuid(jobRunId, ref)`. */
  buildingPartitions: string[];
}
export interface JobRunHeartbeatEvent extends EventBase {
  type: 'JobRunHeartbeat';
  jobRunId: string;
}
export interface JobRunSuccessEvent extends EventBase {
  type: 'JobRunSuccess';
  jobRunId: string;
}
export interface JobRunFailureEvent extends EventBase {
  type: 'JobRunFailure';
  jobRunId: string;
  reason?: string;
}
export interface JobRunDepMissEvent extends EventBase {
  type: 'JobRunDepMiss';
  jobRunId: string;
  missingDeps: MissingDeps[];
}
export interface JobRunCancelEvent extends EventBase {
  type: 'JobRunCancel';
  jobRunId: string;
}
export interface TaintCreateEvent extends EventBase {
  type: 'TaintCreate';
  taintId: string;
  partitions: string[];
}

/** One event of the log: a plain JSON object. */
export type BuildEvent =
  | WantCreateEvent
  | WantCancelEvent
  | JobRunBufferEvent
  | JobRunHeartbeatEvent
  | JobRunSuccessEvent
  | JobRunFailureEvent
  | JobRunDepMissEvent
  | JobRunCancelEvent
  | TaintCreateEvent;

interface PartitionInstanceBase {
  /** `derivePartitionUuid(jobRunId, ref)`, lower case. */
  uuid: string;
  ref: string;
  jobRunId: string;
  createdAt: number;
  updatedAt: number;
  /** The instance of the same ref this one replaced as canonical. */
  previousUuid?: string;
}

/** One build of a partition ref. Only the canonical instance of a ref ever changes state. */
export type PartitionInstance = PartitionInstanceBase &
  (
    | {state: 'Building' | 'UpForRetry' | 'Live' | 'Failed'}
    | {state: 'UpstreamBuilding'; missingDeps: string[]}
    | {state: 'UpstreamFailed'; failedUpstream: string}
    | {state: 'Tainted'; taintId: string}
  );

export interface Want {
  wantId: string;
  partitions: string[];
  state: WantStateName;
  createdAt: number;
  updatedAt: number;
  dataTimestamp?: number;
  ttlSeconds?: number;
  slaSeconds?: number;
  comment?: string;
  sourceJobRunId?: string;
}

interface JobRunBase {
  jobRunId: string;
  jobLabel?: string;
  /** The instances it created, in `buildingPartitions` order. */
  partitionUuids: string[];
  /** Their refs, in the same order. */
  partitionRefs: string[];
  createdAt: number;
  updatedAt: number;
  lastHeartbeatAt?: number;
  /** Wants created with `sourceJobRunId` = this job run, in creation order. */
  derivativeWantIds: string[];
}

export type JobRun = JobRunBase &
  (
    | {state: 'Queued' | 'Running' | 'Succeeded' | 'Canceled'}
    | {state: 'Failed'; reason?: string}
    | {state: 'DepMissed'; missingDeps: MissingDeps[]}
  );

export interface Taint {
  taintId: string;
  partitions: string[];
  createdAt: number;
  /** The Live canonical instances it turned Tainted (other refs were left alone). */
  taintedUuids: string[];
}

/** One state change an event caused. `from: null` = created by the event; `'New'` = want just created. */
export type AppliedTransition =
  | {kind: 'want'; wantId: string; from: WantStateName | 'New'; to: WantStateName}
  | {kind: 'partition'; uuid: string; ref: string; from: PartitionStateName | null; to: PartitionStateName}
  | {kind: 'jobRun'; jobRunId: string; from: JobRunStateName | null; to: JobRunStateName};

/** The whole state as plain JSON-safe data, everything in creation order. */
export interface BuildStateSnapshot {
  format: 'partkit.lifecycle';
  version: 1;
  wants: Want[];
  jobRuns: JobRun[];
  partitions: PartitionInstance[];
  taints: Taint[];
}

/**
 * The event-sourced build state. `apply` is the only mutator; it validates the whole event
 * first and throws LifecycleError, leaving the state unchanged, for: `INVALID_EVENT`,
 * `UNKNOWN_WANT`, `DUPLICATE_WANT`, `WANT_WRONG_STATE`, `UNKNOWN_JOB_RUN`, `DUPLICATE_JOB_RUN`,
 * `JOB_RUN_WRONG_STATE`, `DUPLICATE_REF_IN_JOB`, `PARTITION_LEASED`, `DUPLICATE_TAINT`,
 * `DEPENDENCY_CYCLE`, `TIMESTAMP_NOT_MONOTONIC`. Non-string ids are `INVALID_ARGUMENT`.
 */
export declare class BuildState {
  constructor();
  /** Applies `events` in order to an empty state; throws the first refusal with `eventIndex`. */
  static replay(events: readonly BuildEvent[]): BuildState;
  /** Restores `snapshot()` output; throws `INVALID_SNAPSHOT` if it is malformed or inconsistent. */
  static fromSnapshot(snapshot: object): BuildState;
  /** The state changes this event caused, in order. */
  apply(event: BuildEvent): AppliedTransition[];
  canonicalPartition(ref: string): PartitionInstance | undefined;
  partition(uuid: string): PartitionInstance | undefined;
  /** Oldest first, canonical last. */
  partitionHistory(ref: string): PartitionInstance[];
  want(wantId: string): Want | undefined;
  /** Every want naming the ref, in creation order, whatever its state. */
  wantsForPartition(ref: string): string[];
  jobRun(jobRunId: string): JobRun | undefined;
  taint(taintId: string): Taint | undefined;
  /**
   * Idle wants for which every ref that is not Live has no canonical instance, or a Tainted or
   * UpForRetry one, in creation order. With `now` (integer milliseconds, like timestamps),
   * wants whose TTL has ended (`createdAt + ttlSeconds * 1000 <= now`) are left out; wants
   * without TTL never expire. Without `now`, TTL is not applied (the core has no clock).
   * @throws LifecycleError `INVALID_ARGUMENT` if `now` is not an integer in `0..=Number.MAX_SAFE_INTEGER`.
   */
  schedulableWants(now?: number): Want[];
  /**
   * Wants still Idle, Building or UpstreamBuilding at or past `createdAt + slaSeconds * 1000`
   * (`now` in integer milliseconds), in creation order. An alarm, not a state change.
   * @throws LifecycleError `INVALID_ARGUMENT` if `now` is not an integer in `0..=Number.MAX_SAFE_INTEGER`.
   */
  wantsPastSla(now: number): Want[];
  snapshot(): BuildStateSnapshot;
  /** Throws LifecycleError `INVARIANT_VIOLATION` naming the first broken invariant. */
  checkInvariants(): void;
  stats(): {partitions: number; wants: number; jobRuns: number; refs: number};
  /**
   * Frees the wasm memory now instead of at garbage collection. Every later call throws
   * LifecycleError `OBJECT_FREED` (from JS, without entering wasm); a second `free()` does nothing.
   */
  free(): void;
}

/**
 * `derivePartitionUuid(jobRunId, partitionRef)`: SHA-256 of `be_u64(utf8len(jobRunId)) ||
 * utf8(jobRunId) || utf8(partitionRef)`, first 16 bytes, UUIDv8 version and RFC 9562 variant bits.
 */
export declare function derivePartitionUuid(jobRunId: string, partitionRef: string): string;

declare module './errors' {
  interface LifecycleError {
    /** Set by `BuildState.replay`: the index of the refused event in the log. */
    eventIndex?: number;
  }
}
