// Task coordination: the leader/epoch/partition-sharing protocol as a sans-IO state machine.
// Numbers are integers in 0..=Number.MAX_SAFE_INTEGER (timestamps in ms).

// The data shapes (messages, task states, inputs, outputs) are generated from the Rust types
// (src/sync) into ./generated/sync.d.ts, so they cannot drift from what the core accepts and
// produces; this file adds the class.
import type {
  CheckpointRef,
  ChunkRef,
  Delta,
  MessageType,
  PartitionSpec,
  PartitionState,
  PartitionStatus,
  RebalanceEvent,
  SharedPartition,
  SyncMessage,
  SyncOptions as ResolvedSyncOptions,
  SyncOutput,
  TaskState,
} from './generated/sync';
export type {
  CheckpointRef,
  ChunkRef,
  Delta,
  MessageType,
  PartitionSpec,
  PartitionState,
  PartitionStatus,
  RebalanceEvent,
  SharedPartition,
  SyncMessage,
  SyncOutput,
  TaskState,
};

/**
 * Tunables, in the unit of `now` (ms); each one optional (its default is documented on the
 * field). Unknown fields are refused. `tombstoneTtl` must exceed the longest lag of a reader;
 * the sync topic's retention must be at least 4 times `stateRefreshInterval` (or infinite).
 */
export type SyncOptions = Partial<ResolvedSyncOptions>;

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
