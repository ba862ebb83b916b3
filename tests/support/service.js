// Test parts that need a program the machine may lack (moto, tansu, Chromium): without it they
// skip, loudly, unless the variable that requires it is set to 1 (.ci/run sets each), then fail.

/**
 * Whether the program the tests need was `found`; when not, warns `SKIPPED <what> not found
 * (<install>)`, or throws that when `process.env[env]` is '1'.
 */
function serviceFound(found, {what, install, env}) {
  if (found) return true;
  const message = `${what} not found (${install})`;
  if (process.env[env] === '1') throw new Error(`${message}, and ${env}=1`);
  console.warn(`SKIPPED ${message}`);
  return false;
}

/** `describe` when the program was found, else `describe.skip` (see `serviceFound`). */
function describeWith(found, options) {
  return serviceFound(found, options) ? describe : describe.skip;
}

module.exports = {serviceFound, describeWith};
