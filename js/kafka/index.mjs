// Kafka transport for task coordination: drives a SyncTask (the sans-IO protocol core) over a
// Kafka cluster through kafkajs. Membership and leadership come from the consumer group
// rebalance on the heartbeat topic; task states travel on the single-partition sync topic.
//
// This module never imports kafkajs: the caller passes its own `Kafka` instance, so the package
// root loads without it (and in browsers, where KafkaTaskSync is exported but unusable).
import {SyncError} from './errors.mjs';
import {SyncTask} from './sync.mjs';
import {SyncLogReader, findEpochStart, isPlainObject, readArg} from './kafka/reader.mjs';
import {DEFAULT_STATE_REFRESH_INTERVAL, DEFAULT_SYNC_RETENTION_MS, checkRetention, checkSyncTopicConfigs} from './kafka/topics.mjs';

export {SyncLogReader, findEpochStart};

export const ASSIGNER_NAME = 'PartkitTaskSync';
const argError = (message) => new SyncError(message, 'INVALID_ARGUMENT');
const ASSIGNER_VERSION = 1;

// ---------------------------------------------------------------------------------------------
// Kafka's consumer protocol (the bytes inside JoinGroup metadata and SyncGroup assignments), as
// kafkajs' AssignerProtocol encodes it: written here so this module does not import kafkajs.

function buf() {
  const B = globalThis.Buffer;
  if (!B) throw new SyncError('KafkaTaskSync needs Node.js (Buffer is missing)', 'KAFKA_UNSUPPORTED_PLATFORM');
  return B;
}

class Writer {
  constructor() {
    this.parts = [];
  }
  int16(v) {
    const b = buf().alloc(2);
    b.writeInt16BE(v);
    this.parts.push(b);
  }
  int32(v) {
    const b = buf().alloc(4);
    b.writeInt32BE(v);
    this.parts.push(b);
  }
  string(s) {
    const b = buf().from(s, 'utf8');
    this.int16(b.length);
    this.parts.push(b);
  }
  bytes(b) {
    if (b == null) return this.int32(-1);
    this.int32(b.length);
    this.parts.push(buf().from(b));
  }
  done() {
    return buf().concat(this.parts);
  }
}

class Reader {
  constructor(b) {
    this.b = buf().from(b);
    this.o = 0;
  }
  need(n) {
    if (this.o + n > this.b.length) throw new RangeError('truncated consumer protocol data');
  }
  int16() {
    this.need(2);
    const v = this.b.readInt16BE(this.o);
    this.o += 2;
    return v;
  }
  int32() {
    this.need(4);
    const v = this.b.readInt32BE(this.o);
    this.o += 4;
    return v;
  }
  string() {
    const n = this.int16();
    if (n < 0) return null;
    this.need(n);
    const s = this.b.toString('utf8', this.o, this.o + n);
    this.o += n;
    return s;
  }
  bytes() {
    const n = this.int32();
    if (n < 0) return null;
    this.need(n);
    const v = this.b.subarray(this.o, this.o + n);
    this.o += n;
    return v;
  }
}

/** JoinGroup member metadata: version, subscribed topics, user data. */
export function encodeMemberMetadata({version = ASSIGNER_VERSION, topics, userData}) {
  const w = new Writer();
  w.int16(version);
  w.int32(topics.length);
  topics.forEach((t) => w.string(t));
  w.bytes(userData ?? buf().alloc(0));
  return w.done();
}

export function decodeMemberMetadata(bytes) {
  const r = new Reader(bytes);
  const version = r.int16();
  const n = r.int32();
  const topics = [];
  for (let i = 0; i < n; i++) topics.push(r.string());
  const userData = r.bytes();
  return {version, topics, userData};
}

/** SyncGroup member assignment: version, {topic: partitions[]}, user data. */
export function encodeMemberAssignment({version = ASSIGNER_VERSION, assignment, userData}) {
  const w = new Writer();
  w.int16(version);
  const topics = Object.keys(assignment);
  w.int32(topics.length);
  for (const t of topics) {
    w.string(t);
    w.int32(assignment[t].length);
    assignment[t].forEach((p) => w.int32(p));
  }
  w.bytes(userData ?? buf().alloc(0));
  return w.done();
}

export function decodeMemberAssignment(bytes) {
  const r = new Reader(bytes);
  const version = r.int16();
  const n = r.int32();
  const assignment = {};
  for (let i = 0; i < n; i++) {
    const t = r.string();
    const m = r.int32();
    const ps = [];
    for (let j = 0; j < m; j++) ps.push(r.int32());
    assignment[t] = ps;
  }
  const userData = r.bytes();
  return {version, assignment, userData};
}

/**
 * The partition assigner of the heartbeat group. Each member announces its task id in its
 * JoinGroup metadata; kafkajs calls `assign` on the group leader only, which is where the leader
 * learns the member list.
 * The heartbeat topic's partitions are dealt round-robin over the members sorted by task id.
 *
 * @param {{taskId: string, onAssign?: (members: {memberId: string, taskId: string}[]) => void}} opts
 * @returns a kafkajs `PartitionAssigner` (a factory taking `{cluster}`)
 */
export function taskSyncAssigner(options) {
  const what = 'taskSyncAssigner(options)';
  if (!isPlainObject(what, options)) throw argError(`${what}: options must be an object {taskId, onAssign?}`);
  const [taskId, onAssign] = readArg(what, () => [options.taskId, options.onAssign]);
  if (typeof taskId !== 'string' || taskId === '') throw argError(`${what}: taskId must be a non-empty string`);
  if (onAssign !== undefined && typeof onAssign !== 'function') throw argError(`${what}: onAssign must be a function`);
  return (context) => {
    if (context !== undefined && !isPlainObject('the assigner factory argument', context)) {
      throw argError('the assigner factory takes kafkajs\' {cluster}');
    }
    const cluster = context === undefined ? undefined : readArg('the assigner factory argument', () => context.cluster);
    return assignerOf(taskId, onAssign, cluster);
  };
}

function assignerOf(taskId, onAssign, cluster) {
  return {
    name: ASSIGNER_NAME,
    version: ASSIGNER_VERSION,
    protocol(request) {
      const what = 'the assigner\'s protocol({topics})';
      if (!isPlainObject(what, request)) throw argError(`${what}: expected an object {topics}`);
      const topicsArg = readArg(what, () => request.topics);
      if (!readArg(what, () => Array.isArray(topicsArg))) throw argError(`${what}: topics must be an array of strings`);
      const topics = readArg(what, () => Array.from(topicsArg));
      if (!topics.every((t) => typeof t === 'string')) throw argError(`${what}: topics must be an array of strings`);
      const userData = buf().from(JSON.stringify({taskId}), 'utf8');
      return {name: ASSIGNER_NAME, metadata: encodeMemberMetadata({topics, userData})};
    },
    async assign({members, topics}) {
      const decoded = members.map(({memberId, memberMetadata}) => {
        let task = null;
        try {
          const {userData} = decodeMemberMetadata(memberMetadata);
          task = JSON.parse(buf().from(userData).toString('utf8')).taskId;
        } catch {
          task = null;
        }
        // a member that did not say its task id (another client in the group) is known by its member id
        return {memberId, taskId: typeof task === 'string' && task ? task : memberId};
      });
      decoded.sort((a, b) => (a.taskId < b.taskId ? -1 : a.taskId > b.taskId ? 1 : a.memberId < b.memberId ? -1 : 1));
      const assignment = new Map(decoded.map((m) => [m.memberId, {}]));
      for (const topic of topics) {
        const partitions = (cluster?.findTopicPartitionMetadata?.(topic) ?? []).map((p) => p.partitionId).sort((a, b) => a - b);
        partitions.forEach((p, i) => {
          const m = decoded[i % decoded.length].memberId;
          (assignment.get(m)[topic] ??= []).push(p);
        });
      }
      if (onAssign) onAssign(decoded);
      return decoded.map(({memberId}) => ({
        memberId,
        memberAssignment: encodeMemberAssignment({assignment: assignment.get(memberId)}),
      }));
    },
  };
}

// ---------------------------------------------------------------------------------------------

const EMPTY_OUTPUT = Object.freeze({publish: [], start: [], stop: []});
const HEARTBEAT_RUN = Object.freeze({autoCommit: false, eachMessage: async () => {}});

/** The names of the topics of a connector. */
export function kafkaTopicNames(connectorName) {
  return {
    sync: `${connectorName}_connector_sync`,
    heartbeat: `${connectorName}_connector_heartbeat`,
  };
}

const DEFAULTS = {
  topicCheckInterval: 5000,
  sessionTimeout: 10000,
  heartbeatInterval: 1000,
  rebalanceTimeout: 30000,
  scanWindow: 256,
  createTopics: true,
  heartbeatPartitions: 1,
  replicationFactor: undefined,
  syncRetentionMs: DEFAULT_SYNC_RETENTION_MS,
  stopTimeout: 10000,
};

// The tick timer sleeps until the SyncTask's pollTimeout(), but never longer than this (ms; so a
// clock that jumps is noticed), nor than setTimeout can (2^31 - 1 ms).
const MAX_TICK_DELAY = 60000;
// A deadline that a tick already reached and that pollTimeout() still reports is retried no
// sooner than this (ms): no busy loop on a core whose pollTimeout() stays in the past.
const STALE_TICK_DELAY = 50;
const CONFIG_RESOURCE_TOPIC = 2; // kafkajs' ConfigResourceTypes.TOPIC

/** Resolves to true when `promise` settles within `ms`, to false when `ms` passes first. */
function bounded(promise, ms) {
  let timer;
  const settled = Promise.resolve(promise).then(
    () => true,
    () => true,
  );
  return Promise.race([settled, new Promise((resolve) => (timer = setTimeout(() => resolve(false), ms)))]).finally(() => clearTimeout(timer));
}

/**
 * One connector task's membership in a multi-task connector, over Kafka.
 *
 * Lifecycle: `await sync.start()` → (events `start`/`stop`; the connector calls `addPartitions`,
 * `partitionStarted`, `partitionFinished`) → `await sync.close()`.
 */
export class KafkaTaskSync {
  /**
   * @param {object} options
   * @param {object} options.kafka a kafkajs `Kafka` instance
   * @param {string} options.connectorName the connector's unique name: the heartbeat group id and the topic prefix
   * @param {string} options.taskId this task's id, unique per process lifetime (a restarted task takes a new one)
   * @param {object} [options.syncOptions] the SyncTask options
   * @param {(taskId: string, options?: object) => object} [options.createSyncTask] builds the SyncTask
   */
  constructor(options) {
    if (options === null || typeof options !== 'object') throw new SyncError('KafkaTaskSync options must be an object', 'INVALID_ARGUMENT');
    const {kafka, connectorName, taskId} = options;
    if (!kafka || typeof kafka.consumer !== 'function' || typeof kafka.producer !== 'function' || typeof kafka.admin !== 'function') {
      throw new SyncError('options.kafka must be a kafkajs Kafka instance', 'INVALID_ARGUMENT');
    }
    if (typeof connectorName !== 'string' || !/^[A-Za-z0-9._-]+$/.test(connectorName)) {
      throw new SyncError('options.connectorName must be a non-empty string of letters, digits, ".", "_" or "-"', 'INVALID_ARGUMENT');
    }
    if (typeof taskId !== 'string' || taskId === '') throw new SyncError('options.taskId must be a non-empty string', 'INVALID_ARGUMENT');
    const o = {...DEFAULTS};
    for (const [k, v] of Object.entries(options)) if (v !== undefined) o[k] = v;
    if (options.tickInterval !== undefined) {
      throw new SyncError('options.tickInterval was removed: the SyncTask is ticked when its pollTimeout() is due', 'INVALID_ARGUMENT');
    }
    for (const k of ['topicCheckInterval', 'stopTimeout', 'sessionTimeout', 'heartbeatInterval', 'rebalanceTimeout', 'scanWindow', 'heartbeatPartitions']) {
      if (!Number.isInteger(o[k]) || o[k] <= 0) throw new SyncError(`options.${k} must be a positive integer`, 'INVALID_ARGUMENT');
    }
    if (o.heartbeatInterval >= o.sessionTimeout) throw new SyncError('options.heartbeatInterval must be lower than options.sessionTimeout', 'INVALID_ARGUMENT');
    if (o.syncOptions !== undefined && (o.syncOptions === null || typeof o.syncOptions !== 'object' || Array.isArray(o.syncOptions))) {
      throw new SyncError('options.syncOptions must be an object', 'INVALID_ARGUMENT');
    }
    const refresh = o.syncOptions?.stateRefreshInterval ?? DEFAULT_STATE_REFRESH_INTERVAL;
    if (!Number.isSafeInteger(refresh) || refresh <= 0) throw new SyncError('options.syncOptions.stateRefreshInterval must be a positive integer', 'INVALID_ARGUMENT');
    if (!Number.isSafeInteger(o.syncRetentionMs) || (o.syncRetentionMs <= 0 && o.syncRetentionMs !== -1)) {
      throw new SyncError('options.syncRetentionMs must be a positive integer or -1 (infinite)', 'INVALID_ARGUMENT');
    }
    checkRetention(o.syncRetentionMs, refresh, 'options.syncRetentionMs');
    this.stateRefreshInterval = refresh;
    this.kafka = kafka;
    this.connectorName = connectorName;
    this.taskId = taskId;
    this.options = o;
    const names = kafkaTopicNames(connectorName);
    this.syncTopic = o.syncTopic ?? names.sync;
    this.heartbeatTopic = o.heartbeatTopic ?? names.heartbeat;
    this.groupId = o.groupId ?? connectorName;
    this.readerGroupId = `${this.syncTopic}_reader_${taskId}`;
    this.clock = o.clock ?? Date.now;
    const factory = o.createSyncTask ?? defaultSyncTaskFactory;
    if (typeof factory !== 'function') throw new SyncError('options.createSyncTask must be a function', 'INVALID_ARGUMENT');
    this.task = factory(taskId, o.syncOptions);
    this.listeners = new Map();
    for (const [event, key] of [['start', 'onStart'], ['stop', 'onStop'], ['error', 'onError'], ['rebalance', 'onRebalance'], ['epoch', 'onEpoch']]) {
      if (typeof o[key] === 'function') this.on(event, o[key]);
    }
    this.state = 'new'; // new → starting → running → closing → closed | failed
    this.failure = null;
    this.timers = [];
    this.tickTimer = null; // the one timer of the SyncTask, set at its pollTimeout()
    this.lastTick = -Infinity; // the clock of the latest tick
    this.retentionWarned = false;
    this.publishChain = Promise.resolve();
    this.published = 0;
    this.log = null; // the SyncLogReader, once reading
    this.started = new Set(); // tokens this task told the connector to start and not to stop
    this.join = null; // latest GROUP_JOIN not yet turned into a rebalance
    this.lastGeneration = 0;
    this.assignedMembers = null;
    this.lastEpoch = undefined;
  }

  // ------------------------------------------------------------------------------- events

  /** Subscribes to `start` (token), `stop` (token), `error` (error), `rebalance` (event), `epoch` (id), `warning` (message). */
  on(event, fn) {
    if (typeof fn !== 'function') throw new SyncError('listener must be a function', 'INVALID_ARGUMENT');
    if (!this.listeners.has(event)) this.listeners.set(event, []);
    this.listeners.get(event).push(fn);
    return this;
  }

  off(event, fn) {
    const l = this.listeners.get(event);
    if (l) this.listeners.set(event, l.filter((f) => f !== fn));
    return this;
  }

  emit(event, ...args) {
    const l = this.listeners.get(event) ?? [];
    this.emitCollect(event, ...args);
    return l.length > 0;
  }

  /** Calls the listeners; returns the promises they returned. A listener that throws fails the task. */
  emitCollect(event, ...args) {
    const promises = [];
    for (const fn of [...(this.listeners.get(event) ?? [])]) {
      try {
        const r = fn(...args);
        if (r && typeof r.then === 'function') {
          promises.push(
            Promise.resolve(r).catch((error) => {
              if (event !== 'error') this.fail(new SyncError(`a "${event}" listener failed: ${error?.message ?? error}`, 'KAFKA_LISTENER_FAILED'), error);
            }),
          );
        }
      } catch (error) {
        if (event === 'error') throw error;
        this.fail(new SyncError(`a "${event}" listener threw: ${error?.message ?? error}`, 'KAFKA_LISTENER_FAILED'), error);
      }
    }
    return promises;
  }

  // ------------------------------------------------------------------------------- views

  ownedPartitions() {
    return this.task.ownedPartitions();
  }
  knownTasks() {
    return this.task.knownTasks();
  }
  epoch() {
    return this.task.epoch();
  }
  isLeader() {
    return this.task.isLeader();
  }
  /** Tokens this task was told to start, and that have not been stopped nor reported finished. */
  runningPartitions() {
    return [...this.started];
  }

  // ------------------------------------------------------------------------------- lifecycle

  /**
   * Ensures the topics, replays the sync topic from the start of the current epoch, then joins
   * the heartbeat group (so a new task is prepared before the others hear of it), and starts the
   * timers.
   */
  async start() {
    if (this.state !== 'new') throw new SyncError(`start() called on a KafkaTaskSync that is ${this.state}`, 'KAFKA_BAD_STATE');
    this.state = 'starting';
    const aborted = () => this.failure ?? new SyncError('KafkaTaskSync was closed while starting', 'KAFKA_BAD_STATE');
    try {
      this.admin = this.kafka.admin();
      await this.admin.connect();
      await this.ensureTopics();
      // one partition: a fixed partitioner (which also keeps kafkajs from warning about its default one)
      this.producer = this.kafka.producer({allowAutoTopicCreation: false, maxInFlightRequests: 1, idempotent: false, createPartitioner: () => () => 0});
      await this.producer.connect();
      // Subscription order: build the cached view from the sync topic first...
      await this.startReader();
      if (this.state !== 'starting') throw aborted();
      // ...then join the heartbeat group, which triggers the rebalance that announces this task.
      await this.startHeartbeat();
      if (this.state !== 'starting') throw aborted();
      this.armTick();
      this.timers.push(setInterval(() => this.checkTopics(), this.options.topicCheckInterval));
      this.timers.push(setInterval(() => this.checkSession(), Math.max(50, Math.floor(this.options.heartbeatInterval / 2))));
      this.state = 'running';
    } catch (error) {
      if (this.state === 'starting') {
        const e = error instanceof SyncError ? error : new SyncError(`KafkaTaskSync failed to start: ${error?.message ?? error}`, 'KAFKA_START_FAILED');
        await this.shutdown('failed', e, error);
      }
      if (this.closing) await this.closing;
      throw this.failure ?? error;
    }
  }

  /** Leaves the heartbeat group, stops the reader and the producer (after pending publishes). */
  async close() {
    if (this.state === 'closed' || this.state === 'failed' || this.state === 'closing') return this.closing;
    await this.shutdown('closed', null);
  }

  async shutdown(final, error, cause) {
    if (this.closing) return this.closing;
    const wasRunning = this.state === 'running';
    this.state = 'closing';
    this.closing = (async () => {
      this.timers.forEach((t) => clearInterval(t));
      this.timers = [];
      clearTimeout(this.tickTimer);
      this.tickTimer = null;
      this.abortStart?.(error ?? new SyncError('KafkaTaskSync was closed while starting', 'KAFKA_BAD_STATE'));
      if (error) {
        this.failure = error;
        if (cause !== undefined && error.cause === undefined) error.cause = cause;
      }
      // 1. Stop every running partition before leaving the group: once this task has left, the
      //    others may take them over. Listeners may return promises; they are awaited (bounded).
      const running = [...this.started];
      this.started.clear();
      const pending = [];
      for (const token of running) pending.push(...this.emitCollect('stop', token));
      if (pending.length) await bounded(Promise.allSettled(pending), this.options.stopTimeout);
      // 2. Let queued publishes reach the broker before leaving: a finish published while
      //    closing then lands before the group learns this task left, so the leader of the next
      //    epoch reads it before it computes (no finished partition is started again).
      if (!error) await bounded(this.publishChain, this.options.stopTimeout);
      // 3. Leave the heartbeat group: that is what tells the others to take over. Every
      //    disconnect is bounded by stopTimeout: kafkajs' can hang when it comes during a
      //    rebalance (tulios/kafkajs#1462), and the broker expires a member that never left.
      const disconnect = async (client, what) => {
        if (client && !(await bounded(Promise.resolve().then(() => client.disconnect()), this.options.stopTimeout))) {
          this.emit('warning', `${what} did not disconnect within ${this.options.stopTimeout} ms (stopTimeout); going on without it (exit the process to drop its connection)`);
        }
      };
      await disconnect(this.heartbeat, `the heartbeat group consumer of ${this.groupId}`);
      // 4. Close everything else.
      await disconnect(this.reader, 'the sync topic reader');
      await disconnect(this.producer, 'the producer');
      await disconnect(this.admin, 'the admin client');
      this.state = final;
      if (error && wasRunning) this.reportError(error);
    })();
    return this.closing;
  }

  reportError(error) {
    if (!this.emit('error', error)) {
      // No listener: an unhandled error, like an EventEmitter's, so the failure is never silent.
      queueMicrotask(() => {
        throw error;
      });
    }
  }

  /** Fails loudly: reports `error`, stops every running partition and every client. */
  fail(error, cause) {
    if (this.state === 'closed' || this.state === 'failed' || this.closing) return;
    this.shutdown('failed', error, cause);
  }

  // ------------------------------------------------------------------------------- inputs

  /** Partitions found by this task (initial ones, or children read from a parent). */
  addPartitions(specs) {
    return this.input('addPartitions', () => this.task.addPartitions(specs, this.clock()), true);
  }

  /** The connector started reading `token` (after a `start` event). */
  partitionStarted(token) {
    return this.input('partitionStarted', () => this.task.partitionStarted(token, this.clock()), true);
  }

  /** The connector finished `token`: it has no more data. */
  partitionFinished(token) {
    const out = this.input('partitionFinished', () => this.task.partitionFinished(token, this.clock()), true);
    this.started.delete(token);
    return out;
  }

  /**
   * Runs one SyncTask input and carries out its output. Errors of connector-called inputs are
   * thrown to the caller; errors of transport-driven inputs fail the task.
   */
  input(what, fn, rethrow = false) {
    if (rethrow ? this.state !== 'running' : this.state !== 'running' && this.state !== 'starting') {
      if (rethrow) throw new SyncError(`${what}() called on a KafkaTaskSync that is ${this.state}`, 'KAFKA_BAD_STATE');
      return EMPTY_OUTPUT;
    }
    let out;
    try {
      out = fn();
    } catch (error) {
      if (rethrow) throw error;
      this.fail(new SyncError(`SyncTask.${what} failed: ${error?.message ?? error}`, 'KAFKA_SYNC_TASK_FAILED'), error);
      return EMPTY_OUTPUT;
    }
    this.apply(out ?? EMPTY_OUTPUT);
    this.armTick();
    return out;
  }

  /**
   * (Re)sets the one tick timer at the SyncTask's pollTimeout(), after every input: none when it
   * has no deadline; at once when it is due; no sooner than STALE_TICK_DELAY when a tick already
   * reached it; never further than MAX_TICK_DELAY away.
   */
  armTick() {
    clearTimeout(this.tickTimer);
    this.tickTimer = null;
    if (this.state !== 'running' && this.state !== 'starting') return;
    const at = this.task.pollTimeout();
    if (at === null || at === undefined || !Number.isFinite(at)) return;
    let delay = Math.max(0, at - this.clock());
    if (at <= this.lastTick) delay = Math.max(delay, STALE_TICK_DELAY);
    delay = Math.min(delay, MAX_TICK_DELAY, 2 ** 31 - 1);
    this.tickTimer = setTimeout(() => {
      this.tickTimer = null;
      const now = this.clock();
      this.lastTick = now;
      this.input('tick', () => this.task.tick(now));
      // input() re-arms (unless the task stopped)
    }, delay);
  }

  apply(out) {
    for (const msg of out.publish ?? []) this.publish(msg);
    for (const token of out.stop ?? []) {
      if (this.started.delete(token)) this.emit('stop', token);
    }
    if (out.fenced) {
      // the SyncTask read the sync log with a hole: it stopped everything and does nothing more
      this.fail(new SyncError(`the sync task fenced itself: ${out.fenced}; start a new task under a new id`, 'KAFKA_TASK_FENCED'));
      return;
    }
    for (const token of out.start ?? []) {
      if (!this.started.has(token)) {
        this.started.add(token);
        this.emit('start', token);
      }
    }
    const e = this.task.epoch();
    if (e !== this.lastEpoch) {
      this.lastEpoch = e;
      this.emit('epoch', e);
    }
  }

  publish(msg) {
    const value = JSON.stringify(msg);
    this.publishChain = this.publishChain.then(async () => {
      if (this.failure) return;
      try {
        await this.producer.send({
          topic: this.syncTopic,
          acks: -1,
          messages: [{key: msg.taskID ?? this.taskId, value, headers: {type: String(msg.type ?? '')}}],
        });
        this.published++;
      } catch (error) {
        this.fail(new SyncError(`publishing to ${this.syncTopic} failed: ${error?.message ?? error}`, 'KAFKA_PUBLISH_FAILED'), error);
      }
    });
  }

  /** Resolves once every message published so far has been acknowledged by the broker. */
  flush() {
    return this.publishChain;
  }

  // ------------------------------------------------------------------------------- topics

  async ensureTopics() {
    const {createTopics, heartbeatPartitions, replicationFactor, syncRetentionMs} = this.options;
    const existing = new Set(await this.admin.listTopics());
    const wanted = [];
    if (!existing.has(this.syncTopic)) {
      wanted.push({
        topic: this.syncTopic,
        numPartitions: 1,
        ...(replicationFactor ? {replicationFactor} : {}),
        configEntries: [
          {name: 'retention.ms', value: String(syncRetentionMs)},
          {name: 'cleanup.policy', value: 'delete'},
        ],
      });
    }
    if (!existing.has(this.heartbeatTopic)) {
      wanted.push({topic: this.heartbeatTopic, numPartitions: heartbeatPartitions, ...(replicationFactor ? {replicationFactor} : {})});
    }
    if (wanted.length) {
      if (!createTopics) {
        throw new SyncError(`missing topic(s) ${wanted.map((t) => t.topic).join(', ')} and createTopics is false`, 'KAFKA_TOPIC_MISSING');
      }
      try {
        await this.admin.createTopics({topics: wanted, waitForLeaders: true});
      } catch (error) {
        // another task may have created it at the same time
        if (error?.type !== 'TOPIC_ALREADY_EXISTS' && !/already exists/i.test(String(error?.message))) throw error;
      }
    }
    await this.checkTopicShape(true);
    await this.checkRetentionRule();
  }

  /**
   * Reads the sync topic's configs from the broker (describeConfigs) and throws a SyncError when
   * they break the retention rule (js/kafka/topics.mjs). What cannot be checked (the broker does
   * not answer describeConfigs, or leaves a config out, as tansu 0.6 does for the ones not set
   * when the topic was created) is a `warning`, once.
   */
  async checkRetentionRule() {
    let entries;
    try {
      // every config of the topic (no configNames: tansu 0.6 cannot decode a request that names
      // them, and drops the connection)
      const {resources} = await this.admin.describeConfigs({
        includeSynonyms: false,
        resources: [{type: CONFIG_RESOURCE_TOPIC, name: this.syncTopic}],
      });
      const r = (resources ?? []).find((x) => x.resourceName === this.syncTopic) ?? resources?.[0];
      if (!r || (r.errorCode && r.errorCode !== 0)) throw new Error(r ? `error code ${r.errorCode}: ${r.errorMessage}` : 'no answer for the topic');
      entries = r.configEntries ?? [];
    } catch (error) {
      this.warnRetention([`could not read the configs of ${this.syncTopic} (describeConfigs: ${error?.message ?? error}): the retention rule is not checked`]);
      return;
    }
    this.warnRetention(checkSyncTopicConfigs(this.syncTopic, entries, this.stateRefreshInterval));
  }

  warnRetention(warnings) {
    if (this.retentionWarned || !warnings.length) return;
    this.retentionWarned = true;
    for (const w of warnings) this.emit('warning', w);
  }

  /** Throws if a topic is gone, or the sync topic does not have exactly one partition. */
  async checkTopicShape(initial) {
    const {topics} = await this.admin.fetchTopicMetadata({topics: [this.syncTopic, this.heartbeatTopic]});
    const byName = new Map(topics.map((t) => [t.name, t]));
    for (const name of [this.syncTopic, this.heartbeatTopic]) {
      const t = byName.get(name);
      if (!t || !t.partitions || t.partitions.length === 0) {
        throw new SyncError(`topic ${name} is missing${initial ? '' : ' (deleted while the task ran)'}`, initial ? 'KAFKA_TOPIC_MISSING' : 'KAFKA_TOPIC_LOST');
      }
    }
    const n = byName.get(this.syncTopic).partitions.length;
    if (n !== 1) throw new SyncError(`sync topic ${this.syncTopic} has ${n} partitions; it must have exactly 1 (total order)`, 'KAFKA_SYNC_TOPIC_PARTITIONS');
  }

  async checkTopics() {
    if (this.state !== 'running' || this.checking) return;
    this.checking = true;
    try {
      const listed = new Set(await this.admin.listTopics());
      for (const name of [this.syncTopic, this.heartbeatTopic]) {
        if (!listed.has(name)) throw new SyncError(`topic ${name} was lost (deleted while the task ran)`, 'KAFKA_TOPIC_LOST');
      }
      await this.checkTopicShape(false);
      await this.checkRetentionRule();
      const [p] = await this.admin.fetchTopicOffsets(this.syncTopic);
      if (p && BigInt(p.high) <= this.lastOffset) {
        throw new SyncError(`sync topic ${this.syncTopic} was truncated or recreated (end offset ${p.high}, already read ${this.lastOffset})`, 'KAFKA_TOPIC_LOST');
      }
    } catch (error) {
      if (this.state === 'running') {
        const e = error instanceof SyncError ? error : new SyncError(`checking the topics failed: ${error?.message ?? error}`, 'KAFKA_TOPIC_CHECK_FAILED');
        this.fail(e, error);
      }
    } finally {
      this.checking = false;
    }
  }

  // ------------------------------------------------------------------------------- sync topic reader

  /**
   * Starts the sync-topic reader (its own consumer group, one member) and resolves once the
   * SyncTask has replayed everything up to the end offset seen at start.
   *
   * Where the replay starts, refetches of skipped offsets and holes are the business of the
   * SyncLogReader (js/kafka/reader.mjs); this carries out its actions.
   */
  async startReader() {
    const [p] = await this.admin.fetchTopicOffsets(this.syncTopic);
    const log = new SyncLogReader({topic: this.syncTopic, low: p.low, high: p.high, scanWindow: this.options.scanWindow});
    this.log = log;
    let ready;
    const caughtUp = new Promise((resolve, reject) => (ready = {resolve, reject}));
    this.abortStart = (e) => ready.reject(e); // close() or a failure while replaying
    const reader = this.kafka.consumer({
      groupId: this.readerGroupId,
      allowAutoTopicCreation: false,
      sessionTimeout: this.options.sessionTimeout,
      heartbeatInterval: this.options.heartbeatInterval,
      rebalanceTimeout: this.options.rebalanceTimeout,
      maxWaitTimeInMs: 250,
    });
    this.reader = reader;
    reader.on(reader.events.CRASH, ({payload}) => {
      if (payload?.restart) return;
      const e = new SyncError(`the sync topic reader crashed: ${payload?.error?.message ?? 'unknown error'}`, 'KAFKA_READER_CRASHED');
      ready.reject(e);
      this.fail(e, payload?.error);
    });
    // Carries out the reader's actions, in order; a seek waits its delay first (inside
    // eachMessage, so that the consumer delivers nothing else before the seek).
    const perform = async (actions) => {
      for (const a of actions) {
        if (a.type === 'deliver') this.deliver(a.offset, a.message);
        else if (a.type === 'warning') this.emit('warning', a.message);
        else if (a.type === 'fence') this.input('fence', () => this.task.fence(a.reason, this.clock()));
        else if (a.type === 'ready') ready.resolve();
        else if (a.type === 'seek') {
          if (a.delay > 0) await new Promise((resolve) => setTimeout(resolve, a.delay));
          if (this.state !== 'running' && this.state !== 'starting') return;
          reader.seek({topic: this.syncTopic, partition: 0, offset: String(a.offset)});
        }
      }
    };
    await reader.connect();
    await reader.subscribe({topics: [this.syncTopic], fromBeginning: true});
    await reader.run({
      autoCommit: false,
      eachMessage: async ({partition, message}) => {
        if (partition !== 0) return;
        await perform(log.record(message.offset, message.value));
      },
    });
    await perform(log.begin());
    await caughtUp;
  }

  /** The last sync-topic offset read (-1 before any). */
  get lastOffset() {
    return this.log ? this.log.lastOffset : -1n;
  }

  /** Feeds a record read from the sync topic to the SyncTask. */
  deliver(offset, message) {
    this.input('onMessage', () => {
      try {
        return this.task.onMessage(message, this.clock());
      } catch (error) {
        // A refused message leaves the SyncTask unchanged, and every task refuses it alike.
        if (error?.code !== 'SYNC_MALFORMED_MESSAGE') throw error;
        this.emit('warning', `skipped a malformed sync message at offset ${offset} of ${this.syncTopic}: ${error.message}`);
        return EMPTY_OUTPUT;
      }
    });
  }

  // ------------------------------------------------------------------------------- heartbeat group

  /**
   * Joins the heartbeat group. The rebalance fed to `SyncTask.onRebalance` is assembled from
   * three public kafkajs hooks: the assigner's `assign` (leader only: the member list), the
   * GROUP_JOIN event (leadership; kafkajs 2 does not put the generation in it) and the first
   * successful HEARTBEAT after the join (which carries `groupGenerationId`, and proves that the
   * group is stable in that generation). The generation fed to the SyncTask is the group's + 1:
   * Kafka counts from 1 but tansu from 0, and SyncTask generations are positive.
   */
  async startHeartbeat() {
    const consumer = this.kafka.consumer({
      groupId: this.groupId,
      partitionAssigners: [taskSyncAssigner({taskId: this.taskId, onAssign: (members) => (this.assignedMembers = members)})],
      sessionTimeout: this.options.sessionTimeout,
      heartbeatInterval: this.options.heartbeatInterval,
      rebalanceTimeout: this.options.rebalanceTimeout,
      maxWaitTimeInMs: Math.min(this.options.heartbeatInterval, 1000),
      allowAutoTopicCreation: false,
      retry: {retries: 10},
    });
    this.heartbeat = consumer;
    const {GROUP_JOIN, HEARTBEAT, CRASH, REBALANCING} = consumer.events;
    consumer.on(REBALANCING, () => {
      this.askedToRejoin = true;
      this.joining = true;
      this.lastContact = Date.now();
    });
    consumer.on(GROUP_JOIN, ({payload}) => {
      if (this.state === 'closed' || this.state === 'failed') {
        // kafkajs can rejoin after a disconnect that came during a rebalance (tulios/kafkajs#1462):
        // a member with this task's id but no task behind it. Leave again.
        this.emit('warning', `the heartbeat group consumer of ${this.groupId} rejoined after the task ended; leaving again`);
        Promise.resolve()
          .then(() => consumer.disconnect())
          .catch(() => {});
        return;
      }
      const members = payload.isLeader && this.assignedMembers ? this.assignedMembers.map((m) => m.taskId) : undefined;
      this.assignedMembers = null;
      this.join = {memberId: payload.memberId, leader: Boolean(payload.isLeader), members, after: this.lastGeneration, asked: this.askedToRejoin};
      this.askedToRejoin = false;
      this.joining = false;
      this.lastContact = Date.now();
    });
    consumer.on(HEARTBEAT, ({payload}) => {
      this.lastContact = Date.now();
      const j = this.join;
      if (!j || payload.memberId !== j.memberId) return;
      // Kafka counts generations from 1, tansu from 0; SyncTask wants positive ones: feed the
      // group generation + 1 (the same shift on every member, so order and equality are kept).
      const generation = Number(payload.groupGenerationId) + 1;
      if (!Number.isSafeInteger(generation)) return;
      if (generation === j.after && j.asked) {
        // The broker asked for a rejoin, and the rejoin kept the generation. tansu 0.6 does this
        // when it drops a member whose session expired (the group stays formed, without a new
        // generation nor, if the dead member led it, a leader); Kafka only after a coordinator
        // move (NOT_COORDINATOR), where this costs one extra rebalance. Leaving and rejoining
        // makes the broker form a new generation.
        this.join = null;
        this.forceNewGeneration(generation);
        return;
      }
      if (!(generation > j.after)) return;
      this.join = null;
      this.lastGeneration = generation;
      const event = j.leader ? {generation, leader: true, members: j.members} : {generation, leader: false};
      this.emit('rebalance', event);
      this.input('onRebalance', () => this.task.onRebalance(event, this.clock()));
    });
    consumer.on(CRASH, ({payload}) => {
      if (payload?.restart) return;
      this.fail(new SyncError(`the heartbeat group consumer crashed: ${payload?.error?.message ?? 'unknown error'}`, 'KAFKA_HEARTBEAT_CRASHED'), payload?.error);
    });
    this.joining = true;
    this.lastContact = Date.now();
    await consumer.connect();
    await consumer.subscribe({topics: [this.heartbeatTopic], fromBeginning: false});
    await consumer.run(HEARTBEAT_RUN);
  }

  /**
   * The session watchdog. The broker expels a member it has not heard from for `sessionTimeout`,
   * and the others then take its partitions over; a task whose process stalled (or lost the
   * broker) that long may have been expelled without knowing it. Rather than go on reading
   * partitions that may now run elsewhere, it fails: every partition is stopped at once.
   * A join in progress does not count (the broker knows a joining member is alive), unless it
   * lasts longer than `rebalanceTimeout + sessionTimeout`. The limits are a heartbeat interval
   * short of these, as this task hears of a contact after the broker does.
   */
  checkSession() {
    if (this.state !== 'running') return;
    const now = Date.now();
    const silent = now - this.lastContact;
    // our clock of contact runs behind the broker's (it is read when a response arrives): trip a
    // heartbeat interval early
    const {sessionTimeout, heartbeatInterval, rebalanceTimeout} = this.options;
    const limit = (this.joining || this.rejoining ? rebalanceTimeout + sessionTimeout : sessionTimeout) - heartbeatInterval;
    if (silent > limit) {
      this.fail(new SyncError(`no contact with the group coordinator of ${this.groupId} for ${silent} ms (session timeout ${sessionTimeout} ms): this task may have been expelled and its partitions taken over`, 'KAFKA_SESSION_LOST'));
    }
  }

  async forceNewGeneration(generation) {
    if (this.rejoining || this.state !== 'running') return;
    this.rejoining = true;
    this.lastContact = Date.now();
    this.emit('warning', `the broker asked for a rebalance of ${this.groupId} but kept generation ${generation - 1}: leaving and rejoining to form a new one`);
    try {
      await this.heartbeat.stop();
      if (this.state === 'running') await this.heartbeat.run(HEARTBEAT_RUN);
    } catch (error) {
      this.fail(new SyncError(`rejoining the heartbeat group failed: ${error?.message ?? error}`, 'KAFKA_HEARTBEAT_CRASHED'), error);
    } finally {
      this.rejoining = false;
    }
  }
}

function defaultSyncTaskFactory(taskId, options) {
  return new SyncTask(taskId, options);
}
