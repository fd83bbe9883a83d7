// Pure logic of the language-model tools and the dsh-session: document links (no `vscode`
// import, so it can be unit-tested with plain Node). Everything is computed by dsh-lsp
// through dsh/candidates and dsh/prepare, as for the commands and @dsh.
import { Candidate, contextText, formatMention, PrepareResult, sessionUri } from './prompt';

/** The dsh-lsp requests the tools use; both reject with the server's JSON-RPC error. */
export interface SessionService {
  candidates(params: { query?: string; limit?: number }, token?: unknown): Promise<Candidate[]>;
  prepare(text: string, token?: unknown): Promise<PrepareResult>;
}

/** Names of the tools (package.json contributes.languageModelTools, as `dsh-lsp mcp`). */
export const searchToolName = 'dsh_search_sessions';
export const readToolName = 'dsh_read_session';

/** An error carrying a dsh code, shaped like the server's JSON-RPC errors. */
export class DshToolError extends Error {
  readonly data: { code: string };
  constructor(code: string, message: string) {
    super(message);
    this.data = { code };
  }
}

function invalid(message: string): DshToolError {
  // As the server's argument errors: dsh has no usage code.
  return new DshToolError('SESSION_REFERENCE_INVALID_CONFIG', message);
}

/** searchSessions runs dsh_search_sessions {query?, limit?}: the candidates as JSON text. */
export async function searchSessions(svc: SessionService, input: unknown, token?: unknown): Promise<string> {
  const i = (input ?? {}) as { query?: unknown; limit?: unknown };
  if (typeof i !== 'object' || Array.isArray(i)) {
    throw invalid(`${searchToolName}: the input must be an object {query?, limit?}`);
  }
  const params: { query?: string; limit?: number } = {};
  if (i.query !== undefined && i.query !== null) {
    if (typeof i.query !== 'string') {
      throw invalid(`${searchToolName}: "query" must be a string`);
    }
    params.query = i.query;
  }
  if (i.limit !== undefined && i.limit !== null) {
    if (typeof i.limit !== 'number') {
      throw invalid(`${searchToolName}: "limit" must be a number`);
    }
    params.limit = i.limit; // dsh-lsp refuses a non-positive or fractional limit
  }
  return JSON.stringify(await svc.candidates(params, token));
}

/**
 * decodeSessionUri returns the session id of a canonical dsh-session URI, or throws
 * SESSION_REFERENCE_INVALID_REFERENCE: the payload must be base64url of a JSON string whose
 * canonical encoding (sessionUri) gives the URI back exactly.
 */
export function decodeSessionUri(uri: string): string {
  const bad = () => new DshToolError('SESSION_REFERENCE_INVALID_REFERENCE', `invalid session reference URI ${JSON.stringify(uri)}`);
  const payload = uri.startsWith('dsh-session:') ? uri.slice('dsh-session:'.length) : '';
  if (!/^[A-Za-z0-9_-]+$/.test(payload)) {
    throw bad();
  }
  let id: unknown;
  try {
    id = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    throw bad();
  }
  if (typeof id !== 'string' || sessionUri(id) !== uri) {
    throw bad();
  }
  return id;
}

/**
 * readSession runs dsh_read_session {uri | sessionId}: the context message a mention of the
 * session (labelled with its latest title, else its id, as completion inserts it) adds to a
 * prompt — the text `dsh-lsp mcp`'s dsh_read_session returns.
 */
export async function readSession(svc: SessionService, input: unknown, token?: unknown): Promise<string> {
  const i = (input ?? {}) as { uri?: unknown; sessionId?: unknown };
  if (typeof i !== 'object' || Array.isArray(i)) {
    throw invalid(`${readToolName}: the input must be an object {uri} or {sessionId}`);
  }
  const hasURI = i.uri !== undefined && i.uri !== null;
  const hasID = i.sessionId !== undefined && i.sessionId !== null;
  if (hasURI === hasID) {
    throw invalid(`${readToolName}: give either "uri" or "sessionId"`);
  }
  let id: string;
  if (hasURI) {
    if (typeof i.uri !== 'string') {
      throw invalid(`${readToolName}: "uri" must be a string`);
    }
    id = decodeSessionUri(i.uri);
  } else {
    if (typeof i.sessionId !== 'string') {
      throw invalid(`${readToolName}: "sessionId" must be a string`);
    }
    id = i.sessionId;
  }
  // The label: the session's candidate label (a query by id finds it among few others).
  const found = (await svc.candidates({ query: id, limit: 1000 }, token)).find((c) => c.sessionId === id);
  const res = await svc.prepare(formatMention(id, found?.label), token);
  const text = contextText(res);
  if (text === undefined) {
    throw new DshToolError('SESSION_REFERENCE_READ_FAILED', `session ${JSON.stringify(id)}: no context message`);
  }
  return text;
}

/** A dsh-session: link in a text: the URI's offsets and the whole mention (or bare URI). */
export interface SessionLink {
  start: number;
  end: number;
  mention: string;
  label: string;
}

// dsh's mention pattern (conformance §2): a Markdown mention or a bare URI.
const mentionPattern = /@\[((?:\\.|[^\\\]])*)\]\((dsh-session:[^)\s]*)\)|dsh-session:[A-Za-z0-9_-]+/g;

/**
 * findSessionLinks returns every dsh mention and bare dsh-session URI of text, with the
 * offsets of its URI (the link) and the text to prepare for its snapshot.
 */
export function findSessionLinks(text: string): SessionLink[] {
  const out: SessionLink[] = [];
  for (const m of text.matchAll(mentionPattern)) {
    const at = m.index ?? 0;
    if (m[2] !== undefined) {
      const start = at + m[0].length - 1 - m[2].length;
      out.push({ start, end: start + m[2].length, mention: m[0], label: m[1].replace(/\\(.)/gs, '$1') });
    } else {
      out.push({ start: at, end: at + m[0].length, mention: m[0], label: '' });
    }
  }
  return out;
}
