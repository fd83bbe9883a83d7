// For AI agents inside VS Code: language-model tools that search and read dsh sessions
// (agent mode can resolve a cited session), and document links that open a dsh-session:
// link as the context snapshot it adds to a prompt. Both go through the running dsh-lsp.
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { Candidate, contextText, formatDshError, PrepareResult } from './prompt';
import { findSessionLinks, readSession, readToolName, searchSessions, searchToolName, SessionService } from './sessiontools';

const snapshotScheme = 'dsh-snapshot';
/** How long a tool call waits for dsh-lsp to be up (it starts with the extension). */
const startTimeoutMs = 30000;

/** Documents whose dsh-session: links open snapshots. */
const linkSelector: vscode.DocumentSelector = [
  { language: 'dsh-chat' },
  { language: 'prompt' },
  { language: 'markdown' },
  { language: 'plaintext' },
];

/** registerAgentFeatures adds the tools and the links; getClient returns the current client. */
export function registerAgentFeatures(context: vscode.ExtensionContext, getClient: () => LanguageClient | undefined): void {
  const svc = sessionService(getClient);
  context.subscriptions.push(
    vscode.workspace.registerTextDocumentContentProvider(snapshotScheme, new SnapshotProvider(svc)),
    vscode.languages.registerDocumentLinkProvider(linkSelector, new SessionLinkProvider()),
  );
  const lm = (vscode as { lm?: typeof vscode.lm }).lm;
  if (!lm?.registerTool) {
    return; // a VS Code without language-model tools
  }
  const tool = (run: (svc: SessionService, input: unknown, token: vscode.CancellationToken) => Promise<string>): vscode.LanguageModelTool<unknown> => ({
    async invoke(options, token) {
      let text: string;
      try {
        text = await run(svc, options.input, token);
      } catch (err) {
        // The model sees the dsh message and code, never a stack.
        throw new Error(formatDshError(err));
      }
      return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(text)]);
    },
  });
  try {
    context.subscriptions.push(
      lm.registerTool(searchToolName, tool(searchSessions)),
      lm.registerTool(readToolName, tool(readSession)),
    );
  } catch (err) {
    console.error(`dsh: could not register the language-model tools: ${String(err)}`);
  }
}

/** sessionService sends dsh/candidates and dsh/prepare to dsh-lsp, waiting for it to start. */
function sessionService(getClient: () => LanguageClient | undefined): SessionService {
  const running = async (): Promise<LanguageClient> => {
    const end = Date.now() + startTimeoutMs;
    for (;;) {
      const c = getClient();
      if (c?.isRunning()) {
        return c;
      }
      if (Date.now() > end) {
        throw new Error('the dsh-lsp server is not running (see the "dsh" output)');
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  return {
    candidates: async (params, token) => (await running()).sendRequest<Candidate[]>('dsh/candidates', params, token as vscode.CancellationToken),
    prepare: async (text, token) => (await running()).sendRequest<PrepareResult>('dsh/prepare', { text }, token as vscode.CancellationToken),
  };
}

/**
 * SessionLinkProvider links each dsh-session URI to its context snapshot. The target (a
 * dsh-snapshot: URI holding the mention) is made only when a link is followed.
 */
class SessionLinkProvider implements vscode.DocumentLinkProvider {
  private readonly pending = new WeakMap<vscode.DocumentLink, { mention: string; label: string }>();

  provideDocumentLinks(doc: vscode.TextDocument): vscode.DocumentLink[] {
    return findSessionLinks(doc.getText()).map((l) => {
      const link = new vscode.DocumentLink(new vscode.Range(doc.positionAt(l.start), doc.positionAt(l.end)));
      link.tooltip = 'Open the context snapshot this dsh session adds to a prompt';
      this.pending.set(link, { mention: l.mention, label: l.label });
      return link;
    });
  }

  resolveDocumentLink(link: vscode.DocumentLink): vscode.DocumentLink {
    const l = this.pending.get(link);
    if (l) {
      const name = (l.label || 'session').replace(/[\\/\n\r]/g, ' ').slice(0, 80);
      link.target = vscode.Uri.from({ scheme: snapshotScheme, path: `/${name} (context).md`, query: new URLSearchParams({ text: l.mention }).toString() });
    }
    return link;
  }
}

/** SnapshotProvider shows the context message of the mention in a dsh-snapshot: URI. */
class SnapshotProvider implements vscode.TextDocumentContentProvider {
  constructor(private readonly svc: SessionService) {}

  async provideTextDocumentContent(uri: vscode.Uri, token: vscode.CancellationToken): Promise<string> {
    const text = new URLSearchParams(uri.query).get('text') ?? '';
    try {
      return contextText(await this.svc.prepare(text, token)) ?? '(this text cites no dsh session)';
    } catch (err) {
      return `dsh could not read this session: ${formatDshError(err)}`;
    }
  }
}
