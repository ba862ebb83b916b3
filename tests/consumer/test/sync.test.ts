import {SyncTask} from 'partkit';
import {recordsAlone, refusalCode, twoTasks} from '../src/sync';

describe('a connector coordinating tasks with partkit sync from the packed tarball', () => {
  it('agrees on an epoch and splits the partitions', () => {
    const r = twoTasks();
    expect(r.epoch).toBe('1-a');
    expect(r.started).toEqual(['a:p1', 'b:p2']);
    expect(r.states.map((s) => s.taskID)).toEqual(['a', 'b']);
  });
  it('gives its messages as records to publish as they are', () => {
    expect(recordsAlone()).toEqual({epoch: '1-a', types: ['RebalanceAnswer', 'NewEpoch', 'Regular']});
  });
  it('refuses a malformed message with a code', () => {
    expect(refusalCode(new SyncTask('x'), {taskID: 'y'})).toBe('SYNC_MALFORMED_MESSAGE');
  });
});
