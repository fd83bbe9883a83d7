// Unit tests of the pure dsh/prepare helpers, against the golden URI/mention vectors.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { clipboardText, contextText, formatDshError, formatMention, PrepareResult, promptParts, referencesMarkdown, sessionUri } from '../../src/prompt';

// out/test/unit -> repository root
const golden = path.resolve(__dirname, '../../../../../testdata/golden');

interface UriCase {
  name: string;
  input: { mode: string; sessionId?: string; reference?: { sessionId: string; label?: string } };
  output: { uri?: string; mention?: string };
}

const uriCases: UriCase[] = JSON.parse(fs.readFileSync(path.join(golden, 'uri.json'), 'utf8'));

test('sessionUri matches the golden encode vectors', async (t) => {
  const cases = uriCases.filter((c) => c.input.mode === 'encode');
  assert.ok(cases.length > 5, 'golden encode cases present');
  for (const c of cases) {
    await t.test(c.name, () => assert.equal(sessionUri(c.input.sessionId!), c.output.uri));
  }
});

test('formatMention matches the golden format vectors', async (t) => {
  const cases = uriCases.filter((c) => c.input.mode === 'format');
  assert.ok(cases.length > 3, 'golden format cases present');
  for (const c of cases) {
    await t.test(c.name, () => assert.equal(formatMention(c.input.reference!.sessionId, c.input.reference!.label), c.output.mention));
  }
});

test('promptParts and clipboardText put the context message before the readable text', async (t) => {
  const cases: { name: string; prepared: PrepareResult; parts: string[]; ctx?: string }[] = [
    { name: 'no context', prepared: { content: 'hi', references: [] }, parts: ['hi'] },
    {
      name: 'context',
      prepared: { content: 'ask @A', references: [{ sessionId: 'a', label: 'A' }], contextMessage: { content: [{ type: 'text', text: '## Referenced sessions\n…' }] } },
      parts: ['## Referenced sessions\n…', 'ask @A'],
      ctx: '## Referenced sessions\n…',
    },
    {
      name: 'non-text parts ignored',
      prepared: { content: 'q', references: [], contextMessage: { content: [{ type: 'image' }, { type: 'text', text: 'T' }] } },
      parts: ['T', 'q'],
      ctx: 'T',
    },
    { name: 'empty content list means no context', prepared: { content: 'q', references: [], contextMessage: { content: [] } }, parts: ['q'] },
  ];
  for (const c of cases) {
    await t.test(c.name, () => {
      assert.deepEqual(promptParts(c.prepared), c.parts);
      assert.equal(contextText(c.prepared), c.ctx);
      assert.equal(clipboardText(c.prepared), c.parts.join('\n\n'));
    });
  }
});

test('formatDshError', async (t) => {
  const cases: { name: string; err: unknown; want: string }[] = [
    { name: 'dsh code', err: { code: -32803, message: 'session x is not in the store', data: { code: 'SESSION_REFERENCE_READ_FAILED' } }, want: 'session x is not in the store (SESSION_REFERENCE_READ_FAILED)' },
    { name: 'rpc code only', err: { code: -32602, message: 'bad params' }, want: 'bad params (JSON-RPC -32602)' },
    { name: 'plain error', err: new Error('boom'), want: 'boom' },
    { name: 'string', err: 'text', want: 'text' },
  ];
  for (const c of cases) {
    await t.test(c.name, () => assert.equal(formatDshError(c.err), c.want));
  }
});

test('referencesMarkdown escapes labels', () => {
  assert.equal(referencesMarkdown([]), '');
  assert.equal(referencesMarkdown([{ sessionId: 'id`1', label: 'a*b [c]' }]), 'Referenced sessions:\n- a\\*b \\[c\\] (`id1`)\n\n');
});
