import {BuildEvent, BuildState} from 'partkit';
import {derivativeWants, describePartition, exampleUuid, replayOrIndex, restore, scheduleAll, slaAlarms, wantTransitions} from '../src/lifecycle';

describe('an orchestrator using the partkit lifecycle from the packed tarball', () => {
  it('schedules, dep-misses, links derivative wants, and restores a snapshot', () => {
    const state = new BuildState();
    let n = 0;
    expect(wantTransitions(state.apply({type: 'WantCreate', timestamp: 1, wantId: 'w1', partitions: ['sales/daily']}))).toEqual(['w1: New -> Idle']);
    state.apply({type: 'WantCreate', timestamp: 2, wantId: 'w2', partitions: ['sales/daily']});
    expect(scheduleAll(state, 3, () => `job-${++n}`)).toHaveLength(1);
    state.apply({type: 'JobRunDepMiss', timestamp: 4, jobRunId: 'job-1', missingDeps: [{impacted: ['sales/daily'], missing: ['raw/orders']}]});
    expect(describePartition(state.canonicalPartition('sales/daily'))).toBe('waiting for raw/orders');
    state.apply({type: 'WantCreate', timestamp: 5, wantId: 'd1', partitions: ['raw/orders'], sourceJobRunId: 'job-1'});
    expect(derivativeWants(state, state.want('w1')!)).toEqual(['d1']);
    expect(restore(state.snapshot()).snapshot()).toEqual(state.snapshot());
    expect(exampleUuid).toBe('b9fdaee2-c421-8dda-b7ad-0d0b3b24b0d4');
    const bad: BuildEvent[] = [{type: 'WantCancel', timestamp: 1, wantId: 'nope'}];
    expect(replayOrIndex(bad)).toBe(0);
  });

  it('leaves expired wants unscheduled and reports SLA breaches', () => {
    const state = new BuildState();
    state.apply({type: 'WantCreate', timestamp: 0, wantId: 'old', partitions: ['a'], ttlSeconds: 1});
    state.apply({type: 'WantCreate', timestamp: 0, wantId: 'late', partitions: ['b'], slaSeconds: 2});
    expect(scheduleAll(state, 1000, () => 'job-1').map((e) => e.type === 'JobRunBuffer' && e.buildingPartitions)).toEqual([['b']]);
    expect(state.want('old')!.state).toBe('Idle');
    expect(slaAlarms(state, 1999)).toEqual([]);
    expect(slaAlarms(state, 2000)).toEqual(['late (Building) is past its SLA of 2s']);
  });
});
