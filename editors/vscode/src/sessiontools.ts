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

/** The work a scan did, for tests: characters examined by the mention scanner. */
export interface ScanCost {
  steps: number;
}

// dsh's mention pattern (conformance §2) is
//   /@\[((?:\\.|[^\\\]])*)\]\((dsh-session:[^)\s]*)\)|dsh-session:[A-Za-z0-9_-]+/g
// Run as a regular expression it is quadratic: from every "@[" without a closing "](" it scans
// to the end of the text (160 KB of "@[" took 18 s of the extension host). findSessionLinks
// finds the same matches in linear time: the starts come from a regex without nested
// repetition, and the two open-ended parts of a mention (the label up to its first unescaped
// "]", the URI up to its ")") are scanned once each, the result reused by every later start
// inside a span already scanned.
const startPattern = /@\[|dsh-session:[A-Za-z0-9_-]+/g;
const lineTerminator = /[\n\r\u2028\u2029]/;
const whitespace = /\s/;
const uriPrefix = '](dsh-session:';

/**
 * findSessionLinks returns every dsh mention and bare dsh-session URI of text, with the
 * offsets of its URI (the link) and the text to prepare for its snapshot.
 */
export function findSessionLinks(text: string, cost?: ScanCost): SessionLink[] {
  const out: SessionLink[] = [];
  let steps = 0;
  // The last label scan: from labelFrom, the label ends at labelEnd (a "]"), or cannot end
  // before labelEnd (-1 - index: a backslash before a line terminator or the end of text).
  // Every "@[" start inside it reaches the same end: a label start is never the second
  // character of an escape, since "[" is not a backslash.
  let labelFrom = -1;
  let labelEnd = -1;
  const labelEndFrom = (p: number): number => {
    if (labelFrom >= 0 && p >= labelFrom && p <= (labelEnd >= 0 ? labelEnd : -1 - labelEnd)) {
      return labelEnd;
    }
    let q = p;
    for (;;) {
      steps++;
      if (q >= text.length) {
        break;
      }
      const c = text[q];
      if (c === ']') {
        labelFrom = p;
        labelEnd = q;
        return q;
      }
      if (c === '\\') {
        if (q + 1 >= text.length || lineTerminator.test(text[q + 1])) {
          break;
        }
        q += 2;
      } else {
        q++;
      }
    }
    labelFrom = p;
    labelEnd = -1 - q;
    return labelEnd;
  };
  // The last URI scan: the first ")" or white space at or after uriFrom is at uriStop.
  let uriFrom = -1;
  let uriStop = -1;
  const uriStopFrom = (p: number): number => {
    if (uriFrom >= 0 && p >= uriFrom && p <= uriStop) {
      return uriStop;
    }
    let q = p;
    while (q < text.length && text[q] !== ')' && !whitespace.test(text[q])) {
      steps++;
      q++;
    }
    steps++;
    uriFrom = p;
    uriStop = q;
    return q;
  };
  const starts = new RegExp(startPattern.source, 'g');
  for (let m = starts.exec(text); m !== null; m = starts.exec(text)) {
    steps += m[0].length;
    const at = m.index;
    if (m[0] !== '@[') {
      out.push({ start: at, end: at + m[0].length, mention: m[0], label: '' });
      continue;
    }
    const close = labelEndFrom(at + 2);
    if (close < 0 || !text.startsWith(uriPrefix, close)) {
      continue; // no mention here; the scan goes on at the next character
    }
    steps += uriPrefix.length;
    const uriStart = close + 2;
    const stop = uriStopFrom(uriStart + 'dsh-session:'.length);
    if (stop >= text.length || text[stop] !== ')') {
      continue;
    }
    const mention = text.slice(at, stop + 1);
    const label = text.slice(at + 2, close);
    out.push({ start: uriStart, end: stop, mention, label: label.replace(/\\(.)/gs, '$1') });
    starts.lastIndex = stop + 1;
  }
  if (cost) {
    cost.steps += steps;
  }
  return out;
}
