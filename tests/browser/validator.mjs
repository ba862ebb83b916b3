#!/usr/bin/env node
// `npm run test:browser`: drives Debian's Chromium through the config validator page and checks
// what it shows against the Node API. Saves a screenshot to test-output/validator.png.
//
// Without /usr/bin/chromium it skips, loudly, unless PARTKIT_REQUIRE_BROWSER=1 (set by .ci/run,
// which installs Chromium).
import assert from 'node:assert/strict';
import {mkdirSync} from 'node:fs';
import {createRequire} from 'node:module';
import {dirname, join} from 'node:path';
import {fileURLToPath} from 'node:url';
import {openChromium, requireChromium} from './chromium.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const require = createRequire(import.meta.url);
const partkit = require('../../dist/index.cjs');

requireChromium('browser test');

const {page, origin, errors, close} = await openChromium('browser test', {viewport: {width: 1280, height: 1100}, consoleErrors: true});
const url = `${origin}/examples/config-validator/`;
try {
  const external = [];
  page.on('request', (r) => !r.url().startsWith(`${origin}/`) && external.push(r.url()));
  await page.goto(url);
  await page.waitForSelector('body[data-ready="true"]', {timeout: 20000});

  const message = () => page.textContent('#validation [data-testid="message"]');
  const setConfig = async (config) => {
    await page.fill('#config', typeof config === 'string' ? config : JSON.stringify(config, null, 2));
  };

  // The prefilled example is valid.
  assert.equal(await message(), 'valid');

  // An invalid config shows faros' exact message and the field it concerns.
  await setConfig({round_robin_bucket_execution: true, bucket_total: 6, bucket_ranges: ['2-3', '7']});
  assert.equal(await message(), 'Invalid bucket range 7: values must be between 1 and 6');
  assert.equal(await page.textContent('#validation [data-testid="field"]'), 'bucket_ranges');
  await setConfig({bucket_total: 4, bucket_id: 5});
  assert.equal(await message(), 'bucket_id must be between 1 and 4');
  assert.equal(await page.textContent('#validation [data-testid="field"]'), 'bucket_id');
  await setConfig('{"bucket_total": 4,');
  assert.match(await message(), /^config is not valid JSON/);

  // Fixed: valid again, and the schedule follows the ranges and the state.
  const config = {token: 't', round_robin_bucket_execution: true, bucket_total: 6, bucket_ranges: '2-3,5'};
  await setConfig(config);
  assert.equal(await message(), 'valid');
  assert.equal(await page.textContent('#schedule'), '2 3 5 2 3 5 2 3 5 2 3 5');
  await page.fill('#state', '{"__bucket_execution_state": {"last_executed_bucket_id": 3}}');
  const state = {__bucket_execution_state: {last_executed_bucket_id: 3}};
  assert.equal(await page.textContent('#schedule'), partkit.roundRobinSchedule(config, state, 12).join(' '));

  // Pasted ids get the same buckets as the Node API.
  const ids = ['facebook/react', 'torvalds/linux', 'vercel/next.js', 'ünïcødé/répo', 'emoji/🎉', 'octo-org/repo'];
  await page.fill('#entities', ids.join('\n'));
  const shown = await page.$$eval('#lookup [data-testid="bucket"]', (cells) => cells.map((c) => Number(c.textContent)));
  assert.deepEqual(shown, Array.from(partkit.bucketMany('farosai/airbyte-github-source', ids, 6)));
  assert.equal(await page.locator('#chart .bar-row').count(), 6);

  // The object partitioner, when the package has it.
  if (typeof partkit.ObjectPartitioner === 'function') {
    assert.equal(await page.isHidden('#objects-section'), false);
    const keys = (await page.inputValue('#obj-keys')).split('\n').filter(Boolean);
    const want = new partkit.ObjectPartitioner(3, {key: 'data/', partition: {type: 'regex', pattern: 'customer=([^/]+)'}}).plan(keys);
    const got = await page.$$eval('[data-testid="partition"] ul', (lists) => lists.map((ul) => [...ul.children].map((li) => li.textContent)));
    assert.deepEqual(got, want);
    assert.match(await page.textContent('#obj-summary'), /^fallback to partition 0: \d+, directories: \d+$/);
  }

  await page.fill('#state', '');
  await setConfig({token: 't', round_robin_bucket_execution: true, bucket_total: 6, bucket_ranges: ['2-3', '5']});
  await page.fill('#entities', ids.join('\n'));
  mkdirSync(join(root, 'test-output'), {recursive: true});
  await page.screenshot({path: join(root, 'test-output', 'validator.png'), fullPage: true});

  assert.deepEqual(errors, [], 'no page errors');
  assert.deepEqual(external, [], 'no requests leave localhost');
  console.log(`browser test: ok (${url}); screenshot in test-output/validator.png`);
} finally {
  await close();
}
