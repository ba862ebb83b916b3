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
export type SyncOptions = {[K in keyof ResolvedSyncOptions]?: ResolvedSyncOptions[K] | undefined};

/**
 * A message as the record to append to the sync topic (`publishAs: 'records'`): `value` is its
 * JSON text, to write as it is; `key` the sender's task id; `type` the message's type (KafkaTaskSync
 * writes it as the record's `type` header).
 */
export interface SyncRecord {
  key: string;
  type: MessageType;
  value: string;
}

/** An output whose messages come as records (`publishAs: 'records'`). */
export interface SyncRecordOutput extends Omit<SyncOutput, 'publish'> {
  /** Records to append to the sync topic, in order. */
  publish: SyncRecord[];
}

/** The options of a SyncTask: the core's tunables, and how its outputs give their messages. */
export type SyncTaskOptions = SyncOptions & {
  /**
   * `'messages'` (default): `publish` lists SyncMessage objects. `'records'`: it lists
   * SyncRecords, whose values the core wrote once and JS never parses (what KafkaTaskSync uses).
   */
  publishAs?: 'messages' | 'records' | undefined;
};

/** What `onMessage` reads: the parsed message, or the record's value as read (bytes or JSON text). */
export type SyncMessageInput = SyncMessage | Uint8Array | string;

/**
 * One connector task's side of the protocol. Every input takes the caller's clock and returns a
 * SyncOutput; a refused input throws SyncError (`code` `SYNC_*` or `INVALID_ARGUMENT`) and leaves
 * the task unchanged.
 */
export interface SyncTask<Output = SyncOutput> {
  onRebalance(event: RebalanceEvent, now: number): Output;
  /**
   * Everything read from the sync topic, own messages included, in topic order: the message, or
   * the record's value as read (a Buffer/Uint8Array or a string of JSON), parsed in wasm.
   */
  onMessage(message: SyncMessageInput, now: number): Output;
  /** Initial partitions, or child partitions found by this task. */
  addPartitions(partitions: PartitionSpec[], now: number): Output;
  partitionStarted(token: string, now: number): Output;
  partitionFinished(token: string, now: number): Output;
  tick(now: number): Output;
  /** The caller found a hole in the sync log it fed (e.g. Kafka offsets jumped): stop everything, fence. */
  fence(reason: string, now: number): Output;
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

/** `new SyncTask(taskId, options?)`: outputs with messages, or with records (`publishAs: 'records'`). */
export interface SyncTaskConstructor {
  new (taskId: string, options: SyncTaskOptions & {publishAs: 'records'}): SyncTask<SyncRecordOutput>;
  new (taskId: string, options?: SyncTaskOptions): SyncTask<SyncOutput>;
  readonly prototype: SyncTask<SyncOutput | SyncRecordOutput>;
}

export declare const SyncTask: SyncTaskConstructor;
