package completion

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/dsh-lsp/dsh-lsp/lsp/position"
	"github.com/dsh-lsp/dsh-lsp/lsp/wire"
	"github.com/dsh-lsp/dsh-lsp/reference"
)

// plainItems is the completion items as composed field by field, one
// string at a time: the oracle of the composer's scratch-buffer views.
func plainItems(cands []reference.Candidate, q Query, m *position.Mapper, style Style) []wire.CompletionItem {
	rng := m.Range(q.Start, q.End)
	width := max(len(fmt.Sprint(len(cands))), 4)
	var items []wire.CompletionItem
	for i, c := range cands {
		label := InsertLabel(c.Label)
		newText := strings.TrimPrefix(reference.FormatMention(c.SessionID, &label), "@")
		visible := Shorten(VisibleLabel(c.Label))
		where := "no cwd"
		if c.CWD != nil {
			where = Shorten(OneLine(*c.CWD))
		}
		item := wire.CompletionItem{
			Label:      visible,
			Kind:       wire.CompletionItemKindReference,
			Detail:     where + " · " + FormatTime(c.CreatedAt),
			SortText:   fmt.Sprintf("%0*d", width, i),
			FilterText: q.Text + visible,
			InsertText: newText,
			TextEdit:   &wire.TextEdit{Range: rng, NewText: newText},
			Data:       c.AppendJSON(nil),
		}
		if style == StyleALE {
			cut := strings.IndexByte(newText, '(')
			word, rest := newText[:cut], newText[cut:]
			item.InsertText = word
			item.TextEdit = &wire.TextEdit{Range: rng, NewText: word}
			at := rng.Start
			at.Character += uint32(len(word))
			item.AdditionalTextEdits = []wire.TextEdit{{Range: position.Range{Start: at, End: at}, NewText: rest}}
		}
		items = append(items, item)
	}
	return items
}

// TestComposedItemsAreThePlainItems: ItemsStyled and AppendList give the
// items (and the bytes) of the plain composition, for hostile and
// ordinary candidates, both styles, answers of every size up to past the
// sort text's four digits, with extra (content search) items after.
func TestComposedItemsAreThePlainItems(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	pieces := []string{"a", "Fix", " ", "(", ")", "]", "[", `\`, "\n", "\r", "\u2028", "\x1b", "é", "界", "😀", "\xed\xa0\x80", "\"", "<", strings.Repeat("long ", 50)}
	text := func(max int) string {
		var sb strings.Builder
		for range rng.IntN(max + 1) {
			sb.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return sb.String()
	}
	extra := []wire.CompletionItem{{Label: "hit", Kind: wire.CompletionItemKindReference, SortText: "~0", Data: []byte(`{"sessionId":"x"}`)}}
	doc := "see (@fix"
	q, ok := FindQuery(doc, len(doc))
	if !ok {
		t.Fatal("no query")
	}
	for _, n := range []int{0, 1, 2, 7, 50, 10001} {
		cands := make([]reference.Candidate, n)
		for i := range cands {
			cands[i] = reference.Candidate{SessionID: text(6) + fmt.Sprint(i), Label: text(8), CreatedAt: rng.Int64N(4e12) - 1e12}
			if rng.IntN(3) > 0 {
				cwd := "/home/" + text(5)
				cands[i].CWD = &cwd
			}
		}
		for _, style := range []Style{StylePortable, StyleALE} {
			for _, enc := range []position.Encoding{position.UTF16, position.UTF8} {
				m := position.NewMapper(doc, enc)
				want := plainItems(cands, q, m, style)
				got := ItemsStyled(cands, q, m, style)
				if len(got) != len(want) || (n > 0 && !reflect.DeepEqual(got, want)) {
					t.Fatalf("%d candidates, style %d: ItemsStyled differs from the plain items", n, style)
				}
				list := wire.CompletionList{IsIncomplete: true, Items: append(want, extra...)}
				if wantJSON, gotJSON := list.AppendJSON(nil), AppendList([]byte("x"), cands, q, m, style, extra); !bytes.Equal(gotJSON[1:], wantJSON) {
					t.Fatalf("%d candidates, style %d: AppendList\n%s\nwant\n%s", n, style, gotJSON[1:], wantJSON)
				}
				if n == 0 {
					if got := AppendList(nil, nil, q, m, style, nil); string(got) != `{"isIncomplete":true,"items":[]}` {
						t.Fatalf("empty list %s", got)
					}
				}
			}
		}
	}
}

// TestDetachedItemsOwnTheirText: an item ItemsStyled returns keeps its
// text when the composer goes on to the next candidate.
func TestDetachedItemsOwnTheirText(t *testing.T) {
	cands := []reference.Candidate{{SessionID: "first-id", Label: "first"}, {SessionID: "second-id", Label: "second"}}
	doc := "@"
	q, _ := FindQuery(doc, len(doc))
	items := ItemsStyled(cands, q, position.NewMapper(doc, position.UTF16), StyleALE)
	if !strings.Contains(items[0].Detail, "no cwd") || items[0].SortText != "0000" || !strings.HasPrefix(items[0].TextEdit.NewText, "[first") ||
		!strings.Contains(items[0].AdditionalTextEdits[0].NewText, "dsh-session:") || !bytes.Contains(items[0].Data, []byte(`"first-id"`)) {
		t.Fatalf("first item changed under the second: %+v", items[0])
	}
}
