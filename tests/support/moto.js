// Starts moto's S3 API server on a free loopback port (tests/support/moto_s3.py, run by the
// Python of the virtualenv scripts/ensure-moto.sh installs), optionally with buckets filled
// through moto's Python API, and an S3Client for it.
const {spawn} = require('node:child_process');
const {existsSync, mkdtempSync, writeFileSync} = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

/** The venv's python with moto, or null. */
function findMotoPython() {
  const venv = process.env.PARTKIT_MOTO_VENV || path.join(os.homedir(), '.cache', 'partkit', 'moto');
  const python = path.join(venv, 'bin', 'python');
  return existsSync(python) && existsSync(path.join(venv, 'bin', 'moto_server')) ? python : null;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const {port} = s.address();
      s.close(() => resolve(port));
    });
  });
}

/**
 * Starts the server. `buckets`: {name: keys[]} filled before it serves. Resolves to
 * {endpoint, port, stop()}.
 */
async function startMoto(python, buckets = {}) {
  const port = await freePort();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'partkit-moto-'));
  const args = [path.join(__dirname, 'moto_s3.py'), String(port)];
  for (const [name, keys] of Object.entries(buckets)) {
    const file = path.join(dir, `${name}.keys`);
    writeFileSync(file, keys.join('\n'));
    args.push(name, file);
  }
  const child = spawn(python, args, {stdio: ['pipe', 'pipe', 'pipe']});
  let err = '';
  child.stderr.on('data', (d) => { err = (err + d).slice(-4000); });
  await new Promise((resolve, reject) => {
    let out = '';
    const fail = (why) => reject(new Error(`moto server: ${why}\n${err}`));
    child.once('exit', (code) => fail(`exited with ${code}`));
    child.once('error', (e) => fail(e.message));
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes(`ready ${port}`)) resolve();
    });
  });
  child.removeAllListeners('exit');
  return {
    port,
    endpoint: `http://127.0.0.1:${port}`,
    stop: () => new Promise((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', resolve);
      child.stdin.end();
      setTimeout(() => child.kill('SIGKILL'), 5000).unref();
    }),
  };
}

/** An S3Client for the server (dummy credentials, path-style, few retries). */
function s3Client(endpoint, extra = {}) {
  const {S3Client} = require('@aws-sdk/client-s3');
  return new S3Client({
    endpoint, forcePathStyle: true, region: 'us-east-1',
    credentials: {accessKeyId: 'partkit', secretAccessKey: 'partkit'},
    maxAttempts: 2,
    ...extra,
  });
}

module.exports = {findMotoPython, startMoto, s3Client};
