// Chat-input part of the end-to-end test: in VS Code >= 1.127 (code-server 4.133) the chat
// input is a text document of scheme `chatSessionInput`, which the extension's document
// selector hands to dsh-lsp. Called by e2e.sh; prints PASS/FAIL lines and
// "N passed, M failed". Environment as e2e-ui.js.
'use strict';
const path = require('path');
const { url, shots, sessionWhere, mentionOf, contextOf, tally, poll, launch, run } = require('./driver');

const session = sessionWhere('legacy');
const label = session.label;
const mention = mentionOf(session);

const d = tally('chat');
const { log, check } = d;

run(d, 'chat UI driver', async () => {
  const { browser, page, shot } = await launch();

  await page.goto(url);
  await page.waitForSelector('.explorer-folders-view .monaco-list-row', { timeout: 90000 });
  log('workbench loaded');
  // Open a .dshchat file first: it activates the extension, and its diagnostics show
  // that dsh-lsp is up before the chat input is tried.
  await page.locator('.explorer-folders-view .monaco-list-row', { hasText: 'broken.dshchat' }).first().click();
  await page.locator('.monaco-editor .squiggly-error').first().waitFor({ timeout: 30000 }).catch(() => {});
  check((await page.locator('.monaco-editor .squiggly-error').count()) > 0, 'dsh-lsp is up (squiggle in broken.dshchat)');

  await page.keyboard.press('F1');
  await page.locator('.quick-input-widget input').fill('>Chat: Open Chat');
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Chat: Open Chat' }).first().waitFor();
  await page.keyboard.press('Enter');
  const input = page.locator('.interactive-input-editor .monaco-editor').first();
  await input.waitFor({ timeout: 20000 }).catch(() => {});
  check((await input.count()) > 0, 'the chat view opens with its input editor');
  await input.click();
  await page.keyboard.type('hello @legacy', { delay: 80 });
  const row = page.locator('.editor-widget.suggest-widget.visible .monaco-list-row', { hasText: label });
  await row.first().waitFor({ timeout: 20000 }).catch(() => {});
  const rows = await page.locator('.editor-widget.suggest-widget.visible .monaco-list-row').allInnerTexts().catch(() => []);
  check((await row.count()) > 0, `chat input: the suggest widget lists "${label}" after typing @legacy`, JSON.stringify(rows));
  await shot('chat-01-completion.png');
  await page.screenshot({ path: path.join(shots, 'readme-chat-input.png'), clip: { x: 925, y: 730, width: 475, height: 145 } });
  if (await row.count()) await row.first().click();
  // the input wraps long lines, so read the text through the clipboard, not the DOM; copy
  // again until the accepted mention has landed in the input
  const text = await poll(async () => {
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Control+C');
    const t = await page.evaluate(() => navigator.clipboard.readText());
    return t.includes('](dsh-session:') ? t : '';
  }, 10000, 250);
  await page.keyboard.press('End');
  check(text === 'hello ' + mention, 'chat input: accepting inserts exactly the canonical mention', JSON.stringify(text));
  await page.keyboard.type(' and @[x](dsh-session:%%%)', { delay: 20 });
  const sq = input.locator('.squiggly-error').first();
  await sq.waitFor({ timeout: 10000 }).catch(() => {});
  check((await sq.count()) > 0, 'chat input: a broken mention gets an error squiggle');
  await shot('chat-02-diagnostic.png');

  // The @dsh participant, answered by the echo model (test/echo-lm): it must have been sent
  // the context message first, then the readable prompt. Session G ("scratch") is one whose
  // context the reference implementation's expected.json gives exactly.
  const other = sessionWhere('scratch');
  const otherMention = `@[${other.label.replace(/[\\\]]/g, (c) => '\\' + c)}](${other.uri})`;
  const gWant = contextOf(other);
  async function ask(text) {
    await input.click();
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Delete');
    await page.keyboard.type(text, { delay: 5 });
    await page.keyboard.press('Escape'); // close any suggest widget
    const before = await page.locator('.interactive-item-container.interactive-response').count();
    await page.keyboard.press('Enter');
    const answer = page.locator('.interactive-item-container.interactive-response').nth(before);
    return poll(async () => {
      const t = await answer.innerText();
      return /ECHO-B64 [A-Za-z0-9+/=]+ ECHO-END|SESSION_REFERENCE_\w+\)|unavailable|failed/.test(t) ? t : '';
    }, 30000).then((t) => t || page.locator('.interactive-list').innerText().catch(() => ''));
  }
  const answer = await ask(`@dsh what about ${otherMention}?`);
  const b64 = /ECHO-B64 ([A-Za-z0-9+/=]+) ECHO-END/.exec(answer);
  let sent = null;
  try {
    sent = b64 ? JSON.parse(Buffer.from(b64[1], 'base64').toString('utf8')) : null;
  } catch (e) {
    sent = String(e);
  }
  check(Array.isArray(sent) && sent.length === 2, '@dsh sends two messages to the model', JSON.stringify(answer.slice(0, 300)));
  check(Array.isArray(sent) && sent[0] === gWant, '@dsh: the first message is the context message, byte for byte as expected.json',
    JSON.stringify(Array.isArray(sent) ? String(sent[0]).slice(0, 300) : sent));
  check(Array.isArray(sent) && sent[1] === `what about @${other.label}?`, '@dsh: the second message is the readable prompt',
    JSON.stringify(Array.isArray(sent) ? sent[1] : sent));
  check(answer.includes('Referenced sessions:') && answer.includes(other.header.id), '@dsh lists the referenced session', JSON.stringify(answer.slice(0, 300)));
  await shot('chat-03-participant.png');
  // the listed reference opens that session's context snapshot (a dsh-prepared: document)
  const answerEl = page.locator('.interactive-item-container.interactive-response').last();
  await answerEl.locator('.chat-used-context-label a').first().evaluate((el) => el.click()).catch(() => {});
  const refRow = answerEl.locator('.chat-used-context-list .monaco-list-row').first();
  await refRow.waitFor({ timeout: 5000 }).catch(() => {});
  if (await refRow.count()) await refRow.dispatchEvent('click');
  const refTab = page.locator('.tabs-container .tab.active', { hasText: `${other.label}.md` });
  await refTab.first().waitFor({ timeout: 10000 }).catch(() => {});
  const refText = await poll(async () => {
    const t = (await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().innerText()).replace(/\u00a0/g, ' ');
    return t.includes('</referenced-sessions>') ? t : '';
  }, 10000);
  check((await refTab.count()) > 0 && Boolean(refText) && refText.startsWith('## Referenced sessions') && refText.includes(`"sessionId":"${other.header.id}"`),
    '@dsh: the listed reference opens the session\'s context snapshot', JSON.stringify((refText || '').slice(0, 200)));
  // a hover left open over the chat input ("Enable current file context", shown late on
  // a loaded machine) would take the click: move away and wait until it is gone
  await page.mouse.move(5, 5);
  await page.keyboard.press('Escape');
  await page.locator('.context-view .hover-contents').waitFor({ state: 'hidden', timeout: 10000 }).catch(() => {});
  await input.click();
  const bad = await ask('@dsh see @[x](dsh-session:%%%)');
  check(/SESSION_REFERENCE_INVALID_REFERENCE/.test(bad) && /invalid session reference URI/.test(bad) && !/\n\s+at /.test(bad),
    '@dsh shows the dsh error (message and code, no stack) for a broken mention', JSON.stringify(bad.slice(-300)));
  await shot('chat-04-participant-error.png');

  await browser.close();
});
