// Kafka transport for task coordination (KafkaTaskSync, over kafkajs).
import type {Kafka, PartitionAssigner} from 'kafkajs';
import type {PartitionSpec, PartitionState, RebalanceEvent, SyncOptions, SyncOutput, SyncTask, TaskState} from './sync';

/** The part of a SyncTask that KafkaTaskSync drives (partkit's `SyncTask` has it). */
export type SyncTaskLike = Pick<
  SyncTask,
  'onRebalance' | 'onMessage' | 'addPartitions' | 'partitionStarted' | 'partitionFinished' | 'tick' | 'fence' | 'ownedPartitions' | 'knownTasks' | 'epoch' | 'isLeader'
>;

/** The rebalance fed to `SyncTask.onRebalance`, also emitted as the `rebalance` event. */
export interface KafkaRebalanceEvent extends RebalanceEvent {
  /** The heartbeat group's generation + 1 (Kafka counts from 1, tansu from 0). */
  generation: number;
  /** Whether this task is the group leader (kafkajs ran the assigner on it). */
  leader: boolean;
  /** The task ids of the generation's members (leader only). */
  members?: string[];
}

export interface KafkaTaskSyncOptions {
  /** A kafkajs `Kafka` instance (the caller's client configuration: brokers, SSL, SASL, logging). */
  kafka: Kafka;
  /** The connector's name: the heartbeat consumer group id and the prefix of its topics. Letters, digits, `.`, `_`, `-`. */
  connectorName: string;
  /** This task's id: unique, and new on every restart (e.g. `${host}-${pid}-${uuid}`). */
  taskId: string;
  /** The SyncTask options (timeouts, removal delay). */
  syncOptions?: SyncOptions;
  /** Builds the SyncTask; default: partkit's `SyncTask`. */
  createSyncTask?: (taskId: string, options?: SyncOptions) => SyncTaskLike;
  /** Default `<connectorName>_connector_sync` (one partition, created when missing). */
  syncTopic?: string;
  /** Default `<connectorName>_connector_heartbeat` (created when missing, `heartbeatPartitions` partitions). */
  heartbeatTopic?: string;
  /** The heartbeat consumer group. Default `connectorName`. */
  groupId?: string;
  /** Create missing topics (default true); when false a missing topic fails `start()` with KAFKA_TOPIC_MISSING. */
  createTopics?: boolean;
  /** Partitions of a heartbeat topic created here. Default 1. */
  heartbeatPartitions?: number;
  /** Replication factor of topics created here. Default: the broker's. */
  replicationFactor?: number;
  /** `retention.ms` of a sync topic created here. Default 24 h. */
  syncRetentionMs?: number;
  /** How often `SyncTask.tick` runs, ms. Default 1000. */
  tickInterval?: number;
  /** How often the topics are checked (existence, one sync partition, no truncation), ms. Default 5000. */
  topicCheckInterval?: number;
  /** Heartbeat group session timeout, ms: how long a task that died without leaving keeps its partitions. Default 10000. */
  sessionTimeout?: number;
  /** Heartbeat interval, ms. Default 1000. */
  heartbeatInterval?: number;
  /** Heartbeat group rebalance timeout, ms. Default 30000. */
  rebalanceTimeout?: number;
  /** How many records the sync-topic reader looks back at first when it searches the epoch start. Default 256. */
  scanWindow?: number;
  /** How long each step of `close()` waits (`stop` listeners, pending publishes, each client's disconnect), ms. Default 10000. */
  stopTimeout?: number;
  /** The clock fed to the SyncTask. Default `Date.now`. */
  clock?: () => number;
  onStart?: (token: string) => void | Promise<void>;
  onStop?: (token: string) => void | Promise<void>;
  onError?: (error: Error) => void;
  onRebalance?: (event: KafkaRebalanceEvent) => void;
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
  /** A record of the sync topic that is not a SyncMessage was skipped. */
  warning: (message: string) => void;
}

/**
 * One connector task in a multi-task connector, coordinated over Kafka: the heartbeat group's
 * rebalances tell who is alive and who leads, the sync topic carries every task's state.
 */
export declare class KafkaTaskSync {
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
  /** Stops every running partition, leaves the group, flushes publishes and disconnects. */
  close(): Promise<void>;
  addPartitions(partitions: PartitionSpec[]): SyncOutput;
  partitionStarted(token: string): SyncOutput;
  partitionFinished(token: string): SyncOutput;
  /** Resolves once every message published so far is acknowledged by the broker. */
  flush(): Promise<void>;
  on<E extends keyof KafkaTaskSyncEvents>(event: E, listener: KafkaTaskSyncEvents[E]): this;
  off<E extends keyof KafkaTaskSyncEvents>(event: E, listener: KafkaTaskSyncEvents[E]): this;
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
  onAssign?: (members: {memberId: string; taskId: string}[]) => void;
}): PartitionAssigner;

/** Where a reader that applied no epoch starts on the sync topic; see the README. */
export declare function findEpochStart(
  records: {offset: string | number | bigint; message: {type?: string; syncEpoch?: string; baseEpoch?: string} | null}[],
  where: {atLow: boolean; low: string | number | bigint},
): {offset: string} | {extend: true};

/** `{sync: '<name>_connector_sync', heartbeat: '<name>_connector_heartbeat'}`. */
export declare function kafkaTopicNames(connectorName: string): {sync: string; heartbeat: string};
