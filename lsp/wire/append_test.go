package wire

import (
	"encoding/json"
	"reflect"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
)

func TestCompletionListAppendJSON(t *testing.T) {
	l := CompletionList{IsIncomplete: true, Items: []CompletionItem{
		{Label: "a \"q\" \\ <b> & \u2028 \x01 \xff é🙂", Kind: 18, Detail: "/w · t", SortText: "0000", FilterText: "qa",
			InsertText: "[a](dsh-session:x)", TextEdit: &TextEdit{Range: protocol.Range{Start: protocol.Position{Line: 1, Character: 2}, End: protocol.Position{Line: 3, Character: 4}}, NewText: "[a](dsh-session:x)"},
			AdditionalTextEdits: []TextEdit{{Range: protocol.Range{Start: protocol.Position{Line: 0, Character: 9}, End: protocol.Position{Line: 0, Character: 9}}, NewText: "(x)"}},
			Data:                json.RawMessage(`{"sessionId":"s"}`)},
		{Label: "", Documentation: &MarkupContent{Kind: "markdown", Value: "**x**\n"}},
	}}
	var got, want any
	if err := json.Unmarshal(l.AppendJSON(nil), &got); err != nil {
		t.Fatalf("AppendJSON is not JSON: %v\n%s", err, l.AppendJSON(nil))
	}
	b, _ := jsjson.Marshal(l)
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("AppendJSON decodes to\n%v\nMarshal to\n%v", got, want)
	}
	empty := CompletionList{Items: []CompletionItem{}}
	if s := string(empty.AppendJSON(nil)); s != `{"isIncomplete":false,"items":[]}` {
		t.Errorf("empty list: %s", s)
	}
}

// A lone-surrogate id (WTF-8, see package reference) keeps its \udxxx
// escape in completion JSON instead of turning into three U+FFFD.
func TestCompletionListAppendJSONLoneSurrogate(t *testing.T) {
	l := CompletionList{Items: []CompletionItem{{Label: "\xed\xa0\x80x"}}}
	if got, want := string(l.AppendJSON(nil)), `{"isIncomplete":false,"items":[{"label":"\ud800x"}]}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
