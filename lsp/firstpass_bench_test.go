package lsp_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dsh-lsp/dsh-lsp/bench/workload"
	"github.com/dsh-lsp/dsh-lsp/lsp"
)

// BenchmarkServerFirstPass measures an in-process server (the production
// source, no cache) from initialize to the end of its first pass over the
// store DSH_BENCH_STORE (skipped without it), with dsh/candidates, which
// waits for that pass, and reports it beside the one-goroutine json.Valid
// floor of the same files measured after it. The difference from
// bench/indexpass is everything the server does around the pass; run with
// -cpuprofile to see it.
//
//	DSH_BENCH_STORE=/abs/store go test ./lsp -run '^$' -bench ServerFirstPass -benchtime 3x -cpuprofile cpu.prof
func BenchmarkServerFirstPass(b *testing.B) {
	root := os.Getenv("DSH_BENCH_STORE")
	if root == "" {
		b.Skip("DSH_BENCH_STORE is not set")
	}
	var paths []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), "session.jsonl") {
			paths = append(paths, p)
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	var pass, floor time.Duration
	for range b.N {
		b.StopTimer()
		s := start(b, lsp.Options{})
		b.StartTimer()
		t0 := time.Now()
		if _, err := s.Initialize(map[string]any{"sessionsDir": root, "contentSearch": false}); err != nil {
			b.Fatal(err)
		}
		if err := s.Call(context.Background(), "dsh/candidates", map[string]any{}, nil); err != nil {
			b.Fatal(err)
		}
		pass += time.Since(t0)
		b.StopTimer()
		s.Close()
		f, err := workload.Floor(paths, workload.FloorValid)
		if err != nil {
			b.Fatal(err)
		}
		floor += f.Elapsed
		b.StartTimer()
	}
	b.ReportMetric(float64(pass.Milliseconds())/float64(b.N), "pass-ms")
	b.ReportMetric(float64(floor.Milliseconds())/float64(b.N), "floor-ms")
	b.ReportMetric(float64(pass)/float64(floor), "pass/floor")
}
