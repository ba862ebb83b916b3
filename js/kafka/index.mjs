// partkit/kafka: the Kafka transport for task coordination (Node only). KafkaTaskSync drives a
// SyncTask (the sans-IO protocol core, from the package root) over a Kafka cluster through
// kafkajs, a peer dependency: the caller passes its own `Kafka` instance (brokers, SSL, SASL,
// logging).
//
//   index.mjs   KafkaTaskSync: options, events, lifecycle, the SyncTask's inputs and outputs
//               (publishing to the sync topic, driving the sync-topic reader)
//   group.mjs   the heartbeat group: the partition assigner and the group member (membership,
//               leadership, generations, the session watchdog)
//   reader.mjs  the sync-topic reader as a pure state machine (where it starts: the core's
//               start rule, the root's syncLogStart, re-exported here as findEpochStart)
//   topics.mjs  the topics: names, creation, shape checks, the retention rule
import {randomUUID} from 'node:crypto';
import {EventEmitter} from 'node:events';
import {PartkitError, SyncError} from '../errors.mjs';
import {argumentKit, describe, isPlainObject} from '../kit/args.mjs';
import {SyncTask, minSyncRetention, resolveSyncOptions, syncLogStart as findEpochStart} from '../sync.mjs';
import {HeartbeatGroup, monotonic, taskSyncAssigner} from './group.mjs';
import {SyncLogReader} from './reader.mjs';
import {
  DEFAULT_SYNC_RETENTION_MS,
  checkRetention,
  checkSyncTopicRetention,
  checkTopicShape,
  createMissingTopics,
  kafkaTopicNames,
  requireConnectorName,
} from './topics.mjs';

export {SyncLogReader, findEpochStart, kafkaTopicNames, taskSyncAssigner};

const kit = argumentKit(SyncError, {base: PartkitError});

const EMPTY_OUTPUT = Object.freeze({publish: [], start: [], stop: []});

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
  startTimeout: 120000,
  outageTimeout: 60000,
};

/** Every key of the KafkaTaskSync options (the removed `tickInterval` is refused with its own message). */
const OPTIONS = [
  'kafka', 'connectorName', 'connectorId', 'taskId', 'syncOptions', 'createSyncTask', 'clock', 'syncTopic', 'heartbeatTopic', 'groupId',
  'onStart', 'onStop', 'onError', 'onRebalance', 'onEpoch', ...Object.keys(DEFAULTS),
];

// The tick timer sleeps until the SyncTask's pollTimeout(), but never longer than this (ms; so a
// clock that jumps is noticed), nor than setTimeout can (2^31 - 1 ms).
const MAX_TICK_DELAY = 60000;
// How often the session watchdog runs at most (ms; it runs every heartbeatInterval / 2 when that
// is shorter): after a freeze, the connector's own timers that were due before it may run first,
// so the shorter, the fewer (see isRunning, which checks the session when asked).
const WATCHDOG_PERIOD = 50;
// A deadline that a tick already reached and that pollTimeout() still reports is retried no
// sooner than this (ms): no busy loop on a core whose pollTimeout() stays in the past.
const STALE_TICK_DELAY = 50;

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
 *
 * An EventEmitter (node:events) whose `emit` guards the task: a listener that throws, or returns
 * a promise that rejects, fails the task instead of unwinding into the transport (see `emit`).
 */
export class KafkaTaskSync extends EventEmitter {
  // Private state (the public surface is what types/kafka.d.ts declares).
  #abortStart;
  #abortStarting;
  #admin;
  #baseTaskId;
  #checkFailingSince;
  #checking;
  #clock;
  #closing;
  #deferred;
  #finalizing;
  #finishing;
  #group;
  #incarnation;
  #kafka;
  #lastEpoch;
  #lastPublish;
  #lastTick;
  #log;
  #makeTask;
  #nonce;
  #options;
  #outageSince;
  #producer;
  #publishChain;
  #published;
  #reader;
  #readerGroupId;
  #recovery;
  #retention;
  #retentionWarned;
  #stale;
  #started;
  #task;
  #tickTimer;
  #timers;
  #whenClosed;
  #taskId;
  #connectorName;
  #connectorId;
  #syncTopic;
  #heartbeatTopic;
  #groupId;
  #state;
  #failure;
  #port;

  /**
   * @param {object} options
   * @param {object} options.kafka a kafkajs `Kafka` instance
   * @param {string} options.connectorName the connector's unique name: the heartbeat group id and the topic prefix
   * @param {string} options.taskId this task's id, unique per process lifetime (a restarted task takes a new one)
   * @param {object} [options.syncOptions] the SyncTask options
   * @param {(taskId: string, options?: object) => object} [options.createSyncTask] builds the SyncTask
   */
  constructor(options) {
    super();
    // The options read once into a plain copy (a revoked Proxy or a throwing getter is refused here).
    const given = kit.reading(() => {
      if (!isPlainObject(options)) throw kit.fail(`options must be an object {kafka, connectorName, taskId, …}, got ${describe(options)}`);
      return {...options};
    }, 'options');
    if (given.tickInterval !== undefined) {
      throw new SyncError('options.tickInterval was removed: the SyncTask is ticked when its pollTimeout() is due', 'INVALID_ARGUMENT');
    }
    kit.knownKeys(given, OPTIONS, 'options');
    options = given;
    const {kafka, connectorName, taskId} = options;
    const isKafka = kit.reading(() => Boolean(kafka) && ['consumer', 'producer', 'admin'].every((m) => typeof kafka[m] === 'function'), 'options.kafka');
    if (!isKafka) throw new SyncError(`options.kafka must be a kafkajs Kafka instance, got ${describe(kafka)}`, 'INVALID_ARGUMENT');
    for (const k of ['syncTopic', 'heartbeatTopic', 'groupId']) if (options[k] !== undefined) kit.requireString(options[k], `options.${k}`, {nonEmpty: true});
    for (const k of ['clock', 'onStart', 'onStop', 'onError', 'onRebalance', 'onEpoch']) {
      if (options[k] !== undefined && typeof options[k] !== 'function') throw kit.fail(`options.${k} must be a function, got ${describe(options[k])}`);
    }
    requireConnectorName(connectorName, 'options.connectorName');
    if (typeof taskId !== 'string' || taskId === '') throw new SyncError(`options.taskId must be a non-empty string, got ${describe(taskId)}`, 'INVALID_ARGUMENT');
    const o = {...DEFAULTS};
    for (const [k, v] of Object.entries(options)) if (v !== undefined) o[k] = v;
    if (options.connectorId !== undefined && (typeof options.connectorId !== 'string' || options.connectorId === '' || options.connectorId.length > 1024)) {
      throw new SyncError(`options.connectorId must be a non-empty string of at most 1024 characters (what tells this connector from another one with the same name: a config hash, a deployment id), got ${describe(options.connectorId)}`, 'INVALID_ARGUMENT');
    }
    for (const k of ['outageTimeout', 'startTimeout', 'topicCheckInterval', 'stopTimeout', 'sessionTimeout', 'heartbeatInterval', 'rebalanceTimeout', 'scanWindow', 'heartbeatPartitions']) {
      if (!Number.isSafeInteger(o[k]) || o[k] <= 0) throw new SyncError(`options.${k} must be a positive integer, got ${describe(o[k])}`, 'INVALID_ARGUMENT');
    }
    if (o.heartbeatInterval >= o.sessionTimeout) throw new SyncError('options.heartbeatInterval must be lower than options.sessionTimeout', 'INVALID_ARGUMENT');
    if (o.syncOptions !== undefined && !kit.reading(() => isPlainObject(o.syncOptions), 'options.syncOptions')) {
      throw new SyncError(`options.syncOptions must be an object, got ${describe(o.syncOptions)}`, 'INVALID_ARGUMENT');
    }
    // the sync options as the core resolves and checks them (it owns their defaults and the
    // retention rule's number)
    const sync = inSyncOptions(() => resolveSyncOptions(o.syncOptions));
    const retention = {stateRefreshInterval: sync.stateRefreshInterval, minRetention: minSyncRetention(sync)};
    if (!Number.isSafeInteger(o.syncRetentionMs) || (o.syncRetentionMs <= 0 && o.syncRetentionMs !== -1)) {
      throw new SyncError('options.syncRetentionMs must be a positive integer or -1 (infinite)', 'INVALID_ARGUMENT');
    }
    checkRetention(o.syncRetentionMs, retention, 'options.syncRetentionMs');
    this.#retention = retention;
    this.#kafka = kafka;
    this.#connectorName = connectorName;
    this.#connectorId = o.connectorId;
    this.#taskId = taskId;
    // tells this process from another one that (wrongly) runs the same task id
    this.#nonce = randomUUID();
    this.#options = o;
    const names = kafkaTopicNames(connectorName);
    this.#syncTopic = o.syncTopic ?? names.sync;
    this.#heartbeatTopic = o.heartbeatTopic ?? names.heartbeat;
    this.#groupId = o.groupId ?? connectorName;
    // a reader group of this process's own (a second process with the same task id must not
    // take the sync topic's partition away from this one's reader)
    this.#readerGroupId = `${this.#syncTopic}_reader_${taskId}_${this.#nonce.slice(0, 8)}`;
    this.#clock = o.clock ?? Date.now;
    const factory = o.createSyncTask ?? defaultSyncTaskFactory;
    if (typeof factory !== 'function') throw new SyncError('options.createSyncTask must be a function', 'INVALID_ARGUMENT');
    this.#baseTaskId = taskId;
    this.#makeTask = (id) => (factory === defaultSyncTaskFactory ? inSyncOptions(() => factory(id, o.syncOptions)) : factory(id, o.syncOptions));
    this.#task = this.#makeTask(taskId);
    this.#outageSince = null; // monotonic: the last contact before an outage being ridden through
    for (const [event, key] of [['start', 'onStart'], ['stop', 'onStop'], ['error', 'onError'], ['rebalance', 'onRebalance'], ['epoch', 'onEpoch']]) {
      if (typeof o[key] === 'function') this.on(event, o[key]);
    }
    this.#state = 'new'; // new → starting → running → closing → closed | failed
    this.#failure = null;
    this.#timers = [];
    this.#tickTimer = null; // the one timer of the SyncTask, set at its pollTimeout()
    this.#lastTick = -Infinity; // the clock of the latest tick
    this.#retentionWarned = false;
    this.#publishChain = Promise.resolve();
    this.#published = 0;
    this.#stale = false; // between losing the session to an outage and the new task id
    this.#deferred = new Set(); // partitions to start once the group admitted this task
    this.#log = null; // the SyncLogReader, once reading
    this.#started = new Set(); // tokens this task told the connector to start and not to stop
    // token -> the publish of its finish: partitions the connector reported finished whose
    // finish the broker has not acknowledged yet (see stopAll)
    this.#finishing = new Map();
    this.#lastPublish = null; // the latest publish (a promise of whether the broker acknowledged it)
    this.#finalizing = false; // closing cleanly: the SyncTask's final checkpoint is on its way
    this.#whenClosed = null;
    this.#port = this.#makePort();
    this.#group = new HeartbeatGroup(this.#port); // the heartbeat group member (js/kafka/group.mjs)
    this.#lastEpoch = undefined;
  }

  get taskId() {
    return this.#taskId;
  }
  get connectorName() {
    return this.#connectorName;
  }
  get connectorId() {
    return this.#connectorId;
  }
  get syncTopic() {
    return this.#syncTopic;
  }
  get heartbeatTopic() {
    return this.#heartbeatTopic;
  }
  get groupId() {
    return this.#groupId;
  }
  get state() {
    return this.#state;
  }
  get failure() {
    return this.#failure;
  }

  /**
   * What the heartbeat group member (js/kafka/group.mjs) reads of this task and asks of it: the
   * configuration and state it needs, and the task's reactions (rebalance input, session check,
   * failure, reconnection).
   */
  #makePort() {
    const self = this;
    return {
      get kafka() { return self.#kafka; },
      get options() { return self.#options; },
      get groupId() { return self.#groupId; },
      get heartbeatTopic() { return self.#heartbeatTopic; },
      get connectorName() { return self.#connectorName; },
      get connectorId() { return self.#connectorId; },
      get taskId() { return self.#taskId; },
      get nonce() { return self.#nonce; },
      get task() { return self.#task; },
      get state() { return self.#state; },
      get group() { return self.#group; },
      clock: () => self.#clock(),
      emit: (event, ...args) => self.emit(event, ...args),
      checkSession: () => self.#checkSession(),
      serving: () => self.#serving(),
      fail: (error, cause) => self.#fail(error, cause),
      recover: (error, since) => self.#recover(error, since),
      input: (what, fn) => self.#input(what, fn),
      admitted: () => self.#admitted(),
    };
  }

  // ------------------------------------------------------------------------------- events

  // Events: `start` (token), `stop` (token), `error` (error), `rebalance` (event), `epoch` (id),
  // `warning` (message). Subscribe with EventEmitter's on/once/off.

  /**
   * Calls the listeners of `event` (as EventEmitter's `emit` does, `this` bound to the task) and
   * returns whether it had any. Unlike EventEmitter's, a listener that throws (or rejects) fails
   * the task with KAFKA_LISTENER_FAILED rather than throwing into the transport, and an `error`
   * without listeners is not thrown here (see `reportError`).
   */
  emit(event, ...args) {
    const had = this.listenerCount(event) > 0;
    this.#emitCollect(event, ...args);
    return had;
  }

  /** Calls the listeners; returns the promises they returned. A listener that throws fails the task. */
  #emitCollect(event, ...args) {
    const promises = [];
    for (const fn of this.rawListeners(event)) {
      try {
        const r = Reflect.apply(fn, this, args);
        if (r && typeof r.then === 'function') {
          promises.push(
            Promise.resolve(r).catch((error) => {
              if (event !== 'error') this.#fail(new SyncError(`a "${event}" listener failed: ${error?.message ?? error}`, 'KAFKA_LISTENER_FAILED'), error);
            }),
          );
        }
      } catch (error) {
        if (event === 'error') throw error;
        this.#fail(new SyncError(`a "${event}" listener threw: ${error?.message ?? error}`, 'KAFKA_LISTENER_FAILED'), error);
      }
    }
    return promises;
  }

  // ------------------------------------------------------------------------------- views

  ownedPartitions() {
    return this.#task.ownedPartitions();
  }
  knownTasks() {
    return this.#task.knownTasks();
  }
  epoch() {
    return this.#task.epoch();
  }
  isLeader() {
    return this.#task.isLeader();
  }
  /** The task ids of the epoch in force (empty before the first one). */
  epochMembers() {
    return typeof this.#task.epochMembers === 'function' ? [...(this.#task.epochMembers() ?? [])] : [];
  }
  /** Tokens this task was told to start, and that have not been stopped nor reported finished. */
  runningPartitions() {
    return [...this.#started];
  }

  /**
   * Whether this task may act on `token` now: it was told to start it and not to stop it, and
   * its group session still holds. Ask it before each write of a partition's data: after a freeze
   * (SIGSTOP, a suspended VM, a blocked event loop) the first call notices that the session may
   * be lost, stops every partition (the `stop` listeners run within this call), fails the task
   * with KAFKA_SESSION_LOST and answers false, even when the connector's own timers run before
   * this task's watchdog does.
   */
  isRunning(token) {
    if (this.#state !== 'running' || !this.#checkSession()) return false;
    return this.#started.has(token);
  }

  /**
   * Whether the heartbeat group session may still hold: the session watchdog, run every few tens
   * of ms and before every input and event this task serves. When it may be lost (no successful
   * request to the group coordinator sent within the session, or the process did not run that
   * long), the task fails with KAFKA_SESSION_LOST at once: every partition is stopped (the `stop`
   * listeners run within this call) before anything else is served. Returns false then.
   */
  #checkSession() {
    if (!this.#serving()) return !this.#failure;
    if (!this.#group.consumer) return true;
    const lost = this.#group.sessionCheck(monotonic());
    if (!lost) return true;
    const error = new SyncError(`${lost.why}: this task may have been expelled from the group and its partitions taken over; every partition was stopped`, 'KAFKA_SESSION_LOST');
    // a process that was frozen fails (its restart is the supervisor's); one that lost the
    // broker while it ran reconnects under a new task id (see recover)
    if (lost.frozen) this.#fail(error);
    else this.#recover(error, this.#group.lastContact);
    return false;
  }

  /** Called once the group fed this task its first rebalance: starts held until then go out. */
  #admitted() {
    const held = [...this.#deferred];
    this.#deferred.clear();
    for (const token of held) {
      if (!this.#started.has(token)) {
        this.#started.add(token);
        this.emit('start', token);
      }
    }
  }

  // ------------------------------------------------------------------------------- lifecycle

  /**
   * Ensures the topics, replays the sync topic from the start of the current epoch, then joins
   * the heartbeat group (so a new task is prepared before the others hear of it), and starts the
   * timers.
   */
  async start() {
    if (this.#state !== 'new') throw new SyncError(`start() called on a KafkaTaskSync that is ${this.#state}`, 'KAFKA_BAD_STATE');
    this.#state = 'starting';
    const aborted = () => this.#failure ?? new SyncError('KafkaTaskSync was closed while starting', 'KAFKA_BAD_STATE');
    // start() is bounded: a step that hangs (a broker that accepts connections and never
    // answers, a group that never forms) fails it with KAFKA_START_TIMEOUT; a failure or close()
    // while starting ends it at once
    const {startTimeout} = this.#options;
    let timer;
    let abort;
    const stopped = new Promise((resolve, reject) => {
      abort = reject;
      timer = setTimeout(() => reject(new SyncError(`start() did not finish within ${startTimeout} ms (startTimeout): the brokers, the topics or the heartbeat group ${this.#groupId} did not answer in time`, 'KAFKA_START_TIMEOUT')), startTimeout);
    });
    this.#abortStarting = abort;
    const steps = this.#startSteps('starting', aborted);
    steps.catch(() => {});
    try {
      await Promise.race([steps, stopped]);
      if (this.#state !== 'starting') throw aborted();
      this.#timers.push(setInterval(() => this.#checkTopics(), this.#options.topicCheckInterval));
      this.#state = 'running';
      this.#armTick();
    } catch (error) {
      if (this.#state === 'starting') {
        const e = error instanceof SyncError ? error : new SyncError(`KafkaTaskSync failed to start: ${error?.message ?? error}`, 'KAFKA_START_FAILED');
        await this.#shutdown('failed', e, error);
      }
      if (this.#closing) await this.#closing;
      throw this.#failure ?? error;
    } finally {
      clearTimeout(timer);
      this.#abortStarting = null;
    }
  }

  /** The steps of start() (and of a reconnection: `phase` 'recovering'), in order; each checks it was not aborted meanwhile. */
  async #startSteps(phase, aborted) {
    {
      // after each step: a task closed or failed meanwhile connects nothing more
      const check = () => {
        if (this.#state !== phase) throw aborted();
      };
      this.#admin = this.#kafka.admin();
      await this.#admin.connect();
      check();
      await this.#ensureTopics(phase === 'recovering');
      check();
      // one partition: a fixed partitioner (which also keeps kafkajs from warning about its default one)
      this.#producer = this.#kafka.producer({allowAutoTopicCreation: false, maxInFlightRequests: 1, idempotent: false, createPartitioner: () => () => 0});
      await this.#producer.connect();
      check();
      // Subscription order: build the cached view from the sync topic first...
      await this.#startReader();
      if (this.#state !== phase) throw aborted();
      // ...then join the heartbeat group, which triggers the rebalance that announces this task;
      // the session watchdog runs from then on
      const period = Math.max(10, Math.min(WATCHDOG_PERIOD, Math.floor(this.#options.heartbeatInterval / 2)));
      this.#timers.push(setInterval(() => this.#checkSession(), period));
      await this.#group.start();
      if (this.#state !== phase) throw aborted();
    }
  }

  /**
   * The task lost its group session to the brokers (no answer from the coordinator for longer
   * than the session allows, a publish that failed, a client that crashed) while its process
   * ran: it stops every partition at once, drops its clients and its SyncTask, and starts again
   * under a new task id (`<taskId>~<n>`; the group treats it as a restarted task), retrying
   * until the brokers answer. Past `outageTimeout` since the last contact, it fails (the error
   * names both numbers). `since`: monotonic time of the last contact.
   */
  #recover(error, since) {
    if (this.#state !== 'running') {
      if (this.#state !== 'recovering') this.#fail(error);
      return;
    }
    const {outageTimeout} = this.#options;
    const outageStart = Math.min(this.#outageSince ?? Infinity, since || monotonic());
    const elapsed = monotonic() - outageStart;
    if (elapsed > outageTimeout) {
      this.#fail(new SyncError(`${error.message}; no contact with the brokers for ${Math.round(elapsed)} ms, more than outageTimeout (${outageTimeout} ms)`, error.code), error.cause);
      return;
    }
    this.#outageSince = outageStart;
    this.#state = 'recovering';
    this.#stale = true; // what the old clients still deliver is not served (incarnate clears it)
    this.emit('warning', `${error.message} (${error.code}); reconnecting under a new task id, for at most outageTimeout (${outageTimeout} ms) since the last contact`);
    this.#recovery = this.#reconnect(error).catch((e) => this.#fail(e instanceof SyncError ? e : new SyncError(`reconnecting failed: ${e?.message ?? e}`, 'KAFKA_SESSION_LOST'), e));
  }

  /**
   * See recover: stop, drop the clients, then start again (new task id) until it works or the
   * bound passes. An attempt runs to its end, never abandoned half-way: kafkajs bounds each
   * request and its retries, and a client cannot be called back once started (a group consumer
   * left behind while it joins joins later: a member with no task behind it, with the id of the
   * next attempt's task). Only outageTimeout ends an attempt early: the task then fails, and
   * what the attempt still connects is disconnected once it is over.
   */
  async #reconnect(error) {
    const {outageTimeout, stopTimeout} = this.#options;
    this.#timers.forEach((t) => clearInterval(t));
    this.#timers = [];
    clearTimeout(this.#tickTimer);
    this.#tickTimer = null;
    this.#deferred.clear();
    const pending = this.#stopAll();
    if (pending.length) await bounded(Promise.allSettled(pending), stopTimeout);
    const tooLong = (attempts) => new SyncError(`${error.message}; no contact with the brokers for ${Math.round(monotonic() - this.#outageSince)} ms, more than outageTimeout (${outageTimeout} ms): reconnecting failed ${attempts} time(s)`, 'KAFKA_SESSION_LOST');
    for (let attempt = 1; ; attempt++) {
      this.#timers.forEach((t) => clearInterval(t));
      this.#timers = [];
      await this.#dropClients(Math.min(stopTimeout, 2000));
      if (this.#state !== 'recovering') return;
      const left = outageTimeout - (monotonic() - this.#outageSince);
      if (left <= 0) throw tooLong(attempt - 1);
      this.#incarnate();
      const aborted = () => this.#failure ?? new SyncError('KafkaTaskSync was closed while reconnecting', 'KAFKA_BAD_STATE');
      const steps = this.#startSteps('recovering', aborted);
      steps.catch(() => {});
      let timer;
      const deadline = new Promise((resolve) => (timer = setTimeout(() => resolve('deadline'), left)));
      let outcome;
      try {
        outcome = await Promise.race([steps.then(() => 'ok'), deadline]);
      } catch (e) {
        outcome = e;
      } finally {
        clearTimeout(timer);
      }
      if (outcome === 'deadline') {
        const group = this.#group;
        steps.catch(() => {}).finally(() => {
          if (this.#group === group) this.#dropClients(Math.min(stopTimeout, 2000));
        });
        throw tooLong(attempt);
      }
      if (this.#state !== 'recovering') {
        // closed or failed meanwhile: what this attempt connected goes too
        await this.#dropClients(Math.min(stopTimeout, 2000));
        return;
      }
      // what the brokers answered but is wrong (a topic lost, the retention rule broken, the group
      // refusing this task) fails at once; what they did not answer is tried again
      if (outcome instanceof SyncError && !['KAFKA_START_FAILED', 'KAFKA_BAD_STATE', 'KAFKA_READER_CRASHED', 'KAFKA_HEARTBEAT_CRASHED', 'KAFKA_TOPIC_CHECK_FAILED'].includes(outcome.code)) throw outcome;
      if (outcome === 'ok') {
        const took = Math.round(monotonic() - this.#outageSince);
        this.#outageSince = null;
        this.#timers.push(setInterval(() => this.#checkTopics(), this.#options.topicCheckInterval));
        this.#state = 'running';
        this.#armTick();
        this.emit('warning', `reconnected ${took} ms after the last contact with the brokers, as task ${this.#taskId}`);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(1000, 200 * attempt)));
    }
  }

  /** A new identity for a reconnection: task id `<taskId>~<n>`, a new SyncTask, reader group and group member. */
  #incarnate() {
    this.#incarnation = (this.#incarnation ?? 0) + 1;
    this.#taskId = `${this.#baseTaskId}~${this.#incarnation}`;
    this.#nonce = randomUUID();
    this.#readerGroupId = `${this.#syncTopic}_reader_${this.#taskId}_${this.#nonce.slice(0, 8)}`;
    try {
      this.#task.free?.();
    } catch {}
    this.#task = this.#makeTask(this.#taskId);
    this.#log = null;
    this.#lastTick = -Infinity;
    this.#lastEpoch = undefined;
    this.#publishChain = Promise.resolve();
    this.#group = new HeartbeatGroup(this.#port);
    this.#stale = false;
  }

  /** Disconnects every client (each bounded by `ms`), in the background past it. */
  async #dropClients(ms) {
    const clients = [this.#group.consumer, this.#reader, this.#producer, this.#admin].filter(Boolean);
    this.#group.consumer = null;
    this.#reader = null;
    this.#producer = null;
    this.#admin = null;
    await Promise.all(clients.map((c) => bounded(Promise.resolve().then(() => c.disconnect()).catch(() => {}), ms)));
  }

  /**
   * Stops every running partition, publishes the task's final checkpoint (SyncTask.close: a
   * connector whose tasks all closed finds its state after a stop shorter than the retention),
   * leaves the heartbeat group, stops the reader and the producer (after pending publishes).
   * Each wait is bounded by stopTimeout.
   */
  async close() {
    if (this.#state === 'closed' || this.#state === 'failed' || this.#state === 'closing') return this.#closing;
    await this.#shutdown('closed', null);
  }

  async #shutdown(final, error, cause) {
    if (this.#closing) return this.#closing;
    const wasRunning = this.#state === 'running';
    const report = wasRunning || this.#state === 'recovering';
    this.#state = 'closing';
    this.#closing = (async () => {
      this.#timers.forEach((t) => clearInterval(t));
      this.#timers = [];
      clearTimeout(this.#tickTimer);
      this.#tickTimer = null;
      this.#abortStart?.(error ?? new SyncError('KafkaTaskSync was closed while starting', 'KAFKA_BAD_STATE'));
      this.#abortStarting?.(error ?? new SyncError('KafkaTaskSync was closed while starting', 'KAFKA_BAD_STATE'));
      this.#deferred.clear();
      if (error) {
        this.#failure = error;
        if (cause !== undefined && error.cause === undefined) error.cause = cause;
      }
      // 1. Stop every running partition before leaving the group: once this task has left, the
      //    others may take them over. Listeners may return promises; they are awaited (bounded).
      //    A failing task stops too the partitions whose finish the broker has not acknowledged.
      const pending = this.#stopAll(Boolean(error));
      if (pending.length) await bounded(Promise.allSettled(pending), this.#options.stopTimeout);
      // 2. Let queued publishes reach the broker before leaving: a finish published while
      //    closing then lands before the group learns this task left, so the leader of the next
      //    epoch reads it before it computes (no finished partition is started again). A finish
      //    still not acknowledged then gets its `stop`.
      if (!error) {
        await bounded(this.#publishChain, this.#options.stopTimeout);
        const late = this.#stopAll();
        if (late.length) await bounded(Promise.allSettled(late), this.#options.stopTimeout);
      }
      // 3. The final checkpoint (SyncTask.close): the task publishes one once it has read back
      //    what it published, so that a connector whose tasks all closed finds its state after a stop shorter than the retention. The reader keeps feeding it meanwhile (bounded).
      if (!error && wasRunning) await this.#finalCheckpoint();
      // 4. Leave the heartbeat group: that is what tells the others to take over. Every
      //    disconnect is bounded by stopTimeout: kafkajs' can hang when it comes during a
      //    rebalance (tulios/kafkajs#1462), and the broker expires a member that never left.
      const disconnect = async (client, what) => {
        if (client && !(await bounded(Promise.resolve().then(() => client.disconnect()), this.#options.stopTimeout))) {
          this.emit('warning', `${what} did not disconnect within ${this.#options.stopTimeout} ms (stopTimeout); going on without it (exit the process to drop its connection)`);
        }
      };
      await disconnect(this.#group.consumer, `the heartbeat group consumer of ${this.#groupId}`);
      // 5. Close everything else.
      await disconnect(this.#reader, 'the sync topic reader');
      await disconnect(this.#producer, 'the producer');
      await disconnect(this.#admin, 'the admin client');
      this.#state = final;
      if (error && report) this.#reportError(error);
    })();
    return this.#closing;
  }

  /** Step 3 of a clean shutdown: SyncTask.close, then read on until closed() (bounded). */
  async #finalCheckpoint() {
    if (typeof this.#task.close !== 'function') return; // a createSyncTask task without it
    this.#finalizing = true;
    const done = new Promise((resolve) => {
      this.#whenClosed = resolve;
    });
    try {
      this.#input('close', () => this.#task.close(this.#clock()));
      if (!(await bounded(done, this.#options.stopTimeout))) {
        this.emit('warning', `the final checkpoint was not read back within ${this.#options.stopTimeout} ms (stopTimeout); leaving without it`);
      }
      await bounded(this.#publishChain, this.#options.stopTimeout);
    } finally {
      this.#finalizing = false;
      this.#whenClosed = null;
      clearTimeout(this.#tickTimer);
      this.#tickTimer = null;
    }
  }

  #reportError(error) {
    if (!this.emit('error', error)) {
      // No listener: an unhandled error, like an EventEmitter's, so the failure is never silent.
      queueMicrotask(() => {
        throw error;
      });
    }
  }

  /** Fails loudly: reports `error`, stops every running partition and every client. */
  #fail(error, cause) {
    if (this.#state === 'closed' || this.#state === 'failed' || this.#closing) return;
    this.#shutdown('failed', error, cause);
  }

  // ------------------------------------------------------------------------------- inputs

  /** Partitions found by this task (initial ones, or children read from a parent). */
  addPartitions(specs) {
    return this.#input('addPartitions', () => this.#task.addPartitions(specs, this.#clock()), true);
  }

  /** The connector started reading `token` (after a `start` event). */
  partitionStarted(token) {
    return this.#input('partitionStarted', () => this.#task.partitionStarted(token, this.#clock()), true);
  }

  /**
   * The connector finished `token`: it has no more data. The partition is no longer running here
   * at once; until the broker acknowledged its finish, a task that stops everything (a lost
   * session, a failure) emits `stop` for it too (see stopAll).
   */
  partitionFinished(token) {
    const before = this.#lastPublish;
    const out = this.#input('partitionFinished', () => this.#task.partitionFinished(token, this.#clock()), true);
    if (this.#started.delete(token) && this.#lastPublish !== before) {
      const sent = this.#lastPublish;
      this.#finishing.set(token, sent);
      sent.then((acknowledged) => {
        if (acknowledged && this.#finishing.get(token) === sent) this.#finishing.delete(token);
      });
    }
    return out;
  }

  /**
   * Emits `stop` for every running partition, and for every partition whose finish the broker
   * has not acknowledged (with `finishing`): that finish may be lost with the session, and the
   * partition then started again, here or elsewhere, so the connector hears `stop` before any
   * new `start` of it. Returns the promises the listeners returned.
   */
  #stopAll(finishing = true) {
    const tokens = [...this.#started];
    this.#started.clear();
    if (finishing) {
      for (const token of this.#finishing.keys()) if (!tokens.includes(token)) tokens.push(token);
      this.#finishing.clear();
    }
    const pending = [];
    for (const token of tokens) pending.push(...this.#emitCollect('stop', token));
    return pending;
  }

  /**
   * Runs one SyncTask input and carries out its output. Errors of connector-called inputs are
   * thrown to the caller; errors of transport-driven inputs fail the task.
   */
  #input(what, fn, rethrow = false) {
    // the session first: after a freeze, nothing is served before the task knows it may be out
    if (this.#serving()) this.#checkSession();
    if (rethrow ? this.#state !== 'running' : !this.#live() || this.#stale) {
      if (rethrow) {
        if (this.#failure) throw new SyncError(`${what}() refused: the task failed (${this.#failure.code}): ${this.#failure.message}`, this.#failure.code);
        if (this.#state === 'recovering') throw new SyncError(`${what}() refused: the task lost its group session and is reconnecting (every partition was stopped)`, 'KAFKA_SESSION_LOST');
        throw new SyncError(`${what}() called on a KafkaTaskSync that is ${this.#state}`, 'KAFKA_BAD_STATE');
      }
      return EMPTY_OUTPUT;
    }
    let out;
    try {
      out = fn();
    } catch (error) {
      if (rethrow) throw error;
      this.#fail(new SyncError(`SyncTask.${what} failed: ${error?.message ?? error}`, 'KAFKA_SYNC_TASK_FAILED'), error);
      return EMPTY_OUTPUT;
    }
    this.#apply(out ?? EMPTY_OUTPUT);
    this.#armTick();
    if (this.#finalizing && this.#task.closed?.()) this.#whenClosed?.();
    return out;
  }

  /** Whether the transport feeds the SyncTask: running, starting, reconnecting, or closing cleanly (step 3). */
  #live() {
    return this.#serving() || this.#finalizing === true;
  }

  /** Running, starting or reconnecting: the group and the reader are served. */
  #serving() {
    return this.#state === 'running' || this.#state === 'starting' || this.#state === 'recovering';
  }

  /**
   * (Re)sets the one tick timer at the SyncTask's pollTimeout(), after every input: none when it
   * has no deadline; at once when it is due; no sooner than STALE_TICK_DELAY when a tick already
   * reached it; never further than MAX_TICK_DELAY away.
   */
  #armTick() {
    clearTimeout(this.#tickTimer);
    this.#tickTimer = null;
    if (!this.#live()) return;
    const at = this.#task.pollTimeout();
    if (at === null || at === undefined || !Number.isFinite(at)) return;
    let delay = Math.max(0, at - this.#clock());
    if (at <= this.#lastTick) delay = Math.max(delay, STALE_TICK_DELAY);
    delay = Math.min(delay, MAX_TICK_DELAY, 2 ** 31 - 1);
    this.#tickTimer = setTimeout(() => {
      this.#tickTimer = null;
      const now = this.#clock();
      this.#lastTick = now;
      this.#input('tick', () => this.#task.tick(now));
      // input() re-arms (unless the task stopped)
    }, delay);
  }

  #apply(out) {
    for (const msg of out.publish ?? []) this.#publish(msg);
    for (const token of out.stop ?? []) {
      this.#deferred.delete(token);
      if (this.#started.delete(token)) this.emit('stop', token);
    }
    if (out.fenced) {
      // the SyncTask read the sync log with a hole: it stopped everything and does nothing more
      this.#fail(new SyncError(`the sync task fenced itself: ${out.fenced}; start a new task under a new id`, 'KAFKA_TASK_FENCED'));
      return;
    }
    for (const token of out.start ?? []) {
      // nothing starts before the group admitted this task (a task refused by the group, e.g.
      // a second process with this task id, starts nothing)
      if (!this.#group.admitted) {
        this.#deferred.add(token);
        continue;
      }
      if (!this.#started.has(token)) {
        this.#started.add(token);
        this.emit('start', token);
      }
    }
    const e = this.#task.epoch();
    if (e !== this.#lastEpoch) {
      this.#lastEpoch = e;
      this.emit('epoch', e);
    }
  }

  /** Appends a message to the sync topic: a record `{key, type, value}` as the SyncTask made it
   * (`publishAs: 'records'`), or a message object, written as JSON. */
  #publish(msg) {
    const record = typeof msg.value === 'string'
      ? {key: msg.key, value: msg.value, headers: {type: msg.type}}
      : {key: msg.taskID ?? this.#taskId, value: JSON.stringify(msg), headers: {type: String(msg.type ?? '')}};
    const group = this.#group; // this incarnation's (see recover)
    // resolves to whether the broker acknowledged the record
    const sent = this.#publishChain.then(async () => {
      if (this.#failure || this.#group !== group || this.#stale) {
        group.dropped++;
        return false;
      }
      try {
        await this.#producer.send({topic: this.#syncTopic, acks: -1, messages: [record]});
        this.#published++;
        return true;
      } catch (error) {
        group.dropped++;
        if (this.#group !== group) return false;
        const e = new SyncError(`publishing to ${this.#syncTopic} failed: ${error?.message ?? error}`, 'KAFKA_PUBLISH_FAILED');
        e.cause = error;
        this.#recover(e, group.lastContact);
        return false;
      }
    });
    this.#publishChain = sent;
    this.#lastPublish = sent;
  }

  /**
   * Resolves once every message published so far has been acknowledged by the broker; rejects
   * (with the failure's code) when the task failed before some of them went out.
   */
  flush() {
    const group = this.#group;
    return this.#publishChain.then(() => {
      if (group.dropped) {
        const why = this.#failure ? `the task failed first (${this.#failure.code}): ${this.#failure.message}` : 'the task lost its group session first (KAFKA_SESSION_LOST) and reconnected under a new task id';
        throw new SyncError(`${group.dropped} message(s) were not published: ${why}`, this.#failure?.code ?? 'KAFKA_SESSION_LOST');
      }
    });
  }

  // ------------------------------------------------------------------------------- topics

  async #ensureTopics(reconnecting = false) {
    const {createTopics, heartbeatPartitions, replicationFactor, syncRetentionMs} = this.#options;
    const topics = {syncTopic: this.#syncTopic, heartbeatTopic: this.#heartbeatTopic};
    if (reconnecting) {
      // a topic missing now was deleted while the task ran: that is loud, never recreated
      const listed = new Set(await this.#admin.listTopics());
      for (const name of [this.#syncTopic, this.#heartbeatTopic]) {
        if (!listed.has(name)) throw new SyncError(`topic ${name} was lost (deleted while the task ran)`, 'KAFKA_TOPIC_LOST');
      }
    } else await createMissingTopics(this.#admin, {...topics, createTopics, heartbeatPartitions, replicationFactor, syncRetentionMs});
    await checkTopicShape(this.#admin, this.#syncTopic, this.#heartbeatTopic, !reconnecting);
    await this.#checkRetentionRule();
  }

  /**
   * Throws a SyncError when the sync topic's configs break the retention rule
   * (js/kafka/topics.mjs); what cannot be checked is a `warning`, once.
   */
  async #checkRetentionRule() {
    this.#warnRetention(await checkSyncTopicRetention(this.#admin, this.#syncTopic, this.#retention));
  }

  #warnRetention(warnings) {
    if (this.#retentionWarned || !warnings.length) return;
    this.#retentionWarned = true;
    for (const w of warnings) this.emit('warning', w);
  }

  async #checkTopics() {
    if (this.#state !== 'running' || this.#checking || !this.#checkSession()) return;
    this.#checking = true;
    // this incarnation's clients: a check that a reconnection overtook (its clients dropped)
    // concludes nothing
    const admin = this.#admin;
    const group = this.#group;
    const overtaken = () => this.#state !== 'running' || this.#group !== group;
    try {
      const listed = new Set(await admin.listTopics());
      if (overtaken()) return;
      for (const name of [this.#syncTopic, this.#heartbeatTopic]) {
        if (!listed.has(name)) throw new SyncError(`topic ${name} was lost (deleted while the task ran)`, 'KAFKA_TOPIC_LOST');
      }
      await checkTopicShape(admin, this.#syncTopic, this.#heartbeatTopic, false);
      if (overtaken()) return;
      const warnings = await checkSyncTopicRetention(admin, this.#syncTopic, this.#retention);
      if (overtaken()) return;
      this.#warnRetention(warnings);
      const [p] = await admin.fetchTopicOffsets(this.#syncTopic);
      if (overtaken()) return;
      if (p && BigInt(p.high) <= this.#lastOffset) {
        throw new SyncError(`sync topic ${this.#syncTopic} was truncated or recreated (end offset ${p.high}, already read ${this.#lastOffset})`, 'KAFKA_TOPIC_LOST');
      }
      this.#checkFailingSince = null;
    } catch (error) {
      if (!overtaken()) {
        if (error instanceof SyncError) this.#fail(error);
        else {
          // the brokers did not answer: an outage is the session watchdog's business (the task
          // rides through one shorter than outageTimeout); a check that keeps failing longer fails
          const now = monotonic();
          this.#checkFailingSince ??= now;
          if (now - this.#checkFailingSince > this.#options.outageTimeout) {
            this.#fail(new SyncError(`checking the topics failed for ${Math.round(now - this.#checkFailingSince)} ms, more than outageTimeout (${this.#options.outageTimeout} ms): ${error?.message ?? error}`, 'KAFKA_TOPIC_CHECK_FAILED'), error);
          } else this.emit('warning', `checking the topics failed (going on): ${error?.message ?? error}`);
        }
      }
    } finally {
      this.#checking = false;
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
  async #startReader() {
    const [p] = await this.#admin.fetchTopicOffsets(this.#syncTopic);
    const log = new SyncLogReader({topic: this.#syncTopic, low: p.low, high: p.high, scanWindow: this.#options.scanWindow});
    this.#log = log;
    let ready;
    const caughtUp = new Promise((resolve, reject) => (ready = {resolve, reject}));
    this.#abortStart = (e) => ready.reject(e); // close() or a failure while replaying
    const reader = this.#kafka.consumer({
      groupId: this.#readerGroupId,
      allowAutoTopicCreation: false,
      sessionTimeout: this.#options.sessionTimeout,
      heartbeatInterval: this.#options.heartbeatInterval,
      rebalanceTimeout: this.#options.rebalanceTimeout,
      maxWaitTimeInMs: 250,
    });
    this.#reader = reader;
    reader.on(reader.events.CRASH, ({payload}) => {
      if (payload?.restart || this.#reader !== reader) return;
      const e = new SyncError(`the sync topic reader crashed: ${payload?.error?.message ?? 'unknown error'}`, 'KAFKA_READER_CRASHED');
      if (payload?.error !== undefined) e.cause = payload.error;
      ready.reject(e);
      this.#recover(e, this.#group.lastContact);
    });
    // Carries out the reader's actions, in order; a seek waits its delay first (inside
    // eachMessage, so that the consumer delivers nothing else before the seek).
    const perform = async (actions) => {
      for (const a of actions) {
        if (a.type === 'deliver') this.#deliver(a.offset, a.message);
        else if (a.type === 'warning') this.emit('warning', a.message);
        else if (a.type === 'fence') this.#input('fence', () => this.#task.fence(a.reason, this.#clock()));
        else if (a.type === 'ready') ready.resolve();
        else if (a.type === 'seek') {
          if (a.delay > 0) await new Promise((resolve) => setTimeout(resolve, a.delay));
          if (!this.#serving() || this.#reader !== reader) return;
          reader.seek({topic: this.#syncTopic, partition: 0, offset: String(a.offset)});
        }
      }
    };
    await reader.connect();
    await reader.subscribe({topics: [this.#syncTopic], fromBeginning: true});
    await reader.run({
      autoCommit: false,
      eachMessage: async ({partition, message}) => {
        if (partition !== 0 || this.#reader !== reader) return;
        await perform(log.record(message.offset, message.value));
      },
    });
    await perform(log.begin());
    await caughtUp;
  }

  /** The last sync-topic offset read (-1 before any). */
  get #lastOffset() {
    return this.#log ? this.#log.lastOffset : -1n;
  }

  /** Feeds a record read from the sync topic to the SyncTask. */
  #deliver(offset, message) {
    this.#input('onMessage', () => {
      try {
        return this.#task.onMessage(message, this.#clock());
      } catch (error) {
        // A refused message leaves the SyncTask unchanged, and every task refuses it alike.
        if (error?.code !== 'SYNC_MALFORMED_MESSAGE') throw error;
        this.emit('warning', `skipped a malformed sync message at offset ${offset} of ${this.#syncTopic}: ${error.message}`);
        return EMPTY_OUTPUT;
      }
    });
  }
}

/** `fn()`, its SYNC_INVALID_OPTIONS naming the SyncTask's options as this task's options.syncOptions. */
function inSyncOptions(fn) {
  try {
    return fn();
  } catch (error) {
    if (error instanceof SyncError && error.code === 'SYNC_INVALID_OPTIONS') {
      error.message = error.message.replace(/\boptions(?=[.[])/g, 'options.syncOptions');
    }
    throw error;
  }
}

// The task gives its messages as records to write as they are (no JSON.parse of what it wrote,
// no JSON.stringify for the producer); records read go to it as read (the reader does not parse
// them either): a new epoch of 100 × 1,000 partitions is about 11 MB of JSON.
function defaultSyncTaskFactory(taskId, options) {
  if (options === undefined) return new SyncTask(taskId, {publishAs: 'records'});
  if (options === null || typeof options !== 'object' || Array.isArray(options)) return new SyncTask(taskId, options); // refused there
  return new SyncTask(taskId, {...kit.reading(() => ({...options}), 'options.syncOptions'), publishAs: 'records'});
}
