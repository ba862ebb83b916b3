// An in-memory stand-in for the part of kafkajs that KafkaTaskSync uses, for deterministic unit
// tests of the transport: topics are arrays of records; a reader consumer delivers records from
// its seek position on; the heartbeat group's events are fired by the test.
'use strict';

const EVENTS = {
  GROUP_JOIN: 'consumer.group_join',
  HEARTBEAT: 'consumer.heartbeat',
  CRASH: 'consumer.crash',
  REBALANCING: 'consumer.rebalancing',
  RECEIVED_UNSUBSCRIBED_TOPICS: 'consumer.received_unsubscribed_topics',
  REQUEST: 'consumer.network.request',
};

class FakeKafka {
  constructor() {
    this.topics = new Map(); // name -> {partitions, records: [{offset, key, value, headers}]}
    this.calls = []; // what happened, in order
    this.consumers = [];
    this.failSends = false;
    this.hangDisconnect = new Set(); // group ids whose consumer's disconnect() never resolves
    this.skips = new Map(); // offset -> how many more fetches leave that record out
  }

  log(...what) {
    this.calls.push(what.join(' '));
  }

  createTopic(name, partitions = 1, configs = {}) {
    this.topics.set(name, {partitions, records: [], configs: {...configs}, low: 0});
  }

  /** What retention (or DeleteRecords) does: the records before `offset` are gone. */
  deleteRecords(topic, offset) {
    const t = this.topics.get(topic);
    t.low = Math.max(t.low, offset);
  }

  append(topic, value, key = null) {
    const t = this.topics.get(topic);
    const offset = String(t.records.length);
    t.records.push({offset, key, value: Buffer.from(value), headers: {}});
    for (const c of this.consumers) c.wake();
  }

  /**
   * From now on, every admin client's `connect()` waits until the returned function is called
   * (the brokers answer a reconnection's first request only once released).
   */
  gateAdminConnects() {
    let release;
    const gate = new Promise((resolve) => (release = resolve));
    const admin = this.admin.bind(this);
    this.admin = () => {
      const a = admin();
      return {...a, connect: () => gate.then(() => a.connect())};
    };
    return release;
  }

  admin() {
    const k = this;
    return {
      async connect() {},
      async disconnect() {
        k.log('admin.disconnect');
      },
      async listTopics() {
        return [...k.topics.keys()];
      },
      async createTopics({topics}) {
        for (const t of topics) {
          k.log('createTopic', t.topic, t.numPartitions);
          k.createTopic(t.topic, t.numPartitions, Object.fromEntries((t.configEntries ?? []).map((e) => [e.name, e.value])));
        }
        return true;
      },
      async fetchTopicMetadata({topics}) {
        return {
          topics: topics.filter((n) => k.topics.has(n)).map((name) => ({
            name,
            partitions: Array.from({length: k.topics.get(name).partitions}, (_, i) => ({partitionId: i})),
          })),
        };
      },
      // like tansu 0.6: only the configs set when the topic was created; `describeConfigsError`
      // makes it fail
      async describeConfigs({resources}) {
        if (k.describeConfigsError) throw new Error(k.describeConfigsError);
        return {
          resources: resources.map(({name}) => ({
            errorCode: 0,
            resourceName: name,
            configEntries: Object.entries(k.topics.get(name)?.configs ?? {}).map(([configName, configValue]) => ({configName, configValue})),
          })),
        };
      },
      async fetchTopicOffsets(topic) {
        const t = k.topics.get(topic);
        if (!t) throw new Error(`unknown topic ${topic}`);
        return [{partition: 0, offset: String(t.records.length), high: String(t.records.length), low: String(t.low)}];
      },
    };
  }

  producer() {
    const k = this;
    return {
      async connect() {
        k.log('producer.connect');
      },
      async disconnect() {
        k.log('producer.disconnect');
      },
      async send({topic, messages}) {
        await new Promise((r) => setImmediate(r));
        if (k.failSends) throw new Error('broker unreachable');
        for (const m of messages) {
          k.log('send', topic, JSON.parse(m.value).type);
          k.append(topic, m.value, m.key);
        }
      },
    };
  }

  consumer(opts) {
    const c = new FakeConsumer(this, opts);
    this.consumers.push(c);
    return c;
  }
}

class FakeConsumer {
  constructor(kafka, opts) {
    this.kafka = kafka;
    this.opts = opts;
    this.groupId = opts.groupId;
    this.events = EVENTS;
    this.handlers = new Map();
    this.pos = null;
    this.running = false;
    this.delivering = false;
    this.assigner = opts.partitionAssigners ? opts.partitionAssigners[0]({cluster: {findTopicPartitionMetadata: (t) => [{partitionId: 0}]}}) : null;
  }
  on(event, fn) {
    if (!this.handlers.has(event)) this.handlers.set(event, []);
    this.handlers.get(event).push(fn);
  }
  fire(event, payload) {
    for (const fn of this.handlers.get(event) ?? []) fn({payload});
  }
  async connect() {
    this.kafka.log('connect', this.groupId);
  }
  async subscribe({topics}) {
    this.topicNames = topics;
  }
  async run({eachMessage}) {
    this.kafka.log('run', this.groupId);
    this.eachMessage = eachMessage;
    this.running = true;
    this.wake();
  }
  seek({offset}) {
    this.kafka.log('seek', this.groupId, offset);
    this.pos = Number(offset);
    this.wake();
  }
  async stop() {
    this.kafka.log('stop', this.groupId);
    this.running = false;
  }
  async disconnect() {
    this.kafka.log('disconnect', this.groupId);
    this.running = false;
    // like kafkajs' disconnect during a rebalance (tulios/kafkajs#1462): never resolves
    if (this.kafka.hangDisconnect?.has(this.groupId)) await new Promise(() => {});
  }
  wake() {
    if (!this.running || this.pos === null || this.delivering || !this.eachMessage) return;
    this.delivering = true;
    setImmediate(async () => {
      const t = this.kafka.topics.get(this.topicNames[0]);
      while (this.running && t && this.pos < t.records.length) {
        if (this.pos < t.low) this.pos = t.low; // out of range: from the earliest retained (fromBeginning)
        let pos = this.pos;
        // a fetch that leaves out a record (as once seen in a broker test run), or a
        // record missing for good: `skips` maps an offset to how many fetches leave it out
        const n = this.kafka.skips.get(pos) ?? 0;
        if (n > 0 && pos + 1 < t.records.length) {
          this.kafka.skips.set(pos, n - 1);
          this.pos = pos = pos + 1;
        }
        await this.eachMessage({topic: this.topicNames[0], partition: 0, message: t.records[pos]});
        if (this.pos === pos) this.pos = pos + 1; // unless the handler seeked
      }
      this.delivering = false;
    });
  }
  /**
   * Runs the assigner as the group leader does; `members` are `[memberId, taskId, announced?]`
   * (`announced`: the member's `{connector, connectorId, nonce}`).
   */
  async assign(members) {
    const {encodeMember} = module.exports;
    return this.assigner.assign({members: members.map(([memberId, taskId, announced]) => ({memberId, memberMetadata: encodeMember(this.assigner, taskId, announced)})), topics: this.topicNames});
  }
}

/** The JoinGroup metadata a member with this task id sends (built by the assigner itself). */
function encodeMember(assigner, taskId, announced = {}) {
  const {taskSyncAssigner} = require('partkit/kafka');
  return taskSyncAssigner({taskId, ...announced})({cluster: {}}).protocol({topics: ['hb']}).metadata;
}

/**
 * partkit's SyncTask, recording its inputs (`inputs`: `[kind, argument]` in order) before it
 * handles them.
 */
function recordingSyncTask(taskId, options) {
  const {SyncTask} = require('partkit');
  class RecordingSyncTask extends SyncTask {
    constructor(id, o) {
      super(id, o);
      this.inputs = [];
    }
    onRebalance(e, now) {
      this.inputs.push(['rebalance', e]);
      return super.onRebalance(e, now);
    }
    onMessage(m, now) {
      // a record's value as read is recorded parsed (as it was when the transport parsed it)
      let seen = m;
      if (m instanceof Uint8Array) {
        try {
          seen = JSON.parse(Buffer.from(m).toString('utf8'));
        } catch {
          seen = Buffer.from(m).toString('utf8');
        }
      }
      this.inputs.push(['message', seen]);
      return super.onMessage(m, now);
    }
    addPartitions(s, now) {
      this.inputs.push(['add', s]);
      return super.addPartitions(s, now);
    }
    partitionStarted(t, now) {
      this.inputs.push(['started', t]);
      return super.partitionStarted(t, now);
    }
    partitionFinished(t, now) {
      this.inputs.push(['finished', t]);
      return super.partitionFinished(t, now);
    }
    tick(now) {
      this.inputs.push(['tick', now]);
      return super.tick(now);
    }
    fence(reason, now) {
      this.inputs.push(['fence', reason]);
      return super.fence(reason, now);
    }
  }
  return new RecordingSyncTask(taskId, options);
}

module.exports = {FakeKafka, recordingSyncTask, encodeMember, EVENTS};
