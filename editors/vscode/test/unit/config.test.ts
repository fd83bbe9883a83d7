// Unit tests of server lookup, settings and document selector building.
import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import { documentSelector, FsProbe, pushedSettings, resolveServer, serverSettings } from '../../src/config';

function probe(executables: string[], others: string[] = []): FsProbe {
  return {
    isExecutable: (p) => executables.includes(p),
    exists: (p) => executables.includes(p) || others.includes(p),
  };
}

test('resolveServer: setting, then bundled binary, then PATH', async (t) => {
  const base = { extensionPath: '/ext', platform: 'linux', arch: 'x64', envPath: '/usr/local/bin:/usr/bin' };
  const bundled = '/ext/bin/linux-x64/dsh-lsp';
  const cases: { name: string; serverPath: string; fs: FsProbe; want: { command?: string; origin?: string; error?: RegExp } }[] = [
    { name: 'setting wins', serverPath: '/opt/dsh-lsp', fs: probe(['/opt/dsh-lsp', bundled, '/usr/bin/dsh-lsp']), want: { command: '/opt/dsh-lsp', origin: 'setting' } },
    { name: 'setting with ~', serverPath: '~/bin/dsh-lsp', fs: probe([`${process.env.HOME}/bin/dsh-lsp`]), want: { command: `${process.env.HOME}/bin/dsh-lsp`, origin: 'setting' } },
    { name: 'missing setting is an error, no fallback', serverPath: '/nope', fs: probe([bundled]), want: { error: /dsh\.serverPath points to \/nope, which does not exist/ } },
    { name: 'non-executable setting', serverPath: '/opt/x', fs: probe([], ['/opt/x']), want: { error: /which is not an executable file/ } },
    { name: 'bundled', serverPath: '', fs: probe([bundled, '/usr/bin/dsh-lsp']), want: { command: bundled, origin: 'bundled' } },
    { name: 'PATH in order', serverPath: ' ', fs: probe(['/usr/bin/dsh-lsp', '/usr/local/bin/dsh-lsp']), want: { command: '/usr/local/bin/dsh-lsp', origin: 'path' } },
    { name: 'nothing', serverPath: '', fs: probe([]), want: { error: /dsh-lsp was not found.*linux-x64.*set dsh\.serverPath/ } },
  ];
  for (const c of cases) {
    await t.test(c.name, () => {
      const got = resolveServer({ ...base, serverPath: c.serverPath, fs: c.fs });
      if (c.want.error) {
        assert.ok('error' in got, JSON.stringify(got));
        assert.match(got.error, c.want.error);
      } else {
        assert.deepEqual(got, { command: c.want.command, origin: c.want.origin });
      }
    });
  }
});

test('serverSettings sends only set keys, expanded', async (t) => {
  const cases: { name: string; cfg: Record<string, unknown>; ws?: string; want: object }[] = [
    { name: 'defaults', cfg: { sessionsDir: '', maxReferences: null, candidateLimit: null, maxReferenceBytes: null, target: null }, want: {} },
    {
      name: 'all keys',
      cfg: { sessionsDir: '/s', maxReferences: 2, candidateLimit: 10, maxReferenceBytes: 700, target: { sessionId: 'me', cwd: '/p' } },
      want: { sessionsDir: '/s', maxReferences: 2, candidateLimit: 10, maxReferenceBytes: 700, target: { sessionId: 'me', cwd: '/p' } },
    },
    { name: 'workspace-relative dir', cfg: { sessionsDir: 'store' }, ws: '/w', want: { sessionsDir: '/w/store' } },
    { name: '${workspaceFolder}', cfg: { sessionsDir: '${workspaceFolder}/s' }, ws: '/w', want: { sessionsDir: '/w/s' } },
    { name: '~', cfg: { sessionsDir: '~/.dsh/sessions' }, want: { sessionsDir: `${process.env.HOME}/.dsh/sessions` } },
    { name: 'invalid values pass through for the server to refuse', cfg: { maxReferences: 9 }, want: { maxReferences: 9 } },
    { name: 'empty target dropped', cfg: { target: { sessionId: '', cwd: '' } }, want: {} },
  ];
  for (const c of cases) {
    await t.test(c.name, () => assert.deepEqual(serverSettings((k) => c.cfg[k], c.ws), c.want));
  }
});

test('documentSelector: built-ins plus user entries', () => {
  const got = documentSelector(['markdown', { pattern: '**/*.txt' }, { bogus: 1 }, 3]);
  assert.deepEqual(got.selector, [
    { scheme: 'chatSessionInput' },
    { language: 'dsh-chat' },
    { language: 'prompt' },
    { language: 'markdown' },
    { pattern: '**/*.txt' },
  ]);
  assert.deepEqual(got.invalid, [{ bogus: 1 }, 3]);
  assert.equal(documentSelector(undefined).selector.length, 3);
});

test('pushedSettings names every key, null where unset', () => {
  assert.deepEqual(pushedSettings({ maxReferences: 2 }), {
    sessionsDir: null, target: null, maxReferences: 2, candidateLimit: null, maxReferenceBytes: null, contentSearch: null,
  });
  assert.deepEqual(pushedSettings({ sessionsDir: '/s', target: { sessionId: 'a' } }), {
    sessionsDir: '/s', target: { sessionId: 'a' }, maxReferences: null, candidateLimit: null, maxReferenceBytes: null, contentSearch: null,
  });
});

test('serverSettings sends contentSearch only when it is turned off', () => {
  const get = (v: unknown) => (key: string) => (key === 'contentSearch' ? v : undefined);
  assert.deepEqual(serverSettings(get(false), undefined), { contentSearch: false });
  assert.deepEqual(serverSettings(get(true), undefined), {});
  assert.deepEqual(serverSettings(get(undefined), undefined), {});
});
