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
  /** Used when present: `close`/`closed` by a clean `close()` (the final checkpoint), `epochMembers` by the leader's check of the members (the connector already running) and by `epochMembers()`, `free` when a reconnection replaces the task. */
  Partial<Pick<SyncTask<SyncOutput | SyncRecordOutput>, 'close' | 'closed' | 'epochMembers' | 'free'>>;

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
  /** This task's id: unique, and new on every restart (e.g. `${host}-${pid}-${uuid}`). A second process with the same id is refused by the group (KAFKA_DUPLICATE_TASK_ID). */
  taskId: string;
  /**
   * What tells this connector from another one with the same `connectorName` (a config hash, a
   * deployment id; at most 1024 characters), announced to the group with the name: a task whose
   * connector announces another id is refused by the group (KAFKA_CONNECTOR_MISMATCH).
   */
  connectorId?: string | undefined;
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
  /** How long `start()` may take before it fails with KAFKA_START_TIMEOUT, ms. Default 120000. */
  startTimeout?: number | undefined;
  /**
   * How long a task that lost its session to a broker outage (while its process ran) keeps
   * reconnecting, ms from the last contact: it stops every partition, then starts again under
   * the task id `<taskId>~<n>`; past this bound it fails with KAFKA_SESSION_LOST. Default 60000.
   */
  outageTimeout?: number | undefined;
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
  /**
   * Stop reading this partition now (ownership moved away, the task was fenced, or it is
   * closing). A task that stops everything (a lost session, a failure) also stops the partitions
   * whose finish it accepted but the broker had not acknowledged yet: that finish may be lost,
   * and the partition may be started again later.
   */
  stop: (token: string) => void | Promise<void>;
  /** A fatal failure (a topic lost, the session lost to a freeze or to an outage longer than `outageTimeout`, a refusal by the group): every partition was stopped, the task is closed. */
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
  /** The task id this task runs under: the given one, or `<taskId>~<n>` after its n-th reconnection (see `outageTimeout`). */
  readonly taskId: string;
  readonly connectorName: string;
  readonly connectorId: string | undefined;
  readonly syncTopic: string;
  readonly heartbeatTopic: string;
  readonly groupId: string;
  /** `new` → `starting` → `running` (⇄ `recovering`, reconnecting after an outage) → `closing` → `closed`, or `failed`. */
  readonly state: 'new' | 'starting' | 'running' | 'recovering' | 'closing' | 'closed' | 'failed';
  /** The error that failed the task, if any. */
  readonly failure: Error | null;
  /** Creates missing topics, replays the sync topic from the start of the current epoch, then joins the heartbeat group; at most `startTimeout` (KAFKA_START_TIMEOUT). */
  start(): Promise<void>;
  /**
   * Stops every running partition, publishes the task's final checkpoint (`SyncTask.close`, read
   * back before it goes on), leaves the group, flushes publishes and disconnects; each wait
   * bounded by `stopTimeout`.
   */
  close(): Promise<void>;
  /** Throws a SyncError (KAFKA_SESSION_LOST, …) when the task may have lost its session, is reconnecting, or failed: never accepted and dropped. */
  addPartitions(partitions: PartitionSpec[]): SyncOutput;
  partitionStarted(token: string): SyncOutput;
  /** Throws like `addPartitions`. */
  partitionFinished(token: string): SyncOutput;
  /** Resolves once every message published so far is acknowledged by the broker; rejects (the failure's code) when the task failed before some went out. */
  flush(): Promise<void>;
  /**
   * Whether the task may act on `token` now (told to start it, not to stop it, and its session
   * holds). Ask before each write: after a freeze the first call stops every partition (the
   * `stop` listeners run within it), fails the task (KAFKA_SESSION_LOST) and answers false.
   */
  isRunning(token: string): boolean;
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
  /** The task ids of the epoch in force (empty before the first one): e.g. to wait for the group before adding the initial partitions. */
  epochMembers(): string[];
  /** Tokens this task was told to start and not yet to stop. */
  runningPartitions(): string[];
}

/** The heartbeat group's partition assigner (kafkajs runs `assign` on the leader only). */
export declare function taskSyncAssigner(options: {
  taskId: string;
  /** The connector name and id announced with the task id (KafkaTaskSync's `connectorName` and `connectorId`). */
  connector?: string | undefined;
  connectorId?: string | undefined;
  /** Tells this process from another one announcing the same task id. */
  nonce?: string | undefined;
  /**
   * Runs on the leader with the members sorted by task id (and what each announced); may return
   * the members it refuses (member id → `{code, message}`): they get no partitions, and a refusal
   * kafkajs reports to them as an unsubscribed topic, which KafkaTaskSync turns into its error.
   */
  onAssign?:
    | ((
        members: {memberId: string; taskId: string}[],
        announced: {memberId: string; taskId: string; connector: string | null; connectorId: string | null; nonce: string | null}[],
      ) => Map<string, {code: string; message: string}> | void)
    | undefined;
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
