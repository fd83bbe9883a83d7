// Test-only probe for the language-model tools and the dsh-session: document links of the
// dsh extension (run by test/e2e-lm-tools.js). When the workspace holds
// .dsh-lm-probe/request.json ({"uri": "dsh-session:…", "linksFile": "x.dshchat"}) it
//  - waits until vscode.lm.tools lists dsh_search_sessions and dsh_read_session,
//  - invokes both through vscode.lm.invokeTool (read: by uri, then a malformed uri),
//  - asks VS Code for the document links of linksFile and opens the first link's target,
// and writes everything to .dsh-lm-probe/result.json (written last, atomically).
'use strict';
const fs = require('fs');
const path = require('path');
const vscode = require('vscode');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitFor(fn, timeoutMs) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v || Date.now() > end) return v;
    await sleep(100);
  }
}

async function invoke(name, input) {
  const cts = new vscode.CancellationTokenSource();
  try {
    const res = await vscode.lm.invokeTool(name, { input, toolInvocationToken: undefined }, cts.token);
    return { text: res.content.map((p) => (typeof p.value === 'string' ? p.value : '')).join('') };
  } catch (e) {
    return { error: String(e && e.message ? e.message : e) };
  }
}

async function probe(dir, request) {
  const out = { vscodeVersion: vscode.version };
  const names = ['dsh_search_sessions', 'dsh_read_session'];
  await waitFor(() => names.every((n) => vscode.lm.tools.some((t) => t.name === n)), 60000);
  out.tools = vscode.lm.tools.filter((t) => t.name.startsWith('dsh_')).map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema }));
  out.search = await invoke('dsh_search_sessions', { query: request.query || '' });
  out.read = await invoke('dsh_read_session', { uri: request.uri });
  out.readBad = await invoke('dsh_read_session', { uri: 'dsh-session:%%%' });
  const doc = vscode.Uri.file(path.join(vscode.workspace.workspaceFolders[0].uri.fsPath, request.linksFile));
  await vscode.workspace.openTextDocument(doc);
  const links = (await waitFor(async () => {
    const l = await vscode.commands.executeCommand('vscode.executeLinkProvider', doc, 10); // resolve up to 10 links
    return l && l.some((x) => x.target && x.target.scheme === 'dsh-snapshot') ? l : undefined;
  }, 30000)) || [];
  out.links = links.map((l) => ({ target: l.target ? l.target.toString() : null, start: l.range.start, end: l.range.end }));
  const link = links.find((l) => l.target && l.target.scheme === 'dsh-snapshot');
  if (link) {
    const snap = await vscode.workspace.openTextDocument(link.target);
    out.linkText = snap.getText();
  }
  fs.writeFileSync(path.join(dir, 'result.tmp'), JSON.stringify(out));
  fs.renameSync(path.join(dir, 'result.tmp'), path.join(dir, 'result.json'));
}

exports.activate = function activate() {
  const folder = vscode.workspace.workspaceFolders && vscode.workspace.workspaceFolders[0];
  if (!folder) return;
  const dir = path.join(folder.uri.fsPath, '.dsh-lm-probe');
  let request;
  try {
    request = JSON.parse(fs.readFileSync(path.join(dir, 'request.json'), 'utf8'));
  } catch {
    return; // not a probe run
  }
  probe(dir, request).catch((e) => {
    fs.writeFileSync(path.join(dir, 'result.json'), JSON.stringify({ crashed: String(e && e.stack ? e.stack : e) }));
  });
};
