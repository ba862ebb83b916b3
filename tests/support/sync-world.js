// The one world the JS sync tests drive `SyncTask`s in, through the package's bindings: the JS
// side of tests/support/sync_world.rs, with the same names, so a Rust scenario reads the same
// here. One totally ordered log (the sync topic) and tasks reading it in order, each at its own
// cursor:
//
// - time: `now`, moved by `inputGap` before each input a task gets through the world (a message,
//   a rebalance, a partition call) and by `tick`/`ticks`;
// - readers: `settle` (every live task whose reader is not `stalled` reads the log to its end,
//   one record each in turn), `step`/`skip`/`drain` one task;
// - producers: `hold`/`land` (records held back, then appended at once);
// - tasks made with `publishAs: 'records'` (`records`) publish records and read each record's
//   value as bytes, as KafkaTaskSync passes it; the others publish and read messages, which must
//   survive a JSON round trip;
// - what it checks on every output: its keys; no task fences itself (unless `allowFenced`); no
//   partition starts on one
//   member while another runs it, nor on a task that read its finish (`violations`).
const {SyncTask} = require('partkit');

class SyncWorld {
  /**
   * Tasks `ids` reading the log from its start, with `options`; `records`: the ids of those
   * made with `publishAs: 'records'`.
   */
  constructor(ids, options = {}, {records = [], now = 0, inputGap = 0} = {}) {
    this.options = options;
    this.records = new Set(records);
    this.now = now;
    this.inputGap = inputGap;
    /** Each message of the log, and its record's value (JSON text). */
    this.log = [];
    this.values = [];
    /** Per task: its SyncTask and cursor (the next record it reads). */
    this.tasks = new Map();
    this.live = new Set();
    this.members = [];
    this.generation = 0;
    /** What each task was told to start and not yet to stop. */
    this.running = new Map();
    /** Per task: the tokens it read a record saying they are finished. */
    this.finishesRead = new Map();
    /** Every start and every stop each task was told, in order. */
    this.started = new Map();
    this.stopped = new Map();
    this.violations = [];
    /** Whether an output may fence its task (else it fails the test). */
    this.allowFenced = false;
    this.stalled = new Set();
    this.held = new Map();
    for (const id of ids) this.spawn(id);
  }

  // ---- tasks ----

  /** A task that reads the log from `from` (its start unless given). */
  spawn(id, options = this.options, from = 0) {
    const task = new SyncTask(id, this.records.has(id) ? {...options, publishAs: 'records'} : options);
    this.tasks.set(id, {task, cursor: from});
    this.live.add(id);
    this.running.set(id, new Set());
    this.finishesRead.set(id, new Set());
    this.started.set(id, []);
    this.stopped.set(id, []);
  }

  /** `id` dies or leaves: it reads, ticks and publishes no more (held records stay held). */
  leave(id) {
    this.live.delete(id);
    this.running.set(id, new Set());
  }

  task(id) {
    return this.tasks.get(id).task;
  }

  // ---- outputs ----

  /** Carries out an output of `id`: appends (or holds) what it publishes, checks every start. */
  act(id, out, what = '') {
    expect(Object.keys(out).filter((k) => k !== 'fenced').sort()).toEqual(['publish', 'start', 'stop']);
    if (!this.allowFenced) expect(out.fenced).toBeUndefined();
    this.started.get(id).push(...out.start);
    this.stopped.get(id).push(...out.stop);
    const values = out.publish.map((m) => {
      if (!this.records.has(id)) return JSON.stringify(m);
      // a record to write as it is: the sender's key, the message's type, its JSON text
      expect(Object.keys(m)).toEqual(['key', 'type', 'value']);
      expect([m.key, m.type]).toEqual([id, JSON.parse(m.value).type]);
      return m.value;
    });
    if (this.held.has(id)) this.held.get(id).push(...values);
    else this.append(values);
    const run = this.running.get(id);
    for (const t of out.stop) run.delete(t);
    for (const t of out.start) {
      for (const other of this.members) {
        if (other !== id && this.running.get(other)?.has(t)) this.violations.push(`${id} starts ${t} (${what}) while ${other} runs it`);
      }
      if (this.finishesRead.get(id).has(t)) this.violations.push(`${id} starts ${t} (${what}) after reading a record that says it finished`);
      run.add(t);
    }
    return out;
  }

  /** Appends records (their values, JSON text) to the log now. */
  append(values) {
    for (const value of values) {
      this.log.push(JSON.parse(value));
      this.values.push(value);
    }
  }

  // ---- inputs ----

  /** An input of `id` made by `fn(task, now)`, the clock moved by `inputGap` first. */
  input(id, fn, what = '') {
    this.now += this.inputGap;
    return this.call(id, fn, what);
  }

  /** An input of `id` made by `fn(task, now)` at the current time. */
  call(id, fn, what = '') {
    return this.act(id, fn(this.task(id), this.now), what);
  }

  /** `id` finds `token` (a child of `parents`). */
  add(id, token, parents = []) {
    return this.addPartitions(id, [{token, parents}]);
  }

  addPartitions(id, specs) {
    return this.input(id, (t, now) => t.addPartitions(specs, now), 'addPartitions');
  }

  /** `id` reports started `token`. */
  run(id, token) {
    return this.input(id, (t, now) => t.partitionStarted(token, now), 'partitionStarted');
  }

  /** `id` reports finished `token`. */
  finish(id, token) {
    this.running.get(id).delete(token);
    return this.input(id, (t, now) => t.partitionFinished(token, now), 'partitionFinished');
  }

  /** The rebalance told to `who` alone. */
  rebalanceOne(generation, leader, members, who) {
    const ev = {generation, leader: who === leader, ...(who === leader ? {members} : {})};
    return this.input(who, (t, now) => t.onRebalance(ev, now), 'onRebalance');
  }

  /** A rebalance of `generation` (the next one if null) told to each of `members` (every live task if not given); no one reads yet. */
  announce(generation, leader, members = [...this.live]) {
    this.generation = generation ?? this.generation + 1;
    this.members = members;
    for (const m of members) this.rebalanceOne(this.generation, leader, members, m);
  }

  /** `announce`, then everyone reads. */
  rebalance(generation, leader, members) {
    this.announce(generation, leader, members);
    this.settle();
  }

  // ---- reading ----

  /** Delivers the next record to `id`; false when it has read everything. */
  step(id) {
    const node = this.tasks.get(id);
    if (node.cursor >= this.log.length) return false;
    const at = node.cursor++;
    // a task in records mode reads the record's value as bytes, as KafkaTaskSync passes it
    const msg = this.records.has(id) ? Buffer.from(this.values[at], 'utf8') : this.log[at];
    this.input(id, (t, now) => t.onMessage(msg, now), 'onMessage');
    for (const st of this.log[at].connectorState ?? []) {
      for (const p of st.data?.partitions ?? []) if (p.state === 'Finished') this.finishesRead.get(id).add(p.token);
    }
    return true;
  }

  /** `id` passes over its next record (a hole in what it reads). */
  skip(id) {
    this.tasks.get(id).cursor += 1;
  }

  /** `id` reads the log to its end. */
  drain(id) {
    while (this.step(id));
  }

  /** Every live task whose reader is not stalled reads the log to its end, one record each in turn. */
  settle() {
    for (let moved = true; moved; ) {
      moved = false;
      for (const id of this.live) if (!this.stalled.has(id)) moved = this.step(id) || moved;
    }
  }

  // ---- time ----

  /** `dt` passes; every live task ticks (nobody reads yet). */
  tick(dt) {
    this.now += dt;
    for (const id of this.live) this.act(id, this.task(id).tick(this.now), 'tick');
  }

  /** `n` times: `dt` passes, every live task ticks, everyone reads. */
  ticks(n, dt) {
    for (let i = 0; i < n; i++) {
      this.tick(dt);
      this.settle();
    }
  }

  // ---- producers ----

  /** `id` publishes into a buffer from now on (a slow producer, or a transport that leaves the group before it flushes). */
  hold(id) {
    this.held.set(id, []);
  }

  /** What `id` published since `hold` lands now. */
  land(id) {
    const held = this.held.get(id) ?? [];
    this.held.delete(id);
    this.append(held);
  }

  // ---- checks ----

  /** No partition owned by two live tasks. */
  assertUnique() {
    const owner = new Map();
    for (const id of this.live) {
      for (const p of this.task(id).ownedPartitions()) {
        expect([p.token, owner.get(p.token)]).toEqual([p.token, undefined]);
        owner.set(p.token, id);
      }
    }
  }

  /** `id`'s view of `token` among what it owns, if it owns it. */
  owned(id, token) {
    return this.task(id).ownedPartitions().find((p) => p.token === token);
  }
}

module.exports = {SyncWorld};
