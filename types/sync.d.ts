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
/** Every SyncOptions field, as a task runs with them (`resolveSyncOptions`, `SyncTask.options()`). */
export type {ResolvedSyncOptions};

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
  /**
   * The task stops cleanly (the connector stopped every partition it ran; call it before leaving
   * the group): it starts nothing more and publishes a final checkpoint once everything it
   * published is read back, so that a connector whose tasks all closed finds its state after a stop shorter than the retention. Keep feeding it what is read until `closed()`, then leave.
   */
  close(now: number): Output;
  /** Whether a task told to `close` is done: its final checkpoint went out (or none was needed). */
  closed(): boolean;
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
  /** The options this task runs with, the core's defaults filled in (`publishAs` is not one of them). */
  options(): ResolvedSyncOptions;
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

/**
 * The options a SyncTask made with `options` runs with: every field, the core's defaults filled
 * in (`publishAs` left out). Invalid options throw SyncError `SYNC_INVALID_OPTIONS`, as
 * `new SyncTask` does.
 */
export declare function resolveSyncOptions(options?: SyncTaskOptions): ResolvedSyncOptions;

/**
 * The least `retention.ms` of a sync topic (or -1, infinite) for tasks made with `options`:
 * `stateRefreshInterval` times the core's number of refreshes that must fit in the retention
 * (1200000 for the defaults). Invalid options throw SyncError `SYNC_INVALID_OPTIONS`.
 */
export declare function minSyncRetention(options?: SyncTaskOptions): number;

/** A retained record of the sync log as the start rule reads it: its offset and parsed message. */
export interface EpochStartRecord {
  offset: string | number | bigint;
  /** The parsed SyncMessage (fields of the wrong type count as absent), or null when unreadable. */
  message: {
    type?: string | undefined;
    taskID?: string | undefined;
    messageSeq?: number | undefined;
    syncEpoch?: string | undefined;
    baseEpoch?: string | undefined;
    resend?: boolean | undefined;
    epochGeneration?: number | undefined;
    checkpoint?: {afterTaskID: string; afterSeq: number} | undefined;
    chunk?: {index: number; count: number} | undefined;
  } | null;
}

/**
 * Where a reader that applied no epoch starts on the sync log (docs/sync-design.md, "Where a new task
 * starts reading"; `partkit/kafka` exports it as `findEpochStart`): the latest usable checkpoint (`{offset}` when clean; otherwise
 * `{offset, checkpoint, chunks?}`: apply `checkpointMessage` of the checkpoint's records, at
 * `chunks` or else `checkpoint`, first, then replay from `offset`), else the first NewEpoch of the
 * latest NewEpoch's base epoch, else the earliest retained offset; `{extend: true}` when the
 * records do not reach back far enough and `where.atLow` is false. Offsets come back as strings.
 * Wrong arguments throw a SyncError with code INVALID_ARGUMENT.
 */
export declare function syncLogStart(
  records: EpochStartRecord[],
  where: {atLow: boolean; low: string | number | bigint},
): {offset: string} | {offset: string; checkpoint: string; chunks?: string[]} | {extend: true};

/**
 * The message a task starting after a checkpoint applies first: the checkpoint joined from its
 * records' parsed messages (in order: one, or its chunks) as a SyncTask joins chunks, without
 * `chunk` and `messageSeq`. Records that are not the chunks of one message throw SyncError
 * INVALID_ARGUMENT.
 */
export declare function checkpointMessage(messages: object[]): SyncMessage;
