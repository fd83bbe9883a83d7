// End-to-end test of the real dsh-lsp binary through Microsoft's LSP client library
// (vscode-languageserver-protocol / vscode-jsonrpc), checked against CONTRACT.md.
//
// Usage: node client.js --bin DSH_LSP --sessions STORE --expected EXPECTED_JSON
//   STORE is a throwaway copy of testdata/fixtures/store-raw; EXPECTED_JSON is
//   testdata/fixtures/expected/store-raw.expected.json.
// Prints one line per named check, then "N passed, M failed"; exits 1 on any failure.
'use strict';
const cp = require('child_process');
const fs = require('fs');
const assert = require('assert');
const {
  createProtocolConnection, StreamMessageReader, StreamMessageWriter,
  InitializeRequest, InitializedNotification, DidOpenTextDocumentNotification,
  DidChangeTextDocumentNotification, CompletionRequest, ExecuteCommandRequest,
  PublishDiagnosticsNotification, ShutdownRequest, ExitNotification,
  CompletionTriggerKind, CompletionItemKind, DiagnosticSeverity, RequestType, NotificationType,
} = require('vscode-languageserver-protocol/node');

const TARGET_CWD = '/home/alice/proj';
const SESSION_A = '0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0001'; // "Renaming git branches"
const SESSION_LEGACY = '0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0004'; // cwd /home/alice/legacy
const UNKNOWN_ID = '0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0999'; // not in the store
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const REQUEST_FAILED = -32803;

const DshPrepareRequest = new RequestType('dsh/prepare');
const DshCandidatesRequest = new RequestType('dsh/candidates');
const DshSetTargetNotification = new NotificationType('dsh/setTarget');

function parseArgs(argv) {
  const out = {};
  for (let i = 0; i < argv.length; i += 2) {
    if (!argv[i].startsWith('--') || argv[i + 1] === undefined) throw new Error(`bad argument ${argv[i]}`);
    out[argv[i].slice(2)] = argv[i + 1];
  }
  for (const k of ['bin', 'sessions', 'expected']) if (!out[k]) throw new Error(`missing --${k}`);
  return out;
}

// ---- checks ----------------------------------------------------------------

let passed = 0;
let failed = 0;
const VERBOSE = process.env.DSH_E2E_VERBOSE === '1';
// trace prints a wire value when DSH_E2E_VERBOSE=1 (to see what the checks looked at).
function trace(what, value) {
  if (VERBOSE) console.log(`     ${what}: ${JSON.stringify(value)}`);
}

// check runs one named assertion; a failure is reported and counted, the run goes on.
async function check(name, fn) {
  try {
    await fn();
    passed++;
    console.log(`ok   ${name}`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${name}\n     ${String(e && e.stack ? e.message : e).split('\n').join('\n     ')}`);
  }
}

function withTimeout(promise, ms, what) {
  let timer;
  const t = new Promise((_, rej) => { timer = setTimeout(() => rej(new Error(`${what}: no answer in ${ms} ms`)), ms); });
  timer.unref();
  return Promise.race([promise, t]).finally(() => clearTimeout(timer));
}

// ---- text helpers ----------------------------------------------------------

// canonicalURI is dsh's encodeSessionReferenceUri: base64url (no padding) of the JSON string.
function canonicalURI(id) {
  return 'dsh-session:' + Buffer.from(JSON.stringify(id), 'utf8').toString('base64url');
}

// column of JS string index idx in line, in the given LSP position encoding.
function column(line, idx, encoding) {
  const head = line.slice(0, idx);
  switch (encoding) {
    case 'utf-8': return Buffer.byteLength(head, 'utf8');
    case 'utf-32': return [...head].length;
    default: return head.length; // JS strings are UTF-16 code units
  }
}

// stringIndex is the inverse of column for UTF-16 (the encoding the main run negotiates).
function stringIndex(line, character) {
  assert.ok(character >= 0 && character <= line.length, `character ${character} outside line of ${line.length} UTF-16 units`);
  return character;
}

// rangeOf is the LSP range of the first occurrence of needle on line lineNo.
function rangeOf(lines, lineNo, needle, encoding) {
  const line = lines[lineNo];
  const i = line.indexOf(needle);
  assert.ok(i >= 0, `${JSON.stringify(needle)} not on line ${lineNo}`);
  return {
    start: { line: lineNo, character: column(line, i, encoding) },
    end: { line: lineNo, character: column(line, i + needle.length, encoding) },
  };
}

// applyCompletion returns line after accepting item at character `cursor` (UTF-16),
// the way a client does: textEdit (TextEdit or InsertReplaceEdit's replace range), else
// insertText/label replacing the QUERY after the '@' that starts the mention.
function applyCompletion(line, lineNo, cursor, item) {
  let edits = [];
  if (item.textEdit) {
    const range = item.textEdit.range || item.textEdit.replace;
    edits.push({ range, newText: item.textEdit.newText });
  } else {
    const at = line.lastIndexOf('@', cursor - 1);
    assert.ok(at >= 0, 'no @ before the cursor');
    edits.push({ range: { start: { line: lineNo, character: at + 1 }, end: { line: lineNo, character: cursor } },
      newText: item.insertText !== undefined ? item.insertText : item.label });
  }
  for (const e of item.additionalTextEdits || []) edits.push(e);
  for (const e of edits) {
    assert.strictEqual(e.range.start.line, lineNo, `edit ${JSON.stringify(e)} not on line ${lineNo}`);
    assert.strictEqual(e.range.end.line, lineNo, `edit ${JSON.stringify(e)} not on line ${lineNo}`);
  }
  // apply from the end so earlier offsets stay valid
  edits.sort((a, b) => b.range.start.character - a.range.start.character);
  for (const e of edits) {
    const s = stringIndex(line, e.range.start.character);
    const t = stringIndex(line, e.range.end.character);
    line = line.slice(0, s) + e.newText + line.slice(t);
  }
  return line;
}

function completionItems(res) {
  if (res === null || res === undefined) return [];
  return Array.isArray(res) ? res : res.items;
}

// ---- server session --------------------------------------------------------

// startServer spawns `dsh-lsp --stdio` and connects the LSP client library to it.
function startServer(opts, tag) {
  const log = fs.openSync(`${opts.logdir}/server-${tag}.log`, 'w');
  const proc = cp.spawn(opts.bin, ['--stdio', '--log-level', 'debug'], { stdio: ['pipe', 'pipe', log] });
  const exited = new Promise((resolve) => proc.on('exit', (code, signal) => resolve({ code, signal, at: Date.now() })));
  const conn = createProtocolConnection(new StreamMessageReader(proc.stdout), new StreamMessageWriter(proc.stdin));
  const publishes = [];
  const waiters = [];
  conn.onNotification(PublishDiagnosticsNotification.type, (p) => {
    publishes.push(p);
    for (const w of waiters.slice()) if (w.pred(p)) { waiters.splice(waiters.indexOf(w), 1); w.resolve(p); }
  });
  const serverRequests = [];
  // Server->client requests, answered like a real client would.
  conn.onRequest((method, params) => {
    serverRequests.push(method);
    if (method === 'workspace/configuration') return (params.items || []).map((it) => (it.section === 'dsh' ? opts.settings : null));
    return null;
  });
  conn.onNotification(() => {}); // window/logMessage, $/progress, window/showMessage ...
  conn.listen();
  // waitDiagnostics resolves with the first publish (already received or future) matching pred.
  function waitDiagnostics(pred, ms, what) {
    const seen = publishes.find(pred);
    if (seen) return Promise.resolve(seen);
    return withTimeout(new Promise((resolve) => waiters.push({ pred, resolve })), ms, what);
  }
  return { proc, conn, exited, publishes, waitDiagnostics, serverRequests };
}

async function initialize(srv, opts, positionEncodings) {
  const general = positionEncodings ? { positionEncodings } : {};
  return srv.conn.sendRequest(InitializeRequest.type, {
    processId: process.pid,
    clientInfo: { name: 'dsh-lsp-e2e-node', version: '1' },
    rootUri: null,
    workspaceFolders: null,
    initializationOptions: opts.settings,
    capabilities: {
      general,
      workspace: { configuration: true, workspaceFolders: true },
      window: { workDoneProgress: true },
      textDocument: {
        synchronization: { dynamicRegistration: false },
        completion: { completionItem: { snippetSupport: false, insertReplaceSupport: false }, contextSupport: true },
        publishDiagnostics: { versionSupport: true },
      },
    },
  });
}

function open(srv, uri, text, version = 1) {
  srv.conn.sendNotification(DidOpenTextDocumentNotification.type,
    { textDocument: { uri, languageId: 'markdown', version, text } });
}

async function shutdownAndExit(srv, label) {
  await check(`${label}: shutdown returns null`, async () => {
    const r = await withTimeout(srv.conn.sendRequest(ShutdownRequest.type), 5000, 'shutdown');
    assert.strictEqual(r, null);
  });
  await check(`${label}: exit ends the process with code 0 within 2 s`, async () => {
    const sent = Date.now();
    srv.conn.sendNotification(ExitNotification.type);
    const ex = await withTimeout(srv.exited, 2000, 'process exit');
    assert.deepStrictEqual({ code: ex.code, signal: ex.signal }, { code: 0, signal: null });
    assert.ok(ex.at - sent <= 2000, `exited after ${ex.at - sent} ms`);
  });
  srv.conn.dispose();
  if (srv.proc.exitCode === null && srv.proc.signalCode === null) srv.proc.kill('SIGKILL');
}

// ---- the diagnostics document (shared by both runs) ------------------------

const BROKEN = '@[x](dsh-session:%%%)';
const UNKNOWN = `@[Ghost](${canonicalURI(UNKNOWN_ID)})`;
const DIAG_LINES = [
  '# prompt',
  `日本語 🙂 ${BROKEN}`,
  `ask 🙂🙂 ${UNKNOWN} please`,
  '',
];

async function checkDiagnostics(srv, uri, encoding, label) {
  let pub;
  await check(`${label}: didOpen publishes diagnostics`, async () => {
    pub = await srv.waitDiagnostics((p) => p.uri === uri, 5000, 'publishDiagnostics after didOpen');
  });
  if (!pub) return;
  trace(`${label} publish`, pub);
  const byCode = (code) => pub.diagnostics.filter((d) => d.code === code);
  await check(`${label}: exactly one invalid-uri and one unknown-session diagnostic, source "dsh"`, async () => {
    assert.deepStrictEqual(pub.diagnostics.map((d) => d.code).sort(), ['invalid-uri', 'unknown-session'],
      JSON.stringify(pub.diagnostics));
    for (const d of pub.diagnostics) assert.strictEqual(d.source, 'dsh');
  });
  await check(`${label}: invalid-uri is an Error over the broken mention (${encoding} columns)`, async () => {
    const [d] = byCode('invalid-uri');
    assert.ok(d, 'no invalid-uri diagnostic');
    assert.strictEqual(d.severity, DiagnosticSeverity.Error);
    assert.deepStrictEqual(d.range, rangeOf(DIAG_LINES, 1, BROKEN, encoding));
    assert.ok(typeof d.message === 'string' && d.message.length > 0, 'empty message');
  });
  await check(`${label}: unknown-session is a Warning over the mention (${encoding} columns)`, async () => {
    const [d] = byCode('unknown-session');
    assert.ok(d, 'no unknown-session diagnostic');
    assert.strictEqual(d.severity, DiagnosticSeverity.Warning);
    assert.deepStrictEqual(d.range, rangeOf(DIAG_LINES, 2, UNKNOWN, encoding));
  });
}

// ---- runs ------------------------------------------------------------------

// runUTF8: a client offering utf-8 gets utf-8, and diagnostic columns count bytes.
async function runUTF8(opts) {
  const srv = startServer(opts, 'utf8');
  let init;
  await check('utf-8 run: initialize succeeds', async () => {
    init = await withTimeout(initialize(srv, opts, ['utf-8', 'utf-16']), 10000, 'initialize');
  });
  if (init) {
    await check('utf-8 run: positionEncoding negotiated to utf-8 when offered ["utf-8","utf-16"]', async () => {
      assert.strictEqual(init.capabilities.positionEncoding, 'utf-8');
    });
    srv.conn.sendNotification(InitializedNotification.type, {});
    open(srv, 'file:///home/alice/proj/utf8.md', DIAG_LINES.join('\n'));
    await checkDiagnostics(srv, 'file:///home/alice/proj/utf8.md', 'utf-8', 'utf-8 run');
  }
  await shutdownAndExit(srv, 'utf-8 run');
}

async function runMain(opts, cli, expected) {
  const srv = startServer(opts, 'main');
  const { conn } = srv;
  let init;
  await check('initialize succeeds', async () => {
    init = await withTimeout(initialize(srv, opts, null), 10000, 'initialize');
  });
  if (!init) { srv.proc.kill('SIGKILL'); return; }
  const caps = init.capabilities;
  await check('positionEncoding is utf-16 when the client offers none', async () => {
    // LSP: an omitted positionEncoding means utf-16; the contract says utf-16.
    assert.ok(caps.positionEncoding === 'utf-16' || caps.positionEncoding === undefined,
      `positionEncoding ${JSON.stringify(caps.positionEncoding)}`);
  });
  await check('completionProvider.triggerCharacters includes "@"', async () => {
    assert.ok(caps.completionProvider, 'no completionProvider');
    assert.ok((caps.completionProvider.triggerCharacters || []).includes('@'),
      JSON.stringify(caps.completionProvider.triggerCharacters));
  });
  await check('executeCommandProvider.commands includes dsh.prepare', async () => {
    assert.ok(caps.executeCommandProvider, 'no executeCommandProvider');
    assert.ok(caps.executeCommandProvider.commands.includes('dsh.prepare'),
      JSON.stringify(caps.executeCommandProvider.commands));
  });
  conn.sendNotification(InitializedNotification.type, {});

  // -- diagnostics: open, then fix with an incremental change
  const diagURI = 'file:///home/alice/proj/diag.md';
  open(srv, diagURI, DIAG_LINES.join('\n'));
  await checkDiagnostics(srv, diagURI, 'utf-16', 'diagnostics');
  await check('didChange fixing both mentions clears the diagnostics', async () => {
    const good = canonicalURI(SESSION_A);
    // Incremental edits in UTF-16 columns, last one first (each applies to the result of the previous).
    const r1 = rangeOf(DIAG_LINES, 2, canonicalURI(UNKNOWN_ID), 'utf-16');
    const r0 = rangeOf(DIAG_LINES, 1, 'dsh-session:%%%', 'utf-16');
    const incremental = (caps.textDocumentSync && (caps.textDocumentSync.change ?? caps.textDocumentSync)) === 2;
    const changes = incremental
      ? [{ range: r1, text: good }, { range: r0, text: good }]
      : [{ text: DIAG_LINES.join('\n').replace('dsh-session:%%%', good).replace(canonicalURI(UNKNOWN_ID), good) }];
    conn.sendNotification(DidChangeTextDocumentNotification.type, { textDocument: { uri: diagURI, version: 2 }, contentChanges: changes });
    const p = await srv.waitDiagnostics((q) => q.uri === diagURI && q.diagnostics.length === 0 && (q.version === undefined || q.version === 2),
      5000, 'empty publishDiagnostics after the fix');
    assert.deepStrictEqual(p.diagnostics, []);
  });

  // -- completion
  const compURI = 'file:///home/alice/proj/complete.md';
  const compLines = ['Compare with 日本語 🙂 @', 'mail a@', 'mail a@b', 'see @legacy', 'cwd @scratch', ''];
  open(srv, compURI, compLines.join('\n'));
  const complete = (line, kind) => withTimeout(conn.sendRequest(CompletionRequest.type, {
    textDocument: { uri: compURI }, position: { line, character: compLines[line].length },
    context: kind === 2 ? { triggerKind: CompletionTriggerKind.TriggerCharacter, triggerCharacter: '@' }
      : { triggerKind: CompletionTriggerKind.Invoked },
  }), 10000, 'completion');
  let atItems;
  await check('completion after "@" returns a CompletionList', async () => {
    const res = await complete(0, 2);
    assert.ok(res && !Array.isArray(res) && Array.isArray(res.items), `not a CompletionList: ${JSON.stringify(res).slice(0, 200)}`);
    atItems = res.items;
    trace('first completion item', res.items[0]);
  });
  await check('completion items follow `dsh-lsp candidates` order (each item inserts its candidate\'s mention)', async () => {
    assert.ok(atItems, 'no items');
    const prefix = compLines[0].slice(0, -1);
    const got = atItems.map((it) => applyCompletion(compLines[0], 0, compLines[0].length, it));
    assert.deepStrictEqual(got, cli.all.map((c) => prefix + c.mention));
  });
  await check('accepting the first item yields exactly the first candidate\'s mention', async () => {
    assert.ok(atItems && atItems.length > 0, 'no items');
    const line = applyCompletion(compLines[0], 0, compLines[0].length, atItems[0]);
    assert.strictEqual(line.slice(compLines[0].length - 1), cli.all[0].mention);
    assert.strictEqual(line.slice(0, compLines[0].length - 1), compLines[0].slice(0, -1), 'text before @ changed');
  });
  await check('a client that ignores textEdit (inserts insertText after "@") gets the same mention', async () => {
    assert.ok(atItems && atItems.length > 0, 'no items');
    const { textEdit, ...plain } = atItems[0];
    assert.ok(plain.insertText !== undefined, 'no insertText');
    const line = applyCompletion(compLines[0], 0, compLines[0].length, plain);
    assert.strictEqual(line.slice(compLines[0].length - 1), cli.all[0].mention);
  });
  await check('completion order survives client-side sorting by sortText', async () => {
    assert.ok(atItems && atItems.length > 1, 'fewer than 2 items');
    const key = (it) => (it.sortText !== undefined ? it.sortText : it.label);
    const sorted = atItems.slice().sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
    assert.deepStrictEqual(sorted.map(key), atItems.map(key));
  });
  await check('completion items: kind Reference, detail names the cwd (or "no cwd")', async () => {
    assert.ok(atItems && atItems.length === cli.all.length, 'item count differs from the CLI');
    atItems.forEach((it, i) => {
      assert.strictEqual(it.kind, CompletionItemKind.Reference, `item ${i} kind`);
      const cwd = cli.all[i].cwd;
      assert.ok(typeof it.detail === 'string' && it.detail.includes(cwd || 'no cwd'), `item ${i} detail ${JSON.stringify(it.detail)}`);
    });
  });
  await check('completion mid-word ("a@" typed, "a@b" invoked) returns no items', async () => {
    assert.deepStrictEqual(completionItems(await complete(1, 2)), []);
    assert.deepStrictEqual(completionItems(await complete(2, 1)), []);
  });
  await check('completion of "@legacy" returns the legacy session', async () => {
    const items = completionItems(await complete(3, 1));
    assert.deepStrictEqual(cli.legacy.map((c) => c.sessionId), [SESSION_LEGACY], 'CLI candidates legacy');
    const got = items.map((it) => applyCompletion(compLines[3], 3, compLines[3].length, it));
    assert.deepStrictEqual(got, cli.legacy.map((c) => 'see ' + c.mention));
  });

  await check('completion of "@scratch" (a cwd match) survives client-side filtering', async () => {
    const items = completionItems(await complete(4, 1));
    const bob = cli.scratch;
    assert.deepStrictEqual(bob.map((c) => c.cwd), ['/home/bob/scratch'], 'CLI candidates scratch');
    assert.deepStrictEqual(items.map((it) => applyCompletion(compLines[4], 4, compLines[4].length, it)),
      bob.map((c) => 'cwd ' + c.mention));
    // A client keeps an item when the typed QUERY fuzzy-matches its filterText (label if absent).
    const f = (items[0].filterText !== undefined ? items[0].filterText : items[0].label).toLowerCase();
    let j = 0;
    for (const ch of f) if (ch === 'scratch'[j]) j++;
    assert.strictEqual(j, 'scratch'.length, `filterText ${JSON.stringify(f)} does not match "scratch"`);
  });

  // -- prepare
  const expA = expected.sessions.find((s) => s.header.id === SESSION_A);
  const wantPrompt = expA.references.find((r) => r.maxReferenceBytes === 65536).prompt;
  const mention = `@[Renaming git branches](${canonicalURI(SESSION_A)})`;
  const prepText = `What did we decide in ${mention}? Summarise it.`;
  const prepURI = 'file:///home/alice/proj/prepare.md';
  open(srv, prepURI, prepText);
  let fromCommand;
  await check('workspace/executeCommand dsh.prepare: context text equals the dsh reference prompt', async () => {
    assert.strictEqual(expA.label, 'Renaming git branches');
    fromCommand = await withTimeout(conn.sendRequest(ExecuteCommandRequest.type,
      { command: 'dsh.prepare', arguments: [{ textDocument: { uri: prepURI } }] }), 10000, 'dsh.prepare');
    assert.ok(fromCommand && fromCommand.contextMessage, `no contextMessage: ${JSON.stringify(fromCommand).slice(0, 300)}`);
    assert.strictEqual(fromCommand.contextMessage.content[0].type, 'text');
    assert.strictEqual(fromCommand.contextMessage.content[0].text, wantPrompt);
  });
  await check('dsh.prepare: content, references, source and role', async () => {
    assert.ok(fromCommand, 'no result');
    assert.strictEqual(fromCommand.content, 'What did we decide in @Renaming git branches? Summarise it.');
    assert.deepStrictEqual(fromCommand.references, [{ sessionId: SESSION_A, label: 'Renaming git branches' }]);
    const m = fromCommand.contextMessage;
    assert.strictEqual(m.role, 'user');
    assert.strictEqual(m.source.kind, 'session-reference');
    assert.strictEqual(m.source.form, 'recall');
    assert.strictEqual(m.source.version, 1);
  });
  await check('dsh.prepare: contextMessage.id is a UUID v4', async () => {
    assert.ok(fromCommand, 'no result');
    assert.match(fromCommand.contextMessage.id, UUID_V4);
  });
  await check('dsh/prepare {text} gives the same context text (and a fresh id)', async () => {
    const r = await withTimeout(conn.sendRequest(DshPrepareRequest, { text: prepText }), 10000, 'dsh/prepare');
    assert.ok(r && r.contextMessage, 'no contextMessage');
    assert.strictEqual(r.contextMessage.content[0].text, wantPrompt);
    assert.match(r.contextMessage.id, UUID_V4);
    if (fromCommand) assert.notStrictEqual(r.contextMessage.id, fromCommand.contextMessage.id);
  });
  await check('dsh/prepare of text without mentions has no contextMessage', async () => {
    const r = await withTimeout(conn.sendRequest(DshPrepareRequest, { text: 'plain text, no mention' }), 10000, 'dsh/prepare');
    assert.strictEqual(r.contextMessage, undefined);
    assert.deepStrictEqual(r.references, []);
  });
  await check('self-reference (target set by dsh/setTarget) fails with -32803 SESSION_REFERENCE_SELF_REFERENCE', async () => {
    conn.sendNotification(DshSetTargetNotification, { textDocument: { uri: prepURI }, target: { sessionId: SESSION_A, cwd: TARGET_CWD } });
    for (const [what, send] of [
      ['workspace/executeCommand', () => conn.sendRequest(ExecuteCommandRequest.type, { command: 'dsh.prepare', arguments: [{ textDocument: { uri: prepURI } }] })],
      ['dsh/prepare', () => conn.sendRequest(DshPrepareRequest, { textDocument: { uri: prepURI } })],
    ]) {
      let err;
      try {
        const r = await withTimeout(send(), 10000, what);
        assert.fail(`${what}: succeeded: ${JSON.stringify(r).slice(0, 200)}`);
      } catch (e) {
        if (e instanceof assert.AssertionError) throw e;
        err = e;
      }
      assert.strictEqual(err.code, REQUEST_FAILED, `${what}: code ${err.code}: ${err.message}`);
      assert.strictEqual(err.data && err.data.code, 'SESSION_REFERENCE_SELF_REFERENCE', `${what}: data ${JSON.stringify(err.data)}`);
    }
  });

  // -- dsh/candidates
  let cands;
  await check('dsh/candidates items carry sessionId, label, createdAt, uri, mention', async () => {
    cands = await withTimeout(conn.sendRequest(DshCandidatesRequest, {}), 10000, 'dsh/candidates');
    assert.ok(Array.isArray(cands) && cands.length > 0, JSON.stringify(cands));
    for (const c of cands) {
      assert.strictEqual(typeof c.sessionId, 'string');
      assert.strictEqual(typeof c.label, 'string');
      assert.strictEqual(typeof c.createdAt, 'number');
      assert.strictEqual(c.uri, canonicalURI(c.sessionId));
      assert.strictEqual(typeof c.mention, 'string');
      assert.ok(c.mention.endsWith(`](${c.uri})`) && c.mention.startsWith('@['), c.mention);
    }
  });
  await check('dsh/candidates equals `dsh-lsp candidates` for the same store and target', async () => {
    assert.deepStrictEqual(cands, cli.all);
  });

  await shutdownAndExit(srv, 'main run');
  if (srv.serverRequests.length) console.log(`     (server->client requests answered: ${[...new Set(srv.serverRequests)].join(', ')})`);
}

// snapshotTree maps every path under root to its type, mode and content hash.
function snapshotTree(root) {
  const out = {};
  const walk = (rel) => {
    for (const e of fs.readdirSync(`${root}/${rel}`, { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      const st = fs.lstatSync(`${root}/${r}`);
      if (e.isDirectory()) { out[r] = `dir ${st.mode}`; walk(r); continue; }
      const hash = e.isFile() ? require('crypto').createHash('sha256').update(fs.readFileSync(`${root}/${r}`)).digest('hex') : '';
      out[r] = `${e.isFile() ? 'file' : 'other'} ${st.mode} ${hash}`;
    }
  };
  walk('');
  return out;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  opts.logdir = process.env.DSH_E2E_LOGDIR || fs.mkdtempSync('/tmp/dsh-node-e2e-logs-');
  opts.settings = { sessionsDir: opts.sessions, target: { cwd: TARGET_CWD } };
  const expected = JSON.parse(fs.readFileSync(opts.expected, 'utf8'));
  const candidates = (...query) => JSON.parse(cp.execFileSync(opts.bin,
    ['candidates', '--sessions', opts.sessions, '--target-cwd', TARGET_CWD, ...query], { encoding: 'utf8' }));
  const cli = { all: candidates(), legacy: candidates('legacy'), scratch: candidates('scratch') };
  if (cli.all.length === 0) throw new Error('`dsh-lsp candidates` listed no session');

  const before = snapshotTree(opts.sessions);
  await runUTF8(opts);
  await runMain(opts, cli, expected);
  await check('the store is unchanged after both runs (the server only reads it)', async () => {
    assert.deepStrictEqual(snapshotTree(opts.sessions), before);
  });
  console.log(`${passed} passed, ${failed} failed`);
  if (failed) console.log(`server logs: ${opts.logdir}`);
  process.exitCode = failed ? 1 : 0;
}

main().catch((e) => {
  console.log(`FAIL (aborted) ${e && e.stack ? e.stack : e}`);
  console.log(`${passed} passed, ${failed + 1} failed`);
  process.exitCode = 1;
});
