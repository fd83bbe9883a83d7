// Package lsptest is a fake LSP editor for tests, in the style of gopls'
// fake editor and env.Await: it speaks LSP over any jsonrpc2.Stream (an
// in-process channel pair or a subprocess's stdio), keeps its own copy of
// the open documents, sends incremental edits in the negotiated position
// encoding, records what the server publishes and waits for expectations.
package lsptest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	lspuri "go.lsp.dev/uri"

	"github.com/dsh-lsp/dsh-lsp/lsp/position"
	"github.com/dsh-lsp/dsh-lsp/lsp/wire"
)

// Editor is a fake LSP client.
type Editor struct {
	t      testing.TB
	conn   jsonrpc2.Conn
	stream jsonrpc2.Stream
	// seq mirrors the connection's call id sequence (ids 1, 2, …).
	seq atomic.Int64

	mu       sync.Mutex
	changed  chan struct{} // closed and replaced on every server notification
	diags    map[string]wire.PublishDiagnosticsParams
	messages []protocol.ShowMessageParams
	progress []json.RawMessage
	enc      position.Encoding
	docs     map[string]*doc
}

type doc struct {
	text    string
	version int32
}

// NewEditor connects an editor to the server at the other end of stream.
func NewEditor(t testing.TB, stream jsonrpc2.Stream) *Editor {
	e := &Editor{
		t:       t,
		changed: make(chan struct{}),
		diags:   make(map[string]wire.PublishDiagnosticsParams),
		docs:    make(map[string]*doc),
		enc:     position.UTF16,
	}
	e.stream = stream
	e.conn = jsonrpc2.NewConn(stream, jsonrpc2.WithCodec(wire.Codec{}))
	e.conn.Go(context.Background(), e.handle)
	return e
}

// Conn returns the underlying connection.
func (e *Editor) Conn() jsonrpc2.Conn { return e.conn }

// Close drops the connection abruptly, like a client that goes away:
// the stream is closed first, so calls still in flight fail instead of
// being waited for.
func (e *Editor) Close() error {
	err := e.stream.Close()
	e.conn.Close()
	return err
}

func (e *Editor) handle(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	params := append(json.RawMessage(nil), req.Params()...)
	method := req.Method()
	e.mu.Lock()
	defer e.mu.Unlock()
	defer func() {
		close(e.changed)
		e.changed = make(chan struct{})
	}()
	switch method {
	case "textDocument/publishDiagnostics":
		var p wire.PublishDiagnosticsParams
		if err := json.Unmarshal(params, &p); err == nil {
			e.diags[p.URI] = p
		}
	case "window/showMessage":
		var p protocol.ShowMessageParams
		if err := json.Unmarshal(params, &p); err == nil {
			e.messages = append(e.messages, p)
		}
	case "$/progress":
		e.progress = append(e.progress, params)
	}
	// Server requests (window/workDoneProgress/create and friends) are
	// accepted with a null result.
	return nil, nil
}

// Call sends a request and decodes its result into result (may be nil).
// A JSON-RPC error response is returned as *jsonrpc2.Error.
func (e *Editor) Call(ctx context.Context, method string, params, result any) error {
	if ctx == nil {
		ctx = context.Background()
	}
	e.seq.Add(1)
	_, err := e.conn.Call(ctx, method, params, result)
	return err
}

// LastID is the id of the most recent call (calls are numbered from 1).
func (e *Editor) LastID() int64 { return e.seq.Load() }

// Notify sends a notification.
func (e *Editor) Notify(method string, params any) {
	if err := e.conn.Notify(context.Background(), method, params); err != nil {
		e.t.Fatalf("notify %s: %v", method, err)
	}
}

// Initialize sends initialize (offering the given position encodings and
// initializationOptions) and initialized. It returns the result.
func (e *Editor) Initialize(options any, encodings ...string) (protocol.InitializeResult, error) {
	params := map[string]any{
		"processId":        nil,
		"rootUri":          "file:///home/alice/proj",
		"workspaceFolders": []map[string]string{{"uri": "file:///home/alice/proj", "name": "proj"}},
		"capabilities": map[string]any{
			"general": map[string]any{"positionEncodings": encodings},
			"window":  map[string]any{"workDoneProgress": true},
			"textDocument": map[string]any{
				"hover":      map[string]any{"contentFormat": []string{"markdown", "plaintext"}},
				"completion": map[string]any{"completionItem": map[string]any{"documentationFormat": []string{"markdown"}}},
			},
		},
	}
	if options != nil {
		params["initializationOptions"] = options
	}
	var res protocol.InitializeResult
	if err := e.Call(context.Background(), "initialize", params, &res); err != nil {
		return res, err
	}
	e.mu.Lock()
	e.enc = position.Encoding(res.Capabilities.PositionEncoding)
	if e.enc == "" {
		e.enc = position.UTF16
	}
	e.mu.Unlock()
	e.Notify("initialized", map[string]any{})
	return res, nil
}

// Encoding returns the negotiated position encoding.
func (e *Editor) Encoding() position.Encoding {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.enc
}

// Open opens a document.
func (e *Editor) Open(uri, text string) {
	e.mu.Lock()
	e.docs[uri] = &doc{text: text, version: 1}
	e.mu.Unlock()
	e.Notify("textDocument/didOpen", protocol.DidOpenTextDocumentParams{TextDocument: protocol.TextDocumentItem{
		URI: lspuri.URI(uri), LanguageID: "dsh", Version: 1, Text: text}})
}

// Text returns the editor's copy of a document.
func (e *Editor) Text(uri string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.docs[uri].text
}

// Pos returns the position of the byte offset off in the document.
func (e *Editor) Pos(uri string, off int) protocol.Position {
	e.mu.Lock()
	defer e.mu.Unlock()
	return position.NewMapper(e.docs[uri].text, e.enc).Position(off)
}

// PosAfter returns the position just after the first occurrence of marker.
func (e *Editor) PosAfter(uri, marker string) protocol.Position {
	text := e.Text(uri)
	i := strings.Index(text, marker)
	if i < 0 {
		e.t.Fatalf("marker %q not in %s", marker, uri)
	}
	return e.Pos(uri, i+len(marker))
}

// Replace replaces the byte range [start, end) of the document with text,
// sending one incremental change in the negotiated encoding.
func (e *Editor) Replace(uri string, start, end int, text string) {
	e.mu.Lock()
	d := e.docs[uri]
	m := position.NewMapper(d.text, e.enc)
	rng := m.Range(start, end)
	d.text = d.text[:start] + text + d.text[end:]
	d.version++
	v := d.version
	e.mu.Unlock()
	e.Notify("textDocument/didChange", protocol.DidChangeTextDocumentParams{
		TextDocument: protocol.VersionedTextDocumentIdentifier{
			TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: lspuri.URI(uri)}, Version: v},
		ContentChanges: []protocol.TextDocumentContentChangeEvent{&protocol.TextDocumentContentChangePartial{Range: rng, Text: text}},
	})
}

// Type inserts text at byte offset off.
func (e *Editor) Type(uri string, off int, text string) { e.Replace(uri, off, off, text) }

// Append inserts text at the end of the document.
func (e *Editor) Append(uri, text string) {
	n := len(e.Text(uri))
	e.Replace(uri, n, n, text)
}

// ApplyEdit applies a server TextEdit to the editor's copy and sends it.
func (e *Editor) ApplyEdit(uri string, te wire.TextEdit) {
	e.mu.Lock()
	m := position.NewMapper(e.docs[uri].text, e.enc)
	e.mu.Unlock()
	start, err1 := m.Offset(te.Range.Start)
	end, err2 := m.Offset(te.Range.End)
	if err := errors.Join(err1, err2); err != nil {
		e.t.Fatalf("bad edit range %v: %v", te.Range, err)
	}
	e.Replace(uri, start, end, te.NewText)
}

// Diagnostics returns the last published diagnostics of uri.
func (e *Editor) Diagnostics(uri string) (wire.PublishDiagnosticsParams, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	p, ok := e.diags[uri]
	return p, ok
}

// Messages returns the window/showMessage notifications received.
func (e *Editor) Messages() []protocol.ShowMessageParams {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]protocol.ShowMessageParams(nil), e.messages...)
}

// Progress returns the $/progress values received.
func (e *Editor) Progress() []json.RawMessage {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]json.RawMessage(nil), e.progress...)
}

// State is what expectations look at.
type State struct {
	Diags    map[string]wire.PublishDiagnosticsParams
	Messages []protocol.ShowMessageParams
	Docs     map[string]string
	Versions map[string]int32
}

// Expectation is a condition on the editor state, with a description.
type Expectation struct {
	Desc  string
	Check func(State) bool
}

// Await waits (up to 10s) until every expectation holds, failing the test
// with the unmet descriptions and the last state otherwise.
func (e *Editor) Await(exps ...Expectation) {
	e.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		e.mu.Lock()
		st := State{Diags: map[string]wire.PublishDiagnosticsParams{}, Messages: append([]protocol.ShowMessageParams(nil), e.messages...),
			Docs: map[string]string{}, Versions: map[string]int32{}}
		for k, v := range e.diags {
			st.Diags[k] = v
		}
		for k, d := range e.docs {
			st.Docs[k], st.Versions[k] = d.text, d.version
		}
		ch := e.changed
		e.mu.Unlock()
		var unmet []string
		for _, x := range exps {
			if !x.Check(st) {
				unmet = append(unmet, x.Desc)
			}
		}
		if len(unmet) == 0 {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			b, _ := json.MarshalIndent(st.Diags, "", "  ")
			e.t.Fatalf("timed out waiting for: %s\ndiagnostics: %s\nmessages: %+v", strings.Join(unmet, "; "), b, st.Messages)
		}
	}
}

// DiagnosticCodes expects uri's diagnostics (for its current version) to
// have exactly these codes, in order.
func DiagnosticCodes(uri string, codes ...string) Expectation {
	return Expectation{
		Desc: fmt.Sprintf("diagnostics of %s = %q", uri, codes),
		Check: func(st State) bool {
			p, ok := st.Diags[uri]
			if !ok || p.Version == nil || *p.Version != st.Versions[uri] || len(p.Diagnostics) != len(codes) {
				return false
			}
			for i, d := range p.Diagnostics {
				if d.Code != codes[i] || d.Source != "dsh" {
					return false
				}
			}
			return true
		},
	}
}

// ShownMessage expects a window/showMessage containing substr.
func ShownMessage(typ protocol.MessageType, substr string) Expectation {
	return Expectation{
		Desc: fmt.Sprintf("showMessage(%d) containing %q", typ, substr),
		Check: func(st State) bool {
			for _, m := range st.Messages {
				if m.Type == typ && strings.Contains(m.Message, substr) {
					return true
				}
			}
			return false
		},
	}
}

// Shutdown sends shutdown and exit.
func (e *Editor) Shutdown() error {
	if err := e.Call(context.Background(), "shutdown", nil, nil); err != nil {
		return err
	}
	return e.conn.Notify(context.Background(), "exit", nil)
}

// RPCError returns err as a *jsonrpc2.Error (nil if it is not one).
func RPCError(err error) *jsonrpc2.Error {
	var we *jsonrpc2.Error
	if errors.As(err, &we) {
		return we
	}
	return nil
}

// ErrorDataCode returns the data.code of a JSON-RPC error.
func ErrorDataCode(err error) string {
	we := RPCError(err)
	if we == nil || len(we.Data) == 0 {
		return ""
	}
	var d struct {
		Code string `json:"code"`
	}
	_ = json.Unmarshal(we.Data, &d)
	return d.Code
}
