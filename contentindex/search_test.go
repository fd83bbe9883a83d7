package contentindex

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dsh-lsp/dsh-lsp/reference"
)

// TestTitleMatchSnippetIsTheTextsSnippet: the snippet of a title match,
// cut from the title and the text's lead, is the snippet cut from the
// whole text, whenever the first term is in the title by the snippet's
// matching (else the search reads the whole text).
func TestTitleMatchSnippetIsTheTextsSnippet(t *testing.T) {
	alphabet := []string{"a", "A", "k", "K", "\u212a", "ß", "ẞ", "İ", "i", "\u0307", "日", "本", " ", "\n", "é", "😀"}
	r := rand.New(rand.NewPCG(1, 2))
	word := func(max int) string {
		var b strings.Builder
		for range r.IntN(max + 1) {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		return b.String()
	}
	fromTitle := 0
	for range 200000 {
		title, body := word(12), word(120)
		var fs []folder
		for range 1 + r.IntN(2) {
			term := strings.Join(strings.Fields(word(3)), "")
			if term == "" {
				term = "a"
			}
			fs = append(fs, newFolder(term))
		}
		i, n := fs[0].index(title)
		if i < 0 {
			continue
		}
		fromTitle++
		d := doc{title: title, text: body}
		text := title + "\n" + body
		got := snippetAt(title+"\n"+d.lead(), i, n, len(title)+len(body)+1)
		if want := snippet(text, fs); got != want {
			t.Fatalf("title %q, text %q, terms %q: snippet from the lead %q, from the text %q", title, body, fs[0].term, got, want)
		}
	}
	if fromTitle < 10000 {
		t.Fatalf("only %d cases matched in the title", fromTitle)
	}
}

// TestSearchSnippetsAreCutFromTheWholeText: through Search, the snippets
// of title matches (cut from the lead), of a title match the snippet's
// folding does not see (İ lowers to i̇, it does not fold to it) and of
// text matches are those cut from the session's whole stored text.
func TestSearchSnippetsAreCutFromTheWholeText(t *testing.T) {
	root := t.TempDir()
	long := strings.Repeat("the census counted every quokka on the island ", 4)
	sessions := []struct{ id, title, text string }{
		{"e0000000-0000-4000-8000-0000000000b1", "Quokka census", "short"},
		{"e0000000-0000-4000-8000-0000000000b2", "Quokka census two", long},
		{"e0000000-0000-4000-8000-0000000000b3", "İstanbul quokka", "i̇stanbul had a quokka " + long},
		{"e0000000-0000-4000-8000-0000000000b4", "untitled", "a quokka " + long},
	}
	for _, s := range sessions {
		writeTitledSession(t, root, s.id, s.title, s.text)
	}
	x := openStore(t, root, false)
	ix := openTemp(t)
	if _, err := ix.Sync(context.Background(), x); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"quokka", "QUOKKA census", "i̇stanbul", "census"} {
		hits, err := ix.Search(context.Background(), q, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 0 {
			t.Fatalf("%q: no hits", q)
		}
		var fs []folder
		for _, term := range terms(q) {
			fs = append(fs, newFolder(term))
		}
		for _, h := range hits {
			text := storedText(t, ix, h.SessionID)
			if want := oneLine(snippet(text, fs)); h.Snippet != want {
				t.Errorf("%q, session %s: snippet %q, want %q (cut from the whole text)", q, h.SessionID, h.Snippet, want)
			}
		}
	}
	if items, _ := ix.Items(context.Background(), x, reference.Target{}, "i̇stanbul", 10); len(items) != 1 || !strings.Contains(items[0].Snippet, "**i̇stanbul**") {
		t.Errorf("i̇stanbul: %+v, want the match in the text marked", items)
	}
}

// storedText is the title, a line break and the text the index stores for
// a session.
func storedText(t *testing.T, ix *Index, id string) string {
	t.Helper()
	var title string
	var z []byte
	if err := ix.db.QueryRow(`SELECT texts.title, texts.ztext FROM texts JOIN docs ON docs.rowid = texts.n WHERE docs.id = ?`, id).Scan(&title, &z); err != nil {
		t.Fatal(err)
	}
	body, err := textDecoder.DecodeAll(z, nil)
	if err != nil {
		t.Fatal(err)
	}
	return title + "\n" + string(body)
}
