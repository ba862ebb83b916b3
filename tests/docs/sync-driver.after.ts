// Put after docs/sync.md's "Driving a SyncTask" block by the docs check. The task joins a group
// as a member and waits for its leader: idle, nothing due (`pollTimeout()` undefined). Then the
// leader (another SyncTask on the same in-memory log) answers, the task takes a partition, starts
// it and goes idle with a deadline. Every tick must come at or after the `pollTimeout()` in
// force, at most once per value: a driver that sets a timer with no deadline
// (`setTimeout(fn, NaN)` fires at once) ticks in a loop.
{
  const ticks: Array<{now: number; due: number | undefined}> = [];
  const tick = task.tick.bind(task);
  task.tick = (now: number) => {
    ticks.push({now, due: task.pollTimeout()});
    return tick(now);
  };
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const until = async (what: string, ok: () => boolean) => {
    for (let i = 0; i < 200 && !ok(); i++) await sleep(5);
    if (!ok()) throw new Error(`the driver never got there: ${what}`);
  };
  const check = (what: string) => {
    const seen = new Set<number>();
    for (const {now, due} of ticks) {
      if (due === undefined || due > now) throw new Error(`${what}: ticked ${ticks.length} times, once with nothing due (pollTimeout() ${due}, now ${now})`);
      if (seen.has(due)) throw new Error(`${what}: ticked twice for the same pollTimeout() ${due}`);
      seen.add(due);
    }
  };
  try {
    consumer.emit('rebalance', 1, false, []);
    await sleep(100);
    if (task.pollTimeout() !== undefined) throw new Error('a member waiting for its leader should have nothing due');
    check('a member waiting for its leader');
    // The leader, task-0: its records go to the same log; it reads the log too.
    const leader = new SyncTask('task-0', {publishAs: 'records'});
    const lead = ({publish}: SyncRecordOutput) => {
      for (const {key, type, value} of publish) syncProducer.send({key, value, headers: {type}});
    };
    syncConsumer.on('message', (value) => lead(leader.onMessage(value, Date.now())));
    for (const {value} of syncLog) lead(leader.onMessage(value, Date.now()));
    lead(leader.onRebalance({generation: 1, leader: true, members: ['task-0', taskId]}, Date.now()));
    await until('an epoch', () => task.epoch() !== undefined);
    stream.emit('children', [{token: 'p1', parents: []}]);
    await until('p1 running', () => running.has('p1') && task.ownedPartitions().some((p) => p.token === 'p1' && p.state === 'Running'));
    await sleep(200);
    check('a member running one partition');
    leader.free();
    if (fencedWith !== undefined) throw new Error(`the task fenced itself: ${fencedWith}`);
  } finally {
    clearTimeout(timer);
    task.free();
  }
}
