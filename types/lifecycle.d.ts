// Partition lifecycle: an event-sourced build state with partition UUIDs.

// partkit/lifecycle exports its error classes too (the same classes as the root's).
export {PartkitError, LifecycleError} from './errors';

// The data shapes (events, views, transitions, the snapshot) are generated from the Rust types
// (src/lifecycle) into ./generated/lifecycle.d.ts, so they cannot drift from what the core
// accepts and produces; this file adds the classes and functions.
import type {
  AppliedTransition,
  BuildEvent,
  BuildStateSnapshot,
  JobRun,
  JobRunStateName,
  MissingDeps,
  PartitionInstance,
  PartitionStateName,
  Taint,
  Want,
  WantStateName,
} from './generated/lifecycle';
export type {
  AppliedTransition,
  BuildEvent,
  BuildStateSnapshot,
  JobRun,
  JobRunStateName,
  MissingDeps,
  PartitionInstance,
  PartitionStateName,
  Taint,
  Want,
  WantStateName,
};

/** The events of each `type`, by name. */
export type WantCreateEvent = Extract<BuildEvent, {type: 'WantCreate'}>;
export type WantCancelEvent = Extract<BuildEvent, {type: 'WantCancel'}>;
export type JobRunBufferEvent = Extract<BuildEvent, {type: 'JobRunBuffer'}>;
export type JobRunHeartbeatEvent = Extract<BuildEvent, {type: 'JobRunHeartbeat'}>;
export type JobRunSuccessEvent = Extract<BuildEvent, {type: 'JobRunSuccess'}>;
export type JobRunFailureEvent = Extract<BuildEvent, {type: 'JobRunFailure'}>;
export type JobRunDepMissEvent = Extract<BuildEvent, {type: 'JobRunDepMiss'}>;
export type JobRunCancelEvent = Extract<BuildEvent, {type: 'JobRunCancel'}>;
export type TaintCreateEvent = Extract<BuildEvent, {type: 'TaintCreate'}>;

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
  /** `free()`, for `using` (TypeScript >= 5.2): frees at the end of the scope. */
  [Symbol.dispose](): void;
}

/**
 * `derivePartitionUuid(jobRunId, partitionRef)`: SHA-256 of `be_u64(utf8len(jobRunId)) ||
 * utf8(jobRunId) || utf8(partitionRef)`, first 16 bytes, UUIDv8 version and RFC 9562 variant bits.
 */
export declare function derivePartitionUuid(jobRunId: string, partitionRef: string): string;

declare module './errors' {
  interface LifecycleError {
    /** Set by `BuildState.replay`: the index of the refused event in the log. */
    eventIndex?: number | undefined;
  }
}
