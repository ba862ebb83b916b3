// A small stand-in for partkit's SyncTask (the protocol core of the task-coordination issue),
// with the same interface and wire format, used to test KafkaTaskSync before (and besides) the
// real one. It implements a simplified but safe protocol:
// - rebalance: every task answers with its own state; the leader waits for every member's answer
//   (or `rebalanceTimeout`), then publishes a NewEpoch `<generation>-<leader>` computed from its
//   view: members keep what they own, partitions of departed tasks and unpicked shares go to the
//   least-loaded member (shares to their assignee when it is a member);
// - a NewEpoch applies when its generation is newer and its baseEpoch is the epoch applied (or
//   none is applied yet); a task left out of an epoch of its own generation stops everything;
// - during an epoch, new partitions go to the least-loaded member through the share section; the
//   assignee owns them, the sharer clears the share once it sees them owned.
'use strict';

const DONE = new Set(['Finished', 'Removed']);
const ACTIVE = new Set(['Scheduled', 'Running']);
const clone = (x) => JSON.parse(JSON.stringify(x));

class FakeSyncTask {
  constructor(taskId, options = {}) {
    if (typeof taskId !== 'string' || !taskId) throw new Error('invalid task id: must not be empty');
    this.id = taskId;
    this.opts = {rebalanceTimeout: 10000, ...options};
    this.own = {taskID: taskId, stateTimestamp: 0, stateVersion: 0, data: {partitions: []}, share: {partitions: []}};
    this.cache = new Map();
    this.ep = null; // {id, generation}
    this.members = [];
    this.reb = null; // {generation, leader}
    this.answers = new Map(); // taskID -> rebalance generation answered
    this.pending = null; // {generation, members, since, awaiting}
    this.fenced = false;
  }

  // ----------------------------------------------------------------- views
  ownedPartitions() {
    return clone(this.own.data.partitions);
  }
  knownTasks() {
    return clone([...this.cache.values(), this.own].sort((a, b) => (a.taskID < b.taskID ? -1 : 1)));
  }
  epoch() {
    return this.ep ? this.ep.id : undefined;
  }
  isLeader() {
    return Boolean(this.reb && this.reb.leader);
  }

  // ----------------------------------------------------------------- helpers
  out() {
    return {publish: [], start: [], stop: []};
  }
  curId() {
    return this.ep ? this.ep.id : '';
  }
  gen() {
    return this.ep ? this.ep.generation : 0;
  }
  inEpoch() {
    return Boolean(this.ep) && this.members.includes(this.id) && !this.fenced;
  }
  sharing() {
    return this.inEpoch() && !(this.reb && this.reb.generation > this.gen());
  }
  states() {
    return [...this.cache.values(), this.own];
  }
  message(type, now, extra = {}) {
    this.own.stateVersion += 1;
    this.own.stateTimestamp = now;
    return {
      syncEpoch: this.curId(),
      taskID: this.id,
      messageTimestamp: now,
      type,
      connectorState: [clone(this.own)],
      epochGeneration: this.gen(),
      ...extra,
    };
  }
  load(taskId) {
    const st = taskId === this.id ? this.own : this.cache.get(taskId);
    let n = st ? st.data.partitions.filter((p) => !DONE.has(p.state)).length : 0;
    for (const s of this.states()) n += s.share.partitions.filter((p) => p.assignee === taskId).length;
    return n;
  }
  leastLoaded(members, loads) {
    return [...members].sort((a, b) => loads.get(a) - loads.get(b) || (a === this.id ? -1 : b === this.id ? 1 : a < b ? -1 : 1))[0];
  }
  partitionDone(token) {
    let known = false;
    for (const s of this.states()) {
      for (const p of s.data.partitions) {
        if (p.token !== token) continue;
        known = true;
        if (DONE.has(p.state)) return true;
      }
    }
    return !known;
  }
  schedule(out) {
    if (!this.inEpoch()) return false;
    let changed = false;
    for (const p of this.own.data.partitions) {
      if (p.state === 'Created' && p.parents.every((t) => this.partitionDone(t))) p.state = 'ReadyForStreaming';
      if (p.state === 'ReadyForStreaming') {
        p.state = 'Scheduled';
        out.start.push(p.token);
        changed = true;
      }
    }
    return changed;
  }
  merge(state) {
    if (state.taskID === this.id) return;
    const cur = this.cache.get(state.taskID);
    if (!cur || state.stateVersion > cur.stateVersion) this.cache.set(state.taskID, clone(state));
  }
  // pick up shares addressed to this task; clear own shares that their assignee owns
  settleShares() {
    if (!this.sharing()) return false;
    let changed = false;
    const mine = new Set(this.own.data.partitions.map((p) => p.token));
    for (const s of this.cache.values()) {
      if (!this.members.includes(s.taskID)) continue;
      for (const sh of s.share.partitions) {
        if (sh.assignee !== this.id || mine.has(sh.token)) continue;
        const {assignee, ...p} = sh;
        this.own.data.partitions.push({...p, state: 'Created'});
        mine.add(sh.token);
        changed = true;
      }
    }
    const before = this.own.share.partitions.length;
    this.own.share.partitions = this.own.share.partitions.filter((sh) => {
      const a = this.cache.get(sh.assignee);
      return !(a && a.data.partitions.some((p) => p.token === sh.token));
    });
    return changed || before !== this.own.share.partitions.length;
  }
  finish(out, now, changed) {
    if (this.settleShares()) changed = true;
    if (this.schedule(out)) changed = true;
    if (changed && this.inEpoch()) out.publish.push(this.message('Regular', now));
    return out;
  }

  // ----------------------------------------------------------------- inputs
  onRebalance(event, now) {
    const out = this.out();
    if (!(event.generation > 0)) throw new Error('invalid rebalance: generation must be positive');
    if (event.leader && !(Array.isArray(event.members) && event.members.includes(this.id))) {
      throw new Error('invalid rebalance: the member list does not contain the leader');
    }
    if (this.reb && this.reb.generation >= event.generation) return out;
    this.reb = {generation: event.generation, leader: Boolean(event.leader)};
    this.pending = event.leader ? {generation: event.generation, members: [...new Set(event.members)].sort(), since: now, awaiting: null} : null;
    out.publish.push(this.message('RebalanceAnswer', now, {rebalanceGeneration: event.generation}));
    this.answers.set(this.id, event.generation);
    this.maybeLead(out, now);
    return out;
  }

  onMessage(msg, now) {
    const out = this.out();
    if (!msg || typeof msg.taskID !== 'string' || !msg.taskID || !Array.isArray(msg.connectorState)) {
      throw Object.assign(new Error('malformed sync message'), {code: 'SYNC_MALFORMED_MESSAGE'});
    }
    if (msg.type === 'NewEpoch') return this.onNewEpoch(msg, out, now);
    if (msg.type === 'RebalanceAnswer') {
      const prev = this.answers.get(msg.taskID) ?? 0;
      this.answers.set(msg.taskID, Math.max(prev, msg.rebalanceGeneration ?? 0));
      for (const s of msg.connectorState) this.merge(s);
      this.maybeLead(out, now);
      return this.finish(out, now, false);
    }
    if (msg.syncEpoch !== this.curId()) return out;
    for (const s of msg.connectorState) this.merge(s);
    return this.finish(out, now, false);
  }

  onNewEpoch(msg, out, now) {
    if (msg.syncEpoch === this.curId()) return out;
    const base = msg.baseEpoch || '';
    const valid = msg.epochGeneration > this.gen() && (base === this.curId() || !this.ep);
    if (!valid) {
      if (this.pending && this.pending.awaiting === msg.syncEpoch) {
        this.pending.awaiting = null;
        this.pending.since = now;
      }
      return out;
    }
    this.ep = {id: msg.syncEpoch, generation: msg.epochGeneration};
    this.members = msg.connectorState.map((s) => s.taskID);
    if (this.pending && this.pending.generation <= msg.epochGeneration) this.pending = null;
    const prev = this.cache;
    this.cache = new Map();
    let mine = null;
    for (const s of msg.connectorState) {
      if (s.taskID === this.id) mine = s;
      else {
        const old = prev.get(s.taskID);
        this.cache.set(s.taskID, clone(old && old.stateVersion > s.stateVersion ? old : s));
      }
    }
    if (!mine) {
      if (this.reb && this.reb.generation <= msg.epochGeneration) {
        // left out of an epoch of its own generation: fenced
        this.fenced = true;
        for (const p of this.own.data.partitions) if (ACTIVE.has(p.state)) out.stop.push(p.token);
        this.own.data.partitions = [];
        this.own.share.partitions = [];
      }
      return out;
    }
    this.fenced = false;
    const have = new Set(this.own.data.partitions.map((p) => p.token));
    for (const p of mine.data.partitions) if (!have.has(p.token)) this.own.data.partitions.push(clone(p));
    this.own.share.partitions = [];
    this.own.stateVersion = Math.max(this.own.stateVersion, mine.stateVersion);
    return this.finish(out, now, true);
  }

  addPartitions(specs, now) {
    const out = this.out();
    const known = new Set();
    for (const s of this.states()) {
      s.data.partitions.forEach((p) => known.add(p.token));
      s.share.partitions.forEach((p) => known.add(p.token));
    }
    const sharing = this.sharing();
    const loads = new Map(this.members.map((m) => [m, this.load(m)]));
    let changed = false;
    for (const spec of specs) {
      if (known.has(spec.token)) continue;
      known.add(spec.token);
      const p = {token: spec.token, parents: [...(spec.parents || [])], state: 'Created'};
      const target = sharing ? this.leastLoaded(this.members, loads) : this.id;
      if (sharing) loads.set(target, loads.get(target) + 1);
      if (target === this.id) this.own.data.partitions.push(p);
      else this.own.share.partitions.push({...p, assignee: target});
      changed = true;
    }
    return this.finish(out, now, changed);
  }

  partitionStarted(token, now) {
    const p = this.own.data.partitions.find((x) => x.token === token);
    if (!p) throw new Error(`unknown partition ${token}`);
    if (p.state === 'Running') return this.out();
    if (p.state !== 'Scheduled') throw new Error(`partition ${token} is ${p.state}, not Scheduled`);
    p.state = 'Running';
    return this.finish(this.out(), now, true);
  }

  partitionFinished(token, now) {
    const p = this.own.data.partitions.find((x) => x.token === token);
    if (!p) throw new Error(`unknown partition ${token}`);
    if (DONE.has(p.state)) return this.out();
    p.state = 'Finished';
    p.finishedTimestamp = now;
    return this.finish(this.out(), now, true);
  }

  tick(now) {
    const out = this.out();
    this.maybeLead(out, now);
    return out;
  }

  // ----------------------------------------------------------------- the leader
  maybeLead(out, now) {
    const p = this.pending;
    if (!p || p.awaiting) return;
    const all = p.members.every((m) => (this.answers.get(m) ?? 0) >= p.generation);
    if (!all && now - p.since < this.opts.rebalanceTimeout) return;
    const members = p.members;
    const states = new Map();
    for (const m of members) {
      const s = m === this.id ? this.own : this.cache.get(m);
      states.set(m, clone(s || {taskID: m, stateTimestamp: now, stateVersion: 0, data: {partitions: []}, share: {partitions: []}}));
    }
    const owned = new Set();
    for (const s of states.values()) s.data.partitions.forEach((x) => owned.add(x.token));
    const loads = new Map(members.map((m) => [m, states.get(m).data.partitions.filter((x) => !DONE.has(x.state)).length]));
    const give = (part, to) => {
      states.get(to).data.partitions.push(part);
      owned.add(part.token);
      if (!DONE.has(part.state)) loads.set(to, loads.get(to) + 1);
    };
    // partitions of departed tasks
    for (const s of this.states()) {
      if (members.includes(s.taskID)) continue;
      for (const x of s.data.partitions) {
        if (owned.has(x.token)) continue;
        if (DONE.has(x.state)) give(clone(x), this.id);
        else give({...clone(x), state: 'Created'}, this.leastLoaded(members, loads));
      }
    }
    // unpicked shares, from every state
    for (const s of this.states()) {
      for (const sh of s.share.partitions) {
        if (owned.has(sh.token)) continue;
        const {assignee, ...x} = clone(sh);
        give({...x, state: 'Created'}, members.includes(assignee) ? assignee : this.leastLoaded(members, loads));
      }
    }
    for (const s of states.values()) {
      s.share.partitions = [];
      s.stateVersion += 1;
    }
    const id = `${p.generation}-${this.id}`;
    p.awaiting = id;
    out.publish.push({
      syncEpoch: id,
      taskID: this.id,
      messageTimestamp: now,
      type: 'NewEpoch',
      connectorState: members.map((m) => states.get(m)),
      epochGeneration: p.generation,
      baseEpoch: this.curId(),
    });
  }
}

module.exports = {FakeSyncTask};
