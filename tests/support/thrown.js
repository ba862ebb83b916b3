// What a call throws, for tests that look at the error itself (its class, code, message, path).

/** The error `fn()` throws; the test fails when it throws none. */
function thrown(fn) {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

/** The error `fn()` throws, or undefined when it answers (calls that may do either). */
function thrownIfAny(fn) {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
}

/** The error `promise` rejects with; the test fails when it resolves. */
function rejection(promise) {
  return promise.then(() => {
    throw new Error('expected a rejection');
  }, (error) => error);
}

module.exports = {thrown, thrownIfAny, rejection};
