// Loading an optional peer dependency of a Node-only subpath (kafkajs for partkit/kafka,
// @aws-sdk/client-s3 for partkit/s3). scripts/build.mjs routes each import of a peer through
// `loadPeer` (CommonJS) or `loadPeerAsync` (ES module: a dynamic import, since a static one fails
// at link time, before any code can catch it), so that a peer that is not installed is a
// PartkitError MISSING_PEER_DEPENDENCY naming it and the command that installs it.
import {PartkitError} from '../errors.mjs';

/** Whether `error` says that the package `name` itself (not something it loads) is not installed. */
function isMissing(error, name) {
  const code = error?.code;
  if (code !== 'MODULE_NOT_FOUND' && code !== 'ERR_MODULE_NOT_FOUND') return false;
  const message = String(error.message);
  return message.includes(`'${name}'`) || message.includes(`"${name}"`);
}

function peerError(error, subpath, name) {
  if (!isMissing(error, name)) return error;
  const missing = new PartkitError(
    `partkit/${subpath} needs ${name}, an optional peer dependency that is not installed: npm install ${name}`,
    'MISSING_PEER_DEPENDENCY',
  );
  missing.cause = error;
  return missing;
}

/** `load()` (a `require` of the peer `name`), a missing peer thrown as MISSING_PEER_DEPENDENCY. */
export function loadPeer(load, subpath, name) {
  try {
    return load();
  } catch (error) {
    throw peerError(error, subpath, name);
  }
}

/** `await load()` (an `import()` of the peer `name`), a missing peer thrown as MISSING_PEER_DEPENDENCY. */
export async function loadPeerAsync(load, subpath, name) {
  try {
    return await load();
  } catch (error) {
    throw peerError(error, subpath, name);
  }
}
