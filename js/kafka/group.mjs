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
  if (!isObjectArg(what, options)) throw argError(`${what}: options must be an object {taskId, onAssign?}, got ${describe(options)}`);
  const [taskId, onAssign] = readArg(what, () => [options.taskId, options.onAssign]);
  if (typeof taskId !== 'string' || taskId === '') throw argError(`${what}: options.taskId must be a non-empty string, got ${describe(taskId)}`);
  if (taskId.length > MAX_TASK_ID) throw new SyncError(`${what}: options.taskId has ${taskId.length} UTF-16 code units, more than the bound of ${MAX_TASK_ID} UTF-16 code units`, 'INPUT_TOO_LARGE');
  if (onAssign !== undefined && typeof onAssign !== 'function') throw argError(`${what}: options.onAssign must be a function, got ${describe(onAssign)}`);
  return (context) => {
    if (context !== undefined && !isObjectArg('context', context)) {
      throw argError(`context must be kafkajs' {cluster}, got ${describe(context)}`);
    }
    const cluster = context === undefined ? undefined : readArg('context', () => context.cluster);
    return assignerOf(taskId, onAssign, cluster);
  };
}

function assignerOf(taskId, onAssign, cluster) {
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
      const userData = Buffer.from(JSON.stringify({taskId}), 'utf8');
      return {name: ASSIGNER_NAME, metadata: MemberMetadata.encode({version: ASSIGNER_VERSION, topics, userData})};
    },
    async assign({members, topics}) {
      const decoded = members.map(({memberId, memberMetadata}) => {
        let task = null;
        try {
          const {userData} = MemberMetadata.decode(memberMetadata);
          task = JSON.parse(Buffer.from(userData).toString('utf8')).taskId;
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
        memberAssignment: MemberAssignment.encode({version: ASSIGNER_VERSION, assignment: assignment.get(memberId)}),
      }));
    },
  };
}

// ---------------------------------------------------------------------------------------------

/** The heartbeat consumer's run: it reads nothing (its partitions only mark membership). */
const HEARTBEAT_RUN = Object.freeze({autoCommit: false, eachMessage: async () => {}});

/**
 * One KafkaTaskSync's member of the heartbeat group. It reads the task's configuration and state
 * (`state`, `options`, `kafka`, `groupId`, `heartbeatTopic`, `taskId`) and reports to it:
 * `emit('rebalance' | 'warning')`, `input('onRebalance')`, `fail()`.
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
    this.rejoining = false;
    this.lastContact = 0;
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
    const consumer = sync.kafka.consumer({
      groupId: sync.groupId,
      partitionAssigners: [taskSyncAssigner({taskId: sync.taskId, onAssign: (members) => (this.assignedMembers = members)})],
      sessionTimeout: sync.options.sessionTimeout,
      heartbeatInterval: sync.options.heartbeatInterval,
      rebalanceTimeout: sync.options.rebalanceTimeout,
      maxWaitTimeInMs: Math.min(sync.options.heartbeatInterval, 1000),
      allowAutoTopicCreation: false,
      retry: {retries: 10},
    });
    this.consumer = consumer;
    const {GROUP_JOIN, HEARTBEAT, CRASH, REBALANCING} = consumer.events;
    consumer.on(REBALANCING, () => {
      this.askedToRejoin = true;
      this.joining = true;
      this.lastContact = Date.now();
    });
    consumer.on(GROUP_JOIN, ({payload}) => {
      if (sync.state === 'closed' || sync.state === 'failed') {
        // kafkajs can rejoin after a disconnect that came during a rebalance (tulios/kafkajs#1462):
        // a member with this task's id but no task behind it. Leave again.
        sync.emit('warning', `the heartbeat group consumer of ${sync.groupId} rejoined after the task ended; leaving again`);
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
      sync.emit('rebalance', event);
      sync.input('onRebalance', () => sync.task.onRebalance(event, sync.clock()));
    });
    consumer.on(CRASH, ({payload}) => {
      if (payload?.restart) return;
      sync.fail(new SyncError(`the heartbeat group consumer crashed: ${payload?.error?.message ?? 'unknown error'}`, 'KAFKA_HEARTBEAT_CRASHED'), payload?.error);
    });
    this.joining = true;
    this.lastContact = Date.now();
    await consumer.connect();
    await consumer.subscribe({topics: [sync.heartbeatTopic], fromBeginning: false});
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
    const sync = this.sync;
    if (sync.state !== 'running') return;
    const now = Date.now();
    const silent = now - this.lastContact;
    // our clock of contact runs behind the broker's (it is read when a response arrives): trip a
    // heartbeat interval early
    const {sessionTimeout, heartbeatInterval, rebalanceTimeout} = sync.options;
    const limit = (this.joining || this.rejoining ? rebalanceTimeout + sessionTimeout : sessionTimeout) - heartbeatInterval;
    if (silent > limit) {
      sync.fail(new SyncError(`no contact with the group coordinator of ${sync.groupId} for ${silent} ms (session timeout ${sessionTimeout} ms): this task may have been expelled and its partitions taken over`, 'KAFKA_SESSION_LOST'));
    }
  }

  async forceNewGeneration(generation) {
    const sync = this.sync;
    if (this.rejoining || sync.state !== 'running') return;
    this.rejoining = true;
    this.lastContact = Date.now();
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
