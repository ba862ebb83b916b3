// An orchestrator loop against partkit's lifecycle types (strict tsc checks the declarations).
import {
  AppliedTransition,
  BuildEvent,
  BuildState,
  BuildStateSnapshot,
  derivePartitionUuid,
  JobRun,
  LifecycleError,
  PartitionInstance,
  Want,
} from 'partkit';

/** Schedules one job run per schedulable want within its TTL; returns the events it appended. */
export function scheduleAll(state: BuildState, now: number, nextJobId: () => string): BuildEvent[] {
  const events: BuildEvent[] = [];
  for (const want of state.schedulableWants(now)) {
    const event: BuildEvent = {type: 'JobRunBuffer', timestamp: now, jobRunId: nextJobId(), buildingPartitions: want.partitions};
    try {
      state.apply(event);
      events.push(event);
    } catch (error) {
      // Two wants for the same ref: the second buffer finds the ref leased.
      if (!(error instanceof LifecycleError) || error.code !== 'PARTITION_LEASED') throw error;
    }
  }
  return events;
}

/** What a UI shows for a partition: its state, and what it waits for. */
export function describePartition(p: PartitionInstance | undefined): string {
  if (!p) return 'not built';
  switch (p.state) {
    case 'UpstreamBuilding':
      return `waiting for ${p.missingDeps.join(', ')}`;
    case 'UpstreamFailed':
      return `failed upstream (${p.failedUpstream})`;
    case 'Tainted':
      return `tainted by ${p.taintId}`;
    default:
      return p.state;
  }
}

export function derivativeWants(state: BuildState, want: Want): string[] {
  const out: string[] = [];
  for (const ref of want.partitions) {
    const p = state.canonicalPartition(ref);
    const job: JobRun | undefined = p && state.jobRun(p.jobRunId);
    if (job?.state === 'DepMissed') out.push(...job.derivativeWantIds);
  }
  return out;
}

/** Alarm lines for the wants still open past their SLA. */
export function slaAlarms(state: BuildState, now: number): string[] {
  return state.wantsPastSla(now).map((w: Want) => `${w.wantId} (${w.state}) is past its SLA of ${w.slaSeconds}s`);
}

export function wantTransitions(transitions: AppliedTransition[]): string[] {
  return transitions.flatMap((t) => (t.kind === 'want' ? [`${t.wantId}: ${t.from} -> ${t.to}`] : []));
}

export function replayOrIndex(log: readonly BuildEvent[]): BuildState | number {
  try {
    return BuildState.replay(log);
  } catch (error) {
    if (error instanceof LifecycleError && error.eventIndex !== undefined) return error.eventIndex;
    throw error;
  }
}

export function restore(snapshot: BuildStateSnapshot): BuildState {
  return BuildState.fromSnapshot(snapshot);
}

export const exampleUuid: string = derivePartitionUuid('job-1', 'data/beta');
