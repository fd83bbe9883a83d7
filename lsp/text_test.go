package lsp_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"
	lspuri "go.lsp.dev/uri"

	"github.com/dsh-lsp/dsh-lsp/lsp"
	"github.com/dsh-lsp/dsh-lsp/lsp/position"
)

// TestManyRangeChangesInOneDidChange: one didChange carrying hundreds of
// range changes (a hostile client's flood) leaves the server's text exactly as
// applying them one by one to the whole text gives, in every encoding.
func TestManyRangeChangesInOneDidChange(t *testing.T) {
	for _, enc := range []string{"utf-16", "utf-8", "utf-32"} {
		t.Run(enc, func(t *testing.T) {
			s := start(t, lsp.Options{})
			if _, err := s.Initialize(map[string]any{"sessionsDir": storeRaw}, enc); err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(11, 12))
			words := []string{"word ", "é ", "🙂", "中文 ", "\n", "\r\n", "x"}
			var b strings.Builder
			for b.Len() < 48<<10 { // six 8 KiB chunks
				b.WriteString(words[r.IntN(len(words))])
			}
			text := b.String()
			uri := "file:///many.dsh"
			s.Open(uri, text)
			e := position.Encoding(enc)
			var changes []protocol.TextDocumentContentChangeEvent
			for i := range 300 {
				// The model: a mapper of the whole current text per change.
				m := position.NewMapper(text, e)
				a := r.IntN(len(text) + 1)
				z := min(len(text), a+r.IntN(12))
				rng := protocol.Range{Start: m.Position(a), End: m.Position(z)}
				ins := words[i%len(words)]
				changes = append(changes, &protocol.TextDocumentContentChangePartial{Range: rng, Text: ins})
				start, _ := m.Offset(rng.Start)
				end, _ := m.Offset(rng.End)
				text = text[:start] + ins + text[end:]
			}
			s.Notify("textDocument/didChange", protocol.DidChangeTextDocumentParams{
				TextDocument:   protocol.VersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: lspuri.URI(uri)}, Version: 2},
				ContentChanges: changes})
			var res struct {
				Content string `json:"content"`
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := s.Call(ctx, "dsh/prepare", map[string]any{"textDocument": map[string]any{"uri": uri}}, &res); err != nil {
				t.Fatal(err)
			}
			if res.Content != text {
				i := 0
				for i < min(len(text), len(res.Content)) && text[i] == res.Content[i] {
					i++
				}
				t.Fatalf("server text differs from the model at byte %d (len %d vs %d)", i, len(res.Content), len(text))
			}
		})
	}
}
