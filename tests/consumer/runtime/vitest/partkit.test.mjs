// vitest, in whichever environment the command line names (node or jsdom), with no config file.
import {expect, test} from 'vitest';
import {check, checkObjects} from '../app/check.mjs';

test(`partkit in vitest (${typeof window === 'undefined' ? 'node' : 'jsdom'})`, () => {
  expect(check()).toBe('ok');
  expect(checkObjects()).toBe('ok');
});
