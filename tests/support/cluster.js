// A set of connector task processes (tests/support/task-process.js) against one broker, and the
// log of everything they report: every start, stop and finish with its wall-clock time, kills,
// epochs, errors.
'use strict';

const {fork} = require('node:child_process');
const path = require('node:path');

const TASK = path.join(__dirname, 'task-process.js');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

class TaskCluster {
  /**
   * @param {object} o
   * @param {string[]} o.brokers
   * @param {string} o.connectorName
   * @param {object} [o.syncOptions] SyncTask options
   * @param {object} [o.transport] KafkaTaskSync options
   * @param {Record<string, string[]>} [o.tree] children of each partition
   * @param {Record<string, number>} [o.work] ms of work per partition
   * @param {number} [o.workMs] default ms of work
   * @param {boolean} [o.hold] tasks leave the partitions they are told to start Scheduled (see task-process.js)
   * @param {number} [o.deadline] epoch ms at which every wait gives up (see waitFor)
   */
  constructor(o) {
    this.o = o;
    this.events = [];
    this.procs = new Map();
    this.statusWaiters = new Map();
  }

  /**
   * Starts a task process known here as `taskId`; `extra` overrides the cluster's options for it
   * (`connectorId`, `streamMs`, ...), and `extra.taskId` the task id it runs under (two processes
   * with one task id: a collision).
   */
  spawn(taskId, extra = {}) {
    const {brokers, connectorName, syncOptions, transport, tree, work, workMs = 500, hold = false, streamMs, connectorId} = {...this.o, ...extra};
    const config = {brokers, connectorName, taskId: extra.taskId ?? taskId, label: taskId, syncOptions, transport, tree, work, workMs, hold, streamMs, connectorId};
    const child = fork(TASK, [], {env: {...process.env, PARTKIT_TASK_CONFIG: JSON.stringify(config)}, stdio: ['ignore', 'inherit', 'inherit', 'ipc']});
    const proc = {id: taskId, child, alive: true, exited: new Promise((resolve) => child.once('exit', resolve))};
    child.on('message', (m) => {
      if (m.ev === 'status') {
        const w = this.statusWaiters.get(taskId);
        this.statusWaiters.delete(taskId);
        if (w) w(m);
        return;
      }
      this.events.push(m);
    });
    child.once('exit', (code, signal) => {
      proc.alive = false;
      this.events.push({task: taskId, t: Date.now(), ev: 'exit', code, signal});
    });
    this.procs.set(taskId, proc);
    return proc;
  }

  /** SIGKILL: the task dies without leaving the group. Resolves once the process is gone. */
  async kill(taskId) {
    const p = this.procs.get(taskId);
    p.child.kill('SIGKILL');
    await p.exited;
    const t = Date.now();
    this.events.push({task: taskId, t, ev: 'killed'});
    return t;
  }

  /** SIGSTOP: the task's process is frozen (it keeps its connections). Returns the time. */
  freeze(taskId) {
    this.procs.get(taskId).child.kill('SIGSTOP');
    const t = Date.now();
    this.events.push({task: taskId, t, ev: 'frozen'});
    return t;
  }

  /** SIGCONT: the frozen task runs again. Returns the time. */
  thaw(taskId) {
    this.procs.get(taskId).child.kill('SIGCONT');
    const t = Date.now();
    this.events.push({task: taskId, t, ev: 'woken'});
    return t;
  }

  /** A clean close (leaves the group). Throws, with the summary, if the process is still there after `timeoutMs`. */
  async close(taskId, timeoutMs = 30000) {
    const p = this.procs.get(taskId);
    this.events.push({task: taskId, t: Date.now(), ev: 'close'});
    p.child.send({cmd: 'close'});
    let timer;
    const late = new Promise((resolve) => (timer = setTimeout(() => resolve(true), timeoutMs)));
    const timedOut = await Promise.race([p.exited.then(() => false), late]);
    clearTimeout(timer);
    if (timedOut) throw new Error(`task ${taskId} did not exit within ${timeoutMs} ms of being asked to close\n${this.summary()}`);
  }

  send(taskId, msg) {
    this.procs.get(taskId).child.send(msg);
  }

  /** The task's status; with `view`, also a digest of its whole view (see task-process.js). */
  status(taskId, timeoutMs = 5000, view = false) {
    const p = this.procs.get(taskId);
    if (!p || !p.alive) return Promise.resolve(null);
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.statusWaiters.delete(taskId);
        resolve(null);
      }, timeoutMs);
      this.statusWaiters.set(taskId, (m) => {
        clearTimeout(t);
        resolve(m);
      });
      p.child.send({cmd: 'status', view});
    });
  }

  alive() {
    return [...this.procs.values()].filter((p) => p.alive).map((p) => p.id);
  }

  async statuses(ids = this.alive(), view = false) {
    return Object.fromEntries(await Promise.all(ids.map(async (id) => [id, await this.status(id, 5000, view)])));
  }

  /**
   * Polls `pred` (may be async) every 100 ms until it returns a truthy value. Gives up after
   * `timeoutMs`, or earlier at the cluster's `deadline` (set it a little before the test's own
   * timeout, so that a slow test fails here, with the summary and every task's status, rather
   * than on jest's timeout, which says nothing).
   */
  async waitFor(what, pred, timeoutMs) {
    const started = Date.now();
    const deadline = Math.min(started + timeoutMs, this.o.deadline ?? Infinity);
    for (;;) {
      const errors = this.events.filter((e) => e.ev === 'error');
      if (errors.length) throw new Error(`a task reported an error while waiting for ${what}: ${JSON.stringify(errors)}`);
      const v = await pred();
      if (v) return v;
      if (Date.now() > deadline) {
        const statuses = await this.statuses();
        const cause = deadline < started + timeoutMs ? `the test's deadline (${timeoutMs} ms allowed for this step)` : `${timeoutMs} ms`;
        throw new Error(`timed out after ${Date.now() - started} ms (${cause}) waiting for ${what}\n${this.summary()}\nstatuses: ${JSON.stringify(statuses)}`);
      }
      await sleep(100);
    }
  }

  /** Waits until every live task (or `ids`) has applied the same epoch, whose members are exactly them. */
  async waitForEpoch(ids, timeoutMs, notEpoch) {
    return this.waitFor(`one epoch over ${ids.join(', ')}`, async () => {
      const st = await this.statuses(ids);
      const all = Object.values(st);
      if (all.some((s) => !s || !s.epoch || s.epoch === notEpoch)) return null;
      const e = all[0].epoch;
      if (!all.every((s) => s.epoch === e)) return null;
      const members = [...all[0].known].sort();
      if (members.join() !== [...ids].sort().join()) return null;
      const leaders = Object.entries(st).filter(([, s]) => s.leader).map(([id]) => id);
      if (leaders.length !== 1) return null;
      return {epoch: e, leader: leaders[0]};
    }, timeoutMs);
  }

  of(ev) {
    return this.events.filter((e) => e.ev === ev);
  }

  finishedCounts() {
    const c = new Map();
    for (const e of this.of('finish')) c.set(e.token, (c.get(e.token) ?? 0) + 1);
    return c;
  }

  /**
   * Every interval during which a task read a partition: from its `start` to its `stop`, its
   * `finish`, or the task's death (kill or exit), whichever comes first.
   */
  intervals() {
    const open = new Map(); // task|token -> start
    const out = [];
    const close = (task, token, end, how) => {
      const k = `${task}|${token}`;
      if (!open.has(k)) return;
      out.push({task, token, start: open.get(k), end, how});
      open.delete(k);
    };
    for (const e of [...this.events].sort((a, b) => a.t - b.t)) {
      if (e.ev === 'start') {
        const k = `${e.task}|${e.token}`;
        if (open.has(k)) throw new Error(`${e.task} started ${e.token} twice without a stop`);
        open.set(k, e.t);
      } else if (e.ev === 'stop' || e.ev === 'finish') close(e.task, e.token, e.t, e.ev);
      // a frozen task does nothing while frozen; what it does once woken is checked apart
      // (actedAfterWaking): it must not act on what it ran before
      else if (e.ev === 'killed' || e.ev === 'exit' || e.ev === 'frozen') {
        for (const k of [...open.keys()]) if (k.startsWith(`${e.task}|`)) close(e.task, k.slice(e.task.length + 1), e.t, e.ev);
      }
    }
    for (const [k, start] of open) {
      const [task, token] = k.split('|');
      out.push({task, token, start, end: Infinity, how: 'running'});
    }
    return out;
  }

  /**
   * What tasks did after they were woken from a freeze: every `stream`, `start` or `finishing`
   * of a task after its `woken` event (a woken task must fail before it acts; a `finish` that
   * comes then acknowledges a publish made before the freeze).
   */
  actedAfterWaking() {
    const out = [];
    for (const w of this.of('woken')) {
      out.push(...this.events.filter((e) => e.task === w.task && e.t >= w.t && ['stream', 'start', 'finishing'].includes(e.ev)));
    }
    return out;
  }

  /**
   * Children started before their parents finished: every `start` of a partition at a time
   * when one of its parents (in `tree`) had not yet been reported `finishing` by any task.
   */
  childrenBeforeParents(tree) {
    const parents = new Map();
    for (const [p, kids] of Object.entries(tree ?? {})) for (const k of kids) (parents.get(k) ?? parents.set(k, []).get(k)).push(p);
    const finishing = new Map();
    for (const e of this.of('finishing')) if (!finishing.has(e.token) || finishing.get(e.token) > e.t) finishing.set(e.token, e.t);
    return this.of('start').filter((s) => (parents.get(s.token) ?? []).some((p) => !(finishing.get(p) <= s.t)));
  }

  /** Pairs of intervals of one partition that overlap in time. */
  overlaps() {
    const byToken = new Map();
    for (const i of this.intervals()) {
      if (!byToken.has(i.token)) byToken.set(i.token, []);
      byToken.get(i.token).push(i);
    }
    const bad = [];
    for (const list of byToken.values()) {
      for (let i = 0; i < list.length; i++) {
        for (let j = i + 1; j < list.length; j++) {
          const a = list[i];
          const b = list[j];
          if (a.start < b.end && b.start < a.end) bad.push([a, b]);
        }
      }
    }
    return bad;
  }

  summary() {
    const lines = this.events
      .filter((e) => ['start', 'stop', 'finish', 'killed', 'close', 'closed', 'exit', 'epoch', 'error', 'warn', 'rebalance', 'ready'].includes(e.ev))
      .slice(-80)
      .map((e) => `${e.t} ${e.task} ${e.ev} ${e.token ?? e.epoch ?? e.message ?? (e.generation != null ? `gen ${e.generation} leader ${e.leader}` : '')}`);
    return lines.join('\n');
  }

  async stopAll() {
    for (const p of this.procs.values()) {
      if (p.alive) p.child.kill('SIGKILL');
    }
    await Promise.all([...this.procs.values()].map((p) => p.exited));
  }
}

/** A tree of partitions: `root` with `width` chains of `depth` partitions below it. */
function chains(width, depth) {
  const tree = {root: []};
  const tokens = ['root'];
  for (let w = 1; w <= width; w++) {
    let parent = 'root';
    for (let d = 1; d <= depth; d++) {
      const tok = `c${w}.${d}`;
      (tree[parent] ??= []).push(tok);
      tokens.push(tok);
      parent = tok;
    }
  }
  return {tree, tokens};
}

module.exports = {TaskCluster, chains, sleep};
