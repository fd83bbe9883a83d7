// What the UI drivers (e2e-ui.js, e2e-chat-ui.js, e2e-lm-tools.js) share: their environment
// (set by e2e.sh), the fixture sessions they cite, PASS/FAIL lines, condition polling, a
// headless Chromium on the workbench, and the closing "N passed, M failed" line.
// Environment: DSH_E2E_URL, DSH_E2E_WS (workspace dir), DSH_E2E_ARTIFACTS (screenshots),
// DSH_E2E_EXPECTED (testdata/fixtures/expected/store-raw.expected.json), CHROMIUM.
'use strict';
const fs = require('fs');
const path = require('path');
const { chromium } = require('playwright-core');

const url = process.env.DSH_E2E_URL;
const ws = process.env.DSH_E2E_WS;
const shots = process.env.DSH_E2E_ARTIFACTS;
const expected = JSON.parse(fs.readFileSync(process.env.DSH_E2E_EXPECTED, 'utf8'));

// The fixture session whose cwd contains cwdPart (say "legacy" or "scratch": one each).
const sessionWhere = (cwdPart) => expected.sessions.find((s) => (s.header.cwd || '').includes(cwdPart));
// The canonical mention of session s: its label with "\" and "]" escaped, and its URI.
const mentionOf = (s) => `@[${s.label.replace(/[\\\]]/g, (c) => '\\' + c)}](${s.uri})`;
// The context message expected.json gives for a mention of s at the default 65536 bytes.
const contextOf = (s) => s.references.find((r) => r.maxReferenceBytes === 65536).prompt;

// A driver's tally: log (prefixed with tag and the time since start) and check (one
// PASS/FAIL line; returns ok).
function tally(tag) {
  const t0 = Date.now();
  const d = { passed: 0, failed: 0 };
  d.log = (...a) => console.log(`[${tag} ${((Date.now() - t0) / 1000).toFixed(1)}s]`, ...a);
  d.check = (ok, what, detail) => {
    if (ok) d.passed++;
    else d.failed++;
    d.log(ok ? 'PASS' : 'FAIL', what, ok || detail === undefined ? '' : `\n    ${detail}`);
    return ok;
  };
  return d;
}

// Calls fn every stepMs until it returns a truthy value (returned) or timeoutMs pass (the
// last value); a rejection counts as no value.
async function poll(fn, timeoutMs, stepMs = 100) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

// Headless Chromium with a 1400x900 page (30 s default timeout), granted the clipboard of
// the workbench's origin when clipboard is true; shot(name) saves a screenshot.
async function launch({ clipboard = true } = {}) {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/lib/chromium/chromium',
    args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage',
      '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  if (clipboard) {
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(url).origin });
  }
  const page = await context.newPage();
  page.setDefaultTimeout(30000);
  const shot = (name) => page.screenshot({ path: path.join(shots, name) });
  return { browser, context, page, shot };
}

// Runs the driver's main, then prints the closing line and exits (1 on any failure); an
// exception is reported as "<what> error" and counts as one more failure.
function run(d, what, main) {
  main().then(() => {
    console.log(`${d.passed} passed, ${d.failed} failed`);
    process.exit(d.failed ? 1 : 0);
  }, (e) => {
    console.error(`${what} error:`, e);
    console.log(`${d.passed} passed, ${d.failed + 1} failed`);
    process.exit(1);
  });
}

module.exports = { url, ws, shots, expected, sessionWhere, mentionOf, contextOf, tally, poll, launch, run };
