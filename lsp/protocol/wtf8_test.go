package protocol

import "testing"

// TestMarshalKeepsLoneSurrogates checks that the values that carry session
// text (hover and documentation markup, edits, diagnostics) marshal a WTF-8
// lone surrogate as \udxxx, as dsh's JSON.stringify does, and each maximal
// ill-formed UTF-8 subpart as one U+FFFD; encoding/json alone would write
// \ufffd for each of the surrogate's three bytes.
func TestMarshalKeepsLoneSurrogates(t *testing.T) {
	const lone = "T\xed\xa0\x80" // JS "T\ud800"
	rng := Range{Start: Position{Line: 1, Character: 2}, End: Position{Line: 1, Character: 5}}
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
		got, err := Marshal(tt.v)
		if err != nil || string(got) != tt.want {
			t.Errorf("Marshal(%#v) = %s, %v\nwant %s", tt.v, got, err, tt.want)
		}
	}
}
