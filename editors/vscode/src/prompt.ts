// Pure helpers around the dsh/prepare result: no `vscode` import, so they can be
// unit-tested with plain Node.

/** A session cited by a message, as returned in `references` of dsh/prepare. */
export interface SessionRef {
  sessionId: string;
  label: string;
}

/** One content part of the dsh context message (dsh only produces text parts). */
export interface ContentPart {
  type: string;
  text?: string;
}

/** The dsh/prepare result (CONTRACT.md §5). `contextMessage` is absent without references. */
export interface PrepareResult {
  content: string;
  references: SessionRef[];
  contextMessage?: {
    source?: unknown;
    content: ContentPart[];
    role?: string;
    id?: string;
  };
}

/** A candidate returned by dsh/candidates (CONTRACT.md §5). */
export interface Candidate {
  sessionId: string;
  label: string;
  cwd?: string;
  createdAt: number;
  uri: string;
  mention: string;
}

/**
 * contextText returns the text of the context message (its text parts joined), or
 * undefined when the prepared message cites no session.
 */
export function contextText(prepared: PrepareResult): string | undefined {
  const parts = prepared.contextMessage?.content;
  if (!parts || parts.length === 0) {
    return undefined;
  }
  return parts.filter((p) => p.type === 'text' && typeof p.text === 'string').map((p) => p.text).join('');
}

/**
 * promptParts returns the texts to send to a model, in order: the context message (when
 * the message cites sessions) first, then the readable message. dsh records the context as
 * its own user message; keeping the two apart lets the model tell the untrusted snapshot
 * from the user's request.
 */
export function promptParts(prepared: PrepareResult): string[] {
  const ctx = contextText(prepared);
  return ctx === undefined ? [prepared.content] : [ctx, prepared.content];
}

/** clipboardText joins promptParts with a blank line: what "dsh: Prepare Message" copies. */
export function clipboardText(prepared: PrepareResult): string {
  return promptParts(prepared).join('\n\n');
}

/** The JSON-RPC error shape vscode-languageclient rejects with (ResponseError). */
interface RpcErrorLike {
  code?: unknown;
  message?: unknown;
  data?: unknown;
}

/**
 * dshErrorCode returns the dsh error code (`SESSION_REFERENCE_…`) carried in a JSON-RPC
 * error's data, if any.
 */
export function dshErrorCode(err: unknown): string | undefined {
  const data = (err as RpcErrorLike | undefined)?.data as { code?: unknown } | undefined;
  return data && typeof data.code === 'string' ? data.code : undefined;
}

/**
 * formatDshError turns a failed dsh request into one line for a user: the dsh message and
 * code (never a stack trace).
 */
export function formatDshError(err: unknown): string {
  const e = (err ?? {}) as RpcErrorLike;
  const message = typeof e.message === 'string' && e.message !== '' ? e.message : String(err);
  const code = dshErrorCode(err) ?? (typeof e.code === 'number' ? `JSON-RPC ${e.code}` : undefined);
  return code ? `${message} (${code})` : message;
}

/**
 * sessionUri returns the canonical dsh-session URI of a session id: the UTF-8 bytes of the
 * id's JSON string literal, base64url without padding (conformance §1).
 */
export function sessionUri(sessionId: string): string {
  return 'dsh-session:' + Buffer.from(JSON.stringify(sessionId), 'utf8').toString('base64url');
}

/** escapeMarkdown escapes the characters that Markdown would interpret in a label. */
export function escapeMarkdown(s: string): string {
  return s.replace(/[\\`*_{}[\]()#+\-.!<>|~]/g, (c) => '\\' + c);
}

/** referencesMarkdown lists the cited sessions for a chat answer ("" when none). */
export function referencesMarkdown(refs: SessionRef[]): string {
  if (refs.length === 0) {
    return '';
  }
  const lines = refs.map((r) => `- ${escapeMarkdown(r.label)} (\`${r.sessionId.replace(/`/g, '')}\`)`);
  return `Referenced sessions:\n${lines.join('\n')}\n\n`;
}

/**
 * formatMention returns dsh's canonical mention of a session:
 * `@[` + label with `\` and `]` backslash-escaped + `](` + URI + `)` (conformance §2).
 */
export function formatMention(sessionId: string, label?: string): string {
  const text = (label ?? sessionId).replace(/[\\\]]/g, (c) => '\\' + c);
  return `@[${text}](${sessionUri(sessionId)})`;
}
