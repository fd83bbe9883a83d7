package wire

import (
	"testing"

	"go.lsp.dev/protocol"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
)

// TestMarshalKeepsLoneSurrogates checks that the values that carry session
// text (hover and documentation markup, edits, diagnostics) marshal a WTF-8
// lone surrogate as \udxxx, as dsh's JSON.stringify does, and each maximal
// ill-formed UTF-8 subpart as one U+FFFD; encoding/json alone would write
// \ufffd for each of the surrogate's three bytes.
func TestMarshalKeepsLoneSurrogates(t *testing.T) {
	const lone = "T\xed\xa0\x80" // JS "T\ud800"
	rng := protocol.Range{Start: protocol.Position{Line: 1, Character: 2}, End: protocol.Position{Line: 1, Character: 5}}
	tests := []struct {
		v    any
		want string
	}{
		{Hover{Contents: MarkupContent{Kind: "markdown", Value: "**" + lone + "**"}},
			`{"contents":{"kind":"markdown","value":"**T\ud800**"}}`},
		{TextEdit{Range: rng, NewText: "[" + lone + "](dsh-session:x)"},
			`{"range":{"start":{"line":1,"character":2},"end":{"line":1,"character":5}},"newText":"[T\ud800](dsh-session:x)"}`},
		{PublishDiagnosticsParams{URI: "file:///a", Diagnostics: []Diagnostic{{Range: rng, Severity: SeverityError, Code: "unknown-session", Source: "dsh", Message: "no " + lone + " \xe2\x82<", Data: []byte(`{"k":1}`)}}},
			`{"uri":"file:///a","diagnostics":[{"range":{"start":{"line":1,"character":2},"end":{"line":1,"character":5}},"severity":1,"code":"unknown-session","source":"dsh","message":"no T\ud800 ` + "\ufffd" + `<","data":{"k":1}}]}`},
		{Diagnostic{Range: rng, Severity: SeverityWarning, Message: "m"},
			`{"range":{"start":{"line":1,"character":2},"end":{"line":1,"character":5}},"severity":2,"message":"m"}`},
	}
	for _, tt := range tests {
		got, err := jsjson.Marshal(tt.v)
		if err != nil || string(got) != tt.want {
			t.Errorf("jsjson.Marshal(%#v) = %s, %v\nwant %s", tt.v, got, err, tt.want)
		}
	}
}

// TestLibraryManglesLoneSurrogates is why this package encodes its types by
// hand: for each value that carries session text, go.lsp.dev/protocol's
// encoder writes something other than what dsh (JSON.stringify) writes,
// while this package's encoding is dsh's byte for byte.
func TestLibraryManglesLoneSurrogates(t *testing.T) {
	const lone = "T\xed\xa0\x80" // JS "T\ud800"
	rng := protocol.Range{Start: protocol.Position{Line: 1, Character: 2}, End: protocol.Position{Line: 1, Character: 5}}
	tests := []struct {
		name    string
		ours    func() []byte
		library any
		want    string
	}{
		{"completion item label, newText and data",
			func() []byte {
				it := CompletionItem{Label: lone, TextEdit: &TextEdit{Range: rng, NewText: "[" + lone + "]"}, Data: []byte(`{"sessionId":"a\ud800"}`)}
				return it.AppendJSON(nil)
			},
			&protocol.CompletionItem{Label: lone, TextEdit: &protocol.TextEdit{Range: rng, NewText: "[" + lone + "]"}, Data: []byte(`{"sessionId":"a\ud800"}`)},
			`{"label":"T\ud800","textEdit":{"range":{"start":{"line":1,"character":2},"end":{"line":1,"character":5}},"newText":"[T\ud800]"},"data":{"sessionId":"a\ud800"}}`},
		{"hover markup",
			func() []byte {
				b, _ := jsjson.Marshal(Hover{Contents: MarkupContent{Kind: "markdown", Value: lone}})
				return b
			},
			&protocol.Hover{Contents: &protocol.MarkupContent{Kind: protocol.MarkupKindMarkdown, Value: lone}},
			`{"contents":{"kind":"markdown","value":"T\ud800"}}`},
		{"quick fix edit",
			func() []byte { b, _ := jsjson.Marshal(TextEdit{Range: rng, NewText: lone}); return b },
			&protocol.TextEdit{Range: rng, NewText: lone},
			`{"range":{"start":{"line":1,"character":2},"end":{"line":1,"character":5}},"newText":"T\ud800"}`},
		{"diagnostic message",
			func() []byte {
				b, _ := jsjson.Marshal(Diagnostic{Range: rng, Severity: SeverityError, Message: lone})
				return b
			},
			&protocol.Diagnostic{Range: rng, Severity: protocol.DiagnosticSeverityError, Message: protocol.String(lone)},
			`{"range":{"start":{"line":1,"character":2},"end":{"line":1,"character":5}},"severity":1,"message":"T\ud800"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(tt.ours()); got != tt.want {
				t.Errorf("ours = %s\nwant %s", got, tt.want)
			}
			lib, err := protocol.Marshal(tt.library)
			if err != nil {
				t.Fatal(err)
			}
			if string(lib) == tt.want {
				t.Errorf("go.lsp.dev/protocol now writes dsh's bytes (%s): use its encoder for this value", lib)
			}
		})
	}
}
