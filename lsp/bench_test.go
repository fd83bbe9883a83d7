package lsp_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/dsh-lsp/dsh-lsp/bench/workload"
	"github.com/dsh-lsp/dsh-lsp/lsp"
	"github.com/dsh-lsp/dsh-lsp/lsp/wire"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/storetest"
)

// BenchmarkCompletion measures one textDocument/completion request (server
// side plus the in-process JSON-RPC round trip) on a generated store of
// 1,000 real-format sessions, after the first request warmed the store: a
// client re-asking as the user types. The "store" source brings the index
// up to date with the store before every query.
func BenchmarkCompletion(b *testing.B) {
	for _, src := range []string{"store", "indexed"} {
		root := b.TempDir()
		if _, err := workload.Generate(root, workload.Options{Sessions: 1000, CWDs: 20, Turns: 2, NoCWD: 0.05, Seed: 7}, nil); err != nil {
			b.Fatal(err)
		}
		open := func(root string) (lsp.Source, error) { return storetest.OpenSynced(root, 0) }
		if src == "indexed" {
			open = func(root string) (lsp.Source, error) {
				x, err := sessionstore.OpenIndexed(root, sessionstore.IndexOptions{CacheDir: sessionstore.NoCache})
				if err == nil {
					err = x.Wait(context.Background())
				}
				return x, err
			}
		}
		for _, q := range []string{"", "project-01"} {
			b.Run(fmt.Sprintf("%s/query=%q", src, q), func(b *testing.B) {
				s := start(b, lsp.Options{OpenSource: open})
				if _, err := s.Initialize(map[string]any{"sessionsDir": root}); err != nil {
					b.Fatal(err)
				}
				uri := "file:///bench.dsh"
				text := "see @" + q
				s.Open(uri, text)
				pos := s.Pos(uri, len(text))
				var list wire.CompletionList
				call := func() {
					if err := s.Call(context.Background(), "textDocument/completion", map[string]any{
						"textDocument": map[string]any{"uri": uri}, "position": pos}, &list); err != nil {
						b.Fatal(err)
					}
				}
				call() // warm-up: first listing
				b.ResetTimer()
				for range b.N {
					call()
				}
				b.ReportMetric(float64(len(list.Items)), "items")
			})
		}
	}
}
