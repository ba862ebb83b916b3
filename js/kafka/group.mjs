// The heartbeat group of KafkaTaskSync: membership and leadership come from a Kafka consumer
// group on the heartbeat topic. Here: the group's partition assigner (which tells the leader the
// task ids of the members) and the group member itself (which turns kafkajs' group events into the
// rebalances fed to the SyncTask, and watches the session).
//
// The bytes of JoinGroup metadata and SyncGroup assignments are Kafka's consumer protocol, which
// kafkajs' own AssignerProtocol encodes and decodes.
import kafkajs from 'kafkajs';
import {SyncError} from '../errors.mjs';
import {describe} from '../kit/args.mjs';
import {isObjectArg, readArg} from './reader.mjs';

const {MemberMetadata, MemberAssignment} = kafkajs.AssignerProtocol;

export const ASSIGNER_NAME = 'PartkitTaskSync';
const ASSIGNER_VERSION = 1;
const argError = (message) => new SyncError(message, 'INVALID_ARGUMENT');
/** Kafka's longest topic name, and a bound on the topics of one protocol() request. */
const MAX_TOPIC_NAME = 249;
const MAX_TOPICS = 100000;
/** A task id's bound (js/limits.mjs MAX_STRING, as SyncTask's). */
const MAX_TASK_ID = 1 << 20;

/**
 * The partition assigner of the heartbeat group. Each member announces in its JoinGroup metadata
 * its task id, its connector's identity (`connector`: the connector name and the optional
 * `connectorId`) and a `nonce` that tells this process from another one with the same task id.
 * kafkajs calls `assign` on the group leader only, which is where the leader learns the member
 * list, and where it refuses members (see `judgeMembers`): a refused member gets, instead of
 * partitions, a topic named `REFUSAL_PREFIX` + `{code, message}` as JSON, which kafkajs reports to
 * it as an unsubscribed topic (its RECEIVED_UNSUBSCRIBED_TOPICS event) and drops.
 * The heartbeat topic's partitions are dealt round-robin over the accepted members sorted by task
 * id.
 *
 * @param {{taskId: string, connector?: string, connectorId?: string, nonce?: string,
 *   onAssign?: (members: {memberId: string, taskId: string}[]) => (Map<string, {code: string, message: string}> | void)}} opts
 * @returns a kafkajs `PartitionAssigner` (a factory taking `{cluster}`)
 */
export function taskSyncAssigner(options) {
  const what = 'taskSyncAssigner(options)';
  if (!isObjectArg(what, options)) throw argError(`${what}: options must be an object {taskId, onAssign?}, got ${describe(options)}`);
  const [taskId, onAssign, connector, connectorId, nonce] = readArg(what, () => [options.taskId, options.onAssign, options.connector, options.connectorId, options.nonce]);
  if (typeof taskId !== 'string' || taskId === '') throw argError(`${what}: options.taskId must be a non-empty string, got ${describe(taskId)}`);
  if (taskId.length > MAX_TASK_ID) throw new SyncError(`${what}: options.taskId has ${taskId.length} UTF-16 code units, more than the bound of ${MAX_TASK_ID} UTF-16 code units`, 'INPUT_TOO_LARGE');
  if (onAssign !== undefined && typeof onAssign !== 'function') throw argError(`${what}: options.onAssign must be a function, got ${describe(onAssign)}`);
  for (const [k, v] of [['connector', connector], ['connectorId', connectorId], ['nonce', nonce]]) {
    if (v !== undefined && (typeof v !== 'string' || v === '' || v.length > MAX_IDENTITY)) throw argError(`${what}: options.${k} must be a non-empty string of at most ${MAX_IDENTITY} characters, got ${describe(v)}`);
  }
  const announced = {taskId};
  if (connector !== undefined) announced.connector = connector;
  if (connectorId !== undefined) announced.connectorId = connectorId;
  if (nonce !== undefined) announced.nonce = nonce;
  return (context) => {
    if (context !== undefined && !isObjectArg('context', context)) {
      throw argError(`context must be kafkajs' {cluster}, got ${describe(context)}`);
    }
    const cluster = context === undefined ? undefined : readArg('context', () => context.cluster);
    return assignerOf(announced, onAssign, cluster);
  };
}

/** The longest connectorId (or nonce) a member announces. */
const MAX_IDENTITY = 1024;
/** The topic name that carries a refusal in a member's assignment starts with this. */
export const REFUSAL_PREFIX = '__partkit_refused:';

/** A member's announcement, from its JoinGroup metadata (null fields when it did not say). */
function decodeMember({memberId, memberMetadata}) {
  let said = null;
  try {
    const {userData} = MemberMetadata.decode(memberMetadata);
    said = JSON.parse(Buffer.from(userData).toString('utf8'));
  } catch {
    said = null;
  }
  const str = (v) => (typeof v === 'string' && v ? v : null);
  // a member that did not say its task id (another client in the group) is known by its member id
  return {
    memberId,
    taskId: str(said?.taskId) ?? memberId,
    connector: str(said?.connector),
    connectorId: str(said?.connectorId),
    nonce: str(said?.nonce),
  };
}

/** What a member says its connector is, as one comparable string ('' when it said nothing). */
export function identityOf(m) {
  return m.connector === null && m.connectorId === null ? '' : JSON.stringify([m.connector, m.connectorId]);
}

/** An identity in words. */
function identityWords(key) {
  if (!key) return 'an unknown connector';
  const [name, id] = JSON.parse(key);
  return `connector ${name}${id === null ? ' (no connectorId)' : ` (connectorId ${JSON.stringify(id)})`}`;
}

/**
 * The leader's verdicts on the members of a generation: a Map memberId → `{code, message}` for
 * each member refused. `me`: this member's announcement; `established`: task ids of the epoch in
 * force (the connector that already runs); `previous`: member ids this leader accepted in the
 * previous generation it led.
 *
 * - A member whose connector identity (name and connectorId) differs from the connector's is
 *   refused with KAFKA_CONNECTOR_MISMATCH. The connector's identity is the one most members of
 *   the epoch in force announce, or, with none of them in the group, this leader's own (a member
 *   that announces no identity is never refused for it).
 * - Of the members that announce one task id, one is kept and the others are refused with
 *   KAFKA_DUPLICATE_TASK_ID: the one accepted in the previous generation, else this leader when it
 *   already took part in an epoch, else the one with the lowest member id; a leader that never
 *   took part in an epoch and finds its task id announced by another member refuses itself.
 */
export function judgeMembers(members, {me, established = [], previous = new Set(), admitted = false}) {
  const verdicts = new Map();
  const inEpoch = new Set(established);
  const counts = new Map();
  for (const m of members) {
    const key = identityOf(m);
    if (key && inEpoch.has(m.taskId)) counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  let connector = identityOf(me);
  let best = 0;
  for (const [key, n] of [...counts].sort((x, y) => (x[0] < y[0] ? -1 : 1))) {
    if (n > best) [connector, best] = [key, n];
  }
  for (const m of members) {
    const key = identityOf(m);
    if (key && connector && key !== connector) {
      verdicts.set(m.memberId, {
        code: 'KAFKA_CONNECTOR_MISMATCH',
        message: `task ${m.taskId} announces ${identityWords(key)}, but the group ${me.connector ?? ''} runs ${identityWords(connector)}: two different connectors share one connector name (and its topics); give each its own connectorName`,
      });
    }
  }
  const byTask = new Map();
  for (const m of members) {
    if (verdicts.has(m.memberId)) continue;
    if (!byTask.has(m.taskId)) byTask.set(m.taskId, []);
    byTask.get(m.taskId).push(m);
  }
  const isMe = (m) => me.nonce !== null && m.nonce === me.nonce;
  for (const [taskId, same] of byTask) {
    if (same.length < 2) continue;
    const sorted = [...same].sort((x, y) => (x.memberId < y.memberId ? -1 : 1));
    const keep =
      sorted.find((m) => previous.has(m.memberId)) ??
      (admitted ? sorted.find(isMe) : undefined) ??
      sorted.find((m) => !isMe(m)) ??
      sorted[0];
    for (const m of same) {
      if (m === keep) continue;
      verdicts.set(m.memberId, {
        code: 'KAFKA_DUPLICATE_TASK_ID',
        message: `task id ${taskId} is used by two members of the group (member ids ${keep.memberId} and ${m.memberId}): this one is refused; a task id must be unique, and new on every restart`,
      });
    }
  }
  return verdicts;
}

function assignerOf(announced, onAssign, cluster) {
  return {
    name: ASSIGNER_NAME,
    version: ASSIGNER_VERSION,
    protocol(request) {
      const what = 'protocol(request)';
      if (!isObjectArg(what, request)) throw argError(`${what}: request must be an object {topics}, got ${describe(request)}`);
      const topicsArg = readArg(what, () => request.topics);
      if (!readArg(what, () => Array.isArray(topicsArg))) throw argError(`${what}: topics must be an array of strings`);
      const topics = readArg(what, () => Array.prototype.slice.call(topicsArg, 0, MAX_TOPICS + 1));
      if (topics.length > MAX_TOPICS) throw new SyncError(`${what}: topics has more than ${MAX_TOPICS} items`, 'INPUT_TOO_LARGE');
      topics.forEach((t, i) => {
        if (typeof t !== 'string') throw argError(`${what}: topics[${i}] must be a string, got ${describe(t)}`);
        // Kafka's bound; the consumer protocol writes a topic's length in 16 bits.
        if (t.length > MAX_TOPIC_NAME) throw argError(`${what}: topics[${i}] must be a topic name of at most ${MAX_TOPIC_NAME} characters, got ${t.length}`);
      });
      const userData = Buffer.from(JSON.stringify(announced), 'utf8');
      return {name: ASSIGNER_NAME, metadata: MemberMetadata.encode({version: ASSIGNER_VERSION, topics, userData})};
    },
    async assign({members, topics}) {
      const all = members.map(decodeMember);
      all.sort((a, b) => (a.taskId < b.taskId ? -1 : a.taskId > b.taskId ? 1 : a.memberId < b.memberId ? -1 : 1));
      const said = onAssign ? onAssign(all.map(({memberId, taskId}) => ({memberId, taskId})), all) : undefined;
      const verdicts = said instanceof Map ? said : new Map();
      const accepted = all.filter((m) => !verdicts.has(m.memberId));
      const assignment = new Map(all.map((m) => [m.memberId, {}]));
      for (const topic of topics) {
        const partitions = (cluster?.findTopicPartitionMetadata?.(topic) ?? []).map((p) => p.partitionId).sort((a, b) => a - b);
        if (!accepted.length) continue;
        partitions.forEach((p, i) => {
          const m = accepted[i % accepted.length].memberId;
          (assignment.get(m)[topic] ??= []).push(p);
        });
      }
      for (const [memberId, verdict] of verdicts) {
        if (assignment.has(memberId)) assignment.set(memberId, {[`${REFUSAL_PREFIX}${JSON.stringify(verdict)}`]: [0]});
      }
      return all.map(({memberId}) => ({
        memberId,
        memberAssignment: MemberAssignment.encode({version: ASSIGNER_VERSION, assignment: assignment.get(memberId)}),
      }));
    },
  };
}

// ---------------------------------------------------------------------------------------------

/** The heartbeat consumer's run: it reads nothing (its partitions only mark membership). */
const HEARTBEAT_RUN = Object.freeze({autoCommit: false, eachMessage: async () => {}});

/** The heartbeat consumer's fetch wait (ms): a quarter of the heartbeat interval, 20 to 250 ms. */
export const heartbeatFetchWait = (heartbeatInterval) => Math.max(20, Math.min(250, Math.floor(heartbeatInterval / 4)));

/** A monotonic clock, in ms (never jumps with the wall clock). */
export const monotonic = () => performance.now();

/** The requests whose success proves the coordinator knew this member when they were sent. */
const CONTACT_REQUESTS = new Set(['Heartbeat', 'JoinGroup', 'SyncGroup']);

/**
 * One KafkaTaskSync's member of the heartbeat group. Its `sync` is the port the task gives it
 * (the task's internals are private): it reads the task's configuration and state (`state`,
 * `options`, `kafka`, `groupId`, `heartbeatTopic`, `taskId`, `nonce`, `task`, `group`) and
 * reports to it: `emit('rebalance' | 'warning')`, `input('onRebalance')`, `checkSession()`,
 * `admitted()`, `fail()`, `recover()`.
 *
 * It also keeps the session clock (`sessionCheck`): the time, on a monotonic clock, when the
 * latest request that the coordinator answered with success was *sent* (the broker restarts the
 * member's session when it receives a heartbeat, after it was sent), and when the event loop last
 * ran (a process that was frozen learns it from the gap, before anything else it does).
 */
export class HeartbeatGroup {
  constructor(sync) {
    this.sync = sync;
    this.consumer = null;
    this.join = null; // latest GROUP_JOIN not yet turned into a rebalance
    this.lastGeneration = 0;
    this.assignedMembers = null;
    this.askedToRejoin = false;
    this.joining = false;
    this.joinSince = 0; // monotonic: when the current join began
    this.rejoining = false;
    this.lastContact = 0; // monotonic: when the latest successful coordinator request was sent
    this.loopSeen = 0; // monotonic: when the event loop was last seen running
    this.sent = new Map(); // apiName -> monotonic send time of its latest answered request
    this.admitted = false; // a rebalance of this member was fed to the SyncTask
    this.previous = new Set(); // member ids this task accepted when it last led
    this.dropped = 0; // messages of this member's task not published (it failed or reconnected first)
  }

  /** The limit on silence this task allows itself, and how it is made up, for messages. */
  limits() {
    const {sessionTimeout, heartbeatInterval, rebalanceTimeout} = this.sync.options;
    // a heartbeat interval short of the session timeout: a margin for the broker's and this
    // process's clocks and for the time the others need to hear of a rebalance
    return {session: sessionTimeout - heartbeatInterval, join: rebalanceTimeout + sessionTimeout - heartbeatInterval, sessionTimeout, heartbeatInterval, rebalanceTimeout};
  }

  /** Marks a contact with the coordinator (monotonic), never moving the clock back. */
  contact(at) {
    if (at > this.lastContact) this.lastContact = at;
  }

  /**
   * Null while the session may still hold; else `{why, frozen}`: why it may be lost (a message),
   * and whether because the process itself did not run. Reading it marks the event loop as seen.
   */
  sessionCheck(now = monotonic()) {
    const l = this.limits();
    const gap = now - this.loopSeen;
    const silent = now - this.lastContact;
    let why = null;
    let frozen = false;
    if (this.loopSeen && gap > l.session) {
      frozen = true;
      why = `this process did not run for ${Math.round(gap)} ms (frozen, suspended or a blocked event loop), more than the ${l.session} ms a session allows (session timeout ${l.sessionTimeout} ms less a heartbeat interval of ${l.heartbeatInterval} ms); no contact with the group coordinator of ${this.sync.groupId} for ${Math.round(silent)} ms`;
    } else if (this.joining || this.rejoining) {
      const joining = now - Math.max(this.joinSince, this.lastContact);
      if (joining > l.join) {
        why = `joining the heartbeat group ${this.sync.groupId} took ${Math.round(joining)} ms without an answer from its coordinator, more than the ${l.join} ms a join allows (rebalance timeout ${l.rebalanceTimeout} ms + session timeout ${l.sessionTimeout} ms less a heartbeat interval of ${l.heartbeatInterval} ms)`;
      }
    } else if (silent > l.session) {
      why = `no contact with the group coordinator of ${this.sync.groupId} for ${Math.round(silent)} ms, more than the ${l.session} ms a session allows (session timeout ${l.sessionTimeout} ms less a heartbeat interval of ${l.heartbeatInterval} ms)`;
    }
    if (!why) {
      this.loopSeen = now;
      return null;
    }
    return {why, frozen};
  }

  /**
   * Joins the heartbeat group. The rebalance fed to `SyncTask.onRebalance` is assembled from
   * three public kafkajs hooks: the assigner's `assign` (leader only: the member list), the
   * GROUP_JOIN event (leadership; kafkajs 2 does not put the generation in it) and the first
   * successful HEARTBEAT after the join (which carries `groupGenerationId`, and proves that the
   * group is stable in that generation). The generation fed to the SyncTask is the group's + 1:
   * Kafka counts from 1 but tansu from 0, and SyncTask generations are positive.
   */
  async start() {
    const sync = this.sync;
    this.taskId = sync.taskId; // this incarnation's
    const me = {taskId: sync.taskId, connector: sync.connectorName, connectorId: sync.connectorId ?? null, nonce: sync.nonce};
    const consumer = sync.kafka.consumer({
      groupId: sync.groupId,
      partitionAssigners: [
        taskSyncAssigner({
          taskId: sync.taskId,
          connector: sync.connectorName,
          ...(sync.connectorId !== undefined ? {connectorId: sync.connectorId} : {}),
          nonce: sync.nonce,
          onAssign: (members, announced) => this.judge(me, members, announced),
        }),
      ],
      sessionTimeout: sync.options.sessionTimeout,
      heartbeatInterval: sync.options.heartbeatInterval,
      rebalanceTimeout: sync.options.rebalanceTimeout,
      // kafkajs heartbeats only between fetches (of the empty heartbeat topic): a short fetch
      // wait keeps heartbeats (hence news of a rebalance) a heartbeat interval apart, not two,
      // and lets the consumer stop (to leave the group) without waiting out a long fetch
      maxWaitTimeInMs: heartbeatFetchWait(sync.options.heartbeatInterval),
      allowAutoTopicCreation: false,
      // a join or sync that the broker answers "rebalance in progress" (tansu, while the
      // leader has not synced yet) is retried soon: a quarter of a heartbeat interval
      retry: {retries: 10, initialRetryTime: heartbeatFetchWait(sync.options.heartbeatInterval)},
    });
    this.consumer = consumer;
    const {GROUP_JOIN, HEARTBEAT, CRASH, REBALANCING, REQUEST, RECEIVED_UNSUBSCRIBED_TOPICS} = consumer.events;
    // Every handler first checks the session: after a freeze, what kafkajs read before it is
    // not acted on.
    const live = () => sync.group === this && sync.serving();
    if (REQUEST) {
      consumer.on(REQUEST, ({payload}) => {
        if (sync.group !== this || !payload || !CONTACT_REQUESTS.has(payload.apiName)) return;
        const duration = Math.max(0, Number(payload.duration) || 0);
        this.sent.set(payload.apiName, monotonic() - duration);
      });
    }
    if (RECEIVED_UNSUBSCRIBED_TOPICS) {
      consumer.on(RECEIVED_UNSUBSCRIBED_TOPICS, ({payload}) => {
        const refusal = (payload?.topicsNotSubscribed ?? []).find((t) => typeof t === 'string' && t.startsWith(REFUSAL_PREFIX));
        if (!refusal || !live()) return;
        let verdict;
        try {
          verdict = JSON.parse(refusal.slice(REFUSAL_PREFIX.length));
        } catch {
          verdict = {};
        }
        const code = typeof verdict.code === 'string' && /^KAFKA_[A-Z_]+$/.test(verdict.code) ? verdict.code : 'KAFKA_MEMBER_REFUSED';
        sync.fail(new SyncError(`the group leader of ${sync.groupId} refused this task: ${verdict.message ?? 'no reason given'}`, code));
      });
    }
    consumer.on(REBALANCING, () => {
      if (sync.group !== this || !sync.checkSession()) return;
      this.askedToRejoin = true;
      this.joining = true;
      this.joinSince = monotonic();
    });
    consumer.on(GROUP_JOIN, ({payload}) => {
      if (sync.state === 'closed' || sync.state === 'failed' || sync.group !== this) {
        // kafkajs can rejoin after a disconnect that came during a rebalance (tulios/kafkajs#1462):
        // a member with this task's id but no task behind it. Leave again.
        const after = sync.group !== this && sync.state !== 'closed' && sync.state !== 'failed' ? 'after the task reconnected under a new task id' : 'after the task ended';
        sync.emit('warning', `the heartbeat group consumer of ${sync.groupId} (task ${this.taskId}) rejoined ${after}; leaving again`);
        Promise.resolve()
          .then(() => consumer.disconnect())
          .catch(() => {});
        return;
      }
      // contact as of the SyncGroup request's sending (the join is over: the session clock runs)
      this.contact(this.sent.get('SyncGroup') ?? monotonic());
      this.joining = false;
      if (!sync.checkSession()) return;
      const members = payload.isLeader && this.assignedMembers ? this.assignedMembers.map((m) => m.taskId) : undefined;
      if (payload.isLeader && this.assignedMembers) this.previous = new Set(this.assignedMembers.map((m) => m.memberId));
      this.assignedMembers = null;
      this.join = {memberId: payload.memberId, leader: Boolean(payload.isLeader), members, after: this.lastGeneration, asked: this.askedToRejoin};
      this.askedToRejoin = false;
    });
    consumer.on(HEARTBEAT, ({payload}) => {
      if (sync.group !== this) return;
      // contact as of the heartbeat request's sending (after a freeze: before it, so the check fails)
      this.contact(this.sent.get('Heartbeat') ?? monotonic());
      if (!sync.checkSession()) return;
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
      sync.emit('rebalance', event);
      sync.input('onRebalance', () => sync.task.onRebalance(event, sync.clock()));
      if (!this.admitted && live()) {
        this.admitted = true;
        sync.admitted();
      }
    });
    consumer.on(CRASH, ({payload}) => {
      if (payload?.restart || sync.group !== this) return;
      const error = new SyncError(`the heartbeat group consumer crashed: ${payload?.error?.message ?? 'unknown error'}`, 'KAFKA_HEARTBEAT_CRASHED');
      if (payload?.error !== undefined) error.cause = payload.error;
      sync.recover(error, this.lastContact);
    });
    this.joining = true;
    this.joinSince = monotonic();
    this.loopSeen = monotonic();
    await consumer.connect();
    await consumer.subscribe({topics: [sync.heartbeatTopic], fromBeginning: false});
    await consumer.run(HEARTBEAT_RUN);
  }

  /**
   * The leader's verdicts on the generation's members (see judgeMembers); keeps the accepted
   * ones as the member list of the next rebalance.
   */
  judge(me, members, announced) {
    const sync = this.sync;
    let established = [];
    try {
      established = typeof sync.task.epochMembers === 'function' ? sync.task.epochMembers() ?? [] : [];
    } catch {
      established = [];
    }
    const verdicts = announced ? judgeMembers(announced, {me, established, previous: this.previous, admitted: this.admitted}) : new Map();
    this.assignedMembers = members.filter((m) => !verdicts.has(m.memberId));
    for (const [memberId, v] of verdicts) {
      const who = announced.find((m) => m.memberId === memberId);
      if (who && who.nonce !== me.nonce) sync.emit('warning', `refused member ${memberId} (task ${who.taskId}) of ${sync.groupId}: ${v.code}: ${v.message}`);
    }
    return verdicts;
  }

  /**
   * The session watchdog, run every few tens of ms and before every input: see
   * KafkaTaskSync.checkSession.
   */
  checkSession() {
    return this.sync.checkSession();
  }

  async forceNewGeneration(generation) {
    const sync = this.sync;
    if (this.rejoining || sync.state !== 'running') return;
    this.rejoining = true;
    this.joinSince = monotonic();
    sync.emit('warning', `the broker asked for a rebalance of ${sync.groupId} but kept generation ${generation - 1}: leaving and rejoining to form a new one`);
    try {
      await this.consumer.stop();
      if (sync.state === 'running') await this.consumer.run(HEARTBEAT_RUN);
    } catch (error) {
      sync.fail(new SyncError(`rejoining the heartbeat group failed: ${error?.message ?? error}`, 'KAFKA_HEARTBEAT_CRASHED'), error);
    } finally {
      this.rejoining = false;
    }
  }
}
