package lsp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// unicodeStore is the hand-built store of strings where a naive Go encoder
// and dsh disagree (see cmd/dsh-lsp/unicode_fidelity_test.go): ids "a" and
// "🙂" with the same createdAt, "lone\ud800x" titled "T\ud800", a title
// with invalid UTF-8 and the title "\u1C89EMA".
const unicodeStore = "../testdata/unicode-store/store"

// call sends a request and returns the raw result bytes as the server
// wrote them (the fake editor's decoding would turn \ud800 into U+FFFD).
func callRaw(t *testing.T, s *session, method string, params any) string {
	t.Helper()
	var raw json.RawMessage
	if err := s.Call(context.Background(), method, params, &raw); err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return string(raw)
}

// TestCandidatesWriteJSStringsInICUOrder checks dsh/candidates byte for byte: 🙂 before a
// (ICU 78 root order), the lone surrogate kept as \ud800, each maximal
// ill-formed UTF-8 subpart of a title as one U+FFFD, and ᲉEMA found by ᲊ.
func TestCandidatesWriteJSStringsInICUOrder(t *testing.T) {
	s := startInit(t, map[string]any{"sessionsDir": unicodeStore})
	cand := func(id, label, uri, createdAt string) string {
		return `{"sessionId":"` + id + `","label":"` + label + `","createdAt":` + createdAt +
			`,"uri":"` + uri + `","mention":"@[` + label + `](` + uri + `)"}`
	}
	smile := cand("🙂", "🙂", "dsh-session:IvCfmYIi", "1786000000000")
	a := cand("a", "a", "dsh-session:ImEi", "1786000000000")
	lone := cand(`lone\ud800x`, `T\ud800`, "dsh-session:ImxvbmVcdWQ4MDB4Ig", "1785000000000")
	utf8Title := cand("utf8-title", "Sum\ufffdb\ufffdx\ufffd\ufffdend", "dsh-session:InV0ZjgtdGl0bGUi", "1784000000000")
	garay := cand("garay", "\u1C89EMA", "dsh-session:ImdhcmF5Ig", "1783000000000")
	// A non-string title: dsh throws a TypeError; dsh-lsp's label falls
	// back to the id (README, "Differences from dsh").
	title42 := cand("title-42", "title-42", "dsh-session:InRpdGxlLTQyIg", "1782000000000")
	tests := []struct {
		params map[string]any
		want   string
	}{
		{map[string]any{}, "[" + strings.Join([]string{smile, a, lone, utf8Title, garay, title42}, ",") + "]"},
		{map[string]any{"limit": 1}, "[" + smile + "]"},
		{map[string]any{"query": "lone"}, "[" + lone + "]"},
		{map[string]any{"query": "SUM"}, "[" + utf8Title + "]"},
		{map[string]any{"query": "\u1C8A"}, "[" + garay + "]"},
	}
	for _, tt := range tests {
		if got := callRaw(t, s, "dsh/candidates", tt.params); got != tt.want {
			t.Errorf("dsh/candidates %v:\n got %s\nwant %s", tt.params, got, tt.want)
		}
	}
}

// TestPrepareHoverCompletionKeepJSStrings checks that dsh/prepare, hover and
// completion write the lone surrogate as \ud800 and repaired titles with
// one U+FFFD per maximal subpart.
func TestPrepareHoverCompletionKeepJSStrings(t *testing.T) {
	s := startInit(t, map[string]any{"sessionsDir": unicodeStore})
	prep := callRaw(t, s, "dsh/prepare", map[string]any{"text": "see dsh-session:ImxvbmVcdWQ4MDB4Ig and @[t](dsh-session:InV0ZjgtdGl0bGUi)"})
	for _, want := range []string{
		`{"content":"see @lone\ud800x and @t","references":[{"sessionId":"lone\ud800x","label":"lone\ud800x"},{"sessionId":"utf8-title","label":"t"}],`,
		`\"text\":\"surrogate \\udc00 text\"`,
		`\"text\":\"body ` + "\ufffdb\ufffd\ufffd" + ` end\"`,
	} {
		if !strings.Contains(prep, want) {
			t.Errorf("dsh/prepare lacks %s\n got %s", want, prep)
		}
	}

	uri := "file:///unicode.dsh"
	s.Open(uri, "cite @[x](dsh-session:ImxvbmVcdWQ4MDB4Ig) and @")
	hover := callRaw(t, s, "textDocument/hover", map[string]any{
		"textDocument": map[string]any{"uri": uri}, "position": s.Pos(uri, 8)})
	if !strings.Contains(hover, `T\ud800`) || strings.Contains(hover, "\ufffd") {
		t.Errorf("hover does not keep the title T\\ud800: %s", hover)
	}
	text := s.Text(uri)
	list := callRaw(t, s, "textDocument/completion", map[string]any{
		"textDocument": map[string]any{"uri": uri}, "position": s.Pos(uri, len(text))})
	for _, want := range []string{`"label":"T\ud800"`, `[T\ud800](dsh-session:ImxvbmVcdWQ4MDB4Ig)`, "Sum\ufffdb\ufffdx\ufffd\ufffdend"} {
		if !strings.Contains(list, want) {
			t.Errorf("completion lacks %s\n got %s", want, list)
		}
	}
	if i, j := strings.Index(list, `"label":"🙂"`), strings.Index(list, `"label":"a"`); i < 0 || j < 0 || i > j {
		t.Errorf("completion does not list 🙂 before a: %s", list)
	}
}
