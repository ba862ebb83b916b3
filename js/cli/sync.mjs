// `partkit sync simulate`, and the sync part of the demo: N tasks share a sync log (an array)
// through the public SyncTask API; partitions split, tasks crash, the group rebalances.
import {leaf, result, say as log, usage} from './io.mjs';

/** mulberry32: a tiny seeded PRNG. */
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Runs a small cluster: `tasks` tasks, a root partition splitting in two until `partitions`
 * exist, `crashes` crashes (each followed by a rebalance). `say` receives notable events.
 * Returns a summary; throws if a partition ran on two live tasks at once.
 */
export function simulate(api, {tasks = 3, partitions = 15, crashes = 1, seed = 1, say = () => {}} = {}) {
  const rand = prng(seed);
  const nodes = new Map();
  const log = [];
  let now = 1_700_000_000_000;
  let generation = 0;
  let nextId = 0;
  let bytes = 0;
  const finished = new Set();
  const children = (token) => {
    const n = Number(token.slice(1));
    return [2 * n + 1, 2 * n + 2].filter((c) => c < partitions).map((c) => ({token: `p${c}`, parents: [token]}));
  };
  const spawn = () => {
    const id = `task-${nextId++}`;
    nodes.set(id, {task: new api.SyncTask(id, {rebalanceTimeout: 2000, epochAckTimeout: 1000, removalDelay: 500}), cursor: 0, running: new Map()});
  };
  const apply = (id, out) => {
    const node = nodes.get(id);
    for (const t of out.stop) node.running.delete(t);
    for (const t of out.start) {
      node.running.set(t, false);
      say(`${id} starts ${t}`);
    }
    for (const m of out.publish) {
      const text = JSON.stringify(m);
      bytes += text.length;
      log.push(JSON.parse(text));
      if (m.type === 'NewEpoch' && !m.resend) {
        const owned = m.connectorState.map((s) => `${s.taskID}:[${s.data.partitions.filter((p) => !['Finished', 'Removed'].includes(p.state)).map((p) => p.token).join(' ')}]`);
        say(`${id} publishes epoch ${m.syncEpoch}: ${owned.join(' ')}`);
      }
    }
  };
  const rebalance = () => {
    generation += 1;
    const members = [...nodes.keys()];
    const leader = members[Math.floor(rand() * members.length)];
    say(`rebalance: generation ${generation}, members ${members.join(' ')}, leader ${leader}`);
    for (const id of members) {
      apply(id, nodes.get(id).task.onRebalance({generation, leader: id === leader, ...(id === leader ? {members} : {})}, now));
    }
  };
  const deliver = (id) => {
    const node = nodes.get(id);
    if (node.cursor >= log.length) return false;
    apply(id, node.task.onMessage(log[node.cursor++], now));
    return true;
  };
  const work = (id) => {
    const node = nodes.get(id);
    const tokens = [...node.running.keys()];
    if (!tokens.length) return;
    const token = tokens[Math.floor(rand() * tokens.length)];
    if (!node.running.get(token)) {
      apply(id, node.task.partitionStarted(token, now));
      node.running.set(token, true);
      return;
    }
    const kids = children(token);
    if (kids.length) {
      apply(id, node.task.addPartitions(kids, now));
      const shared = node.task.sharedPartitions().filter((s) => kids.some((k) => k.token === s.token));
      say(`${id} splits ${token} into ${kids.map((k) => k.token).join(' ')}${shared.length ? ` (shares ${shared.map((s) => `${s.token} to ${s.assignee}`).join(', ')})` : ''}`);
    }
    apply(id, node.task.partitionFinished(token, now));
    node.running.delete(token);
    finished.add(token);
  };
  const check = () => {
    const active = new Map();
    for (const [id, node] of nodes) {
      for (const p of node.task.ownedPartitions()) {
        if (p.state !== 'Scheduled' && p.state !== 'Running') continue;
        if (active.has(p.token)) throw new Error(`${p.token} active on ${active.get(p.token)} and ${id}`);
        active.set(p.token, id);
      }
    }
  };

  for (let i = 0; i < tasks; i++) spawn();
  rebalance();
  const first = [...nodes.keys()][0];
  let rootAdded = false;
  let crashesLeft = crashes;
  let steps = 0;
  while (finished.size < partitions && steps < 200_000) {
    steps++;
    const ids = [...nodes.keys()];
    const id = ids[Math.floor(rand() * ids.length)];
    const r = rand();
    if (!rootAdded && nodes.get(first)?.task.epoch()) {
      say(`${first} adds the root partition p0`);
      apply(first, nodes.get(first).task.addPartitions([{token: 'p0'}], now));
      rootAdded = true;
    } else if (crashesLeft > 0 && finished.size >= partitions / 3 && r < 0.02 && nodes.size > 1) {
      crashesLeft--;
      const running = [...nodes.get(id).running.keys()];
      nodes.delete(id);
      say(`${id} crashes${running.length ? ` while running ${running.join(' ')}` : ''}`);
      spawn();
      rebalance();
    } else if (r < 0.55) deliver(id);
    else if (r < 0.9) work(id);
    else {
      now += Math.floor(rand() * 300);
      for (const [nid, node] of nodes) apply(nid, node.task.tick(now));
    }
    check();
  }
  while ([...nodes.keys()].some((id) => deliver(id)));
  const epochs = new Set([...nodes.values()].map((n) => n.task.epoch()));
  return {finished: finished.size, partitions, messages: log.length, bytes, generations: generation, epochs: [...epochs], steps};
}

export function register(program, api) {
  const sync = program
    .command('sync')
    .description('task coordination: the leader/epoch/partition-sharing protocol')
    .addHelpText('after', '\nExample:\n  $ partkit sync simulate --tasks 3 --partitions 15 --crashes 1 --seed 7\n');
  leaf(
    sync,
    'simulate',
    'run N tasks sharing splitting partitions through crashes and rebalances, in process; exit 1 if a partition was left unfinished',
    'partkit sync simulate --tasks 3 --partitions 15 --crashes 1 --seed 7',
  )
    .option('--tasks <n>', 'tasks', '3')
    .option('--partitions <n>', 'partitions in the split tree', '15')
    .option('--crashes <n>', 'task crashes (each followed by a rebalance)', '1')
    .option('--seed <n>', 'seed', '1')
    .option('--verbose', 'print every notable event (on stderr)')
    .action((opts) => {
      const num = (name) => {
        const v = Number(opts[name]);
        if (!/^\d+$/.test(opts[name]) || !Number.isSafeInteger(v)) usage(`--${name} must be a non-negative integer, got '${opts[name]}'`);
        return v;
      };
      const say = opts.verbose ? (line) => log('event', line) : () => {};
      const r = simulate(api, {tasks: Math.max(1, num('tasks')), partitions: Math.max(1, num('partitions')), crashes: num('crashes'), seed: num('seed'), say});
      result(opts, r, () => [
        `finished ${r.finished}/${r.partitions} partitions, each on one task at a time; ${r.messages} messages (${r.bytes} bytes), ` +
          `${r.generations} generations, ${r.steps} steps; epoch in force: ${r.epochs.join(' ')}`,
      ]);
      if (r.finished !== r.partitions) process.exitCode = 1;
    });
}

export function demo(api, out) {
  out('');
  out('== Task coordination: 3 tasks share splitting partitions; one crashes ==');
  const r = simulate(api, {tasks: 3, partitions: 7, crashes: 1, seed: 5, say: (line) => out(`    ${line}`)});
  out(`finished ${r.finished}/${r.partitions} partitions, each on one task at a time; ${r.messages} messages (${r.bytes} bytes); epoch in force: ${r.epochs.join(' ')}`);
}
