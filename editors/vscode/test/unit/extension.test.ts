// Tests of the extension's activation with the `vscode` and `vscode-languageclient` modules
// faked: the server lookup and its error notification, the settings sent to the server,
// and that activation survives VS Code builds without (or with a failing) chat API.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
// eslint-disable-next-line @typescript-eslint/no-require-imports
const Module = require('module') as { _load: (request: string, parent: unknown, isMain: boolean) => unknown };

interface Fake {
  vscode: Record<string, unknown>;
  client: Record<string, unknown>;
  commands: string[];
  errors: string[];
  participants: string[];
  clients: { id: string; serverOptions: { command: string; transport: number }; clientOptions: { documentSelector: unknown[]; initializationOptions: unknown } }[];
  notifications: [unknown, unknown][];
  fireConfigChange(section: string): Promise<void>;
}

function makeFake(config: Record<string, unknown>, chat: 'none' | 'ok' | 'throws'): Fake {
  const f = { commands: [], errors: [], participants: [], clients: [], notifications: [] } as unknown as Fake;
  let configListener: ((e: { affectsConfiguration(s: string): boolean }) => Promise<void>) | undefined;
  const disposable = { dispose() {} };
  class EventEmitter {
    event = () => disposable;
    fire() {}
  }
  f.vscode = {
    EventEmitter,
    Uri: { from: (c: unknown) => c, parse: (s: string) => s },
    ViewColumn: { Beside: -2 },
    ProgressLocation: { Window: 10 },
    window: {
      createOutputChannel: () => ({ appendLine() {}, show() {}, dispose() {} }),
      showErrorMessage: (msg: string) => {
        f.errors.push(msg);
        return Promise.resolve(undefined);
      },
      showWarningMessage: () => Promise.resolve(undefined),
      showInformationMessage: () => Promise.resolve(undefined),
    },
    workspace: {
      workspaceFolders: [{ uri: { fsPath: '/ws' } }],
      registerTextDocumentContentProvider: () => disposable,
      getConfiguration: () => ({ get: (k: string) => config[k] }),
      onDidChangeConfiguration: (l: typeof configListener) => {
        configListener = l;
        return disposable;
      },
    },
    commands: {
      registerCommand: (id: string) => {
        f.commands.push(id);
        return disposable;
      },
      executeCommand: () => Promise.resolve(undefined),
    },
    languages: { match: () => 1, registerDocumentLinkProvider: () => disposable },
  };
  if (chat !== 'none') {
    f.vscode.chat = {
      createChatParticipant: (id: string) => {
        if (chat === 'throws') {
          throw new Error('proposed API');
        }
        f.participants.push(id);
        return disposable;
      },
    };
    f.vscode.LanguageModelChatMessage = { User: (t: string) => ({ role: 1, t }) };
    f.vscode.lm = { selectChatModels: async () => [] };
  }
  class LanguageClient {
    state = 2;
    constructor(id: string, _name: string, serverOptions: never, clientOptions: never) {
      f.clients.push({ id, serverOptions, clientOptions });
    }
    async start() {}
    async stop() {}
    sendNotification(type: unknown, params: unknown) {
      f.notifications.push([type, params]);
      return Promise.resolve();
    }
  }
  f.client = {
    LanguageClient,
    State: { Stopped: 1, Running: 2, Starting: 3 },
    TransportKind: { stdio: 0 },
    DidChangeConfigurationNotification: { type: 'workspace/didChangeConfiguration' },
  };
  f.fireConfigChange = async (section: string) => {
    await configListener?.({ affectsConfiguration: (s: string) => section === s || section.startsWith(s + '.') });
  };
  return f;
}

/** activateWith loads a fresh copy of the compiled extension against the fakes. */
async function activateWith(f: Fake): Promise<{ deactivate(): Promise<void> }> {
  const original = Module._load;
  Module._load = function (request: string, parent: unknown, isMain: boolean) {
    if (request === 'vscode') return f.vscode;
    if (request === 'vscode-languageclient/node') return f.client;
    return original.call(this, request, parent, isMain);
  };
  try {
    const file = require.resolve('../../src/extension');
    delete require.cache[file];
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const ext = require(file) as { activate(ctx: unknown): Promise<void>; deactivate(): Promise<void> };
    await ext.activate({ subscriptions: [], extensionPath: '/nonexistent-extension' });
    return ext;
  } finally {
    Module._load = original;
  }
}

const fakeServer = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'dsh-vscode-test-')), 'dsh-lsp');
fs.writeFileSync(fakeServer, '#!/bin/sh\n', { mode: 0o755 });

test('activation: server from dsh.serverPath, settings as initializationOptions, commands', async (t) => {
  const cases: { name: string; chat: 'none' | 'ok' | 'throws'; participants: string[] }[] = [
    { name: 'VS Code without the chat API', chat: 'none', participants: [] },
    { name: 'with the chat API', chat: 'ok', participants: ['dsh-lsp.dsh'] },
    { name: 'createChatParticipant throws', chat: 'throws', participants: [] },
  ];
  for (const c of cases) {
    await t.test(c.name, async () => {
      const f = makeFake({ serverPath: fakeServer, sessionsDir: '/store', maxReferences: 2, candidateLimit: null, documentSelector: ['markdown'] }, c.chat);
      const ext = await activateWith(f);
      assert.deepEqual(f.errors, []);
      assert.deepEqual(f.commands.sort(), ['dsh.insertSessionMention', 'dsh.prepareActive', 'dsh.restartServer', 'dsh.searchSessionContent', 'dsh.setChatSession']);
      assert.deepEqual(f.participants, c.participants);
      assert.equal(f.clients.length, 1);
      const cl = f.clients[0];
      assert.equal(cl.id, 'dsh', 'client id "dsh" makes dsh.trace.server work');
      assert.deepEqual(cl.serverOptions, { command: fakeServer, transport: 0 });
      assert.deepEqual(cl.clientOptions.initializationOptions, { sessionsDir: '/store', maxReferences: 2 });
      assert.deepEqual(cl.clientOptions.documentSelector, [
        { scheme: 'chatSessionInput' },
        { language: 'dsh-chat' },
        { language: 'prompt' },
        { language: 'markdown' },
      ]);
      await ext.deactivate();
    });
  }
});

test('a changed dsh setting is sent as didChangeConfiguration {settings: {dsh}}', async () => {
  const config: Record<string, unknown> = { serverPath: fakeServer, sessionsDir: '/store' };
  const f = makeFake(config, 'none');
  const ext = await activateWith(f);
  config.maxReferences = 1;
  config.target = { sessionId: 'me' };
  await f.fireConfigChange('dsh.maxReferences');
  assert.deepEqual(f.notifications, [
    // every key, null where unset: the server layers a push over initializationOptions
    ['workspace/didChangeConfiguration', { settings: { dsh: {
      sessionsDir: '/store', target: { sessionId: 'me' }, maxReferences: 1, candidateLimit: null, maxReferenceBytes: null, contentSearch: null,
    } } }],
  ]);
  config.serverPath = '/nonexistent/dsh-lsp';
  await f.fireConfigChange('dsh.serverPath');
  assert.equal(f.notifications.length, 1, 'a server path change restarts instead of notifying');
  assert.match(f.errors[0] ?? '', /dsh\.serverPath points to \/nonexistent\/dsh-lsp/);
  await ext.deactivate();
});

test('no server found: an error notification with the fix, no client, commands still there', async () => {
  const f = makeFake({ serverPath: '' }, 'none');
  const savedPath = process.env.PATH;
  process.env.PATH = '/nonexistent-dir';
  try {
    await activateWith(f);
  } finally {
    process.env.PATH = savedPath;
  }
  assert.equal(f.clients.length, 0);
  assert.equal(f.errors.length, 1);
  assert.match(f.errors[0], /^dsh: dsh-lsp was not found: .*go install github\.com\/dsh-lsp\/dsh-lsp\/cmd\/dsh-lsp@latest.*dsh\.serverPath/);
  assert.equal(f.commands.length, 5);
});
