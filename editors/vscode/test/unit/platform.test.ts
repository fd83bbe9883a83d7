// Unit tests of the per-platform server lookup: the six bundled layouts of the platform
// .vsix files, Windows paths and PATH, and the start-failure advice.
import * as assert from 'node:assert/strict';
import * as os from 'node:os';
import { test } from 'node:test';
import { bundledServerPath, expandHome, FsProbe, resolveServer, startFailure } from '../../src/config';

function probe(executables: string[]): FsProbe {
  return { isExecutable: (p) => executables.includes(p), exists: (p) => executables.includes(p) };
}

test('bundledServerPath: one layout per vsce target', () => {
  const cases: [string, string, string][] = [
    ['linux', 'x64', '/ext/bin/linux-x64/dsh-lsp'],
    ['linux', 'arm64', '/ext/bin/linux-arm64/dsh-lsp'],
    ['darwin', 'x64', '/ext/bin/darwin-x64/dsh-lsp'],
    ['darwin', 'arm64', '/ext/bin/darwin-arm64/dsh-lsp'],
  ];
  for (const [platform, arch, want] of cases) {
    assert.equal(bundledServerPath('/ext', platform, arch), want);
  }
  const ext = 'C:\\Users\\bob\\.vscode\\extensions\\dsh-lsp.dsh-lsp-0.1.0-win32-x64';
  assert.equal(bundledServerPath(ext, 'win32', 'x64'), `${ext}\\bin\\win32-x64\\dsh-lsp.exe`);
  assert.equal(bundledServerPath(ext, 'win32', 'arm64'), `${ext}\\bin\\win32-arm64\\dsh-lsp.exe`);
});

test('resolveServer on Windows: bundled .exe, then dsh-lsp.exe on a ;-separated PATH', () => {
  const ext = 'C:\\ext';
  const base = { serverPath: '', extensionPath: ext, platform: 'win32', arch: 'arm64', envPath: 'C:\\Windows;C:\\Users\\bob\\go\\bin' };
  assert.deepEqual(resolveServer({ ...base, fs: probe([`${ext}\\bin\\win32-arm64\\dsh-lsp.exe`]) }), {
    command: `${ext}\\bin\\win32-arm64\\dsh-lsp.exe`,
    origin: 'bundled',
  });
  // An x64 package's binary does not count on arm64.
  assert.deepEqual(resolveServer({ ...base, fs: probe([`${ext}\\bin\\win32-x64\\dsh-lsp.exe`, 'C:\\Users\\bob\\go\\bin\\dsh-lsp.exe']) }), {
    command: 'C:\\Users\\bob\\go\\bin\\dsh-lsp.exe',
    origin: 'path',
  });
  const none = resolveServer({ ...base, fs: probe([]) });
  assert.ok('error' in none);
  assert.match(none.error, /win32-arm64/);
  assert.match(none.error, /go install github\.com\/dsh-lsp\/dsh-lsp\/cmd\/dsh-lsp@latest/);
  assert.match(none.error, /dsh\.serverPath/);
});

test('expandHome: ~, ~/ and ~\\ against the OS home', () => {
  assert.equal(expandHome('~', undefined, 'C:\\Users\\bob'), 'C:\\Users\\bob');
  assert.equal(expandHome('~\\bin\\dsh-lsp.exe', undefined, 'C:\\Users\\bob'), 'C:\\Users\\bob\\bin\\dsh-lsp.exe');
  assert.equal(expandHome('~/bin/dsh-lsp', undefined, '/home/alice'), '/home/alice/bin/dsh-lsp');
  assert.equal(expandHome('~x', undefined, '/home/alice'), '~x');
  assert.equal(expandHome('~/s', undefined), `${os.homedir()}/s`);
});

test('startFailure: says what to do for each origin', () => {
  const setting = startFailure('/opt/dsh-lsp', 'setting', 'darwin', 'arm64', 'spawn EACCES');
  assert.match(setting, /^dsh-lsp \(\/opt\/dsh-lsp\) failed to start: spawn EACCES\. /);
  assert.match(setting, /dsh\.serverPath names a dsh-lsp built for darwin-arm64/);
  const bundled = startFailure('/ext/bin/linux-arm64/dsh-lsp', 'bundled', 'linux', 'arm64', 'exit 126');
  assert.match(bundled, /install the extension package built for linux-arm64/);
  const onPath = startFailure('/usr/bin/dsh-lsp', 'path', 'linux', 'x64', 'exit 1');
  assert.match(onPath, /Run "\/usr\/bin\/dsh-lsp version" in a terminal/);
  for (const msg of [setting, bundled, onPath]) {
    assert.match(msg, /dsh: Restart Language Server/);
  }
});
