package lsp_test

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dsh-lsp/dsh-lsp/lsp"
	"github.com/dsh-lsp/dsh-lsp/lsp/wire"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
)

// BenchmarkCompletionContentSearch measures warm completion latency on the
// store DSH_BENCH_STORE (skipped without it; e.g. bench/gen's 10,000
// sessions) with the contentSearch setting off, then on, then off and on
// again (the machine's load drifts), each on a fresh server over the store
// watched as served, after a GC. DSH_BENCH_CACHE keeps the store index and
// the content index between runs, a directory per setting (else a first
// pass and a content build run first);
// DSH_BENCH_QUERIES is the number of requests per query kind (default
// 300; fewer when the kind has fewer distinct queries); DSH_BENCH_ROUNDS
// the number of off/on pairs (default 2). Every request to a
// server is a query it was not asked before, so no result cache answers
// it. Query kinds: "short" (2 characters: content search does not
// apply), "hex" (3 hexadecimal digits, as an id being typed: content search
// runs and rarely matches), "word" (3-6 characters of the generated
// vocabulary: content search runs and matches in every session). Reported:
// p50 and p99 in ms, and the content hits of the last answer.
//
//	DSH_BENCH_STORE=/abs/store DSH_BENCH_CACHE=/abs/cache go test ./lsp -run '^$' -bench CompletionContentSearch -benchtime 1x
func BenchmarkCompletionContentSearch(b *testing.B) {
	root := os.Getenv("DSH_BENCH_STORE")
	if root == "" {
		b.Skip("DSH_BENCH_STORE is not set")
	}
	cache := os.Getenv("DSH_BENCH_CACHE")
	if cache == "" {
		cache = b.TempDir()
	}
	n := 300
	if v, err := strconv.Atoi(os.Getenv("DSH_BENCH_QUERIES")); err == nil && v > 0 {
		n = v
	}
	rounds := 2
	if v, err := strconv.Atoi(os.Getenv("DSH_BENCH_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	r := rand.New(rand.NewSource(1))
	for round := 0; round < rounds; round++ {
		for _, on := range []bool{false, true} {
			qs := benchQueries(r, n)
			b.Run(fmt.Sprintf("round=%d/contentSearch=%v", round+1, on), func(b *testing.B) {
				// A cache directory per setting: with content search off
				// the server removes the content index it finds.
				dir := filepath.Join(cache, fmt.Sprintf("contentSearch-%v", on))
				s := start(b, lsp.Options{OpenSource: func(root string) (lsp.Source, error) {
					return sessionstore.OpenIndexed(root, sessionstore.IndexOptions{CacheDir: dir})
				}})
				if _, err := s.Initialize(map[string]any{"sessionsDir": root, "contentSearch": on}); err != nil {
					b.Fatal(err)
				}
				// dsh/candidates waits for the store's first pass;
				// dsh/search, with content search on, for the content
				// index's first sync.
				var cands []map[string]any
				if err := s.Call(context.Background(), "dsh/candidates", map[string]any{}, &cands); err != nil {
					b.Fatal(err)
				}
				if on {
					var hits []searchHit
					if err := s.Call(context.Background(), "dsh/search", map[string]any{"query": "migration"}, &hits); err != nil {
						b.Fatal(err)
					}
				}
				// The first pass's (and a content build's) garbage is
				// not the requests' to collect.
				runtime.GC()
				time.Sleep(time.Second)
				for _, kind := range []string{"short", "hex", "word"} {
					p50, p99, content := benchCompletions(b, s, kind, qs[kind])
					b.ReportMetric(p50, kind+"-p50-ms")
					b.ReportMetric(p99, kind+"-p99-ms")
					b.ReportMetric(float64(content), kind+"-content-items")
				}
			})
		}
	}
}

// benchQueries returns up to n distinct queries of each kind.
func benchQueries(r *rand.Rand, n int) map[string][]string {
	words := []string{"migration", "customer_id", "function", "returns", "config", "session", "branch",
		"commit", "interface", "pointer", "latency", "budget", "decode", "encode", "handler", "request",
		"response", "server", "client", "editor", "completion", "diagnostic", "offset", "column", "refactor"}
	out := map[string][]string{}
	gen := map[string]func() string{
		"short": func() string { return string(rune('a'+r.Intn(26))) + string(rune('a'+r.Intn(26))) },
		"hex":   func() string { return fmt.Sprintf("%03x", r.Intn(4096)) },
		"word": func() string {
			w := words[r.Intn(len(words))]
			l := 3 + r.Intn(4)
			if l > len(w) {
				l = len(w)
			}
			i := r.Intn(len(w) - l + 1)
			return w[i : i+l]
		},
	}
	for kind, g := range gen {
		seen := map[string]bool{}
		for tries := 0; len(out[kind]) < n && tries < 100*n; tries++ {
			if q := g(); !seen[q] {
				seen[q] = true
				out[kind] = append(out[kind], q)
			}
		}
	}
	return out
}

// benchCompletions asks for completion at the end of each query's line
// and returns the p50 and p99 latency in ms and the content items of the
// last answer.
func benchCompletions(b *testing.B, s *session, kind string, qs []string) (p50, p99 float64, content int) {
	uri := "file:///bench-" + kind + "-" + strconv.FormatInt(time.Now().UnixNano(), 36) + ".md"
	var text strings.Builder
	for _, q := range qs {
		text.WriteString("@" + q + "\n")
	}
	s.Open(uri, text.String())
	var lat []time.Duration
	off := 0
	for _, q := range qs {
		off += 1 + len(q)
		var list wire.CompletionList
		t := time.Now()
		if err := s.Call(context.Background(), "textDocument/completion", map[string]any{
			"textDocument": map[string]any{"uri": uri}, "position": s.Pos(uri, off)}, &list); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t))
		off++ // the line break
		content = len(list.Items) - len(candidateItems(list.Items))
	}
	if len(lat) == 0 {
		return 0, 0, 0
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return ms(lat[len(lat)/2]), ms(lat[len(lat)*99/100]), content
}
