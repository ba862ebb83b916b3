// Task coordination: the leader/epoch/partition-sharing protocol as a sans-IO state machine.
// Numbers are integers in 0..=Number.MAX_SAFE_INTEGER (timestamps in ms).

/** Tunables, in the unit of `now` (ms). Unknown fields are refused. */
export interface SyncOptions {
  /** How long a leader waits for every member's answer before publishing the epoch anyway. Default 120000. */
  rebalanceTimeout?: number;
  /** How long an epoch's leader waits for every member to acknowledge it before re-publishing it. Default 30000. */
  epochAckTimeout?: number;
  /** How long a Finished partition stays before its owner marks it Removed. Default 7200000 (2 h). */
  removalDelay?: number;
  /** How long a Removed tombstone stays before it is dropped; must exceed the longest lag of a reader. Default 86400000 (24 h). */
  tombstoneTtl?: number;
  /**
   * How often the epoch's leader re-publishes the whole epoch as a checkpoint, so that the sync
   * topic always holds a complete state within its retention, which must be at least 4 times
   * this (or infinite). Default 300000 (5 min).
   */
  stateRefreshInterval?: number;
  /**
   * Largest record published, in bytes of JSON: a larger message goes out in chunks (`chunk`).
   * At least 1024; every task of a connector uses the same value. Default 900000 (under Kafka's
   * default `max.message.bytes`).
   */
  maxRecordBytes?: number;
}

export type PartitionStatus = 'Created' | 'ReadyForStreaming' | 'Scheduled' | 'Running' | 'Finished' | 'Removed';

export interface PartitionState {
  token: string;
  parents: string[];
  state: PartitionStatus;
  startTimestamp?: number;
  endTimestamp?: number;
  finishedTimestamp?: number;
}

export type SharedPartition = PartitionState & { assignee: string };

export interface TaskState {
  taskID: string;
  stateTimestamp: number;
  /** Per-task monotonic version: receivers keep the greatest. */
  stateVersion: number;
  data: { partitions: PartitionState[] };
  share: { partitions: SharedPartition[] };
}

export type MessageType = 'Regular' | 'RebalanceAnswer' | 'NewEpoch';

export interface SyncMessage {
  /** Epoch id (`"<generation>-<leader>"`, `""` before the first epoch); for a RebalanceAnswer, the sender's epoch. */
  syncEpoch: string;
  taskID: string;
  messageTimestamp: number;
  type: MessageType;
  /** Regular/RebalanceAnswer: the sender's own state. NewEpoch: every member's state. */
  connectorState: TaskState[];
  /** Addition: group generation of `syncEpoch` (0 before the first epoch). */
  epochGeneration?: number;
  /** Addition, NewEpoch: the epoch it was computed from. */
  baseEpoch?: string;
  /** Addition, RebalanceAnswer: the generation answered. */
  rebalanceGeneration?: number;
  /** Addition, NewEpoch: a re-publication of an epoch in force, for tasks that missed it. */
  resend?: boolean;
  /** Addition, NewEpoch: the leader's attempt for this generation (a stale attempt is replaced). */
  epochAttempt?: number;
  /**
   * Addition: the sender's message counter (1, 2, 3, ... over everything it publishes). A reader
   * that sees a sender's counter jump read the log with a hole and fences itself.
   */
  messageSeq?: number;
  /**
   * Addition, NewEpoch with `resend`: marks a periodic checkpoint and names the last record its
   * author had read (sender and `messageSeq`). Directly preceded by that record, it is clean: a
   * new task can start reading there.
   */
  checkpoint?: { afterTaskID: string; afterSeq: number };
  /** Addition, NewEpoch with `resend`: the latest tasks that left the group (their late records still count). */
  departed?: string[];
  /**
   * Addition: this record is chunk `index` (0-based) of `count` of a message larger than
   * `maxRecordBytes`; each chunk has its own `messageSeq` and a part of `connectorState`. A reader
   * applies the message when it has read every chunk, in order.
   */
  chunk?: { index: number; count: number };
}

/** A partition found by the caller: initial partitions, or children read from a parent. */
export interface PartitionSpec {
  token: string;
  parents?: string[];
  startTimestamp?: number;
  endTimestamp?: number;
}

export interface RebalanceEvent {
  generation: number;
  leader: boolean;
  /** The generation's members; required when `leader` is true. */
  members?: string[];
}

/** What the caller must do after an input. */
export interface SyncOutput {
  /** Messages to append to the sync topic, in order. */
  publish: SyncMessage[];
  /** Partition tokens to start reading. */
  start: string[];
  /** Partition tokens to stop reading (ownership moved away). */
  stop: string[];
  /**
   * Set once, when the task fenced itself: it read the sync log with a hole (or stayed behind
   * with no epoch it could apply), so its view may be wrong. `stop` lists everything it ran and
   * the task does nothing more; leave the group and start a new task under a new id.
   */
  fenced?: string;
}

/**
 * One connector task's side of the protocol. Every input takes the caller's clock and returns a
 * SyncOutput; a refused input throws SyncError (`code` `SYNC_*` or `INVALID_ARGUMENT`) and leaves
 * the task unchanged.
 */
export declare class SyncTask {
  constructor(taskId: string, options?: SyncOptions);
  onRebalance(event: RebalanceEvent, now: number): SyncOutput;
  /** Everything read from the sync topic, own messages included, in topic order. */
  onMessage(message: SyncMessage, now: number): SyncOutput;
  /** Initial partitions, or child partitions found by this task. */
  addPartitions(partitions: PartitionSpec[], now: number): SyncOutput;
  partitionStarted(token: string, now: number): SyncOutput;
  partitionFinished(token: string, now: number): SyncOutput;
  tick(now: number): SyncOutput;
  /** The caller found a hole in the sync log it fed (e.g. Kafka offsets jumped): stop everything, fence. */
  fence(reason: string, now: number): SyncOutput;
  taskId(): string;
  ownedPartitions(): PartitionState[];
  sharedPartitions(): SharedPartition[];
  knownTasks(): TaskState[];
  epoch(): string | undefined;
  epochMembers(): string[];
  isLeader(): boolean;
  sharingEnabled(): boolean;
  isBehind(): boolean;
  /** Why this task fenced itself, if it did (see `SyncOutput.fenced`). */
  fenced(): string | undefined;
  waitingFor(): string[];
  loadOf(taskId: string): number;
  /** The earliest `now` at which `tick` has work. */
  pollTimeout(): number | undefined;
  /**
   * Frees the wasm memory now instead of at garbage collection. Every later call throws
   * SyncError `OBJECT_FREED` (from JS, without entering wasm); a second `free()` does nothing.
   */
  free(): void;
}
