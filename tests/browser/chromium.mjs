// What the browser tests share: Debian's Chromium (or CHROMIUM_PATH), skipped without it unless
// PARTKIT_REQUIRE_BROWSER=1 (tests/support/service.js), the repository served on a free loopback
// port, and a headless persistent context in a fresh profile, closed and removed by `close()`.
import {existsSync, mkdtempSync, rmSync} from 'node:fs';
import {createRequire} from 'node:module';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {serve} from '../../scripts/serve.mjs';

const require = createRequire(import.meta.url);
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Exits (a skip) when Chromium is missing and not required; `what` names the test in messages. */
export function requireChromium(what) {
  const {serviceFound} = require('../support/service.js');
  if (!serviceFound(existsSync(CHROMIUM), {what: `${what}: ${CHROMIUM}`, install: "install Debian's chromium package", env: 'PARTKIT_REQUIRE_BROWSER'})) process.exit(0);
}

/**
 * Chromium on the served repository: `{page, origin, errors, close}` (`errors`: the page's
 * uncaught errors, and with `consoleErrors` its console errors too). The test fails after 60 s.
 */
export async function openChromium(what, {viewport, consoleErrors = false} = {}) {
  const {chromium} = require('playwright-core');
  const profile = mkdtempSync(join(tmpdir(), 'partkit-chromium-'));
  const server = await serve(0);
  const origin = `http://127.0.0.1:${server.address().port}`;
  // A fresh --user-data-dir: Playwright takes it as the persistent context's directory.
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    ...(viewport ? {viewport} : {}),
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync'],
  });
  const deadline = setTimeout(() => {
    console.error(`${what}: timed out`);
    process.exit(1);
  }, 60000);
  const page = browser.pages()[0] ?? (await browser.newPage());
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  if (consoleErrors) page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  const close = async () => {
    clearTimeout(deadline);
    await browser.close();
    server.close();
    rmSync(profile, {recursive: true, force: true});
  };
  return {page, origin, errors, close};
}
