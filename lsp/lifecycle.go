package lsp

import (
	"encoding/json"
	"net/url"
	"path"
	"runtime"
	"slices"
	"strings"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/dsh-lsp/dsh-lsp/lsp/position"
	"github.com/dsh-lsp/dsh-lsp/reference"
)

// Command names announced in executeCommandProvider.
const (
	// CommandPrepare prepares a prompt (CONTRACT §5).
	CommandPrepare = "dsh.prepare"
)

// initialize negotiates the position encoding, reads initializationOptions
// and answers the capabilities. Invalid settings fail initialize with an
// error naming the key.
func (s *Server) initialize(p *protocol.InitializeParams) (protocol.InitializeResult, error) {
	st, err := parseSettings(json.RawMessage(p.InitializationOptions))
	var env *environment
	if err == nil {
		env, err = s.buildEnvironment(st)
	}
	if err != nil {
		// -32602 naming the key, with dsh's code for scripts.
		return protocol.InitializeResult{}, &jsonrpc2.Error{Code: jsonrpc2.InvalidParams, Message: "initializationOptions: " + err.Error(),
			Data: errorData(reference.CodeInvalidConfig)}
	}

	var offered []string
	if p.Capabilities.General != nil {
		for _, e := range p.Capabilities.General.PositionEncodings {
			offered = append(offered, string(e))
		}
	}
	enc := position.NegotiateEncoding(offered)
	caps := clientCaps{ale: looksLikeALE(p)}
	if caps.ale {
		// ALE sends and reads byte columns whatever the encoding says.
		enc = position.UTF8
	}
	if w := p.Capabilities.Window; w != nil && w.WorkDoneProgress != nil {
		caps.workDoneProgress = *w.WorkDoneProgress
	}
	if td := p.Capabilities.TextDocument; td != nil {
		if td.Hover != nil {
			caps.hoverMarkdown = slices.Contains(td.Hover.ContentFormat, protocol.MarkupKindMarkdown)
		}
		if td.Completion != nil && td.Completion.CompletionItem != nil {
			caps.docMarkdown = slices.Contains(td.Completion.CompletionItem.DocumentationFormat, protocol.MarkupKindMarkdown)
		}
	}

	s.mu.Lock()
	s.state = stateInitialized
	s.encoding = enc
	s.caps = caps
	s.settings = st
	s.useEnvironment(env)
	s.workspace = workspaceCWD(p)
	folders, _ := p.WorkspaceFolders.Get()
	for _, f := range folders {
		s.folders = append(s.folders, string(f.URI))
	}
	s.mu.Unlock()

	version, _ := p.ClientInfo.Version.Get()
	client := p.ClientInfo.Name + " " + version
	s.logger.Info("initialize", "client", client, "ale", caps.ale, "positionEncoding", string(enc), "root", env.root)

	yes, incremental := true, protocol.TextDocumentSyncKindIncremental
	info := protocol.ServerInfo{Name: "dsh-lsp"}
	if s.opts.Version != "" {
		info.Version = protocol.NewOptional(s.opts.Version)
	}
	return protocol.InitializeResult{
		Capabilities: protocol.ServerCapabilities{
			PositionEncoding: protocol.PositionEncodingKind(enc),
			TextDocumentSync: &protocol.TextDocumentSyncOptions{OpenClose: &yes, Change: &incremental},
			CompletionProvider: &protocol.CompletionOptions{
				TriggerCharacters: []string{"@"},
				ResolveProvider:   &yes,
			},
			HoverProvider:          protocol.Boolean(true),
			CodeActionProvider:     &protocol.CodeActionOptions{CodeActionKinds: []protocol.CodeActionKind{protocol.CodeActionKindQuickFix}},
			ExecuteCommandProvider: protocol.ExecuteCommandOptions{Commands: []string{CommandPrepare}},
		},
		ServerInfo: info,
	}, nil
}

// looksLikeALE recognizes Vim's ALE, which sends no clientInfo and a fixed
// capability set (contextSupport false, workspace/configuration false,
// plaintext-only hover). ALE needs its own completion item shape.
func looksLikeALE(p *protocol.InitializeParams) bool {
	c := p.Capabilities
	if p.ClientInfo != (protocol.ClientInfo{}) || c.General != nil || c.Workspace == nil || c.Workspace.Configuration == nil || *c.Workspace.Configuration {
		return false
	}
	td := c.TextDocument
	if td == nil || td.Completion == nil || td.Completion.ContextSupport == nil || *td.Completion.ContextSupport {
		return false
	}
	return td.Hover != nil && len(td.Hover.ContentFormat) == 1 && td.Hover.ContentFormat[0] == protocol.MarkupKindPlainText
}

// workspaceCWD returns the path of the first workspace folder (or rootUri,
// rootPath), nil when there is none.
func workspaceCWD(p *protocol.InitializeParams) *string {
	var u string
	folders, _ := p.WorkspaceFolders.Get()
	// Clients without workspace folders (Vim ALE, older editors) send only
	// the deprecated rootUri and rootPath.
	//lint:ignore SA1019 the fallback for clients that send no workspaceFolders
	rootPath, _ := p.RootPath.Get()
	//lint:ignore SA1019 the fallback for clients that send no workspaceFolders
	rootURI := p.RootURI
	switch {
	case len(folders) > 0:
		u = string(folders[0].URI)
	case rootURI != nil && *rootURI != "":
		u = string(*rootURI)
	case rootPath != "":
		return &rootPath
	default:
		return nil
	}
	if path, ok := fileURIPath(u); ok {
		return &path
	}
	return nil
}

// fileURIPath converts a file: URI to a clean OS path.
func fileURIPath(u string) (string, bool) { return fileURIPathOn(runtime.GOOS, u) }

// fileURIPathOn is fileURIPath for a given GOOS. On Windows the path must
// look like the cwd dsh records there (process.cwd()): "file:///c%3A/x"
// is "C:\x" (editors lower-case the drive letter, Windows shells start
// with an upper-case one), "file://host/share/x" is the UNC path
// "\\host\share\x", and a drive-less path ("file:///home/alice") names
// nothing dsh could record on Windows, so it is kept as written (a store
// made on another OS still ranks by it).
func fileURIPathOn(goos, u string) (string, bool) {
	pu, err := url.Parse(u)
	if err != nil || pu.Scheme != "file" || pu.Path == "" {
		return "", false
	}
	if goos == "windows" {
		return windowsPath(pu.Host, pu.Path), true
	}
	return posixPath(pu.Path), true
}

// posixPath is the clean form of a file URI's path, without a trailing
// slash.
func posixPath(p string) string {
	p = path.Clean(p)
	if len(p) > 1 {
		p = strings.TrimSuffix(p, "/")
	}
	return p
}

// windowsPath is the Windows path of a file URI with host and path p, as
// fileURIPathOn describes.
func windowsPath(host, p string) string {
	switch {
	case host != "" && host != "localhost":
		p = `\\` + host + strings.ReplaceAll(path.Clean(p), "/", `\`)
	case hasDriveLetter(p):
		p = strings.ToUpper(p[1:2]) + ":" + strings.ReplaceAll(path.Clean("/"+p[3:]), "/", `\`)
	default:
		return path.Clean(p)
	}
	if len(p) > 3 {
		p = strings.TrimSuffix(p, `\`)
	}
	return p
}

// hasDriveLetter reports whether the URI path p starts with a drive, as in
// "/c:/x".
func hasDriveLetter(p string) bool {
	return len(p) >= 3 && p[0] == '/' && p[2] == ':' && (p[1] >= 'a' && p[1] <= 'z' || p[1] >= 'A' && p[1] <= 'Z')
}

// didChangeWorkspaceFolders keeps the folder list: the first folder's path
// is the default target cwd.
func (s *Server) didChangeWorkspaceFolders(p *protocol.DidChangeWorkspaceFoldersParams) {
	s.mu.Lock()
	kept := slices.DeleteFunc(slices.Clone(s.folders), func(u string) bool {
		return slices.ContainsFunc(p.Event.Removed, func(r protocol.WorkspaceFolder) bool { return string(r.URI) == u })
	})
	for _, a := range p.Event.Added {
		kept = append(kept, string(a.URI))
	}
	s.folders = kept
	s.workspace = nil
	if len(kept) > 0 {
		if path, ok := fileURIPath(kept[0]); ok {
			s.workspace = &path
		}
	}
	s.mu.Unlock()
	s.rediagnoseAll()
}

// initialized starts indexing the store in the background (with progress).
func (s *Server) initialized(*noParams) {
	s.startIndexing()
}

// shutdown moves to the shut-down state: later requests fail.
func (s *Server) shutdown(*noParams) (any, error) {
	s.mu.Lock()
	s.state = stateShutdown
	s.mu.Unlock()
	s.diag.stopAll(&s.bg)
	// Later requests fail: the stores, their watches and inotify
	// instances are released now rather than at exit.
	s.releaseSources(func(string) bool { return true })
	s.logger.Info("shutdown")
	return nil, nil
}

// exit ends the session; Serve returns the exit code.
func (s *Server) exit(*noParams) {
	s.mu.Lock()
	already := s.exited
	s.exited = true
	s.mu.Unlock()
	if !already {
		s.logger.Info("exit")
		close(s.exitCh)
	}
}
