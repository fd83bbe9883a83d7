package sessionstore_test

import (
	"context"
	"testing"

	"github.com/dsh-lsp/dsh-lsp/bench/workload"
	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
)

// BenchmarkHoverCold is the cold cost of one hover of a large session (issue
// 16): ReadSurface of a 6 MB / 2,500-turn session (the stress back-pressure
// phases' sessions: 10 MB of JSONL, 54,000 lines, 2.5 MB as zstd) plus the
// retention the hover runs on it under dsh's default 64 KiB budget, through
// the index (the server: only the surface records are decoded) and through
// the store (the CLI: the whole log is streamed through the fold). Nothing
// is cached between iterations but the index itself, which the server
// builds at startup.
func BenchmarkHoverCold(b *testing.B) {
	for _, c := range []struct {
		name    string
		comp    workload.Compression
		indexed bool
		summary bool // the server's hover: no read
	}{{"summary/zstd", workload.Zstd, true, true}, {"summary/plain", workload.None, true, true},
		{"indexed/zstd", workload.Zstd, true, false}, {"indexed/plain", workload.None, true, false},
		{"store/zstd", workload.Zstd, false, false}, {"store/plain", workload.None, false, false}} {
		b.Run(c.name, func(b *testing.B) {
			root := b.TempDir()
			infos, err := workload.Generate(root, workload.Options{Sessions: 1, CWDs: 1, Size: 6 << 20, Turns: 2500,
				Compression: c.comp, Multibyte: 0.2, Seed: 16}, nil)
			if err != nil {
				b.Fatal(err)
			}
			id := infos[0].ID
			var src reference.Source
			var x *sessionstore.Indexed
			if c.indexed {
				x, err = sessionstore.OpenIndexed(root, sessionstore.IndexOptions{CacheDir: sessionstore.NoCache})
				if err != nil {
					b.Fatal(err)
				}
				defer x.Close()
				if err := x.Wait(context.Background()); err != nil {
					b.Fatal(err)
				}
				src = x
			} else if src, err = sessionstore.Open(root); err != nil {
				b.Fatal(err)
			}
			budget := reference.DefaultConfig().MaxReferenceBytes
			b.SetBytes(infos[0].Plain)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if c.summary {
					sum, ok := x.SurfaceSummary(context.Background(), id)
					if !ok {
						b.Fatal("no surface summary")
					}
					stats, _, ok := reference.RetainSummary(sum, "s0", budget)
					if !ok || stats.OriginalMessages < 5000 || !stats.Truncated {
						b.Fatalf("%+v (answered %v): want at least 5,000 messages, dropped to the budget", stats, ok)
					}
					continue
				}
				surf, err := src.ReadSurface(context.Background(), id)
				if err != nil {
					b.Fatal(err)
				}
				r, err := reference.Retain(surf, "s0", budget)
				if err != nil {
					b.Fatal(err)
				}
				if r.Stats.OriginalMessages < 5000 || !r.Stats.Truncated {
					b.Fatalf("%+v: want at least 5,000 messages, truncated to the budget", r.Stats)
				}
			}
		})
	}
}
