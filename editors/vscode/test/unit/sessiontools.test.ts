// Unit tests of the language-model tools and document-link logic (src/sessiontools.ts),
// against the golden URI and mention vectors and a fake dsh-lsp.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { Candidate, formatMention, PrepareResult, sessionUri } from '../../src/prompt';
import { decodeSessionUri, DshToolError, findSessionLinks, readSession, searchSessions, SessionService } from '../../src/sessiontools';

// out/test/unit -> repository root
const golden = path.resolve(__dirname, '../../../../../testdata/golden');

interface Case {
  name: string;
  input: { mode: string; uri?: string; text?: string };
  output: { sessionId?: string; references?: { sessionId: string; label: string }[]; error?: { code: string; message: string } };
}
const load = (f: string): Case[] => JSON.parse(fs.readFileSync(path.join(golden, f), 'utf8'));

test('decodeSessionUri matches the golden decode vectors (ids and errors)', () => {
  const cases = load('uri.json').filter((c) => c.input.mode === 'decode');
  assert.ok(cases.length > 5);
  for (const c of cases) {
    if (c.output.error) {
      assert.throws(() => decodeSessionUri(c.input.uri!), (e: DshToolError) => {
        assert.equal(e.data.code, c.output.error!.code, c.name);
        assert.equal(e.message, c.output.error!.message, c.name);
        return true;
      });
    } else {
      assert.equal(decodeSessionUri(c.input.uri!), c.output.sessionId, c.name);
    }
  }
});

test('findSessionLinks finds every mention of the golden parse vectors, linking its URI', () => {
  const cases = load('parse.json').filter((c) => c.input.mode === 'parse' && c.output.references);
  assert.ok(cases.length > 5);
  for (const c of cases) {
    const text = c.input.text!;
    const links = findSessionLinks(text);
    assert.equal(links.length, c.output.references!.length, c.name);
    links.forEach((l, i) => {
      const ref = c.output.references![i];
      const uri = text.slice(l.start, l.end);
      assert.ok(uri.startsWith('dsh-session:'), `${c.name}: link ${i} is ${JSON.stringify(uri)}`);
      assert.equal(decodeSessionUri(uri), ref.sessionId, c.name);
      assert.ok(text.includes(l.mention) && l.mention.includes(uri), c.name);
      // a Markdown mention's label, unescaped; a bare URI has none (prepare labels it by id)
      assert.equal(l.label === '' ? ref.sessionId : l.label, ref.label, c.name);
    });
  }
});

/** fakeService records requests and answers from a fixed candidate list. */
function fakeService(cands: Candidate[]): SessionService & { prepared: string[]; queries: unknown[] } {
  const prepared: string[] = [];
  const queries: unknown[] = [];
  return {
    prepared,
    queries,
    async candidates(params) {
      queries.push(params);
      return cands.filter((c) => !params.query || c.sessionId.includes(params.query) || c.label.includes(params.query));
    },
    async prepare(text): Promise<PrepareResult> {
      prepared.push(text);
      return { content: 'x', references: [], contextMessage: { content: [{ type: 'text', text: 'CTX ' + text }] } };
    },
  };
}

const cand = (sessionId: string, label: string): Candidate => ({
  sessionId, label, createdAt: 1, uri: sessionUri(sessionId), mention: formatMention(sessionId, label),
});

test('readSession prepares the candidate mention (latest title as label) by uri or id', async () => {
  const svc = fakeService([cand('s-1', 'Fix ] the [login]'), cand('s-10', 'other')]);
  assert.equal(await readSession(svc, { uri: sessionUri('s-1') }), 'CTX ' + formatMention('s-1', 'Fix ] the [login]'));
  assert.equal(await readSession(svc, { sessionId: 's-10' }), 'CTX ' + formatMention('s-10', 'other'));
  // not listed (e.g. the store lists it no more): labelled by its id, the server decides
  assert.equal(await readSession(svc, { sessionId: 'gone' }), 'CTX ' + formatMention('gone'));
});

test('the tools refuse bad input with a dsh code', async () => {
  const svc = fakeService([]);
  const cases: [() => Promise<string>, string][] = [
    [() => readSession(svc, {}), 'SESSION_REFERENCE_INVALID_CONFIG'],
    [() => readSession(svc, { uri: sessionUri('a'), sessionId: 'a' }), 'SESSION_REFERENCE_INVALID_CONFIG'],
    [() => readSession(svc, { uri: 42 }), 'SESSION_REFERENCE_INVALID_CONFIG'],
    [() => readSession(svc, { uri: 'dsh-session:%%%' }), 'SESSION_REFERENCE_INVALID_REFERENCE'],
    [() => readSession(svc, { uri: 'dsh-session:eyJhIjoxfQ' }), 'SESSION_REFERENCE_INVALID_REFERENCE'],
    [() => searchSessions(svc, { query: 42 }), 'SESSION_REFERENCE_INVALID_CONFIG'],
    [() => searchSessions(svc, { limit: '3' }), 'SESSION_REFERENCE_INVALID_CONFIG'],
  ];
  for (const [run, code] of cases) {
    await assert.rejects(run, (e: DshToolError) => e.data.code === code);
  }
  assert.equal(svc.prepared.length, 0, 'nothing reaches dsh/prepare');
});

test('searchSessions passes query and limit and returns the candidates as JSON', async () => {
  const cands = [cand('s-1', 'one'), cand('s-2', 'two')];
  const svc = fakeService(cands);
  assert.equal(await searchSessions(svc, {}), JSON.stringify(cands));
  assert.equal(await searchSessions(svc, { query: 'two', limit: 5 }), JSON.stringify([cands[1]]));
  assert.deepEqual(svc.queries, [{}, { query: 'two', limit: 5 }]);
});

// dsh's mention pattern as a regular expression: the reference findSessionLinks must agree
// with (it is quadratic, so only small texts are run through it).
const dshMentionPattern = /@\[((?:\\.|[^\\\]])*)\]\((dsh-session:[^)\s]*)\)|dsh-session:[A-Za-z0-9_-]+/g;
function regexLinks(text: string): { start: number; end: number; mention: string; label: string }[] {
  return [...text.matchAll(dshMentionPattern)].map((m) => {
    const at = m.index ?? 0;
    if (m[2] === undefined) {
      return { start: at, end: at + m[0].length, mention: m[0], label: '' };
    }
    const start = at + m[0].length - 1 - m[2].length;
    return { start, end: start + m[2].length, mention: m[0], label: m[1].replace(/\\(.)/gs, '$1') };
  });
}

test('findSessionLinks finds exactly what dsh\'s mention pattern matches (random texts of its special characters)', () => {
  const pieces = ['@[', '@', '[', ']', '(', ')', '\\', '\n', '\r', '\u2028', ' ', '\u00a0', 'a', 'Ig', '-', 'dsh-session:', '](dsh-session:', '](', 'dsh-session:Ingi'];
  let seed = 12345;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  for (let i = 0; i < 20000; i++) {
    let text = '';
    for (let n = rand(14); n > 0; n--) {
      text += pieces[rand(pieces.length)];
    }
    assert.deepEqual(findSessionLinks(text), regexLinks(text), JSON.stringify(text));
  }
});

test('findSessionLinks examines each character a bounded number of times on hostile texts', () => {
  const n = 160 * 1024;
  const texts: [string, string][] = [
    ['"@[" repeated', '@['.repeat(n / 2)],
    ['"@[](dsh-session:" repeated', '@[](dsh-session:'.repeat(n / 16)],
    ['"@[\\\\" repeated', '@[\\\\'.repeat(n / 4)],
    ['"@[x\\\\]" repeated', '@[x\\]'.repeat(n / 5)],
    ['"dsh-session:" repeated', 'dsh-session:'.repeat(n / 12)],
    ['"@[a](dsh-session:Ig)" repeated', '@[a](dsh-session:Ig)'.repeat(n / 20)],
  ];
  for (const [name, text] of texts) {
    const cost = { steps: 0 };
    findSessionLinks(text, cost);
    // Linear: a few steps per character, however many mention starts the text holds (the
    // regular expression took ~n²/4 steps on the first text: 160 KB took 18 s).
    assert.ok(cost.steps <= 3 * text.length, `${name}: ${cost.steps} steps for ${text.length} characters`);
  }
});
