// Kafka transport for task coordination: drives a SyncTask (the sans-IO protocol core) over a
// Kafka cluster through kafkajs. Membership and leadership come from the consumer group
// rebalance on the heartbeat topic; task states travel on the single-partition sync topic.
//
// This module never imports kafkajs: the caller passes its own `Kafka` instance, so the package
// root loads without it (and in browsers, where KafkaTaskSync is exported but unusable).
import {SyncError} from './errors.mjs';
import {SyncTask} from './sync.mjs';

export const ASSIGNER_NAME = 'PartkitTaskSync';
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
 * learns the member list (the seed's "the first consumer receives the list of active members").
 * The heartbeat topic's partitions are dealt round-robin over the members sorted by task id.
 *
 * @param {{taskId: string, onAssign?: (members: {memberId: string, taskId: string}[]) => void}} opts
 * @returns a kafkajs `PartitionAssigner` (a factory taking `{cluster}`)
 */
export function taskSyncAssigner({taskId, onAssign}) {
  return ({cluster}) => ({
    name: ASSIGNER_NAME,
    version: ASSIGNER_VERSION,
    protocol({topics}) {
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
  });
}

// ---------------------------------------------------------------------------------------------
// Where a new reader starts on the sync topic.

/**
 * Given the records of the tail of the sync topic (`[{offset, message}]` in offset order, where
 * `message` is the parsed SyncMessage or `null` for an unreadable record), returns where a task
 * that has applied no epoch must start reading so that its replay reaches the same state as the
 * tasks that read everything:
 *
 * - the latest NewEpoch in the log names the epoch it was computed from (`baseEpoch`); the reader
 *   starts at the first NewEpoch of that base epoch. Its leader had applied the base, so the base
 *   is an epoch every reader applied; replaying from there applies the current epoch exactly as
 *   the others did, and still ignores the latest NewEpoch if it was a stale one that every task
 *   ignored;
 * - if the latest NewEpoch has no base (the first epoch of the connector), or no NewEpoch is
 *   retained at all, the reader replays the whole retained log.
 *
 * Returns `{offset}` or, when the records do not reach back far enough and more of the log
 * exists before them (`atLow` false), `{extend: true}`.
 *
 * @param {{offset: string|number, message: object|null}[]} records
 * @param {{atLow: boolean, low: string|number}} where
 */
export function findEpochStart(records, {atLow, low}) {
  const fromLow = () => (atLow ? {offset: String(low)} : {extend: true});
  let last = -1;
  for (let i = records.length - 1; i >= 0; i--) {
    if (records[i].message?.type === 'NewEpoch') {
      last = i;
      break;
    }
  }
  if (last < 0) return fromLow();
  const latest = records[last].message;
  const base = typeof latest.baseEpoch === 'string' && latest.baseEpoch ? latest.baseEpoch : null;
  if (!base) return fromLow();
  const first = records.findIndex((r) => r.message?.type === 'NewEpoch' && r.message.syncEpoch === base);
  if (first >= 0) return {offset: String(records[first].offset)};
  if (!atLow) return {extend: true};
  // the base epoch is no longer retained: start at the latest epoch itself, the best left
  const own = records.findIndex((r) => r.message?.type === 'NewEpoch' && r.message.syncEpoch === latest.syncEpoch);
  return {offset: String(records[own].offset)};
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
  tickInterval: 1000,
  topicCheckInterval: 5000,
  sessionTimeout: 10000,
  heartbeatInterval: 1000,
  rebalanceTimeout: 30000,
  scanWindow: 256,
  createTopics: true,
  heartbeatPartitions: 1,
  replicationFactor: undefined,
  syncRetentionMs: 24 * 3600 * 1000,
  stopTimeout: 10000,
};

// How often a fetch that skipped sync-topic offsets is repeated before the gap fences the task,
// and the delay before the first repeat (ms; the n-th waits n times as long).
const REFETCHES = 3;
const REFETCH_DELAY = 50;

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
    for (const k of ['tickInterval', 'topicCheckInterval', 'stopTimeout', 'sessionTimeout', 'heartbeatInterval', 'rebalanceTimeout', 'scanWindow', 'heartbeatPartitions']) {
      if (!Number.isInteger(o[k]) || o[k] <= 0) throw new SyncError(`options.${k} must be a positive integer`, 'INVALID_ARGUMENT');
    }
    if (o.heartbeatInterval >= o.sessionTimeout) throw new SyncError('options.heartbeatInterval must be lower than options.sessionTimeout', 'INVALID_ARGUMENT');
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
    this.publishChain = Promise.resolve();
    this.published = 0;
    this.lastOffset = -1n; // last sync-topic offset fed to the SyncTask
    this.delivered = false; // whether a record was fed (offsets after it must be contiguous)
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
   * the heartbeat group (the seed's subscription order), and starts the tick timer.
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
      // Subscription order (seed): build the cached view from the sync topic first...
      await this.startReader();
      if (this.state !== 'starting') throw aborted();
      // ...then join the heartbeat group, which triggers the rebalance that announces this task.
      await this.startHeartbeat();
      if (this.state !== 'starting') throw aborted();
      this.timers.push(setInterval(() => this.input('tick', () => this.task.tick(this.clock())), this.options.tickInterval));
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
      // 2. Leave the heartbeat group: that is what tells the others to take over. Every
      //    disconnect is bounded by stopTimeout: kafkajs' can hang when it comes during a
      //    rebalance (tulios/kafkajs#1462), and the broker expires a member that never left.
      const disconnect = async (client, what) => {
        if (client && !(await bounded(Promise.resolve().then(() => client.disconnect()), this.options.stopTimeout))) {
          this.emit('warning', `${what} did not disconnect within ${this.options.stopTimeout} ms (stopTimeout); going on without it (exit the process to drop its connection)`);
        }
      };
      await disconnect(this.heartbeat, `the heartbeat group consumer of ${this.groupId}`);
      // 3. Let queued publishes reach the broker, then close everything else.
      if (!error) await bounded(this.publishChain, this.options.stopTimeout);
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
    return out;
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
        configEntries: [{name: 'retention.ms', value: String(syncRetentionMs)}],
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
   * Finding the start: the reader reads the last `scanWindow` records, and looks for the latest
   * NewEpoch and the first NewEpoch of the epoch it was computed from (see `findEpochStart`);
   * when the window does not reach it, the window grows fourfold towards the earliest retained
   * offset. The records from that offset on are replayed, then reading goes on live.
   */
  async startReader() {
    const [p] = await this.admin.fetchTopicOffsets(this.syncTopic);
    const low = BigInt(p.low);
    const high = BigInt(p.high);
    let window = BigInt(this.options.scanWindow);
    let from = high - window > low ? high - window : low;
    let buffer = [];
    let mode = high > low ? 'scan' : 'live';
    let ready;
    const caughtUp = new Promise((resolve, reject) => (ready = {resolve, reject}));
    this.abortStart = (e) => ready.reject(e); // close() or a failure while replaying
    if (mode === 'live') {
      this.lastOffset = high - 1n;
      ready.resolve();
    }
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
    await reader.connect();
    await reader.subscribe({topics: [this.syncTopic], fromBeginning: true});
    // whether `offset` is not the one right after the last record fed to the SyncTask
    const skips = (offset) => this.delivered && offset !== this.lastOffset + 1n;
    const deliver = (offset, message) => {
      if (skips(offset)) {
        // records were deleted (retention) or skipped before this task read them, and fetching
        // them again (see `refetch`) did not bring them: the task cannot know what it missed,
        // e.g. a NewEpoch that moved its partitions
        const hole = `offsets ${this.lastOffset + 1n}..${offset - 1n} of ${this.syncTopic} were never read (fetched ${REFETCHES + 1} times)`;
        this.lastOffset = offset;
        this.input('fence', () => this.task.fence(hole, this.clock()));
        return;
      }
      this.delivered = true;
      this.lastOffset = offset;
      if (!message) return;
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
    };
    // A fetch that skips offsets is fetched again from the first missing one, up to REFETCHES
    // times (a little later each time), before the gap counts as a hole: a task once got offset
    // 28 right after 26 in the broker tests (tansu 0.6, kafkajs 2.2.4), with nothing deleted.
    // Records missing for good (retention) still fence the task.
    let refetching; // the missing offset being fetched again
    let refetches = 0; // how many times it was
    const refetched = (offset) => {
      if (refetching !== offset) return;
      refetching = undefined;
      this.emit('warning', `offset ${offset} of ${this.syncTopic} was missing from a fetch and came on a later one`);
    };
    const refetch = async (expected) => {
      if (refetching !== expected) refetches = 0;
      if (refetches >= REFETCHES) return false;
      refetches++;
      refetching = expected;
      await new Promise((resolve) => setTimeout(resolve, REFETCH_DELAY * refetches));
      if (this.state !== 'running' && this.state !== 'starting') return true;
      reader.seek({topic: this.syncTopic, partition: 0, offset: String(expected)});
      return true;
    };
    await reader.run({
      autoCommit: false,
      eachMessage: async ({partition, message}) => {
        if (partition !== 0) return;
        const offset = BigInt(message.offset);
        if (mode === 'scan') {
          if (offset < from || (buffer.length && offset <= buffer[buffer.length - 1].offset)) return;
          const last = buffer.length ? buffer[buffer.length - 1].offset : undefined;
          if (last !== undefined && offset !== last + 1n && (await refetch(last + 1n))) return;
          refetched(offset);
          buffer.push({offset, message: this.parse(message, offset)});
          if (offset < high - 1n) return;
          const found = findEpochStart(buffer, {atLow: from === low, low});
          if (found.extend) {
            window *= 4n;
            from = high - window > low ? high - window : low;
            buffer = [];
            reader.seek({topic: this.syncTopic, partition: 0, offset: String(from)});
            return;
          }
          const start = BigInt(found.offset);
          mode = 'live';
          for (const r of buffer) {
            if (r.offset >= start) deliver(r.offset, r.message);
            else this.lastOffset = r.offset;
          }
          buffer = [];
          ready.resolve();
          return;
        }
        if (offset <= this.lastOffset) return; // redelivered after a reader rebalance or a refetch
        if (skips(offset) && (await refetch(this.lastOffset + 1n))) return;
        refetched(offset);
        deliver(offset, this.parse(message, offset));
      },
    });
    reader.seek({topic: this.syncTopic, partition: 0, offset: String(mode === 'scan' ? from : high)});
    await caughtUp;
  }

  parse(message, offset) {
    try {
      const m = JSON.parse(message.value.toString('utf8'));
      if (m && typeof m === 'object' && typeof m.type === 'string') return m;
    } catch {}
    this.emit('warning', `skipped an unreadable record at offset ${offset} of ${this.syncTopic}`);
    return null;
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
