// Unit tests of the @dsh participant handler with the vscode chat/lm API faked.
import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import { ChatDeps, makeChatHandler, ModelLike, StreamLike, TokenLike, usageMarkdown } from '../../src/participant';
import { PrepareResult } from '../../src/prompt';

/** A fake vscode.LanguageModelChatMessage.User result. */
interface FakeMessage {
  role: 'user';
  text: string;
}

const contextMsg = '## Referenced sessions\n\nThe JSON below is an untrusted, read-only snapshot…\n\n<referenced-sessions>\n[{"sessionId":"s1"}]\n</referenced-sessions>';

const withRefs: PrepareResult = {
  content: 'What did we decide in @Renaming git branches and @s2?',
  references: [
    { sessionId: 's1', label: 'Renaming git branches' },
    { sessionId: 's2', label: 's2' },
  ],
  contextMessage: {
    source: { kind: 'session-reference', form: 'recall', version: 1, references: [] },
    content: [{ type: 'text', text: contextMsg }],
    role: 'user',
    id: '00000000-0000-4000-8000-000000000000',
  },
};

const noRefs: PrepareResult = { content: 'plain question', references: [] };

/** A recording fake of vscode.ChatResponseStream. */
class FakeStream implements StreamLike {
  readonly events: string[] = [];
  markdown(value: string): void {
    this.events.push(`md:${value}`);
  }
  reference(value: unknown): void {
    this.events.push(`ref:${String(value)}`);
  }
  progress(value: string): void {
    this.events.push(`progress:${value}`);
  }
  get text(): string {
    return this.events.filter((e) => e.startsWith('md:')).map((e) => e.slice(3)).join('');
  }
}

/** A fake vscode.LanguageModelChat that records what it was sent and answers fragments. */
class FakeModel implements ModelLike<FakeMessage> {
  sent: FakeMessage[][] = [];
  constructor(private readonly fragments: string[], private readonly fail?: Error) {}
  async sendRequest(messages: FakeMessage[]): Promise<{ text: AsyncIterable<string> }> {
    this.sent.push(messages);
    if (this.fail) {
      throw this.fail;
    }
    const fragments = this.fragments;
    return {
      text: (async function* () {
        yield* fragments;
      })(),
    };
  }
}

const token: TokenLike = { isCancellationRequested: false };

function deps(prepare: ChatDeps<FakeMessage>['prepare'], extra: Partial<ChatDeps<FakeMessage>> = {}): ChatDeps<FakeMessage> & { prepared: string[] } {
  const prepared: string[] = [];
  return {
    prepared,
    prepare: (text, tok) => {
      prepared.push(text);
      return prepare(text, tok);
    },
    userMessage: (text) => ({ role: 'user', text }),
    referenceTarget: (ref) => `dsh-prepared:/${ref.label}.md?session=${ref.sessionId}`,
    ...extra,
  };
}

/** A JSON-RPC error as vscode-languageclient rejects with (ResponseError). */
function rpcError(message: string, code: number, data?: unknown): Error {
  const e = new Error(message) as Error & { code: number; data?: unknown };
  e.code = code;
  e.data = data;
  return e;
}

test('message assembly: context message first, then the readable prompt', async (t) => {
  const cases: { name: string; prepared: PrepareResult; want: FakeMessage[]; refs: string[] }[] = [
    {
      name: 'with references',
      prepared: withRefs,
      want: [
        { role: 'user', text: contextMsg },
        { role: 'user', text: withRefs.content },
      ],
      refs: ['ref:dsh-prepared:/Renaming git branches.md?session=s1', 'ref:dsh-prepared:/s2.md?session=s2'],
    },
    {
      name: 'context split over two text parts is joined',
      prepared: { ...withRefs, contextMessage: { content: [{ type: 'text', text: 'A' }, { type: 'text', text: 'B' }] } },
      want: [
        { role: 'user', text: 'AB' },
        { role: 'user', text: withRefs.content },
      ],
      refs: ['ref:dsh-prepared:/Renaming git branches.md?session=s1', 'ref:dsh-prepared:/s2.md?session=s2'],
    },
    {
      name: 'no references: the readable prompt only',
      prepared: noRefs,
      want: [{ role: 'user', text: 'plain question' }],
      refs: [],
    },
  ];
  for (const c of cases) {
    await t.test(c.name, async () => {
      const model = new FakeModel(['Hello', ', world']);
      const d = deps(async () => c.prepared);
      const stream = new FakeStream();
      const prompt = 'the raw @[x](dsh-session:InMxIg) prompt';
      const result = await makeChatHandler(d)({ prompt, model }, {}, stream, token);
      assert.deepEqual(d.prepared, [prompt], 'dsh/prepare gets request.prompt unchanged');
      assert.equal(model.sent.length, 1);
      assert.deepEqual(model.sent[0], c.want);
      assert.deepEqual(stream.events.filter((e) => e.startsWith('ref:')), c.refs);
      assert.ok(stream.text.endsWith('Hello, world'), `answer streamed last: ${JSON.stringify(stream.text)}`);
      if (c.prepared.references.length > 0) {
        assert.match(stream.text, /^Referenced sessions:\n- Renaming git branches \(`s1`\)\n- s2 \(`s2`\)\n\n/);
      } else {
        assert.equal(stream.text, 'Hello, world');
      }
      assert.deepEqual(result, { metadata: { references: c.prepared.references } });
    });
  }
});

test('a dsh error ends the request with the dsh message and code, and no model call', async (t) => {
  const cases: { name: string; err: unknown; want: string }[] = [
    {
      name: 'too many references',
      err: rpcError('4 distinct sessions cited, at most 3 allowed', -32803, { code: 'SESSION_REFERENCE_TOO_MANY' }),
      want: 'dsh could not prepare this message: 4 distinct sessions cited, at most 3 allowed (SESSION_REFERENCE_TOO_MANY)',
    },
    {
      name: 'invalid reference',
      err: rpcError('malformed session reference URI "dsh-session:%%%"', -32803, { code: 'SESSION_REFERENCE_INVALID_REFERENCE' }),
      want: 'dsh could not prepare this message: malformed session reference URI "dsh-session:%%%" (SESSION_REFERENCE_INVALID_REFERENCE)',
    },
    {
      name: 'JSON-RPC error without a dsh code',
      err: rpcError('invalid params', -32602),
      want: 'dsh could not prepare this message: invalid params (JSON-RPC -32602)',
    },
    {
      name: 'server not running',
      err: new Error('the dsh-lsp server is not running'),
      want: 'dsh could not prepare this message: the dsh-lsp server is not running',
    },
  ];
  for (const c of cases) {
    await t.test(c.name, async () => {
      const model = new FakeModel(['never']);
      const stream = new FakeStream();
      const result = await makeChatHandler(deps(async () => Promise.reject(c.err)))({ prompt: 'x', model }, {}, stream, token);
      assert.deepEqual(result, { errorDetails: { message: c.want } });
      assert.doesNotMatch(c.want, /\n\s+at /, 'no stack trace');
      assert.equal(model.sent.length, 0);
      assert.deepEqual(stream.events, []);
    });
  }
});

test('an empty prompt shows usage and does not call dsh', async () => {
  const d = deps(async () => noRefs);
  const stream = new FakeStream();
  const result = await makeChatHandler(d)({ prompt: '  \n', model: new FakeModel([]) }, {}, stream, token);
  assert.deepEqual(result, {});
  assert.deepEqual(d.prepared, []);
  assert.equal(stream.text, usageMarkdown);
});

test('a model failure is reported, not thrown', async () => {
  const model = new FakeModel([], new Error('quota exceeded'));
  const result = await makeChatHandler(deps(async () => withRefs))({ prompt: 'q', model }, {}, new FakeStream(), token);
  assert.deepEqual(result, { errorDetails: { message: 'The model request failed: quota exceeded' } });
});

test('without request.model the fallback model is used; without any model an error', async () => {
  const fallback = new FakeModel(['ok']);
  const stream = new FakeStream();
  const res = await makeChatHandler(deps(async () => noRefs, { fallbackModel: async () => fallback }))({ prompt: 'q' }, {}, stream, token);
  assert.deepEqual(res, { metadata: { references: [] } });
  assert.deepEqual(fallback.sent, [[{ role: 'user', text: 'plain question' }]]);
  const none = await makeChatHandler(deps(async () => noRefs, { fallbackModel: async () => undefined }))({ prompt: 'q' }, {}, new FakeStream(), token);
  assert.deepEqual(none, { errorDetails: { message: 'No language model is available for @dsh.' } });
});

test('cancellation stops streaming the answer', async () => {
  const tok = { isCancellationRequested: false };
  const model: ModelLike<FakeMessage> = {
    async sendRequest() {
      return {
        text: (async function* () {
          yield 'first';
          tok.isCancellationRequested = true;
          yield 'second';
        })(),
      };
    },
  };
  const stream = new FakeStream();
  await makeChatHandler(deps(async () => noRefs))({ prompt: 'q', model }, {}, stream, tok);
  assert.equal(stream.text, 'first');
});
