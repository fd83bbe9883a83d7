// The @dsh chat participant's request handler, written against minimal structural types
// instead of the `vscode` module so it can be unit-tested with plain Node and fakes.
import { formatDshError, PrepareResult, promptParts, referencesMarkdown, SessionRef } from './prompt';

/** The part of vscode.CancellationToken the handler uses. */
export interface TokenLike {
  readonly isCancellationRequested: boolean;
}

/** The part of vscode.LanguageModelChat the handler uses. */
export interface ModelLike<M> {
  sendRequest(messages: M[], options: object, token: TokenLike): PromiseLike<{ text: AsyncIterable<string> }>;
}

/** The part of vscode.ChatRequest the handler uses. */
export interface RequestLike<M> {
  readonly prompt: string;
  readonly model?: ModelLike<M>;
}

/** The part of vscode.ChatResponseStream the handler uses. */
export interface StreamLike {
  markdown(value: string): void;
  reference(value: unknown): void;
  progress(value: string): void;
}

/** The part of vscode.ChatResult the handler returns. */
export interface ResultLike {
  errorDetails?: { message: string };
  metadata?: { references: SessionRef[] };
}

/** What the handler needs from the extension: the server and the vscode constructors. */
export interface ChatDeps<M> {
  /** prepare runs dsh/prepare {text}; it rejects with the server's JSON-RPC error. */
  prepare(text: string, token: TokenLike): Promise<PrepareResult>;
  /** userMessage builds a user message (vscode.LanguageModelChatMessage.User). */
  userMessage(text: string): M;
  /** referenceTarget turns a cited session into what stream.reference accepts (a Uri). */
  referenceTarget(ref: SessionRef): unknown;
  /** fallbackModel picks a model when the request carries none (VS Code < 1.95). */
  fallbackModel?(): Promise<ModelLike<M> | undefined>;
}

/** The help shown for an empty prompt. */
export const usageMarkdown =
  'Ask a question that cites dsh sessions with `@[label](dsh-session:…)` mentions ' +
  '(type `@` in a `.dshchat` file, or run **dsh: Insert Session Mention**). ' +
  'The cited sessions are sent to the model as a read-only context message before your question.';

/**
 * makeChatHandler returns the @dsh request handler: it prepares the prompt with dsh-lsp,
 * sends the context message followed by the readable prompt (two user messages) to the
 * request's model, and streams the answer. A dsh error ends the request with the dsh
 * message and code, and nothing is sent to the model.
 */
export function makeChatHandler<M>(deps: ChatDeps<M>) {
  return async (request: RequestLike<M>, _context: unknown, stream: StreamLike, token: TokenLike): Promise<ResultLike> => {
    if (request.prompt.trim() === '') {
      stream.markdown(usageMarkdown);
      return {};
    }
    let prepared: PrepareResult;
    try {
      prepared = await deps.prepare(request.prompt, token);
    } catch (err) {
      return { errorDetails: { message: `dsh could not prepare this message: ${formatDshError(err)}` } };
    }
    const model = request.model ?? (await deps.fallbackModel?.());
    if (!model) {
      return { errorDetails: { message: 'No language model is available for @dsh.' } };
    }
    for (const ref of prepared.references) {
      stream.reference(deps.referenceTarget(ref));
    }
    if (prepared.references.length > 0) {
      stream.markdown(referencesMarkdown(prepared.references));
    }
    const messages = promptParts(prepared).map((text) => deps.userMessage(text));
    try {
      const response = await model.sendRequest(messages, {}, token);
      for await (const fragment of response.text) {
        if (token.isCancellationRequested) {
          break;
        }
        stream.markdown(fragment);
      }
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      return { errorDetails: { message: `The model request failed: ${message}` } };
    }
    return { metadata: { references: prepared.references } };
  };
}
