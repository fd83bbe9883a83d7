package main

import (
	"strings"
	"testing"
)

// unicodeStore is a small hand-built store (testdata/unicode-store/store,
// in dsh's raw JSONL format) holding the strings where a naive Go encoder
// and dsh disagree: ids "a" and "🙂" with the same createdAt, the id
// "lone\ud800x" titled "T\ud800", a title with invalid UTF-8 bytes and the
// title "\u1C89EMA".
const unicodeStore = "../../testdata/unicode-store/store"

// TestCLIWritesJSStringsInICUOrder checks the CLI output byte for byte: dsh's strings as JS
// JSON.stringify writes them (lone surrogates as \udxxx, each maximal
// ill-formed UTF-8 subpart as one U+FFFD) and dsh's order (ICU 78 root:
// 🙂 before a).
func TestCLIWritesJSStringsInICUOrder(t *testing.T) {
	t.Parallel()
	cand := func(id, label, uri string, createdAt string) string {
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
		name string
		args []string
		want string
	}{
		{"tie order", []string{"candidates", "--sessions", unicodeStore}, "[" + strings.Join([]string{smile, a, lone, utf8Title, garay, title42}, ",") + "]"},
		{"limit 1 is 🙂", []string{"candidates", "--sessions", unicodeStore, "--limit", "1"}, "[" + smile + "]"},
		{"surrogate id and title", []string{"candidates", "--sessions", unicodeStore, "lone"}, "[" + lone + "]"},
		{"invalid UTF-8 title", []string{"candidates", "--sessions", unicodeStore, "sum"}, "[" + utf8Title + "]"},
		{"U+1C8A matches U+1C89", []string{"candidates", "--sessions", unicodeStore, "\u1C8A"}, "[" + garay + "]"},
		{"U+1C8A+ema", []string{"candidates", "--sessions", unicodeStore, "\u1C8Aema"}, "[" + garay + "]"},
		{"mentions", []string{"mentions", "x dsh-session:ImxvbmVcdWQ4MDB4Ig"},
			`{"text":"x @lone\ud800x","references":[{"sessionId":"lone\ud800x","label":"lone\ud800x"}]}`},
		{"mentions invalid UTF-8", []string{"mentions", "a \xe2\x82b \xc0 dsh-session:ImEi"},
			`{"text":"a ` + "\ufffd" + `b ` + "\ufffd" + ` @a","references":[{"sessionId":"a","label":"a"}]}`},
		{"uri decode", []string{"uri", "decode", "dsh-session:ImxvbmVcdWQ4MDB4Ig"}, `{"sessionId":"lone\ud800x"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runCLI(t, "", tt.args...)
			if r.code != 0 || r.stdout != tt.want+"\n" {
				t.Errorf("dsh-lsp %q: exit %d, stderr %q\n got %s\nwant %s", tt.args, r.code, r.stderr, r.stdout, tt.want)
			}
		})
	}
}

// TestCLIPrepareKeepsLoneSurrogatesAndRepairsUTF8 checks prepare's content, references and the
// context message's data for the surrogate id and the invalid UTF-8 log.
func TestCLIPrepareKeepsLoneSurrogatesAndRepairsUTF8(t *testing.T) {
	r := runCLI(t, "", "prepare", "--sessions", unicodeStore,
		"see dsh-session:ImxvbmVcdWQ4MDB4Ig and @[t](dsh-session:InV0ZjgtdGl0bGUi)")
	if r.code != 0 {
		t.Fatalf("exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		`{"content":"see @lone\ud800x and @t","references":[{"sessionId":"lone\ud800x","label":"lone\ud800x"},{"sessionId":"utf8-title","label":"t"}],`,
		`"references":[{"sessionId":"lone\ud800x","label":"lone\ud800x","capturedThroughSeq":3,`,
		// The prompt text (a JSON string holding tag-safe JSON).
		`[{\"sessionId\":\"lone\\ud800x\",\"label\":\"lone\\ud800x\",\"cwd\":null,\"capturedThroughSeq\":3,\"conversation\":[{\"role\":\"user\",\"text\":\"surrogate \\udc00 text\"}]},` +
			`{\"sessionId\":\"utf8-title\",\"label\":\"t\",\"cwd\":null,\"capturedThroughSeq\":3,\"conversation\":[{\"role\":\"user\",\"text\":\"body ` + "\ufffdb\ufffd\ufffd" + ` end\"}]}]`,
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("prepare output lacks %s\n got %s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "\ufffd\ufffd\ufffd") {
		t.Errorf("prepare output holds a U+FFFD per byte: %s", r.stdout)
	}
}
