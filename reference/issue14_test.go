package reference

import (
	"encoding/json"
	"testing"
)

// The exact values of issue 14 ("the last differences from dsh").
const (
	issueInvalidTitle = "Sum\xe2\x82b\xf0\x9f\x99x\xc0\xafend"
	issueRepaired     = "Sum\ufffdb\ufffdx\ufffd\ufffdend"
	loneID            = "lone\xed\xa0\x80x" // JS "lone\ud800x" in WTF-8
)

// TestJSStringMaximalSubparts checks that the JSON writers replace each
// maximal ill-formed subpart with one U+FFFD (as Node's TextDecoder would
// have decoded it) and keep WTF-8 lone surrogates as \udxxx escapes.
func TestJSStringMaximalSubparts(t *testing.T) {
	tests := []struct{ in, want string }{
		{issueInvalidTitle, `"` + issueRepaired + `"`},
		{loneID, `"lone\ud800x"`},
		{"a\xed\xb0\x80", `"a\udc00"`},
		{"\xed\xa0\xbd\xed\xb9\x82", `"🙂"`}, // a WTF-8 pair is the astral character
		{"\xed\x9f\xbf", "\"\ud7ff\""},      // U+D7FF is valid UTF-8, written raw
		{"\xed\xa0", "\"\ufffd\ufffd\""},    // truncated: ED alone (A0 cannot follow it), then A0
	}
	for _, tt := range tests {
		if got := QuoteJS(tt.in); got != tt.want {
			t.Errorf("QuoteJS(%q) = %s, want %s", tt.in, got, tt.want)
		}
		if got := string(AppendTagSafeString(nil, tt.in)); got != tt.want {
			t.Errorf("AppendTagSafeString(%q) = %s, want %s", tt.in, got, tt.want)
		}
		if got := TagSafeStringLen(tt.in); got != len(tt.want) {
			t.Errorf("TagSafeStringLen(%q) = %d, want %d", tt.in, got, len(tt.want))
		}
	}
	if got := string(textEncoderBytes(issueInvalidTitle + loneID)); got != issueRepaired+"lone\ufffdx" {
		t.Errorf("textEncoderBytes = %q", got)
	}
	raw, err := MarshalTagSafeJSON(json.RawMessage(`{"title":"` + issueInvalidTitle + `"}`))
	if err != nil || string(raw) != `{"title":"`+issueRepaired+`"}` {
		t.Errorf("MarshalTagSafeJSON = %s, %v", raw, err)
	}
}
