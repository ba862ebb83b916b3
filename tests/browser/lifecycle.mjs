#!/usr/bin/env node
// The lifecycle API in the browser build (dist/browser/index.mjs, whose lifecycle wasm,
// dist/wasm/lifecycle.json, is compiled on first use) under Debian's Chromium: a dep-miss scenario, a refused event, replay and snapshots, compared with
// the Node build. Skips without /usr/bin/chromium unless PARTKIT_REQUIRE_BROWSER=1.
import assert from 'node:assert/strict';
import {createRequire} from 'node:module';
import {openChromium, requireChromium} from './chromium.mjs';

const require = createRequire(import.meta.url);
const partkit = require('../../dist/index.cjs');

requireChromium('lifecycle browser test');

const events = [
  {type: 'WantCreate', timestamp: 1, wantId: 'w1', partitions: ['sales/daily']},
  {type: 'JobRunBuffer', timestamp: 2, jobRunId: 'job-1', buildingPartitions: ['sales/daily']},
  {type: 'WantCreate', timestamp: 3, wantId: 'w2', partitions: ['sales/daily']},
  {type: 'JobRunDepMiss', timestamp: 4, jobRunId: 'job-1', missingDeps: [{impacted: ['sales/daily'], missing: ['raw/orders']}]},
  {type: 'WantCreate', timestamp: 5, wantId: 'd1', partitions: ['raw/orders'], sourceJobRunId: 'job-1'},
  {type: 'JobRunBuffer', timestamp: 6, jobRunId: 'job-2', buildingPartitions: ['raw/orders']},
  {type: 'JobRunSuccess', timestamp: 7, jobRunId: 'job-2'},
];

/** Runs in the page: the same steps against whichever build `api` is. */
function scenario(api, events) {
  const state = new api.BuildState();
  const transitions = events.map((e) => state.apply(e));
  let refused;
  try {
    state.apply({type: 'JobRunBuffer', timestamp: 8, jobRunId: 'job-3', buildingPartitions: ['raw/orders', 'raw/orders']});
  } catch (error) {
    refused = {name: error.name, code: error.code, message: error.message, isLifecycle: error instanceof api.LifecycleError};
  }
  state.checkInvariants();
  let replayError;
  try {
    api.BuildState.replay([...events, {type: 'WantCancel', timestamp: 9, wantId: 'nope'}]);
  } catch (error) {
    replayError = {code: error.code, eventIndex: error.eventIndex};
  }
  return {
    transitions,
    refused,
    replayError,
    snapshot: state.snapshot(),
    replayed: api.BuildState.replay(events).snapshot(),
    restored: api.BuildState.fromSnapshot(state.snapshot()).snapshot(),
    schedulable: state.schedulableWants().map((w) => w.wantId),
    uuid: api.derivePartitionUuid('job-1', 'data/beta'),
  };
}

const {page, origin, errors, close} = await openChromium('lifecycle browser test');
try {
  await page.goto(`${origin}/package.json`);
  const inBrowser = await page.evaluate(
    async ([source, events]) => {
      const api = await import('/dist/browser/index.mjs');
      // eslint-disable-next-line no-new-func
      return new Function(`return (${source})`)()(api, events);
    },
    [scenario.toString(), events],
  );
  const inNode = scenario(partkit, events);
  assert.deepEqual(inBrowser, inNode);
  assert.equal(inBrowser.refused.code, 'DUPLICATE_REF_IN_JOB');
  assert.equal(inBrowser.refused.isLifecycle, true);
  assert.deepEqual(inBrowser.replayError, {code: 'UNKNOWN_WANT', eventIndex: 7});
  assert.deepEqual(inBrowser.schedulable, ['w1', 'w2']);
  assert.equal(inBrowser.uuid, 'b9fdaee2-c421-8dda-b7ad-0d0b3b24b0d4');
  assert.deepEqual(errors, []);
  console.log('lifecycle browser test: ok (dist/browser/index.mjs in Chromium matches the Node build)');
} finally {
  await close();
}
