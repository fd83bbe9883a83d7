package lsp_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/dsh-lsp/dsh-lsp/bench/workload"
	"github.com/dsh-lsp/dsh-lsp/lsp"
	"github.com/dsh-lsp/dsh-lsp/lsp/wire"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/storetest"
)

// BenchmarkCompletion measures one textDocument/completion request (server
// side plus the in-process JSON-RPC round trip) on a generated store of
// 1,000 real-format sessions, after the first request warmed the store.
// The server's candidate cache is defeated before each iteration unless
// the sub-benchmark name ends in "cached" (a client re-asking for the same
// query). (It used to alternate two query strings, which hit the 3 s cache
// from the third iteration on, and an empty query always hit it.)
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
		for _, q := range []string{"", "project-01", "project-01 cached"} {
			q, cached := strings.CutSuffix(q, " cached")
			name := fmt.Sprintf("%s/query=%q", src, q)
			if cached {
				name += "/cached"
			}
			b.Run(name, func(b *testing.B) {
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
				for i := 0; i < b.N; i++ {
					if !cached {
						// A workspace-folder change (here an empty one)
						// starts a new candidate-cache generation: no
						// cache hit, same query and target.
						b.StopTimer()
						s.Notify("workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{"added": []any{}, "removed": []any{}}})
						b.StartTimer()
					}
					call()
				}
				b.ReportMetric(float64(len(list.Items)), "items")
			})
		}
	}
}
