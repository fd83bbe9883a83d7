// VS Code client for dsh-lsp: starts the server, passes the dsh settings, and adds the
// Prepare / Insert Session Mention / Set Chat Session commands and the @dsh participant.
import * as fs from 'fs';
import * as vscode from 'vscode';
import {
  DidChangeConfigurationNotification,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  State,
  TransportKind,
} from 'vscode-languageclient/node';
import { bundledServerPath, documentSelector, DocFilter, pushedSettings, resolveServer, serverSettings, startFailure } from './config';
import { registerAgentFeatures } from './agent';
import { makeChatHandler, ModelLike } from './participant';
import { Candidate, clipboardText, contextText, formatDshError, formatMention, PrepareResult, SessionRef } from './prompt';

const preparedScheme = 'dsh-prepared';

let client: LanguageClient | undefined;
let selector: DocFilter[] = [];
let output: vscode.OutputChannel;
/** Per-document targets set with "dsh: Set Chat Session", re-sent after a server restart. */
const targets = new Map<string, { sessionId?: string; cwd?: string }>();

/** activate starts dsh-lsp and registers the commands, the viewer and the participant. */
export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel('dsh');
  context.subscriptions.push(output);
  const viewer = new PreparedViewer();
  context.subscriptions.push(
    vscode.workspace.registerTextDocumentContentProvider(preparedScheme, viewer),
    vscode.commands.registerCommand('dsh.prepareActive', (uri?: vscode.Uri) => prepareActive(viewer, uri)),
    vscode.commands.registerCommand('dsh.insertSessionMention', insertSessionMention),
    vscode.commands.registerCommand('dsh.searchSessionContent', searchSessionContent),
    vscode.commands.registerCommand('dsh.setChatSession', setChatSession),
    vscode.commands.registerCommand('dsh.restartServer', () => restartClient(context)),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (e.affectsConfiguration('dsh.serverPath') || e.affectsConfiguration('dsh.documentSelector')) {
        await restartClient(context);
      } else if (e.affectsConfiguration('dsh')) {
        sendSettings();
      }
    }),
  );
  registerParticipant(context, viewer);
  registerAgentFeatures(context, () => client);
  await startClient(context);
}

/** deactivate stops the server. */
export async function deactivate(): Promise<void> {
  const c = client;
  client = undefined;
  if (c) {
    try {
      await c.stop();
    } catch (err) {
      // A server that already died cannot be stopped; there is nothing left to clean up.
      output?.appendLine(`stopping dsh-lsp: ${formatDshError(err)}`);
    }
  }
}

function firstWorkspaceFolder(): string | undefined {
  return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
}

function currentSettings() {
  const cfg = vscode.workspace.getConfiguration('dsh');
  return serverSettings((key) => cfg.get(key), firstWorkspaceFolder());
}

const realFs = {
  isExecutable(p: string): boolean {
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return fs.statSync(p).isFile();
    } catch {
      return false;
    }
  },
  exists(p: string): boolean {
    return fs.existsSync(p);
  },
};

async function startClient(context: vscode.ExtensionContext): Promise<void> {
  const cfg = vscode.workspace.getConfiguration('dsh');
  const bundled = bundledServerPath(context.extensionPath, process.platform, process.arch);
  if (realFs.exists(bundled) && !realFs.isExecutable(bundled)) {
    // Some unzip paths drop the executable bit of files inside a .vsix.
    try {
      fs.chmodSync(bundled, 0o755);
    } catch (err) {
      output.appendLine(`could not make ${bundled} executable: ${String(err)}`);
    }
  }
  const found = resolveServer({
    serverPath: cfg.get<string>('serverPath') ?? '',
    extensionPath: context.extensionPath,
    platform: process.platform,
    arch: process.arch,
    envPath: process.env.PATH ?? '',
    fs: realFs,
  });
  if ('error' in found) {
    output.appendLine(found.error);
    showSetupError(found.error);
    return;
  }
  output.appendLine(`starting ${found.command} (${found.origin})`);
  const sel = documentSelector(cfg.get('documentSelector'));
  if (sel.invalid.length > 0) {
    vscode.window.showWarningMessage(`dsh: ignoring invalid dsh.documentSelector entries: ${JSON.stringify(sel.invalid)}`);
  }
  selector = sel.selector;
  const serverOptions: ServerOptions = { command: found.command, transport: TransportKind.stdio };
  const clientOptions: LanguageClientOptions = {
    documentSelector: selector as LanguageClientOptions['documentSelector'],
    initializationOptions: currentSettings(),
    outputChannel: output,
  };
  const c = new LanguageClient('dsh', 'dsh', serverOptions, clientOptions);
  client = c;
  try {
    await c.start();
  } catch (err) {
    client = undefined;
    const msg = startFailure(found.command, found.origin, process.platform, process.arch, formatDshError(err));
    output.appendLine(msg);
    showSetupError(msg);
    return;
  }
  for (const [uri, target] of targets) {
    c.sendNotification('dsh/setTarget', { textDocument: { uri }, target });
  }
}

async function restartClient(context: vscode.ExtensionContext): Promise<void> {
  await deactivate();
  await startClient(context);
}

function showSetupError(message: string): void {
  vscode.window.showErrorMessage(`dsh: ${message}`, 'Open Settings', 'Show Log').then((choice) => {
    if (choice === 'Open Settings') {
      vscode.commands.executeCommand('workbench.action.openSettings', 'dsh.serverPath');
    } else if (choice === 'Show Log') {
      output.show();
    }
  });
}

function sendSettings(): void {
  if (client && client.state === State.Running) {
    client.sendNotification(DidChangeConfigurationNotification.type, { settings: { dsh: pushedSettings(currentSettings()) } });
  }
}

/** runningClient returns the client, or explains (once per call) why there is none. */
function runningClient(): LanguageClient | undefined {
  if (client && client.state === State.Running) {
    return client;
  }
  vscode.window.showErrorMessage('dsh: the dsh-lsp server is not running (see the "dsh" output), then run "dsh: Restart Language Server".');
  return undefined;
}

/** isServed reports whether dsh-lsp has the document open (it matches the selector). */
function isServed(doc: vscode.TextDocument): boolean {
  return vscode.languages.match(selector as vscode.DocumentSelector, doc) > 0;
}

function textDocumentOf(c: LanguageClient, doc: vscode.TextDocument) {
  return { uri: c.code2ProtocolConverter.asUri(doc.uri) };
}

/** The read-only virtual documents that show prepared context messages. */
class PreparedViewer implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  /** show opens text in a read-only editor named name. */
  async show(name: string, text: string): Promise<vscode.TextEditor> {
    const uri = vscode.Uri.from({ scheme: preparedScheme, path: `/${name}` });
    this.texts.set(uri.toString(), text);
    this.changed.fire(uri);
    const doc = await vscode.workspace.openTextDocument(uri);
    return vscode.window.showTextDocument(doc, { preview: false, viewColumn: vscode.ViewColumn.Beside });
  }

  /** sessionUri is what the @dsh participant cites: it opens that session's snapshot. */
  sessionUri(ref: SessionRef): vscode.Uri {
    const name = `${ref.label.replace(/[\\/\n\r]/g, ' ').slice(0, 80) || ref.sessionId}.md`;
    return vscode.Uri.from({ scheme: preparedScheme, path: `/${name}`, query: new URLSearchParams({ session: ref.sessionId, label: ref.label }).toString() });
  }

  async provideTextDocumentContent(uri: vscode.Uri, token: vscode.CancellationToken): Promise<string> {
    const stored = this.texts.get(uri.toString());
    if (stored !== undefined) {
      return stored;
    }
    const q = new URLSearchParams(uri.query);
    const sessionId = q.get('session');
    const c = client;
    if (sessionId === null || !c || c.state !== State.Running) {
      return '(this prepared message is no longer available)';
    }
    try {
      const res = await c.sendRequest<PrepareResult>('dsh/prepare', { text: formatMention(sessionId, q.get('label') ?? undefined) }, token);
      return contextText(res) ?? '';
    } catch (err) {
      return `dsh could not read this session: ${formatDshError(err)}`;
    }
  }
}

/**
 * prepareActive runs dsh/prepare on the active document (by uri when dsh-lsp has it open,
 * else by text), copies the context message followed by the readable message, and opens
 * the context message in a read-only editor. It returns the prepare result.
 */
async function prepareActive(viewer: PreparedViewer, uri?: vscode.Uri): Promise<PrepareResult | undefined> {
  const doc = uri ? await vscode.workspace.openTextDocument(uri) : vscode.window.activeTextEditor?.document;
  if (!doc) {
    vscode.window.showErrorMessage('dsh: open the message to prepare first.');
    return undefined;
  }
  const c = runningClient();
  if (!c) {
    return undefined;
  }
  const params = isServed(doc) ? { textDocument: textDocumentOf(c, doc) } : { text: doc.getText() };
  let res: PrepareResult;
  try {
    res = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: 'dsh: preparing message' },
      (_p, token) => c.sendRequest<PrepareResult>('dsh/prepare', params, token),
    );
  } catch (err) {
    vscode.window.showErrorMessage(`dsh: ${formatDshError(err)}`);
    return undefined;
  }
  await vscode.env.clipboard.writeText(clipboardText(res));
  const ctx = contextText(res);
  if (ctx === undefined) {
    vscode.window.showInformationMessage('dsh: the message cites no session; copied it as is.');
    return res;
  }
  const base = doc.uri.path.split('/').pop() || 'message';
  await viewer.show(`${base} (context).md`, ctx);
  const n = res.references.length;
  vscode.window.showInformationMessage(`dsh: copied the context of ${n} referenced session${n === 1 ? '' : 's'} and the message to the clipboard.`);
  return res;
}

interface CandidateItem extends vscode.QuickPickItem {
  candidate?: Candidate;
  typedId?: string;
}

function candidateItem(c: Candidate): CandidateItem {
  const created = new Date(c.createdAt).toISOString().replace('T', ' ').slice(0, 16);
  return {
    label: c.label.replace(/[\u0000-\u001f\u007f]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`),
    description: c.cwd ?? 'no cwd',
    detail: `${c.sessionId} · ${created}`,
    candidate: c,
  };
}

/**
 * pickCandidate shows a quick pick whose items come from dsh/candidates, re-queried as the
 * user types (the server matches id, cwd and title). allowTypedId adds an item that
 * accepts the typed text as a session id.
 */
async function pickCandidate(c: LanguageClient, doc: vscode.TextDocument | undefined, title: string, allowTypedId: boolean): Promise<CandidateItem | undefined> {
  const qp = vscode.window.createQuickPick<CandidateItem>();
  qp.title = title;
  qp.placeholder = 'Search dsh sessions by title, id or working directory';
  qp.matchOnDescription = true;
  qp.matchOnDetail = true;
  let latest = 0;
  let candidates: CandidateItem[] = [];
  // typedItem offers the typed text as a session id unless a listed candidate has that id.
  const typedItem = (): CandidateItem[] => {
    const v = qp.value.trim();
    if (!allowTypedId || v === '' || candidates.some((i) => i.candidate?.sessionId === v)) {
      return [];
    }
    return [{ label: `$(edit) Use "${v}" as the session id`, typedId: v, alwaysShow: true }];
  };
  const load = async (query: string) => {
    const seq = ++latest;
    qp.busy = true;
    try {
      const params: Record<string, unknown> = { query };
      if (doc && isServed(doc)) {
        params.textDocument = textDocumentOf(c, doc);
      }
      const list = await c.sendRequest<Candidate[]>('dsh/candidates', params);
      if (seq === latest) {
        candidates = (list ?? []).map(candidateItem).map((i) => ({ ...i, alwaysShow: true }));
        qp.items = [...candidates, ...typedItem()];
      }
    } catch (err) {
      if (seq === latest) {
        qp.items = typedItem();
        vscode.window.showErrorMessage(`dsh: ${formatDshError(err)}`);
      }
    } finally {
      if (seq === latest) {
        qp.busy = false;
      }
    }
  };
  return new Promise<CandidateItem | undefined>((resolve) => {
    qp.onDidChangeValue((v) => {
      qp.items = [...candidates, ...typedItem()];
      void load(v);
    });
    qp.onDidAccept(() => {
      resolve(qp.selectedItems[0]);
      qp.hide();
    });
    qp.onDidHide(() => {
      resolve(undefined);
      qp.dispose();
    });
    qp.show();
    void load('');
  });
}

/**
 * mentionTarget returns the active editor a mention goes into and the running client, or
 * undefined (saying why) when there is no editor or no server.
 */
function mentionTarget(): { editor: vscode.TextEditor; client: LanguageClient } | undefined {
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    vscode.window.showErrorMessage('dsh: open a message to insert a session mention into.');
    return undefined;
  }
  const c = runningClient();
  return c ? { editor, client: c } : undefined;
}

/** insertAtCursors replaces every selection of editor with text. */
async function insertAtCursors(editor: vscode.TextEditor, text: string): Promise<void> {
  await editor.edit((b) => {
    for (const sel of editor.selections) {
      b.replace(sel, text);
    }
  });
}

/** insertSessionMention inserts the mention of a picked session at every cursor. */
async function insertSessionMention(): Promise<void> {
  const target = mentionTarget();
  if (!target) {
    return;
  }
  const { editor, client: c } = target;
  const picked = await pickCandidate(c, editor.document, 'Insert dsh session mention', false);
  if (!picked?.candidate) {
    return;
  }
  await insertAtCursors(editor, picked.candidate.mention);
}

/** ContentHit is one dsh/search result: a candidate plus the matched passage. */
interface ContentHit extends Candidate {
  snippet: string;
}

/**
 * searchSessionContent searches what was said in the sessions (dsh/search, re-queried as the
 * user types) and inserts the mention of the picked session at every cursor.
 */
async function searchSessionContent(): Promise<void> {
  const target = mentionTarget();
  if (!target) {
    return;
  }
  const { editor, client: c } = target;
  const qp = vscode.window.createQuickPick<CandidateItem>();
  qp.title = 'Find a dsh session by what was said in it';
  qp.placeholder = 'Words or a phrase from the conversation (any language)';
  let latest = 0;
  const load = async (query: string) => {
    const seq = ++latest;
    if (query.trim() === '') {
      qp.items = [];
      return;
    }
    qp.busy = true;
    try {
      const hits = await c.sendRequest<ContentHit[]>('dsh/search', { query, limit: 50 });
      if (seq === latest) {
        qp.items = (hits ?? []).map((h) => ({
          ...candidateItem(h),
          detail: h.snippet.replace(/\*\*/g, ''),
          alwaysShow: true,
        }));
      }
    } catch (err) {
      if (seq === latest) {
        qp.items = [];
        vscode.window.showErrorMessage(`dsh: ${formatDshError(err)}`);
      }
    } finally {
      if (seq === latest) {
        qp.busy = false;
      }
    }
  };
  const picked = await new Promise<CandidateItem | undefined>((resolve) => {
    qp.onDidChangeValue((v) => void load(v));
    qp.onDidAccept(() => {
      resolve(qp.selectedItems[0]);
      qp.hide();
    });
    qp.onDidHide(() => {
      resolve(undefined);
      qp.dispose();
    });
    qp.show();
  });
  const mention = picked?.candidate?.mention;
  if (mention) {
    await insertAtCursors(editor, mention);
  }
}

/** setChatSession tells dsh-lsp which dsh session the active document belongs to. */
async function setChatSession(): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    vscode.window.showErrorMessage('dsh: open the chat document first.');
    return;
  }
  const doc = editor.document;
  if (!isServed(doc)) {
    vscode.window.showErrorMessage(`dsh: dsh-lsp is not attached to this document (language "${doc.languageId}"); add it to dsh.documentSelector.`);
    return;
  }
  const c = runningClient();
  if (!c) {
    return;
  }
  const picked = await pickCandidate(c, doc, 'Which dsh session is this chat? (excluded from mentions, self-references are errors)', true);
  if (!picked) {
    return;
  }
  const sessionId = picked.candidate?.sessionId ?? picked.typedId;
  const cwd = picked.candidate?.cwd ?? vscode.workspace.getWorkspaceFolder(doc.uri)?.uri.fsPath ?? firstWorkspaceFolder();
  const target: { sessionId?: string; cwd?: string } = { sessionId };
  if (cwd) {
    target.cwd = cwd;
  }
  const uri = c.code2ProtocolConverter.asUri(doc.uri);
  targets.set(uri, target);
  await c.sendNotification('dsh/setTarget', { textDocument: { uri }, target });
  vscode.window.showInformationMessage(`dsh: this document now belongs to session ${sessionId}${cwd ? ` (${cwd})` : ''}.`);
}

/** registerParticipant adds @dsh where the chat and language-model APIs exist. */
function registerParticipant(context: vscode.ExtensionContext, viewer: PreparedViewer): void {
  const chat = (vscode as { chat?: typeof vscode.chat }).chat;
  const lm = (vscode as { lm?: typeof vscode.lm }).lm;
  const Message = (vscode as { LanguageModelChatMessage?: typeof vscode.LanguageModelChatMessage }).LanguageModelChatMessage;
  if (!chat?.createChatParticipant || !Message) {
    output.appendLine('this VS Code has no chat participant API; @dsh is not available');
    return;
  }
  const handler = makeChatHandler<vscode.LanguageModelChatMessage>({
    prepare: async (text, token) => {
      const c = client;
      if (!c || c.state !== State.Running) {
        throw new Error('the dsh-lsp server is not running (see the "dsh" output)');
      }
      return c.sendRequest<PrepareResult>('dsh/prepare', { text }, token as vscode.CancellationToken);
    },
    userMessage: (text) => Message.User(text),
    referenceTarget: (ref) => viewer.sessionUri(ref),
    fallbackModel: async () => (lm ? ((await lm.selectChatModels())[0] as unknown as ModelLike<vscode.LanguageModelChatMessage>) : undefined),
  });
  try {
    const participant = chat.createChatParticipant('dsh-lsp.dsh', handler as vscode.ChatRequestHandler);
    context.subscriptions.push(participant);
  } catch (err) {
    output.appendLine(`could not register @dsh: ${String(err)}`);
  }
}
