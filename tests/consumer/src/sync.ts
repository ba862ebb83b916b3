// A connector task loop against partkit's sync types (strict tsc checks the declarations).
import {PartitionSpec, RebalanceEvent, ResolvedSyncOptions, SyncError, SyncMessage, SyncOutput, SyncRecord, SyncTask, TaskState, minSyncRetention, resolveSyncOptions} from 'partkit';

/** The sync topic of a test: one array, a read cursor per task. */
export class Topic {
  readonly messages: SyncMessage[] = [];
  private cursors = new Map<string, number>();
  act(taskId: string, out: SyncOutput, started: string[]): void {
    // the topic carries JSON
    for (const m of out.publish) this.messages.push(JSON.parse(JSON.stringify(m)) as SyncMessage);
    started.push(...out.start.map((t) => `${taskId}:${t}`));
  }
  drain(task: SyncTask, now: number, started: string[]): void {
    const id = task.taskId();
    for (let i = this.cursors.get(id) ?? 0; i < this.messages.length; i = this.cursors.get(id) ?? 0) {
      this.cursors.set(id, i + 1);
      const message = this.messages[i];
      if (message !== undefined) this.act(id, task.onMessage(message, now), started);
    }
  }
}

/** Two tasks, one rebalance, partitions split over them; returns who started what. */
export function twoTasks(): {started: string[]; epoch: string | undefined; states: TaskState[]} {
  const topic = new Topic();
  const started: string[] = [];
  const [a, b] = [new SyncTask('a', {rebalanceTimeout: 1000}), new SyncTask('b')];
  const tasks = [a, b];
  for (const t of tasks) {
    const ev: RebalanceEvent = {generation: 1, leader: t.taskId() === 'a', members: t.taskId() === 'a' ? ['a', 'b'] : undefined};
    topic.act(t.taskId(), t.onRebalance(ev, 1), started);
  }
  for (let round = 0; round < 3; round++) for (const t of tasks) topic.drain(t, 2, started);
  const specs: PartitionSpec[] = [{token: 'p1'}, {token: 'p2', parents: []}];
  topic.act('a', a.addPartitions(specs, 3), started);
  for (let round = 0; round < 3; round++) for (const t of tasks) topic.drain(t, 4, started);
  return {started: started.sort(), epoch: b.epoch(), states: a.knownTasks()};
}

/** The code of the error a malformed message raises. */
export function refusalCode(task: SyncTask, message: unknown): string | undefined {
  try {
    task.onMessage(message as SyncMessage, 0);
    return undefined;
  } catch (e) {
    return e instanceof SyncError ? e.code : 'not a SyncError';
  }
}

/** A lone task whose outputs are records, reading its own records' values back as JSON text. */
export function recordsAlone(): {epoch: string | undefined; types: string[]} {
  const task = new SyncTask('a', {publishAs: 'records', rebalanceTimeout: 1000});
  const log: SyncRecord[] = [...task.onRebalance({generation: 1, leader: true, members: ['a']}, 1).publish];
  for (const record of log) log.push(...task.onMessage(record.value, 2).publish); // records read back as they land
  return {epoch: task.epoch(), types: log.map((r) => r.type)};
}

/** The options a task runs with, and the least retention of its sync topic, from the core. */
export function resolvedOptions(): {task: ResolvedSyncOptions; resolved: ResolvedSyncOptions; minRetention: number} {
  const options = {stateRefreshInterval: 1000, publishAs: 'records' as const};
  const task = new SyncTask('a', options);
  return {task: task.options(), resolved: resolveSyncOptions(options), minRetention: minSyncRetention(options)};
}
