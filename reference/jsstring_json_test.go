package reference

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestJSStringMarshalKeepsLoneSurrogates(t *testing.T) {
	id, err := DecodeURI("dsh-session:Ilx1ZDgwMHgi")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"JSString", map[string]JSString{"sessionId": JSString(id)}, `{"sessionId":"\ud800x"}`},
		{"ParsedReference", []ParsedReference{{SessionID: id, Label: "<a&b>"}}, `[{"sessionId":"\ud800x","label":"<a&b>"}]`},
		{"ordinary", ParsedReference{SessionID: "s", Label: "é\n"}, `{"sessionId":"s","label":"é\n"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(tt.v); err != nil {
				t.Fatal(err)
			}
			if got := string(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}
