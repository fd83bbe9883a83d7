// Language-model tools and dsh-session: document links, checked from inside a real VS Code
// (code-server 4.133) by the test-only extension test/lm-probe. Called by e2e.sh, which
// installs the probe next to the dsh extension; prints PASS/FAIL lines and
// "N passed, M failed". Environment as e2e-ui.js.
//
// Before the workbench loads (the extension host starts with it), this writes the probe's
// request into the workspace: the URI of fixture session G ("scratch", whose context the
// reference implementation's expected.json gives exactly) and a .dshchat file citing it.
// The probe lists vscode.lm.tools, invokes the tools, follows the document link and writes
// .dsh-lm-probe/result.json; this driver compares that with expected.json.
'use strict';
const fs = require('fs');
const path = require('path');
const { url, ws, shots, sessionWhere, mentionOf, contextOf, tally, launch, run } = require('./driver');

const g = sessionWhere('scratch');
const gWant = contextOf(g);
const gMention = mentionOf(g);

const d = tally('lm-tools');
const { log, check } = d;
const show = (v) => JSON.stringify(v === undefined ? null : v).slice(0, 400);

run(d, 'lm-tools driver', async () => {
  const dir = path.join(ws, '.dsh-lm-probe');
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(ws, 'links.dshchat'), `What did we find in ${gMention}?\n`);
  fs.writeFileSync(path.join(dir, 'request.json'), JSON.stringify({ uri: g.uri, query: 'scratch', linksFile: 'links.dshchat' }));

  const { browser, page } = await launch({ clipboard: false });
  await page.goto(url);
  await page.waitForSelector('.explorer-folders-view .monaco-list-row', { timeout: 90000 });
  log('workbench loaded; waiting for the probe');
  const resultFile = path.join(dir, 'result.json');
  const end = Date.now() + 150000;
  while (!fs.existsSync(resultFile) && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 200));
  }
  let r = {};
  try {
    r = JSON.parse(fs.readFileSync(resultFile, 'utf8'));
  } catch (e) {
    r = { crashed: `no probe result: ${e}` };
  }
  check(!r.crashed, `the probe ran (VS Code ${r.vscodeVersion})`, r.crashed);

  const tools = r.tools || [];
  const names = tools.map((t) => t.name).sort();
  check(JSON.stringify(names) === JSON.stringify(['dsh_read_session', 'dsh_search_sessions']),
    'vscode.lm.tools lists dsh_search_sessions and dsh_read_session', show(names));
  check(tools.length === 2 && tools.every((t) => /UNTRUSTED background/.test(t.description)),
    'both tool descriptions tell the model that session content is untrusted background', show(tools.map((t) => t.description)));

  check(r.read && r.read.text === gWant, 'vscode.lm.invokeTool(dsh_read_session, {uri}) returns the context message byte for byte as expected.json',
    show(r.read));
  let found = null;
  try {
    found = JSON.parse(r.search.text).find((c) => c.sessionId === g.header.id);
  } catch (e) {
    found = String(e);
  }
  check(found && found.label === g.label && found.uri === g.uri && found.mention === gMention,
    'vscode.lm.invokeTool(dsh_search_sessions, {query: "scratch"}) finds session G with its label, uri and mention', show(r.search));
  check(r.readBad && /SESSION_REFERENCE_INVALID_REFERENCE/.test(r.readBad.error || ''),
    'dsh_read_session with a malformed URI fails with SESSION_REFERENCE_INVALID_REFERENCE', show(r.readBad));

  const link = (r.links || []).find((l) => (l.target || '').startsWith('dsh-snapshot:'));
  const uriCol = `What did we find in ${gMention}`.length - 1 - g.uri.length;
  check(link && link.start.line === 0 && link.start.character === uriCol && link.end.character === uriCol + g.uri.length,
    'links.dshchat: the mention\'s dsh-session: URI is a document link to a dsh-snapshot: document', show(r.links));
  check(r.linkText === gWant, 'following the link opens the session\'s context snapshot, byte for byte as expected.json', show(r.linkText));

  // A picture of the link in the editor, for the artifacts.
  await page.locator('.explorer-folders-view .monaco-list-row', { hasText: 'links.dshchat' }).first().click().catch(() => {});
  await page.screenshot({ path: path.join(shots, 'lm-tools-01-links.png') }).catch(() => {});
  await browser.close();
});
