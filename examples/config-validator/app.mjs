// The validator page: everything runs in partkit's browser build (WebAssembly), offline. It loads
// only what it calls: bucketing first (dist/browser/bucketing.mjs and its wasm), then object
// partitioning for the section below. A page built with a bundler gets the same by importing
// from 'partkit': the bundle holds only the domains it uses (docs/wasm.md).
import * as partkit from '../../dist/browser/bucketing.mjs';

let objectsApi = null;

const $ = (id) => document.getElementById(id);

const EXAMPLE = {
  token: '<your API token>',
  round_robin_bucket_execution: true,
  bucket_total: 6,
  bucket_ranges: ['2-3', '5'],
};

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  for (const c of children) node.append(c);
  return node;
}

function parseJson(text, what) {
  if (!text.trim()) return undefined;
  try {
    return JSON.parse(text);
  } catch (e) {
    throw Object.assign(new Error(`${what} is not valid JSON: ${e.message}`), {field: what});
  }
}

function showError(target, error) {
  // every PartkitError says where: `path`, e.g. ['bucket_ranges'] (docs/errors.md)
  const field = error.field ?? (error.path?.length ? error.path.join('.') : undefined);
  target.replaceChildren(
    el('span', {class: 'error', 'data-testid': 'message'}, error.message),
    ...(field ? [' — field ', el('span', {class: 'field', 'data-testid': 'field'}, field)] : []),
    ...(error.code ? [el('span', {class: 'muted'}, ` (${error.code})`)] : []),
  );
}

function currentConfig() {
  return parseJson($('config').value, 'config');
}

function validate() {
  const out = $('validation');
  let config;
  try {
    config = currentConfig();
    const notes = [];
    partkit.validateBucketingConfig(config ?? {}, (m) => notes.push(m));
    out.replaceChildren(el('span', {class: 'ok', 'data-testid': 'message'}, 'valid'),
      ...notes.map((n) => el('div', {class: 'note'}, n)));
  } catch (error) {
    showError(out, error);
    config = undefined;
  }
  schedule(config);
  lookup(config);
}

function schedule(config) {
  $('schedule-error').textContent = '';
  if (!config) {
    $('schedule').textContent = '—';
    return;
  }
  try {
    const state = parseJson($('state').value, 'state');
    $('schedule').textContent = partkit.roundRobinSchedule(config, state, 12).join(' ');
  } catch (error) {
    $('schedule').textContent = '—';
    $('schedule-error').textContent = error.message;
  }
}

function lookup(config) {
  const body = $('lookup').tBodies[0];
  $('lookup-error').textContent = '';
  body.replaceChildren();
  $('chart').replaceChildren();
  if (!config) return;
  try {
    const total = config.bucket_total ?? 1;
    const ids = $('entities').value.split('\n').map((s) => s.trim()).filter(Boolean);
    const key = $('key').value;
    const buckets = partkit.bucketMany(key, ids, total);
    ids.forEach((id, i) => body.append(el('tr', {}, el('td', {}, id), el('td', {'data-testid': 'bucket'}, String(buckets[i])))));
    const dist = partkit.bucketDistribution(key, ids, Math.min(total, 64));
    const top = Math.max(1, dist.max);
    dist.counts.forEach((count, i) => {
      $('chart').append(el('div', {class: 'bar-row'},
        el('span', {class: 'label'}, `bucket ${i + 1}`),
        el('span', {class: 'bar', style: `width: ${(count / top) * 240}px`}),
        el('span', {}, String(count))));
    });
  } catch (error) {
    $('lookup-error').textContent = error.message;
  }
}

function objects() {
  const plan = $('obj-plan');
  $('obj-error').textContent = '';
  plan.replaceChildren();
  $('obj-summary').textContent = '';
  try {
    const total = Number($('obj-total').value);
    const partition = parseJson($('obj-config').value, 'partition config') ?? {};
    const keys = $('obj-keys').value.split('\n').map((s) => s.replace(/\r$/, '')).filter(Boolean);
    const partitioner = new objectsApi.ObjectPartitioner(total, {key: $('obj-prefix').value, partition});
    const stats = partitioner.stats(keys);
    partitioner.plan(keys).forEach((part, i) => {
      plan.append(el('div', {class: 'partition', 'data-testid': 'partition'},
        el('h3', {}, `partition ${i} (${part.length})`),
        el('ul', {}, ...part.map((k) => el('li', {}, k)))));
    });
    $('obj-summary').textContent = `fallback to partition 0: ${stats.fallback}, directories: ${stats.directories}`;
  } catch (error) {
    $('obj-error').textContent = error.message;
  }
}

$('config').value = JSON.stringify(EXAMPLE, null, 2);
for (const id of ['config', 'state', 'entities', 'key']) $(id).addEventListener('input', validate);
validate();
// From navigation to the first validation result (the load time docs/validator.md gives).
document.body.dataset.firstResultMs = String(performance.now());
$('load-status').textContent = 'partkit loaded (WebAssembly)';
objectsApi = await import('../../dist/browser/objects.mjs');
$('objects-section').hidden = false;
for (const id of ['obj-total', 'obj-prefix', 'obj-config', 'obj-keys']) $(id).addEventListener('input', objects);
objects();
document.body.dataset.ready = 'true';
