// The world of docs/sync.md "Driving a SyncTask", in memory, put before that block when the docs
// check runs it (scripts/check-docs.mjs): the group consumer, the sync topic's producer and
// consumer, and the partition streams. tests/docs/sync-driver.after.ts drives it and checks it.
import type {PartitionSpec} from 'partkit';

class Emitter<E extends Record<string, unknown[]>> {
  #listeners: {[K in keyof E]?: Array<(...args: E[K]) => void>} = {};
  on<K extends keyof E>(event: K, listener: (...args: E[K]) => void): this {
    (this.#listeners[event] ??= []).push(listener);
    return this;
  }
  emit<K extends keyof E>(event: K, ...args: E[K]): void {
    for (const listener of this.#listeners[event] ?? []) listener(...args);
  }
}

const taskId = 'task-1';
/** The sync topic: records in order, each delivered to the sync consumer after `send` returns. */
const syncLog: Array<{key: string; value: string; headers: {type: string}}> = [];
const syncConsumer = new Emitter<{message: [value: string, offsetJumped: boolean]}>();
const syncProducer = {
  send(record: {key: string; value: string; headers: {type: string}}): void {
    syncLog.push(record);
    setImmediate(() => syncConsumer.emit('message', record.value, false));
  },
};
const consumer = new Emitter<{rebalance: [generation: number, leader: boolean, members: string[]]}>();
const stream = new Emitter<{started: [token: string]; children: [specs: PartitionSpec[]]; finished: [token: string]}>();
const running = new Set<string>();
const openStream = (token: string): void => {
  running.add(token);
  setImmediate(() => stream.emit('started', token));
};
const closeStream = (token: string): void => {
  running.delete(token);
};
let fencedWith: string | undefined;
const restartUnderNewTaskId = (reason: string): void => {
  fencedWith = reason;
};
