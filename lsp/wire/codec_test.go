package wire

import (
	"encoding/json"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

func TestCodecMarshal(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"raw passes through", json.RawMessage(`{"a" : 1}`), `{"a" : 1}`},
		{"jsonrpc2 raw passes through", jsonrpc2.RawMessage(`[1, 2]`), `[1, 2]`},
		{"nil raw is null", json.RawMessage(nil), `null`},
		{"nil jsonrpc2 raw is null", jsonrpc2.RawMessage(nil), `null`},
		{"no HTML escaping", map[string]string{"t": "<a&b>"}, `{"t":"<a&b>"}`},
	}
	for _, tt := range tests {
		got, err := Codec{}.Marshal(tt.in)
		if err != nil || string(got) != tt.want {
			t.Errorf("%s: Marshal = %s, %v; want %s", tt.name, got, err, tt.want)
		}
	}
}

func TestCodecUnmarshalCopiesRaw(t *testing.T) {
	data := []byte(`{"x": [1,2]}`)
	var raw json.RawMessage
	var rpcRaw jsonrpc2.RawMessage
	var obj struct{ X []int }
	for _, v := range []any{&raw, &rpcRaw, &obj} {
		if err := (Codec{}).Unmarshal(data, v); err != nil {
			t.Fatalf("Unmarshal into %T: %v", v, err)
		}
	}
	data[0] = 'X' // the decoded raw values must not alias the input buffer
	if string(raw) != `{"x": [1,2]}` || string(rpcRaw) != `{"x": [1,2]}` {
		t.Errorf("raw values alias the input: %s, %s", raw, rpcRaw)
	}
	if len(obj.X) != 2 || obj.X[1] != 2 {
		t.Errorf("struct decode: %+v", obj)
	}
}

// TestWireConstantsAreTheLibrarys keeps the untyped constants of this
// package equal to go.lsp.dev/protocol's.
func TestWireConstantsAreTheLibrarys(t *testing.T) {
	if CompletionItemKindReference != int(protocol.CompletionItemKindReference) ||
		SeverityError != int(protocol.DiagnosticSeverityError) || SeverityWarning != int(protocol.DiagnosticSeverityWarning) ||
		CodeActionKindQuickFix != string(protocol.CodeActionKindQuickFix) {
		t.Error("a wire constant differs from go.lsp.dev/protocol's")
	}
}

// TestCodecLibraryTypes checks that go.lsp.dev/protocol's types go through
// its codec (sealed-interface unions decode to their arms) and other types
// through encoding/json.
func TestCodecLibraryTypes(t *testing.T) {
	var p protocol.DidChangeTextDocumentParams
	data := []byte(`{"textDocument":{"uri":"file:///a","version":3},"contentChanges":[{"text":"all"},{"range":{"start":{"line":0,"character":1},"end":{"line":0,"character":2}},"text":"x"}]}`)
	if err := (Codec{}).Unmarshal(data, &p); err != nil {
		t.Fatal(err)
	}
	if len(p.ContentChanges) != 2 || p.TextDocument.Version != 3 {
		t.Fatalf("decoded %+v", p)
	}
	if w, ok := p.ContentChanges[0].(*protocol.TextDocumentContentChangeWholeDocument); !ok || w.Text != "all" {
		t.Errorf("change 0 = %#v, want the whole-document arm", p.ContentChanges[0])
	}
	if c, ok := p.ContentChanges[1].(*protocol.TextDocumentContentChangePartial); !ok || c.Range.End.Character != 2 || c.Text != "x" {
		t.Errorf("change 1 = %#v, want the partial arm", p.ContentChanges[1])
	}
	res := protocol.InitializeResult{Capabilities: protocol.ServerCapabilities{HoverProvider: protocol.Boolean(true)}, ServerInfo: protocol.ServerInfo{Name: "x"}}
	for _, v := range []any{res, &res} {
		b, err := (Codec{}).Marshal(v)
		if want := `{"capabilities":{"hoverProvider":true},"serverInfo":{"name":"x"}}`; err != nil || string(b) != want {
			t.Errorf("Marshal(%T) = %s, %v; want %s", v, b, err, want)
		}
	}
	var own struct{ A string }
	if err := (Codec{}).Unmarshal([]byte(`{"a":"<"}`), &own); err != nil || own.A != "<" {
		t.Errorf("encoding/json decode (case-insensitive names) = %+v, %v", own, err)
	}
}

// TestDecodeErrorSaysWhere checks that a decoding error of a library type
// shows the text at the offset the library reports.
func TestDecodeErrorSaysWhere(t *testing.T) {
	tests := []struct {
		data, want string
	}{
		{`{"textDocument":5,"position":{"line":0,"character":0}}`, `invalid JSON object at offset 16 (found 5,"position":{"line":0,"character":0}})`},
		{`[true]`, `at offset 0 (found [true])`},
		{`{"textDocument":{"uri":"file:///a"},"position":{"line":-1,"character":0}}`, `(found -1,"character":0}})`},
	}
	for _, tt := range tests {
		var p protocol.CompletionParams
		err := Decode([]byte(tt.data), &p)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Decode(%s) = %v, want an error containing %q", tt.data, err, tt.want)
		}
	}
}

// BenchmarkCodecLibraryValue measures a library struct passed by value (the
// server's showMessage and initialize results) through the Codec.
func BenchmarkCodecLibraryValue(b *testing.B) {
	p := protocol.ShowMessageParams{Type: protocol.MessageTypeError, Message: "dsh-lsp: settings refused"}
	for b.Loop() {
		if _, err := (Codec{}).Marshal(p); err != nil {
			b.Fatal(err)
		}
	}
}
