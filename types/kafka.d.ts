// partkit/kafka: the Kafka transport for task coordination (KafkaTaskSync, over kafkajs, a peer
// dependency). Node only.
import {EventEmitter} from 'node:events';
import type {Kafka, PartitionAssigner} from 'kafkajs';
import type {PartitionSpec, PartitionState, RebalanceEvent, SyncOptions, SyncOutput, SyncRecordOutput, SyncTask, SyncTaskOptions, TaskState} from './sync';

/**
 * The part of a SyncTask that KafkaTaskSync drives (partkit's `SyncTask` has it). `onMessage`
 * receives each record's value as read (a Buffer), or a message object (a checkpoint joined from
 * its chunks); `publish` may list records (`publishAs: 'records'`) or message objects.
 */
export type SyncTaskLike = Pick<
  SyncTask<SyncOutput | SyncRecordOutput>,
  'onRebalance' | 'onMessage' | 'addPartitions' | 'partitionStarted' | 'partitionFinished' | 'tick' | 'pollTimeout' | 'fence' | 'ownedPartitions' | 'knownTasks' | 'epoch' | 'isLeader'
> &
  /** Used by a clean `close()` when present (the final checkpoint). */
  Partial<Pick<SyncTask<SyncOutput | SyncRecordOutput>, 'close' | 'closed'>>;

/** The rebalance fed to `SyncTask.onRebalance`, also emitted as the `rebalance` event. */
export interface KafkaRebalanceEvent extends RebalanceEvent {
  /** The heartbeat group's generation + 1 (Kafka counts from 1, tansu from 0). */
  generation: number;
  /** Whether this task is the group leader (kafkajs ran the assigner on it). */
  leader: boolean;
  /** The task ids of the generation's members (leader only). */
  members?: string[] | undefined;
}

export interface KafkaTaskSyncOptions {
  /** A kafkajs `Kafka` instance (the caller's client configuration: brokers, SSL, SASL, logging). */
  kafka: Kafka;
  /** The connector's name: the heartbeat consumer group id and the prefix of its topics. Letters, digits, `.`, `_`, `-`. */
  connectorName: string;
  /** This task's id: unique, and new on every restart (e.g. `${host}-${pid}-${uuid}`). */
  taskId: string;
  /** The SyncTask options (timeouts, removal delay, `stateRefreshInterval`, which the retention rule uses). */
  syncOptions?: SyncOptions | undefined;
  /** Builds the SyncTask; default: partkit's `SyncTask`. */
  createSyncTask?: ((taskId: string, options?: SyncTaskOptions) => SyncTaskLike) | undefined;
  /** Default `<connectorName>_connector_sync` (one partition, created when missing). */
  syncTopic?: string | undefined;
  /** Default `<connectorName>_connector_heartbeat` (created when missing, `heartbeatPartitions` partitions). */
  heartbeatTopic?: string | undefined;
  /** The heartbeat consumer group. Default `connectorName`. */
  groupId?: string | undefined;
  /** Create missing topics (default true); when false a missing topic fails `start()` with KAFKA_TOPIC_MISSING. */
  createTopics?: boolean | undefined;
  /** Partitions of a heartbeat topic created here. Default 1. */
  heartbeatPartitions?: number | undefined;
  /** Replication factor of topics created here. Default: the broker's. */
  replicationFactor?: number | undefined;
  /**
   * `retention.ms` of a sync topic created here (with `cleanup.policy` `delete`). Default 7 days
   * (604800000). Must be -1 (infinite) or at least 4 × `syncOptions.stateRefreshInterval`
   * (default 300000), else the constructor throws KAFKA_RETENTION_TOO_SHORT.
   */
  syncRetentionMs?: number | undefined;
  /** Removed: the SyncTask is ticked by one timer at its `pollTimeout()`; passing it throws INVALID_ARGUMENT. */
  tickInterval?: undefined;
  /** How often the topics are checked (existence, one sync partition, no truncation, the retention rule), ms. Default 5000. */
  topicCheckInterval?: number | undefined;
  /** Heartbeat group session timeout, ms: how long a task that died without leaving keeps its partitions. Default 10000. */
  sessionTimeout?: number | undefined;
  /** Heartbeat interval, ms. Default 1000. */
  heartbeatInterval?: number | undefined;
  /** Heartbeat group rebalance timeout, ms. Default 30000. */
  rebalanceTimeout?: number | undefined;
  /** How many records the sync-topic reader looks back at first when it searches the epoch start. Default 256. */
  scanWindow?: number | undefined;
  /** How long each step of `close()` waits (`stop` listeners, pending publishes, the final checkpoint read back, each client's disconnect), ms. Default 10000. */
  stopTimeout?: number | undefined;
  /** The clock fed to the SyncTask. Default `Date.now`. */
  clock?: (() => number) | undefined;
  onStart?: ((token: string) => void | Promise<void>) | undefined;
  onStop?: ((token: string) => void | Promise<void>) | undefined;
  onError?: ((error: Error) => void) | undefined;
  onRebalance?: ((event: KafkaRebalanceEvent) => void) | undefined;
  onEpoch?: (epoch: string | undefined) => void;
}

export interface KafkaTaskSyncEvents {
  /** Start reading this partition, then call `partitionStarted(token)`. */
  start: (token: string) => void | Promise<void>;
  /** Stop reading this partition now (ownership moved away, the task was fenced, or it is closing). */
  stop: (token: string) => void | Promise<void>;
  /** A fatal failure (a topic lost, a client crashed, a publish failed): every partition was stopped, the task is closed. */
  error: (error: Error) => void;
  rebalance: (event: KafkaRebalanceEvent) => void;
  epoch: (epoch: string | undefined) => void;
  /**
   * Something was skipped or could not be checked: a record of the sync topic that is not a
   * SyncMessage, a refetched offset, a retention rule the broker's configs do not let check.
   */
  warning: (message: string) => void;
}

/**
 * One connector task in a multi-task connector, coordinated over Kafka: the heartbeat group's
 * rebalances tell who is alive and who leads, the sync topic carries every task's state.
 */
export declare class KafkaTaskSync extends EventEmitter {
  constructor(options: KafkaTaskSyncOptions);
  readonly taskId: string;
  readonly connectorName: string;
  readonly syncTopic: string;
  readonly heartbeatTopic: string;
  readonly groupId: string;
  /** `new` → `starting` → `running` → `closing` → `closed`, or `failed`. */
  readonly state: 'new' | 'starting' | 'running' | 'closing' | 'closed' | 'failed';
  /** The error that failed the task, if any. */
  readonly failure: Error | null;
  /** Creates missing topics, replays the sync topic from the start of the current epoch, then joins the heartbeat group. */
  start(): Promise<void>;
  /**
   * Stops every running partition, publishes the task's final checkpoint (`SyncTask.close`, read
   * back before it goes on), leaves the group, flushes publishes and disconnects; each wait
   * bounded by `stopTimeout`.
   */
  close(): Promise<void>;
  addPartitions(partitions: PartitionSpec[]): SyncOutput;
  partitionStarted(token: string): SyncOutput;
  partitionFinished(token: string): SyncOutput;
  /** Resolves once every message published so far is acknowledged by the broker. */
  flush(): Promise<void>;
  on<E extends keyof KafkaTaskSyncEvents>(event: E, listener: KafkaTaskSyncEvents[E]): this;
  once<E extends keyof KafkaTaskSyncEvents>(event: E, listener: KafkaTaskSyncEvents[E]): this;
  off<E extends keyof KafkaTaskSyncEvents>(event: E, listener: KafkaTaskSyncEvents[E]): this;
  /**
   * Calls the listeners; returns whether there were any. A listener that throws or rejects fails
   * the task (KAFKA_LISTENER_FAILED) instead of throwing here.
   */
  emit<E extends keyof KafkaTaskSyncEvents>(event: E, ...args: Parameters<KafkaTaskSyncEvents[E]>): boolean;
  ownedPartitions(): PartitionState[];
  knownTasks(): TaskState[];
  epoch(): string | undefined;
  isLeader(): boolean;
  /** Tokens this task was told to start and not yet to stop. */
  runningPartitions(): string[];
}

/** The heartbeat group's partition assigner (kafkajs runs `assign` on the leader only). */
export declare function taskSyncAssigner(options: {
  taskId: string;
  onAssign?: ((members: {memberId: string; taskId: string}[]) => void) | undefined;
}): PartitionAssigner;

/**
 * Where a reader that applied no epoch starts on the sync topic: the core's start rule, the
 * package root's `syncLogStart` (see types/sync.d.ts), which SyncLogReader uses.
 */
export {syncLogStart as findEpochStart} from './sync';

/** What a SyncLogReader asks its driver to do, in order. Offsets are bigints. */
export type SyncLogAction =
  /** Feed `message` to the SyncTask: the record's value as read, or a checkpoint joined from its chunks. */
  | {type: 'deliver'; offset: bigint; message: Uint8Array | string | object}
  | {type: 'warning'; message: string}
  /** Wait `delay` ms, then seek the consumer to `offset`, before it delivers anything else. */
  | {type: 'seek'; offset: bigint; delay: number}
  /** The log has a hole: fence the SyncTask. */
  | {type: 'fence'; reason: string}
  /** The replay reached the end offset seen at start. */
  | {type: 'ready'};

/**
 * The sync-topic reader's state machine (no I/O, no timers): where the replay starts, refetches
 * of skipped offsets, holes, records deleted by retention, duplicates. KafkaTaskSync drives one.
 */
export declare class SyncLogReader {
  constructor(options: {topic: string; low: string | number | bigint; high: string | number | bigint; scanWindow: number; refetches?: number; refetchDelay?: number});
  readonly phase: 'scan' | 'live' | 'fenced';
  /** The last offset read (-1n before any). */
  readonly lastOffset: bigint;
  /** The first actions (seek to the replay window, or to the end of an empty log). */
  begin(): SyncLogAction[];
  /** One record as the consumer delivered it. */
  record(offset: string | number | bigint, value: Uint8Array | string | null): SyncLogAction[];
}

/** `{sync: '<name>_connector_sync', heartbeat: '<name>_connector_heartbeat'}`. */
export declare function kafkaTopicNames(connectorName: string): {sync: string; heartbeat: string};
