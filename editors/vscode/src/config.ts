// Pure helpers for locating dsh-lsp and building the server settings object; no `vscode`
// import, so they are unit-tested with plain Node.
import * as os from 'os';
import * as path from 'path';

/** Where the server binary was found, for messages. */
export type ServerOrigin = 'setting' | 'bundled' | 'path';

/** The resolved server, or why none was found. */
export type ServerResolution =
  | { command: string; origin: ServerOrigin }
  | { error: string };

/** File-system checks resolveServer needs (injected so tests need no real files). */
export interface FsProbe {
  /** isExecutable reports whether p is an existing regular file the user may run. */
  isExecutable(p: string): boolean;
  /** exists reports whether p exists at all. */
  exists(p: string): boolean;
}

/** The binary name on this platform. */
export function binaryName(platform: string): string {
  return platform === 'win32' ? 'dsh-lsp.exe' : 'dsh-lsp';
}

/** The path functions of a platform (win32 joins with backslashes), so tests can simulate either on any OS. */
function pathOf(platform: string): path.PlatformPath {
  return platform === 'win32' ? path.win32 : path.posix;
}

/**
 * bundledServerPath is where a platform .vsix carries its server:
 * bin/<platform>-<arch>/dsh-lsp (dsh-lsp.exe on Windows), named like the
 * `vsce package --target` platforms (linux-x64, darwin-arm64, win32-x64, …).
 */
export function bundledServerPath(extensionPath: string, platform: string, arch: string): string {
  return pathOf(platform).join(extensionPath, 'bin', `${platform}-${arch}`, binaryName(platform));
}

/**
 * resolveServer picks the dsh-lsp binary: the `dsh.serverPath` setting, else the binary
 * bundled for this platform, else `dsh-lsp` on PATH. The error explains the fix.
 */
export function resolveServer(opts: {
  serverPath: string;
  extensionPath: string;
  platform: string;
  arch: string;
  envPath: string;
  fs: FsProbe;
}): ServerResolution {
  const setting = expandHome(opts.serverPath.trim(), undefined);
  if (setting !== '') {
    if (opts.fs.isExecutable(setting)) {
      return { command: setting, origin: 'setting' };
    }
    const why = opts.fs.exists(setting) ? 'is not an executable file' : 'does not exist';
    return {
      error: `The setting dsh.serverPath points to ${setting}, which ${why}. ` +
        'Fix the path (or clear the setting to use the bundled server or dsh-lsp on PATH), then run "dsh: Restart Language Server".',
    };
  }
  const bundled = bundledServerPath(opts.extensionPath, opts.platform, opts.arch);
  if (opts.fs.isExecutable(bundled)) {
    return { command: bundled, origin: 'bundled' };
  }
  const sep = opts.platform === 'win32' ? ';' : ':';
  for (const dir of opts.envPath.split(sep)) {
    if (dir === '') {
      continue;
    }
    const candidate = pathOf(opts.platform).join(dir, binaryName(opts.platform));
    if (opts.fs.isExecutable(candidate)) {
      return { command: candidate, origin: 'path' };
    }
  }
  return {
    error: `dsh-lsp was not found: this extension carries no server for ${opts.platform}-${opts.arch} and dsh-lsp is not on PATH. ` +
      `Install the extension package built for ${opts.platform}-${opts.arch}, or install dsh-lsp (a release archive, or go install github.com/dsh-lsp/dsh-lsp/cmd/dsh-lsp@latest) ` +
      'and put it on PATH or set dsh.serverPath to the binary, then run "dsh: Restart Language Server".',
  };
}

/**
 * startFailure explains a server that was found but did not start, and what to do about it
 * for the place it came from.
 */
export function startFailure(command: string, origin: ServerOrigin, platform: string, arch: string, err: string): string {
  const restart = 'then run "dsh: Restart Language Server".';
  const install = 'install dsh-lsp (a release archive for your platform, or go install github.com/dsh-lsp/dsh-lsp/cmd/dsh-lsp@latest)';
  const what = `dsh-lsp (${command}) failed to start: ${err}. `;
  switch (origin) {
    case 'setting':
      return what + `Check that dsh.serverPath names a dsh-lsp built for ${platform}-${arch} (run it with "version" in a terminal), or clear the setting to use the bundled server; ${restart}`;
    case 'bundled':
      return what + `The server bundled with this extension does not run here: install the extension package built for ${platform}-${arch}, or ${install} and set dsh.serverPath to it; ${restart}`;
    default:
      return what + `Run "${command} version" in a terminal to see why; reinstall it or ${install}, or set dsh.serverPath; ${restart}`;
  }
}

/**
 * expandHome expands a leading `~`, `~/` or `~\` (against the OS home: %USERPROFILE% on
 * Windows) and `${workspaceFolder}` in a path setting.
 */
export function expandHome(p: string, workspaceFolder: string | undefined, home = os.homedir()): string {
  let out = p;
  if (home !== '' && (out === '~' || out.startsWith('~/') || out.startsWith('~\\'))) {
    out = home + out.slice(1);
  }
  if (workspaceFolder !== undefined) {
    out = out.split('${workspaceFolder}').join(workspaceFolder);
  }
  return out;
}

/** The settings object of CONTRACT.md §2 (all keys optional). */
export interface ServerSettings {
  sessionsDir?: string;
  target?: { sessionId?: string; cwd?: string };
  maxReferences?: number;
  candidateLimit?: number;
  maxReferenceBytes?: number;
  contentSearch?: boolean;
}

/**
 * serverSettings builds the object sent as initializationOptions and as
 * didChangeConfiguration {settings: {dsh: …}} from the `dsh.*` configuration. Unset
 * (empty / null) values are left out so the server applies its defaults; values are passed
 * through unchanged otherwise, so the server reports invalid ones by key.
 */
export function serverSettings(get: (key: string) => unknown, workspaceFolder: string | undefined): ServerSettings {
  const out: ServerSettings = {};
  const dir = get('sessionsDir');
  if (typeof dir === 'string' && dir.trim() !== '') {
    let p = expandHome(dir.trim(), workspaceFolder);
    if (workspaceFolder !== undefined && !path.isAbsolute(p)) {
      p = path.join(workspaceFolder, p);
    }
    out.sessionsDir = p;
  }
  for (const key of ['maxReferences', 'candidateLimit', 'maxReferenceBytes'] as const) {
    const v = get(key);
    if (v !== null && v !== undefined && v !== '') {
      out[key] = v as number;
    }
  }
  // Only "off" is sent: on is the server's default.
  if (get('contentSearch') === false) {
    out.contentSearch = false;
  }
  const target = get('target');
  if (target !== null && typeof target === 'object') {
    const t = target as { sessionId?: unknown; cwd?: unknown };
    const clean: { sessionId?: string; cwd?: string } = {};
    if (typeof t.sessionId === 'string' && t.sessionId !== '') {
      clean.sessionId = t.sessionId;
    }
    if (typeof t.cwd === 'string' && t.cwd !== '') {
      clean.cwd = expandHome(t.cwd, workspaceFolder);
    }
    if (clean.sessionId !== undefined || clean.cwd !== undefined) {
      out.target = clean;
    }
  }
  return out;
}

/** The keys of ServerSettings, in CONTRACT.md §2 order. */
export const settingKeys = ['sessionsDir', 'target', 'maxReferences', 'candidateLimit', 'maxReferenceBytes', 'contentSearch'] as const;

/**
 * pushedSettings is the `settings.dsh` object of a didChangeConfiguration push: every key,
 * null where unset. The server layers a push over initializationOptions key by key, so a
 * key left out would keep its start-up value after the user cleared it; null resets it to
 * the default.
 */
export function pushedSettings(s: ServerSettings): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of settingKeys) {
    out[key] = s[key] ?? null;
  }
  return out;
}

/** A document filter as vscode.DocumentFilter (structural). */
export interface DocFilter {
  language?: string;
  scheme?: string;
  pattern?: string;
}

/** The documents dsh-lsp always attaches to. */
export const builtinSelector: DocFilter[] = [
  { scheme: 'chatSessionInput' },
  { language: 'dsh-chat' },
  { language: 'prompt' },
];

/**
 * documentSelector returns the built-in filters plus the user's `dsh.documentSelector`
 * entries (language ids or filter objects); malformed entries are returned in `invalid`.
 */
export function documentSelector(user: unknown): { selector: DocFilter[]; invalid: unknown[] } {
  const selector = [...builtinSelector];
  const invalid: unknown[] = [];
  for (const entry of Array.isArray(user) ? user : []) {
    if (typeof entry === 'string' && entry !== '') {
      selector.push({ language: entry });
      continue;
    }
    if (entry !== null && typeof entry === 'object') {
      const f: DocFilter = {};
      for (const k of ['language', 'scheme', 'pattern'] as const) {
        const v = (entry as Record<string, unknown>)[k];
        if (typeof v === 'string' && v !== '') {
          f[k] = v;
        }
      }
      if (Object.keys(f).length > 0) {
        selector.push(f);
        continue;
      }
    }
    invalid.push(entry);
  }
  return { selector, invalid };
}
