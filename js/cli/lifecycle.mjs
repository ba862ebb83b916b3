// `partkit lifecycle replay | uuid`, and the lifecycle part of the demo.
import {leaf, parseJsonArrayOrLines, readText, result, usage} from './io.mjs';

const stateOf = (p) => (p ? `${p.state}${p.missingDeps ? ` waiting for ${p.missingDeps.join(', ')}` : ''}` : '—');

export function register(program, api) {
  const lifecycle = program
    .command('lifecycle')
    .description('partition lifecycle: replay build-event logs, derive partition UUIDs')
    .addHelpText('after', '\nExample:\n  $ partkit lifecycle uuid job-3 sales/daily\n');

  leaf(
    lifecycle,
    'replay',
    'replay a build-event log (JSON array or JSON lines) and print a summary, or the snapshot; ' +
      'exit 1 with the index of the first refused event',
    `echo '{"type": "WantCreate", "timestamp": 1, "wantId": "w1", "partitions": ["sales/daily"]}' | partkit lifecycle replay --ref sales/daily -`,
  )
    .option('--snapshot', 'print the resulting snapshot as JSON instead of the summary')
    .option('--ref <ref>', 'also print the history of this partition ref (repeatable)', (v, all = []) => [...all, v])
    .argument('<file>', 'EVENTS.json or EVENTS.jsonl, or - for stdin')
    .action((file, opts) => {
      if (opts.snapshot && opts.ref) usage('--ref does not apply with --snapshot');
      const {items: events} = parseJsonArrayOrLines(readText(file), file);
      let state;
      try {
        state = api.BuildState.replay(events);
      } catch (error) {
        if (typeof error.eventIndex === 'number') error.message = `${error.message} (${JSON.stringify(events[error.eventIndex])})`;
        throw error;
      }
      state.checkInvariants();
      if (opts.snapshot) {
        process.stdout.write(`${JSON.stringify(state.snapshot(), null, 2)}\n`);
        return;
      }
      const summary = {
        events: events.length,
        ...state.stats(),
        schedulable: state.schedulableWants().map((w) => w.wantId),
        histories: (opts.ref ?? []).map((ref) => ({
          ref,
          history: state.partitionHistory(ref),
          wants: state.wantsForPartition(ref).map((w) => ({wantId: w, state: state.want(w).state})),
        })),
      };
      result(opts, summary, (s) => {
        const out = [
          `${s.events} events: ${s.wants} wants, ${s.jobRuns} job runs, ${s.partitions} partition instances over ${s.refs} refs`,
          `schedulable wants (${s.schedulable.length}): ${s.schedulable.join(' ') || '—'}`,
        ];
        for (const r of s.histories) {
          out.push(`${r.ref}:`);
          for (const p of r.history) out.push(`  ${p.uuid}  ${stateOf(p).padEnd(12)}  job ${p.jobRunId}`);
          out.push(`  wants: ${r.wants.map((w) => `${w.wantId} (${w.state})`).join(', ') || '—'}`);
        }
        return out;
      });
    });

  leaf(lifecycle, 'uuid', 'print the partition UUID that JOB_RUN_ID builds for REF', 'partkit lifecycle uuid job-3 sales/daily')
    .argument('<jobRunId>')
    .argument('<ref>')
    .action((jobRunId, ref, opts) =>
      result(opts, {jobRunId, ref, uuid: api.derivePartitionUuid(jobRunId, ref)}, (r) => [r.uuid]));
}

export function demo(api, out) {
  out('== Partition lifecycle: many wants, one build, a dep miss, a retry with a fresh UUID ==');
  const state = new api.BuildState();
  let t = 1_717_200_000_000;
  const show = (event) => {
    t += 1000;
    const transitions = state.apply({...event, timestamp: t});
    const what = Object.entries(event)
      .filter(([k]) => k !== 'type')
      .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
      .join(' ');
    out(`${event.type} ${what}`);
    for (const x of transitions) {
      const id = x.kind === 'want' ? `want ${x.wantId}` : x.kind === 'jobRun' ? `job ${x.jobRunId}` : `partition ${x.ref} ${x.uuid.slice(0, 8)}…`;
      out(`    ${id}: ${x.from ?? '∅'} → ${x.to}`);
    }
  };
  show({type: 'WantCreate', wantId: 'w1', partitions: ['sales/daily']});
  show({type: 'JobRunBuffer', jobRunId: 'job-1', buildingPartitions: ['sales/daily']});
  show({type: 'WantCreate', wantId: 'w2', partitions: ['sales/daily']});
  show({type: 'JobRunDepMiss', jobRunId: 'job-1', missingDeps: [{impacted: ['sales/daily'], missing: ['raw/orders']}]});
  show({type: 'WantCreate', wantId: 'd1', partitions: ['raw/orders'], sourceJobRunId: 'job-1'});
  out(`schedulable: ${state.schedulableWants().map((w) => w.wantId).join(' ')}   (sales/daily is leased while it waits)`);
  show({type: 'JobRunBuffer', jobRunId: 'job-2', buildingPartitions: ['raw/orders']});
  show({type: 'JobRunSuccess', jobRunId: 'job-2'});
  out(`schedulable: ${state.schedulableWants().map((w) => w.wantId).join(' ')}`);
  show({type: 'JobRunBuffer', jobRunId: 'job-3', buildingPartitions: ['sales/daily']});
  show({type: 'JobRunSuccess', jobRunId: 'job-3'});
  out('history of sales/daily (oldest first, canonical last):');
  for (const p of state.partitionHistory('sales/daily')) out(`    ${p.uuid}  ${p.state.padEnd(10)}  built by ${p.jobRunId}`);
  out(`derivePartitionUuid('job-3', 'sales/daily') = ${api.derivePartitionUuid('job-3', 'sales/daily')}`);
  out();
}
