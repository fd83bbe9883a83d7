package reference

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
)

// Strings where a naive Go encoder and dsh (Node) disagree: ill-formed
// UTF-8 in a title and a lone surrogate in an id.
const (
	invalidTitle  = "Sum\xe2\x82b\xf0\x9f\x99x\xc0\xafend"
	repairedTitle = "Sum\ufffdb\ufffdx\ufffd\ufffdend"
	loneID        = "lone\xed\xa0\x80x" // JS "lone\ud800x" in WTF-8
)

// TestJSStringMaximalSubparts checks that the JSON writers replace each
// maximal ill-formed subpart with one U+FFFD (as Node's TextDecoder would
// have decoded it) and keep WTF-8 lone surrogates as \udxxx escapes.
func TestJSStringMaximalSubparts(t *testing.T) {
	tests := []struct{ in, want string }{
		{invalidTitle, `"` + repairedTitle + `"`},
		{loneID, `"lone\ud800x"`},
		{"a\xed\xb0\x80", `"a\udc00"`},
		{"\xed\xa0\xbd\xed\xb9\x82", `"🙂"`}, // a WTF-8 pair is the astral character
		{"\xed\x9f\xbf", "\"\ud7ff\""},      // U+D7FF is valid UTF-8, written raw
		{"\xed\xa0", "\"\ufffd\ufffd\""},    // truncated: ED alone (A0 cannot follow it), then A0
	}
	for _, tt := range tests {
		if got := jsjson.Quote(tt.in); got != tt.want {
			t.Errorf("jsjson.Quote(%q) = %s, want %s", tt.in, got, tt.want)
		}
		if got := string(jsjson.AppendJSString(nil, tt.in, true)); got != tt.want {
			t.Errorf("AppendJSString(%q, true) = %s, want %s", tt.in, got, tt.want)
		}
		if got := jsjson.QuotedLen(tt.in, true); got != len(tt.want) {
			t.Errorf("QuotedLen(%q, true) = %d, want %d", tt.in, got, len(tt.want))
		}
	}
	if got := string(textEncoderBytes(invalidTitle + loneID)); got != repairedTitle+"lone\ufffdx" {
		t.Errorf("textEncoderBytes = %q", got)
	}
	raw, err := tagSafe(json.RawMessage(`{"title":"` + invalidTitle + `"}`))
	if err != nil || string(raw) != `{"title":"`+repairedTitle+`"}` {
		t.Errorf("tagSafe = %s, %v", raw, err)
	}
}

// TestLowerJSUnicode17 compares lowerJS with Node's toLocaleLowerCase
// (Unicode 17; vectors generated offline into testdata/unicode17/lower.json):
// every code point Node lowercases to something else, and the strings a
// Unicode 6.2 lowering gets wrong (Ᲊ U+1C89 → ᲊ U+1C8A, İ, final sigma, …).
func TestLowerJSUnicode17(t *testing.T) {
	raw, err := os.ReadFile("testdata/unicode17/lower.json")
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsjson.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	cps := v.Field("codePoints")
	if cps == nil || len(cps.Items) < 1400 {
		t.Fatalf("lower.json has no codePoints list")
	}
	for _, pair := range cps.Items {
		r := rune(pair.Items[0].Num)
		want := pair.Items[1].Str
		if got := lowerJS(string(r)); got != want {
			t.Errorf("lowerJS(U+%04X) = %q, want %q", r, got, want)
		}
		// Inside a longer string too (the non-ASCII path with context).
		if got := lowerJS("X" + string(r) + "Y"); got != "x"+want+"y" && r != 0x3A3 {
			t.Errorf("lowerJS(X U+%04X Y) = %q, want %q", r, got, "x"+want+"y")
		}
	}
	for _, pair := range v.Field("strings").Items {
		in, want := pair.Items[0].Str, pair.Items[1].Str
		if got := lowerJS(in); got != want {
			t.Errorf("lowerJS(%q) = %q, want %q", in, got, want)
		}
	}
	// A title ᲉEMA matches the query ᲊ.
	if !strings.Contains(lowerJS("\u1C89EMA"), lowerJS("\u1C8A")) {
		t.Error(`"\u1C89EMA" does not match the query "\u1C8A"`)
	}
}

// TestOutputTypesKeepLoneSurrogates checks the JSON of the CLI and server
// results built from reference types: prepare, mentions and candidates.
func TestOutputTypesKeepLoneSurrogates(t *testing.T) {
	cwd := "/w" + "\xed\xb0\x80"
	tests := []struct {
		v    any
		want string
	}{
		{&PreparedText{Content: "see @" + loneID, References: []ParsedReference{{SessionID: loneID, Label: loneID}}},
			`{"content":"see @lone\ud800x","references":[{"sessionId":"lone\ud800x","label":"lone\ud800x"}]}`},
		{PreparedText{Content: "x"}, `{"content":"x","references":[]}`},
		{ParseResult{Text: "@" + loneID + " " + invalidTitle, References: []ParsedReference{{SessionID: loneID, Label: loneID}}},
			`{"text":"@lone\ud800x ` + repairedTitle + `","references":[{"sessionId":"lone\ud800x","label":"lone\ud800x"}]}`},
		{[]Candidate{{SessionID: loneID, Label: invalidTitle, CWD: &cwd, CreatedAt: 5}},
			`[{"sessionId":"lone\ud800x","label":"` + repairedTitle + `","cwd":"/w\udc00","createdAt":5}]`},
		{RemoteCandidate{Candidate: Candidate{SessionID: loneID, Label: "T\xed\xa0\x80", CreatedAt: 7}, Mention: FormatMention(loneID, nil)},
			`{"sessionId":"lone\ud800x","label":"T\ud800","createdAt":7,"mention":"@[lone\ud800x](dsh-session:ImxvbmVcdWQ4MDB4Ig)"}`},
	}
	for _, tt := range tests {
		got, err := json.Marshal(tt.v)
		if err != nil || string(got) != tt.want {
			t.Errorf("json.Marshal(%#v) = %s, %v\nwant %s", tt.v, got, err, tt.want)
		}
	}
}
