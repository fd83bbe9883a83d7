#!/usr/bin/env node
// End-to-end test of `dsh-lsp mcp` through the official TypeScript MCP client
// (@modelcontextprotocol/sdk, pinned in package-lock.json): the client spawns the
// server over stdio, lists and calls every tool, reads resources, sends bad input
// (each must be a tool error carrying dsh's code, and the server must keep serving),
// and sees notifications/resources/list_changed when a session leaves the store.
// Every answer is compared with the dsh-lsp command line on the same store.
//
// Usage: node client.js --bin DSH_LSP --sessions STORE_COPY
// Prints one line per check and "N passed, M failed"; exits 1 on any failure.
'use strict';

const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { ResourceListChangedNotificationSchema } = require('@modelcontextprotocol/sdk/types.js');

const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
const bin = args.bin;
const store = args.sessions;
const targetCwd = '/home/alice/proj';
const common = ['--sessions', store, '--target-cwd', targetCwd];

let passed = 0;
let failed = 0;
function check(name, ok, detail) {
  if (ok) {
    passed++;
    console.log(`PASS ${name}`);
  } else {
    failed++;
    console.log(`FAIL ${name}${detail === undefined ? '' : ': ' + detail}`);
  }
}

// cli runs the dsh-lsp command line and returns its JSON output.
function cli(...argv) {
  let out;
  try {
    out = execFileSync(bin, [argv[0], ...common, ...argv.slice(1)], { encoding: 'utf8' });
  } catch (e) {
    out = e.stdout; // exit 1: the error JSON
  }
  return JSON.parse(out);
}

const texts = (res) => (res.content || []).map((c) => c.text);
const show = (v) => JSON.stringify(v).slice(0, 400);

// waitFor polls cond (an async predicate) until it holds or timeoutMs passes.
async function waitFor(cond, timeoutMs) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await cond()) return true;
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function main() {
  const stderrLines = [];
  const transport = new StdioClientTransport({
    command: bin,
    args: ['mcp', ...common],
    env: { ...process.env },
    stderr: 'pipe',
  });
  transport.stderr.on('data', (d) => stderrLines.push(String(d)));
  const client = new Client({ name: 'dsh-lsp-e2e', version: '1.0.0' });
  let listChanged = 0;
  client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
    listChanged++;
  });

  // initialize
  await client.connect(transport);
  const info = client.getServerVersion();
  const caps = client.getServerCapabilities();
  check('initialize: server dsh-lsp with tools and resources (listChanged)',
    info && info.name === 'dsh-lsp' && caps.tools && caps.resources && caps.resources.listChanged === true, show({ info, caps }));

  // tools/list
  const tools = (await client.listTools()).tools;
  const names = tools.map((t) => t.name).sort();
  check('tools/list: dsh_prepare, dsh_read_session, dsh_search_sessions',
    JSON.stringify(names) === JSON.stringify(['dsh_prepare', 'dsh_read_session', 'dsh_search_sessions']), show(names));
  check('every tool description says session content is untrusted background',
    tools.every((t) => /UNTRUSTED background/.test(t.description) && t.annotations && t.annotations.readOnlyHint === true),
    show(tools.map((t) => t.description)));

  // dsh_search_sessions == dsh-lsp candidates
  const cands = cli('candidates');
  let res = await client.callTool({ name: 'dsh_search_sessions', arguments: {} });
  check('dsh_search_sessions {} equals `dsh-lsp candidates` byte for byte',
    !res.isError && texts(res).length === 1 && texts(res)[0] === JSON.stringify(cands), show(texts(res)));
  res = await client.callTool({ name: 'dsh_search_sessions', arguments: { query: 'GIT', limit: 1 } });
  check('dsh_search_sessions {query: "GIT", limit: 1} equals `dsh-lsp candidates --limit 1 GIT`',
    !res.isError && texts(res)[0] === JSON.stringify(cli('candidates', '--limit', '1', 'GIT')), show(texts(res)));
  check('dsh_search_sessions structuredContent holds the candidates',
    JSON.stringify(res.structuredContent) === JSON.stringify({ candidates: cli('candidates', '--limit', '1', 'GIT') }), show(res.structuredContent));

  // resources/list and resource templates
  const resources = (await client.listResources()).resources;
  check('resources/list: the recent sessions in candidate order, named by label',
    JSON.stringify(resources.map((r) => [r.uri, r.name])) === JSON.stringify(cands.map((c) => [c.uri, c.label])),
    show(resources.map((r) => r.uri)));
  const templates = (await client.listResourceTemplates()).resourceTemplates;
  check('resources/templates/list: one dsh-session: template',
    templates.length === 1 && templates[0].uriTemplate.startsWith('dsh-session:'), show(templates));

  // dsh_read_session and resources/read == the context message of a prompt citing the session
  let readOK = true;
  let resourceOK = true;
  let detail = '';
  let readable = 0;
  for (const c of cands) {
    const want = cli('prepare', '--', 'about ' + c.mention);
    const byURI = await client.callTool({ name: 'dsh_read_session', arguments: { uri: c.uri } });
    const byID = await client.callTool({ name: 'dsh_read_session', arguments: { sessionId: c.sessionId } });
    if (want.error) {
      // e.g. a session that cannot fit the budget: the same dsh error
      if (!byURI.isError || !texts(byURI)[0].startsWith(want.error.code + ': ') || !byID.isError) {
        readOK = false;
        detail += `${c.sessionId}: ${show(texts(byURI))} vs CLI ${show(want.error)}; `;
      }
      continue;
    }
    readable++;
    const text = want.contextMessage.content[0].text;
    if (byURI.isError || texts(byURI).length !== 1 || texts(byURI)[0] !== text || texts(byID)[0] !== text) {
      readOK = false;
      detail += `${c.sessionId}: ${show(texts(byURI))}; `;
    }
    const rr = await client.readResource({ uri: c.uri });
    if (rr.contents.length !== 1 || rr.contents[0].text !== text || rr.contents[0].uri !== c.uri) {
      resourceOK = false;
    }
  }
  check(`dsh_read_session {uri} and {sessionId} equal the CLI's context message for each of ${cands.length} sessions`,
    readOK && readable > 0, detail);
  check('resources/read of each session equals the same context message', resourceOK && readable > 0);
  const small = cli('prepare', '--max-reference-bytes', '1500', '--', 'about ' + cands[0].mention);
  res = await client.callTool({ name: 'dsh_read_session', arguments: { uri: cands[0].uri, maxBytes: 1500 } });
  check('dsh_read_session {maxBytes: 1500} equals `dsh-lsp prepare --max-reference-bytes 1500`',
    small.contextMessage ? texts(res)[0] === small.contextMessage.content[0].text
      : res.isError && texts(res)[0].startsWith(small.error.code), show(texts(res)));

  // dsh_prepare == dsh-lsp prepare
  const prompt = `compare ${cands[0].mention} with ${cands[1].mention}`;
  const want = cli('prepare', '--', prompt);
  res = await client.callTool({ name: 'dsh_prepare', arguments: { text: prompt } });
  check('dsh_prepare: readable text and the exact context message text, as `dsh-lsp prepare`',
    !res.isError && texts(res).length === 2 && texts(res)[0] === want.content && texts(res)[1] === want.contextMessage.content[0].text,
    show(texts(res)));
  const sc = res.structuredContent || {};
  check('dsh_prepare structuredContent: content, references and contextMessage as the CLI gives them',
    sc.content === want.content && JSON.stringify(sc.references) === JSON.stringify(want.references) &&
    sc.contextMessage && JSON.stringify(sc.contextMessage.source) === JSON.stringify(want.contextMessage.source) &&
    sc.contextMessage.content[0].text === want.contextMessage.content[0].text, show(sc));

  // Bad input: a tool error carrying dsh's code; the server keeps serving.
  const unknownURI = 'dsh-session:' + Buffer.from(JSON.stringify('no-such-session')).toString('base64url');
  const four = cands.slice(0, 2).map((c) => c.mention).join(' ') + ` @[x](dsh-session:${Buffer.from('"x"').toString('base64url')})` +
    ` @[y](dsh-session:${Buffer.from('"y"').toString('base64url')})`;
  const bad = [
    ['unknown session (sessionId)', 'dsh_read_session', { sessionId: 'no-such-session' }, 'SESSION_REFERENCE_READ_FAILED'],
    ['unknown session (uri)', 'dsh_read_session', { uri: unknownURI }, 'SESSION_REFERENCE_READ_FAILED'],
    ['malformed URI', 'dsh_read_session', { uri: 'dsh-session:%%%' }, 'SESSION_REFERENCE_INVALID_REFERENCE'],
    ['non-canonical URI', 'dsh_read_session', { uri: 'dsh-session:eyJhIjoxfQ' }, 'SESSION_REFERENCE_INVALID_REFERENCE'],
    ['four references', 'dsh_prepare', { text: four }, 'SESSION_REFERENCE_TOO_MANY'],
    ['a malformed mention', 'dsh_prepare', { text: 'see @[x](dsh-session:%%%)' }, 'SESSION_REFERENCE_INVALID_REFERENCE'],
    ['a non-string query', 'dsh_search_sessions', { query: 42 }, 'SESSION_REFERENCE_INVALID_CONFIG'],
    ['a non-integer limit', 'dsh_search_sessions', { limit: 1.5 }, 'SESSION_REFERENCE_INVALID_REFERENCE'],
    ['an oversized text (1 MiB + 1)', 'dsh_prepare', { text: 'a'.repeat(1024 * 1024 + 1) }, 'SESSION_REFERENCE_INVALID_CONFIG'],
    ['no text', 'dsh_prepare', {}, 'SESSION_REFERENCE_INVALID_CONFIG'],
    ['maxBytes over the server limit', 'dsh_read_session', { uri: cands[0].uri, maxBytes: 1e9 }, 'SESSION_REFERENCE_INVALID_CONFIG'],
  ];
  for (const [what, tool, input, code] of bad) {
    let r;
    try {
      r = await client.callTool({ name: tool, arguments: input });
    } catch (e) {
      r = { thrown: String(e) };
    }
    const t = texts(r);
    const sc = r.structuredContent || {};
    const ok = r.isError === true && t.length === 1 && t[0].startsWith(code + ': ') && sc.error && sc.error.code === code;
    const again = await client.callTool({ name: 'dsh_search_sessions', arguments: { limit: 1 } }).catch((e) => ({ thrown: String(e) }));
    check(`${what}: ${tool} gives a ${code} tool error, and the server keeps serving`,
      ok && !again.isError && texts(again)[0] === JSON.stringify(cands.slice(0, 1)), show({ r: t, sc, again: texts(again) }));
  }
  let rerr = '';
  await client.readResource({ uri: 'dsh-session:%%%' }).catch((e) => { rerr = String(e); });
  check('resources/read of a malformed dsh-session: URI fails with INVALID_REFERENCE', rerr.includes('SESSION_REFERENCE_INVALID_REFERENCE'), rerr);

  // notifications/resources/list_changed when the store changes
  const last = cands[cands.length - 1];
  const dir = fs.readdirSync(store).find((p) => fs.existsSync(path.join(store, p, last.sessionId)));
  const aside = fs.mkdtempSync(path.join(path.dirname(store), 'aside-'));
  fs.renameSync(path.join(store, dir), path.join(aside, dir));
  const before = listChanged;
  const gone = await waitFor(async () => listChanged > before &&
    !(await client.listResources()).resources.some((r) => r.uri === last.uri), 30000);
  check('a session removed from the store: notifications/resources/list_changed, and it leaves resources/list', gone,
    `notifications ${listChanged - before}`);
  fs.renameSync(path.join(aside, dir), path.join(store, dir));
  const n = listChanged;
  const back = await waitFor(async () => listChanged > n &&
    (await client.listResources()).resources.some((r) => r.uri === last.uri), 30000);
  check('the session back in the store: list_changed again, and it is listed again', back, `notifications ${listChanged - n}`);

  await client.close();
  if (failed > 0) console.log('server stderr:\n' + stderrLines.join('').slice(-3000));
}

main()
  .catch((e) => check('the MCP session ran to the end', false, e && e.stack))
  .finally(() => {
    console.log(`${passed} passed, ${failed} failed`);
    process.exit(failed > 0 || passed === 0 ? 1 : 0);
  });
