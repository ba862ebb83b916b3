// Starts and stops a tansu broker (a Kafka-API-compatible broker, in-memory storage) on a free
// loopback port, for the broker tests.
'use strict';

const {spawn, spawnSync, execFileSync} = require('node:child_process');
const {existsSync} = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

/** The tansu binary: $TANSU_BIN, ~/.cargo/bin/tansu, or tansu on PATH; null when absent. */
function findTansu() {
  const candidates = [process.env.TANSU_BIN, path.join(os.homedir(), '.cargo', 'bin', 'tansu')].filter(Boolean);
  for (const c of candidates) if (existsSync(c)) return c;
  try {
    return execFileSync('sh', ['-c', 'command -v tansu'], {encoding: 'utf8'}).trim() || null;
  } catch {
    return null;
  }
}

/**
 * Whether `bin` runs a broker on the storage engine `url` (e.g. `slatedb://memory`, which needs
 * tansu built with `tansu-broker/slatedb`): it fails at once when the engine is not built in,
 * and runs on (stopped here after 2 s) when it is. (The banner's feature list is tansu-cli's,
 * so it does not tell.)
 */
function tansuSupportsStorage(bin, url) {
  const listen = 'tcp://127.0.0.1:0';
  const r = spawnSync(bin, ['broker', '--listener-url', listen, '--advertised-listener-url', listen, '--storage-engine', url], {encoding: 'utf8', timeout: 2000, killSignal: 'SIGKILL'});
  const out = `${r.stdout ?? ''}${r.stderr ?? ''}`;
  return r.signal === 'SIGKILL' && !/FeatureNotEnabled|error/i.test(out);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.unref();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const {port} = s.address();
      s.close(() => resolve(port));
    });
  });
}

function canConnect(port) {
  return new Promise((resolve) => {
    const sock = net.connect({host: '127.0.0.1', port});
    sock.once('connect', () => {
      sock.destroy();
      resolve(true);
    });
    sock.once('error', () => resolve(false));
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Starts a broker; resolves to `{brokers, port, stop(), log()}` once it accepts Kafka requests.
 * `storage` is the storage engine (default `memory://tansu/`; `slatedb://memory` needs a tansu
 * built with the slatedb feature, and is the in-memory engine that implements DeleteRecords).
 * @param {{bin?: string, timeoutMs?: number, storage?: string}} [opts]
 */
async function startTansu(opts = {}) {
  const bin = opts.bin ?? findTansu();
  if (!bin) throw new Error('tansu not found (run scripts/ensure-tansu.sh)');
  const port = await freePort();
  const url = `tcp://127.0.0.1:${port}`;
  const args = ['broker', '--listener-url', url, '--advertised-listener-url', url, '--storage-engine', opts.storage ?? 'memory://tansu/'];
  const child = spawn(bin, args, {stdio: ['ignore', 'pipe', 'pipe'], env: {...process.env, RUST_LOG: process.env.TANSU_LOG ?? 'warn'}});
  let output = '';
  const keep = (d) => {
    output += d.toString();
    if (output.length > 200000) output = output.slice(-100000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  let exited = null;
  const exit = new Promise((resolve) => child.once('exit', (code, signal) => resolve((exited = {code, signal}))));
  const deadline = Date.now() + (opts.timeoutMs ?? 20000);
  const brokers = [`127.0.0.1:${port}`];
  const stop = async () => {
    if (!exited) {
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exit;
      clearTimeout(t);
    }
  };
  for (;;) {
    if (exited) throw new Error(`tansu exited (${JSON.stringify(exited)}) before listening:\n${output.slice(-4000)}`);
    if (await canConnect(port)) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`tansu did not listen on ${port} within the timeout:\n${output.slice(-4000)}`);
    }
    await sleep(100);
  }
  // the port is open: wait until it answers metadata requests
  const {Kafka, logLevel} = require('kafkajs');
  const admin = new Kafka({clientId: 'tansu-probe', brokers, logLevel: logLevel.NOTHING, retry: {retries: 0}}).admin();
  for (;;) {
    try {
      await admin.connect();
      await admin.listTopics();
      await admin.disconnect();
      break;
    } catch (e) {
      try {
        await admin.disconnect();
      } catch {}
      if (Date.now() > deadline) {
        await stop();
        throw new Error(`tansu did not answer on ${port}: ${e.message}\n${output.slice(-4000)}`);
      }
      await sleep(200);
    }
  }
  return {brokers, port, stop, log: () => output, pid: child.pid};
}

module.exports = {findTansu, startTansu, tansuSupportsStorage, freePort};
