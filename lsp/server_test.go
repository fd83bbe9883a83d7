package lsp_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/dsh-lsp/dsh-lsp/lsp"
	"github.com/dsh-lsp/dsh-lsp/lsp/lsptest"
	"github.com/dsh-lsp/dsh-lsp/lsp/wire"
	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/storetest"
)

// storeRaw is the real-format fixture store (read only).
const storeRaw = "../testdata/fixtures/store-raw"

// Fixture session ids.
const (
	idA = "0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0001" // "Renaming git branches", /home/alice/proj
	idB = "0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0002"
	idC = "0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0003"
	idD = "0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0004" // /home/alice/legacy
	idE = "0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0005"
	idF = "0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0006" // no cwd
	idG = "0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0007" // /home/bob/scratch
)

// session is a running in-process server with its fake editor.
type session struct {
	*lsptest.Editor
	done chan int
}

// start runs a server over an in-process channel stream pair.
func start(t testing.TB, opts lsp.Options, setup ...func(*lsp.Server)) *session {
	t.Helper()
	server, client := jsonrpc2.NewChannelStreamPair(16)
	return startOn(t, opts, server, client, setup...)
}

// startOn runs a server on the stream server, its fake editor on client.
func startOn(t testing.TB, opts lsp.Options, server, client jsonrpc2.Stream, setup ...func(*lsp.Server)) *session {
	t.Helper()
	if opts.OpenSource == nil {
		// The production source (sessionstore.OpenIndexed) persists its
		// index in the user cache directory: keep it in the test's
		// (XDG_CACHE_HOME; LocalAppData on Windows).
		dir := t.TempDir()
		t.Setenv("XDG_CACHE_HOME", dir)
		t.Setenv("LocalAppData", dir)
	}
	if opts.ResolveRoot == nil {
		opts.ResolveRoot = func(flag string) (string, error) {
			if flag == "" {
				return storeRaw, nil
			}
			return flag, nil
		}
	}
	if opts.DiagnosticsDelay == 0 {
		opts.DiagnosticsDelay = 10 * time.Millisecond
	}
	srv := lsp.New(opts)
	for _, f := range setup {
		f(srv)
	}
	done := make(chan int, 1)
	go func() { done <- srv.Serve(context.Background(), server) }()
	s := &session{Editor: lsptest.NewEditor(t, client), done: done}
	t.Cleanup(func() {
		s.Close()
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			t.Errorf("server did not stop after the client went away")
		}
	})
	return s
}

// startInit starts a server and initializes it with options (nil: the
// fixture store) offering encodings.
func startInit(t *testing.T, options any, encodings ...string) *session {
	t.Helper()
	s := start(t, lsp.Options{})
	if options == nil {
		options = map[string]any{"sessionsDir": storeRaw}
	}
	if _, err := s.Initialize(options, encodings...); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	s.awaitIndexed(t)
	return s
}

// awaitIndexed returns when the store's first indexing pass has ended:
// until then completion answers from what is indexed so far (tested in
// TestCompletionWhileIndexing), and dsh/candidates waits for the index.
// An error (invalid settings under test) is not this helper's concern.
func (s *session) awaitIndexed(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = s.Call(ctx, "dsh/candidates", map[string]any{}, nil)
	if ctx.Err() != nil {
		t.Fatal("the store was not indexed within 10s")
	}
}

func (s *session) exitCode(t *testing.T) int {
	t.Helper()
	select {
	case code := <-s.done:
		s.done <- code // for Cleanup
		return code
	case <-time.After(10 * time.Second):
		t.Fatal("server did not exit")
	}
	return -1
}

func TestLifecycle(t *testing.T) {
	s := start(t, lsp.Options{})
	ctx := context.Background()

	err := s.Call(ctx, "textDocument/hover", map[string]any{}, nil)
	if e := lsptest.RPCError(err); e == nil || e.Code != -32002 {
		t.Fatalf("request before initialize: got %v, want -32002 ServerNotInitialized", err)
	}
	res, err := s.Initialize(map[string]any{"sessionsDir": storeRaw}, "utf-16")
	if err != nil {
		t.Fatal(err)
	}
	caps := res.Capabilities
	sync, _ := caps.TextDocumentSync.(*protocol.TextDocumentSyncOptions)
	if caps.CompletionProvider == nil || caps.CompletionProvider.TriggerCharacters[0] != "@" ||
		len(caps.ExecuteCommandProvider.Commands) == 0 || caps.ExecuteCommandProvider.Commands[0] != "dsh.prepare" ||
		sync == nil || sync.Change == nil || *sync.Change != protocol.TextDocumentSyncKindIncremental || caps.PositionEncoding != "utf-16" {
		t.Errorf("capabilities = %+v", caps)
	}
	if err := s.Call(ctx, "initialize", map[string]any{"capabilities": map[string]any{}}, nil); lsptest.RPCError(err) == nil || lsptest.RPCError(err).Code != jsonrpc2.InvalidRequest {
		t.Errorf("second initialize: got %v, want -32600", err)
	}
	if err := s.Call(ctx, "textDocument/unknownThing", map[string]any{}, nil); lsptest.RPCError(err) == nil || lsptest.RPCError(err).Code != jsonrpc2.MethodNotFound {
		t.Errorf("unknown method: got %v, want -32601", err)
	}
	if err := s.Call(ctx, "shutdown", nil, nil); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if err := s.Call(ctx, "dsh/candidates", map[string]any{}, nil); lsptest.RPCError(err) == nil || lsptest.RPCError(err).Code != jsonrpc2.InvalidRequest {
		t.Errorf("request after shutdown: got %v, want -32600 InvalidRequest", err)
	}
	s.Notify("exit", nil)
	if code := s.exitCode(t); code != 0 {
		t.Errorf("exit after shutdown: exit code %d, want 0", code)
	}
}

func TestExitWithoutShutdown(t *testing.T) {
	s := startInit(t, nil)
	s.Notify("exit", nil)
	if code := s.exitCode(t); code != 1 {
		t.Errorf("exit without shutdown: exit code %d, want 1", code)
	}
}

func TestBadInitializationOptions(t *testing.T) {
	tests := []struct {
		name    string
		options any
		key     string
	}{
		{"maxReferences too big", map[string]any{"maxReferences": 4}, "maxReferences"},
		{"maxReferences zero", map[string]any{"maxReferences": 0}, "maxReferences"},
		{"candidateLimit string", map[string]any{"candidateLimit": "2"}, "candidateLimit"},
		{"maxReferenceBytes fraction", map[string]any{"maxReferenceBytes": 1.5}, "maxReferenceBytes"},
		{"sessionsDir number", map[string]any{"sessionsDir": 5}, "sessionsDir"},
		{"sessionsDir is a file", map[string]any{"sessionsDir": "server_test.go"}, "sessionsDir"},
		{"target not object", map[string]any{"target": "me"}, "target"},
		{"target.cwd not string", map[string]any{"target": map[string]any{"cwd": 1}}, "target.cwd"},
		{"not an object", []int{1}, "object"},
	}
	// A sessionsDir with ~ must be checked once expanded.
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("USERPROFILE", home) // os.UserHomeDir on Windows
	if err := os.WriteFile(filepath.Join(home, "notes.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests = append(tests, struct {
		name    string
		options any
		key     string
	}{"sessionsDir is a file under ~", map[string]any{"sessionsDir": "~/notes.txt"}, "sessionsDir"})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := start(t, lsp.Options{ResolveRoot: sessionstore.ResolveRoot})
			_, err := s.Initialize(tt.options)
			e := lsptest.RPCError(err)
			if e == nil || e.Code != jsonrpc2.InvalidParams || !strings.Contains(e.Message, tt.key) {
				t.Fatalf("initialize with %v: got %v, want -32602 naming %q", tt.options, err, tt.key)
			}
			if code := lsptest.ErrorDataCode(err); code != string(reference.CodeInvalidConfig) {
				t.Errorf("data.code = %q, want INVALID_CONFIG", code)
			}
		})
	}
}

func TestDidChangeConfiguration(t *testing.T) {
	s := startInit(t, map[string]any{"sessionsDir": storeRaw, "candidateLimit": 2})
	count := func() int {
		var items []reference.CandidateItem
		if err := s.Call(context.Background(), "dsh/candidates", map[string]any{}, &items); err != nil {
			t.Fatal(err)
		}
		return len(items)
	}
	if n := count(); n != 2 {
		t.Fatalf("candidateLimit 2: %d candidates", n)
	}
	// Invalid: error message naming the key, previous settings kept.
	s.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"dsh": map[string]any{"candidateLimit": -1}}})
	s.Await(lsptest.ShownMessage(protocol.MessageTypeError, "candidateLimit"))
	if n := count(); n != 2 {
		t.Errorf("after refused settings: %d candidates, want the previous limit 2", n)
	}
	// No dsh section: ignored.
	s.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{}})
	// Valid.
	s.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"dsh": map[string]any{"sessionsDir": storeRaw, "candidateLimit": 5}}})
	deadline := time.Now().Add(5 * time.Second)
	for count() != 5 {
		if time.Now().After(deadline) {
			t.Fatal("new candidateLimit 5 never applied")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestInvalidParams(t *testing.T) {
	s := startInit(t, nil)
	ctx := context.Background()
	tests := []struct {
		method string
		params any
	}{
		{"textDocument/completion", json.RawMessage(`"x"`)},
		{"textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": "file:///not-open.dsh"}, "position": map[string]any{"line": 0, "character": 0}}},
		{"textDocument/hover", json.RawMessage(`[1,2]`)},
		{"dsh/prepare", map[string]any{}},
		{"dsh/prepare", map[string]any{"text": 5}},
		{"dsh/prepare", map[string]any{"text": "x", "textDocument": map[string]any{"uri": "file:///a"}}},
		{"dsh/prepare", map[string]any{"text": "x", "target": "me"}},
		{"dsh/prepare", json.RawMessage(`[]`)},
		{"dsh/candidates", map[string]any{"query": 7}},
		{"dsh/candidates", map[string]any{"limit": "ten"}},
		{"workspace/executeCommand", map[string]any{"command": "dsh.nope", "arguments": []any{}}},
		{"workspace/executeCommand", map[string]any{"command": "dsh.prepare", "arguments": []any{}}},
		{"workspace/executeCommand", map[string]any{"command": "dsh.prepare", "arguments": []any{7}}},
	}
	for _, tt := range tests {
		err := s.Call(ctx, tt.method, tt.params, nil)
		if e := lsptest.RPCError(err); e == nil || e.Code != jsonrpc2.InvalidParams {
			t.Errorf("%s %v: got %v, want -32602", tt.method, tt.params, err)
		}
	}
}

// blockingSource wraps a Source; ReadSurface blocks until its ctx is done
// (and SurfaceSummary is hidden, so every hover reads).
type blockingSource struct {
	lsp.Source
	entered chan struct{}
	once    sync.Once
}

func (b *blockingSource) SurfaceSummary(context.Context, string) (*reference.SurfaceSummary, bool) {
	return nil, false
}

func (b *blockingSource) ReadSurface(ctx context.Context, id string) (*reference.Surface, error) {
	b.once.Do(func() { close(b.entered) })
	<-ctx.Done()
	return nil, ctx.Err()
}

// startOver starts a server initialized on storeRaw whose session source
// is wrap(the plain store).
func startOver(t *testing.T, wrap func(lsp.Source) lsp.Source) *session {
	t.Helper()
	s := start(t, lsp.Options{OpenSource: func(root string) (lsp.Source, error) {
		st, err := storetest.OpenSynced(root, 0)
		return wrap(st), err
	}})
	if _, err := s.Initialize(map[string]any{"sessionsDir": storeRaw}); err != nil {
		t.Fatal(err)
	}
	return s
}

// startBlocking starts an initialized server whose session reads block
// until their request is cancelled.
func startBlocking(t *testing.T) (*session, *blockingSource) {
	t.Helper()
	bs := &blockingSource{entered: make(chan struct{})}
	s := startOver(t, func(st lsp.Source) lsp.Source { bs.Source = st; return bs })
	return s, bs
}

func TestCancelSlowPrepare(t *testing.T) {
	s, bs := startBlocking(t)
	errc := make(chan error, 1)
	go func() {
		errc <- s.Call(context.Background(), "dsh/prepare", map[string]any{"text": "see " + reference.FormatMention(idA, nil)}, nil)
	}()
	select {
	case <-bs.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("prepare never read the source")
	}
	// While prepare blocks, the server still answers other requests.
	var items []reference.CandidateItem
	if err := s.Call(context.Background(), "dsh/candidates", map[string]any{"limit": 1}, &items); err != nil || len(items) != 1 {
		t.Fatalf("candidates during a blocked prepare: %v, %d items", err, len(items))
	}
	s.Notify("$/cancelRequest", map[string]any{"id": s.LastID() - 1})
	select {
	case err := <-errc:
		e := lsptest.RPCError(err)
		if e == nil || e.Code != -32800 || lsptest.ErrorDataCode(err) != string(reference.CodeCancelled) {
			t.Fatalf("cancelled prepare: got %v (data %s), want -32800 + SESSION_REFERENCE_CANCELLED", err, lsptest.ErrorDataCode(err))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("cancelled prepare never answered")
	}
}

func TestDisconnectMidRequest(t *testing.T) {
	before := runtime.NumGoroutine()
	s, bs := startBlocking(t)
	go s.Call(context.Background(), "dsh/prepare", map[string]any{"text": reference.FormatMention(idA, nil)}, nil)
	<-bs.entered
	s.Close()
	if code := s.exitCode(t); code != 1 {
		t.Errorf("lost client: exit code %d, want 1", code)
	}
	// Every goroutine the session started ends.
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before+1 {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("goroutines: %d before, %d after\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestIndexingProgress(t *testing.T) {
	s := startInit(t, nil)
	deadline := time.Now().Add(10 * time.Second)
	for {
		var kinds []string
		for _, raw := range s.Progress() {
			var p struct {
				Token string `json:"token"`
				Value struct {
					Kind    string `json:"kind"`
					Message string `json:"message"`
				} `json:"value"`
			}
			if err := json.Unmarshal(raw, &p); err != nil || p.Token == "" {
				t.Fatalf("bad $/progress %s", raw)
			}
			kinds = append(kinds, p.Value.Kind+":"+p.Value.Message)
		}
		if n := len(kinds); n >= 2 && strings.HasPrefix(kinds[n-1], "end:") {
			if !strings.HasPrefix(kinds[0], "begin:indexing dsh sessions") || kinds[n-1] != "end:7 sessions indexed" {
				t.Errorf("progress = %q", kinds)
			}
			for _, k := range kinds[1 : n-1] {
				if !strings.HasPrefix(k, "report:") {
					t.Errorf("progress = %q", kinds)
				}
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("progress so far: %q", kinds)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestOutOfRangePositions(t *testing.T) {
	s := startInit(t, nil)
	ctx := context.Background()
	uri := "file:///p.dsh"
	s.Open(uri, "a🙂\n@")
	// Positions past the end of a line clamp; inside a surrogate pair round down.
	s.Notify("textDocument/didChange", map[string]any{
		"textDocument": map[string]any{"uri": uri, "version": 2},
		"contentChanges": []any{
			map[string]any{"range": protocol.Range{Start: protocol.Position{Line: 0, Character: 2}, End: protocol.Position{Line: 0, Character: 99}}, "text": "X"},
			map[string]any{"range": protocol.Range{Start: protocol.Position{Line: 9, Character: 0}, End: protocol.Position{Line: 9, Character: 5}}, "text": " @"},
		},
	})
	var list wire.CompletionList
	if err := s.Call(ctx, "textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": uri},
		"position": protocol.Position{Line: 1, Character: 50}}, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 7 {
		t.Errorf("completion at a clamped position: %d items", len(list.Items))
	}
	for _, m := range []string{"textDocument/completion", "textDocument/hover"} {
		err := s.Call(ctx, m, map[string]any{"textDocument": map[string]any{"uri": uri}, "position": protocol.Position{Line: 40, Character: 1}}, nil)
		if e := lsptest.RPCError(err); e == nil || e.Code != jsonrpc2.InvalidParams || !strings.Contains(e.Message, "beyond the last line") {
			t.Errorf("%s far past the end: %v", m, err)
		}
	}
	var prep struct {
		Content string `json:"content"`
	}
	if err := s.Call(ctx, "dsh/prepare", map[string]any{"textDocument": map[string]any{"uri": uri}}, &prep); err != nil {
		t.Fatal(err)
	}
	if prep.Content != "aX\n@ @" {
		t.Errorf("document after clamped edits = %q, want %q", prep.Content, "aX\n@ @")
	}
}

// TestStoreReopenedOnce: settings that switch the store root away and
// back reuse the store (and its index) opened the first time.
func TestStoreReopenedOnce(t *testing.T) {
	opened := map[string]int{}
	var mu sync.Mutex
	s := start(t, lsp.Options{OpenSource: func(root string) (lsp.Source, error) {
		mu.Lock()
		opened[filepath.Base(root)]++
		mu.Unlock()
		return storetest.OpenSynced(root, 0)
	}})
	if _, err := s.Initialize(map[string]any{"sessionsDir": storeRaw}); err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	for _, dir := range []string{other, storeRaw, other, storeRaw} {
		s.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"dsh": map[string]any{"sessionsDir": dir}}})
	}
	var items []reference.CandidateItem // answered after the notifications were applied
	if err := s.Call(context.Background(), "dsh/candidates", map[string]any{}, &items); err != nil || len(items) == 0 {
		t.Fatalf("candidates from the store switched back to: %v, %d items", err, len(items))
	}
	mu.Lock()
	defer mu.Unlock()
	if opened[filepath.Base(storeRaw)] != 1 || opened[filepath.Base(other)] != 1 {
		t.Errorf("stores opened %v, want each once", opened)
	}
}
