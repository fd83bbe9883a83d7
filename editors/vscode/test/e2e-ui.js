// Drives a real VS Code (code-server) in headless Chromium against dsh-lsp and the
// fixture store; called by e2e.sh. Prints one PASS/FAIL line per check and a closing
// "N passed, M failed" line.
// Environment: DSH_E2E_URL, DSH_E2E_WS (workspace dir), DSH_E2E_ARTIFACTS (screenshots),
// DSH_E2E_EXPECTED (testdata/fixtures/expected/store-raw.expected.json), CHROMIUM.
'use strict';
const fs = require('fs');
const path = require('path');
const { url, ws, shots, expected, sessionWhere, mentionOf, contextOf, tally, poll, launch, run } = require('./driver');

// The fixture session the test cites: the only one whose cwd contains "legacy".
const session = sessionWhere('legacy');
const label = session.label;
const mention = mentionOf(session);
const contextAt65536 = contextOf(session);

const d = tally('ui');
const { log, check } = d;
const nbsp = (s) => s.replace(/\u00a0/g, ' ');
const readFile = (name) => fs.readFileSync(path.join(ws, name), 'utf8');

run(d, 'UI driver', async () => {
  const { browser, page, shot } = await launch();
  const editor = page.locator('.editor-group-container.active .monaco-editor').first();

  // The text of dsh's hover over the squiggle target ('' when it has none or no hover
  // shows): the mouse moves onto it from its left edge, up to three times.
  async function hoverOver(target) {
    if (!(await target.count())) return '';
    const box = await target.boundingBox();
    const hover = page.locator('.monaco-hover:not(.hidden)', { hasText: 'dsh' });
    let text = '';
    for (let i = 0; i < 3 && !text; i++) {
      await page.mouse.move(box.x + 2, box.y + box.height / 2);
      await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2, { steps: 5 });
      await hover.first().waitFor({ timeout: 5000 }).catch(() => {});
      text = (await hover.count()) ? nbsp(await hover.first().innerText()) : '';
    }
    return text;
  }

  async function openFile(name) {
    await page.keyboard.press('Escape');
    await page.locator('.explorer-folders-view .monaco-list-row', { hasText: name }).first().click();
    await page.locator('.tabs-container .tab.active', { hasText: name }).waitFor();
    await editor.locator('.view-lines').waitFor();
  }
  async function runCommand(title) {
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor();
    await input.fill('>' + title);
    await page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first().waitFor({ timeout: 10000 })
      .catch(async (e) => { await shot(`command-not-found-${title.replace(/\W+/g, '-')}.png`); throw e; });
    await page.keyboard.press('Enter');
  }
  async function goToEnd() {
    await editor.locator('.view-lines').click();
    await page.keyboard.press('Control+End');
  }
  // toast waits for a notification whose text matches re. Toasts are transient (VS Code
  // hides them after a while, sooner on a loaded machine), so it also reads the
  // notification centre, which keeps every notification until "Clear All". On timeout it
  // returns all notification texts so a failure shows what VS Code said instead.
  async function toast(re, timeoutMs = 15000) {
    const toasts = page.locator('.notifications-toasts .notification-list-item-message');
    const centre = page.locator('.notifications-center .notification-list-item-message');
    const texts = async () => [...(await toasts.allInnerTexts()), ...(await centre.allInnerTexts())];
    let hit = await poll(async () => (await texts()).find((t) => re.test(t)), timeoutMs);
    if (!hit) {
      await runCommand('Notifications: Show Notifications').catch(() => {});
      hit = await poll(async () => (await texts()).find((t) => re.test(t)), 3000);
      await runCommand('Notifications: Hide Notifications').catch(() => {});
    }
    return hit || `(no matching notification; seen: ${JSON.stringify(await texts().catch(() => []))})`;
  }
  // openedPick waits until the command's own quick pick (by its title) is open and
  // focused: on a loaded machine the command palette may still be closing, and keys typed
  // then would land in the editor.
  async function openedPick(title) {
    const widget = page.locator('.quick-input-widget', { hasText: title });
    await widget.waitFor({ timeout: 20000 });
    const input = widget.locator('input');
    await poll(async () => (await input.evaluate((el) => el === document.activeElement) ? 'yes' : ''), 10000);
  }
  // pickRow waits until the quick pick has settled on a query (the input holds it, the
  // list is not busy and its first row contains want), then accepts that row: the list is
  // re-queried as the text changes, so a row picked earlier may belong to an older list.
  async function pickRow(query, want, timeoutMs = 20000) {
    const input = page.locator('.quick-input-widget input');
    const first = page.locator('.quick-input-list .monaco-list-row').first();
    const busy = page.locator('.quick-input-widget .quick-input-progress.active');
    const settled = await poll(async () => (await input.inputValue()) === query && (await busy.count()) === 0 &&
      (await first.innerText()).includes(want) ? 'yes' : '', timeoutMs);
    if (!settled) {
      await page.keyboard.press('Escape');
      return false;
    }
    // a click, not Enter: a list replaced while typing may have no active item to accept
    await page.locator('.quick-input-list .monaco-list-row', { hasText: want }).first().click();
    // accepted: the quick pick closes
    await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 10000 }).catch(() => {});
    return true;
  }
  async function clearToasts() {
    await page.keyboard.press('Escape');
    await runCommand('Notifications: Clear All Notifications');
  }

  // prepareAndRead runs "dsh: Prepare Message" on the active editor (file) and returns the
  // notification, whether the context tab opened, its text, and the clipboard.
  async function prepareAndRead(file, shotName) {
    await clearToasts();
    await runCommand('dsh: Prepare Message');
    const t = await toast(/copied the|SESSION_REFERENCE|JSON-RPC/);
    const tabName = `${file} (context).md`;
    const tab = page.locator('.tabs-container .tab', { hasText: tabName });
    await tab.first().waitFor({ timeout: 10000 }).catch(() => {});
    const view = await poll(async () => {
      const lines = await page.evaluate((name) => {
        const group = [...document.querySelectorAll('.editor-group-container')].find((g) =>
          g.querySelector('.tab.active')?.textContent.includes(name));
        const ed = group?.querySelector('.monaco-editor');
        if (!ed) return null;
        return [...ed.querySelectorAll('.view-lines .view-line')]
          .map((l) => [parseFloat(l.style.top), l.textContent]).sort((x, y) => x[0] - y[0]).map((x) => x[1]);
      }, tabName);
      return lines && lines.join('\n').includes('</referenced-sessions>') ? nbsp(lines.join('\n')) : '';
    }, 10000);
    if (shotName) {
      await shot(shotName);
      await page.screenshot({ path: path.join(shots, `readme-${shotName}`), clip: { x: 350, y: 38, width: 1050, height: 240 } });
    }
    const clip = await page.evaluate(() => navigator.clipboard.readText()).catch((e) => `clipboard error: ${e}`);
    return { toast: t, tab: (await tab.count()) > 0, view: view || '', clip };
  }

  // two.dshchat cites two sessions: fine by default, too many once dsh.maxReferences is 1
  const scratch = sessionWhere('scratch');
  const scratchMention = `@[${scratch.label.replace(/[\\\]]/g, (c) => '\\' + c)}](${scratch.uri})`;
  fs.writeFileSync(path.join(ws, "two.dshchat"), `Compare ${mention}\nwith ${scratchMention}\n`);
  // content search: "origin" is said only in session A's body (no id, cwd or title holds it)
  const sessionA = expected.sessions.find((s) => s.header.id.endsWith('-5d3c2b1a0001'));
  fs.writeFileSync(path.join(ws, 'content.dshchat'), 'Who renamed ');
  await page.goto(url);
  await page.waitForSelector('.monaco-workbench', { timeout: 90000 });
  await page.waitForSelector('.explorer-folders-view .monaco-list-row', { timeout: 60000 });
  log('workbench loaded');

  // 1. diagnostic squiggle for a broken URI, its hover, and that fixing the text clears it
  //    (first, because the squiggle also shows that dsh-lsp is up)
  await openFile('broken.dshchat');
  const mode = page.locator('.statusbar-item[id="status.editor.mode"]');
  const modeText = await poll(async () => ((await mode.innerText()).includes('dsh chat') ? mode.innerText() : ''), 20000);
  check(Boolean(modeText), 'a .dshchat file opens in the dsh-chat language', await mode.innerText().catch(() => ''));
  const squiggle = editor.locator('.squiggly-error').first();
  await squiggle.waitFor({ timeout: 20000 }).catch(() => {});
  check((await squiggle.count()) > 0, 'a broken dsh-session URI gets an error squiggle');
  const hoverText = await hoverOver(squiggle);
  log('hover:', JSON.stringify(hoverText));
  check(/invalid-uri/.test(hoverText) && /dsh/.test(hoverText), 'hovering the squiggle shows the dsh diagnostic (code invalid-uri)', JSON.stringify(hoverText));
  await shot('01-diagnostic-hover.png');
  await page.mouse.move(5, 5);
  await editor.locator('.view-lines').click();
  await page.keyboard.press('Control+A');
  await page.keyboard.type('See ' + mention + ' for details');
  const cleared = await poll(async () => ((await editor.locator('.squiggly-error').count()) === 0 ? 'yes' : ''), 10000);
  check(hoverText !== '' && cleared === 'yes', 'the squiggle disappears once the mention is fixed');

  await clearToasts();
  // 2. completion after "@" + a substring of the session's cwd, accepted
  await openFile('prompt.dshchat');
  await goToEnd();
  await page.keyboard.type('@legacy', { delay: 60 });
  const row = page.locator('.editor-widget.suggest-widget.visible .monaco-list-row', { hasText: label });
  await row.first().waitFor({ timeout: 20000 }).catch(() => {});
  const rows = await page.locator('.editor-widget.suggest-widget.visible .monaco-list-row').allInnerTexts().catch(() => []);
  check((await row.count()) > 0, `suggest widget lists "${label}" after typing @legacy`, JSON.stringify(rows));
  await shot('02-completion.png');
  await page.screenshot({ path: path.join(shots, 'readme-completion.png'), clip: { x: 345, y: 40, width: 800, height: 110 } });
  if (await row.count()) {
    await row.first().click();
  } else {
    await page.keyboard.press('Escape');
  }
  await page.keyboard.press('Control+S');
  const wantPrompt = 'What was the login fix in ' + mention;
  const gotPrompt = await poll(async () => (readFile('prompt.dshchat') === wantPrompt ? wantPrompt : ''), 5000);
  check(gotPrompt === wantPrompt, 'accepting inserts exactly the canonical mention', `file: ${JSON.stringify(readFile('prompt.dshchat'))}\n    want: ${JSON.stringify(wantPrompt)}`);
  await shot('03-accepted.png');

  // 2b. completion by content: "@origin" offers session A, whose body alone says "origin". The
  // list is incomplete, so each key asks again; content hits are searched beside dsh's listing
  // and, when late, come on a later key (the server keeps them for the query).
  await openFile('content.dshchat');
  await goToEnd();
  await page.keyboard.type('@origin', { delay: 60 });
  const contentRow = page.locator('.editor-widget.suggest-widget.visible .monaco-list-row', { hasText: sessionA.label });
  let offered = await contentRow.first().waitFor({ timeout: 10000 }).then(() => true).catch(() => false);
  for (let i = 0; !offered && i < 3; i++) {
    await page.keyboard.press('Backspace');
    await page.keyboard.type('n', { delay: 60 });
    offered = await contentRow.first().waitFor({ timeout: 10000 }).then(() => true).catch(() => false);
  }
  const contentRows = await page.locator('.editor-widget.suggest-widget.visible .monaco-list-row').allInnerTexts().catch(() => []);
  check(offered, `suggest widget offers "${sessionA.label}" for @origin, a word of its body only`, JSON.stringify(contentRows));
  if (offered) {
    await contentRow.first().click();
  } else {
    await page.keyboard.press('Escape');
  }
  await page.keyboard.press('Control+S');
  const wantContent = 'Who renamed ' + mentionOf(sessionA);
  const gotContent = await poll(async () => (readFile('content.dshchat') === wantContent ? wantContent : ''), 5000);
  check(gotContent === wantContent, 'accepting the content hit inserts its canonical mention', `file: ${JSON.stringify(readFile('content.dshchat'))}\n    want: ${JSON.stringify(wantContent)}`);
  // back to the completed prompt, which the next step prepares
  await openFile('prompt.dshchat');

  // 3. "dsh: Prepare Message" on the completed prompt (session D, a July-2026 legacy log):
  // the context message shows D's displayContent, not the older snapshot baked into its
  // content (the one deliberate difference from dsh 0.1.0-rc.8, CONTRACT.md).
  const d = await prepareAndRead('prompt.dshchat', '04-prepared.png');
  check(/copied the context of 1 referenced session/.test(d.toast), 'Prepare Message reports one referenced session', d.toast);
  check(d.tab, 'the context message opens in a read-only tab');
  check(d.view.startsWith('## Referenced sessions\n') && d.view.endsWith('\n</referenced-sessions>') &&
    d.view.includes(`"sessionId":"${session.header.id}","label":${JSON.stringify(label)},"cwd":"/home/alice/legacy"`),
    'the context message starts with "## Referenced sessions" and carries the cited session', JSON.stringify(d.view.slice(0, 300)));
  check(d.view.includes('{"role":"user","text":"Summarise the login fix from @Fix login bug"}') && d.view.split('Referenced sessions').length === 2,
    'a legacy prompt is projected from its displayContent (no re-embedded snapshot)', JSON.stringify(d.view.slice(380, 700)));
  check(d.clip === d.view + '\n\nWhat was the login fix in @' + label,
    'the clipboard holds the context message, a blank line, then the readable message', `got ${JSON.stringify(d.clip.slice(-200))}`);
  await runCommand('View: Close Editor');

  // 4. "dsh: Insert Session Mention": quick pick over dsh/candidates, then an exact prepare
  const other = sessionWhere('scratch');
  const otherMention = `@[${other.label.replace(/[\\\]]/g, (c) => '\\' + c)}](${other.uri})`;
  await openFile('insert.dshchat');
  await goToEnd();
  await runCommand('dsh: Insert Session Mention');
  const qpInput = page.locator('.quick-input-widget input');
  await openedPick('Insert dsh session mention');
  await qpInput.fill('scratch');
  const listed = await poll(async () => ((await page.locator('.quick-input-list .monaco-list-row').first().innerText()).includes(other.header.cwd) ? 'yes' : ''), 20000);
  await shot('05-insert-mention.png');
  check(listed === 'yes' && await pickRow('scratch', other.header.cwd), 'Insert Session Mention lists the session matched by cwd ("scratch")');
  await page.keyboard.press('Control+S');
  const wantInsert = 'Ask about ' + otherMention;
  const gotInsert = await poll(async () => (readFile('insert.dshchat') === wantInsert ? wantInsert : ''), 5000);
  check(gotInsert === wantInsert, 'Insert Session Mention inserts the canonical mention at the cursor', JSON.stringify(readFile('insert.dshchat')));
  const g = await prepareAndRead('insert.dshchat');
  const gWant = contextOf(other);
  check(g.view === gWant, 'the context message equals the dsh reference output byte for byte (expected.json, budget 65536)',
    `got  ${JSON.stringify(g.view.slice(0, 600))}\n    want ${JSON.stringify(gWant.slice(0, 600))}`);
  check(g.clip === gWant + '\n\nAsk about @' + other.label, 'the clipboard holds that context and the readable message', JSON.stringify(g.clip.slice(-120)));
  await runCommand('View: Close Editor');

  // 5. "dsh: Set Chat Session": make the cited session the document's own → self-reference
  await clearToasts();
  await openFile('insert.dshchat');
  await runCommand('dsh: Set Chat Session');
  await openedPick('Which dsh session is this chat?');
  await qpInput.fill(other.header.id);
  check(await pickRow(other.header.id, other.header.cwd), 'Set Chat Session lists the session matched by its id');
  const setToast = await toast(/now belongs to session/);
  if (!setToast.includes(other.header.id)) await shot('05b-set-chat-session-failed.png');
  check(setToast.includes(other.header.id), 'Set Chat Session confirms the target', setToast);
  const selfSquiggle = editor.locator('.squiggly-error').first();
  await selfSquiggle.waitFor({ timeout: 10000 }).catch(() => {});
  check((await selfSquiggle.count()) > 0, 'citing the chat\'s own session is flagged (self-reference)');
  await clearToasts();
  await runCommand('dsh: Prepare Message');
  const errToast = await toast(/SESSION_REFERENCE/);
  check(/SESSION_REFERENCE_SELF_REFERENCE/.test(errToast), 'Prepare Message shows the dsh error code and message', errToast);
  await shot('06-self-reference.png');

  // 6. settings reach the server on change (workspace/didChangeConfiguration)
  const settingsFile = path.join(ws, '.vscode', 'settings.json');
  const settings = JSON.parse(fs.readFileSync(settingsFile, 'utf8'));
  await clearToasts();
  await openFile('two.dshchat');
  // a positive sign that the server has the document and accepts both references before
  // checking that it flags nothing
  const two = await prepareAndRead('two.dshchat');
  check(/copied the context of 2 referenced sessions/.test(two.toast), 'Prepare Message accepts two cited sessions', two.toast);
  if (two.tab) await runCommand('View: Close Editor');
  await openFile('two.dshchat');
  check((await editor.locator('.squiggly-error').count()) === 0, 'two cited sessions are fine with the default maxReferences');
  fs.writeFileSync(settingsFile, JSON.stringify({ ...settings, 'dsh.maxReferences': 1 }));
  const tooMany = editor.locator('.squiggly-error').first();
  await tooMany.waitFor({ timeout: 15000 }).catch(() => {});
  const tmHover = await hoverOver(tooMany);
  check(/too-many-references/.test(tmHover), 'after setting dsh.maxReferences to 1 the second session is flagged (too-many-references)', JSON.stringify(tmHover));
  await shot('07-max-references.png');
  await page.mouse.move(5, 5);
  fs.writeFileSync(settingsFile, JSON.stringify({ ...settings, 'dsh.maxReferences': 9 }));
  const badSetting = await toast(/maxReferences/);
  check(/maxReferences/.test(badSetting) && !/no matching notification/.test(badSetting), 'an invalid dsh.maxReferences is reported naming the key', badSetting);
  fs.writeFileSync(settingsFile, JSON.stringify(settings));

  // 7. a dsh.serverPath that does not exist: an error notification that says what to fix
  await clearToasts();
  fs.writeFileSync(settingsFile, JSON.stringify({ ...settings, 'dsh.serverPath': '/nonexistent/dsh-lsp' }));
  const notFound = await toast(/dsh\.serverPath/);
  check(/points to \/nonexistent\/dsh-lsp, which does not exist/.test(notFound) && /Restart Language Server/.test(notFound),
    'a missing dsh.serverPath gives an error notification with the fix', notFound);
  await shot('08-server-not-found.png');
  fs.writeFileSync(settingsFile, JSON.stringify(settings));

  await browser.close();
});
