package reference

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// benchSource is a Source answering from precomputed headers and titles,
// so BenchmarkListCandidates measures the core only, not a store.
type benchSource struct {
	headers []SessionHeader
	titles  map[string]*string
}

func (b *benchSource) ListSessions(context.Context) ([]SessionHeader, error) {
	return b.headers, nil
}

func (b *benchSource) ReadTitles(_ context.Context, ids []string) ([]TitleResult, error) {
	out := make([]TitleResult, len(ids))
	for i, id := range ids {
		out[i] = TitleResult{SessionID: id, Title: b.titles[id]}
	}
	return out, nil
}

func (b *benchSource) ReadSurface(context.Context, string) (*Surface, error) {
	return nil, fmt.Errorf("not supported")
}

// newBenchSource mimics bench/gen's 10k store: uuid-like ids, 200 cwds,
// 5 % without cwd, titles with 20 % non-ASCII words.
func newBenchSource(n int) *benchSource {
	rng := rand.New(rand.NewPCG(7, 7))
	words := []string{"Refactor", "migration", "index", "Parser", "tests", "fix", "Cache", "server", "completion", "docs"}
	multi := []string{"界面", "Überprüfung", "Σύνοψη", "İstanbul", "straße", "😀emoji"}
	src := &benchSource{titles: make(map[string]*string, n)}
	for i := range n {
		id := fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", rng.Uint32(), rng.IntN(1<<16), rng.IntN(1<<12), rng.IntN(1<<12), rng.Uint64()&(1<<48-1))
		h := SessionHeader{ID: id, CreatedAt: int64(n - i)}
		if rng.IntN(20) != 0 {
			cwd := fmt.Sprintf("/home/user/src/project-%03d", rng.IntN(200))
			h.CWD = &cwd
		}
		src.headers = append(src.headers, h)
		if rng.IntN(10) != 0 {
			var parts []string
			for range 3 + rng.IntN(5) {
				if rng.IntN(5) == 0 {
					parts = append(parts, multi[rng.IntN(len(multi))])
				} else {
					parts = append(parts, words[rng.IntN(len(words))])
				}
			}
			title := strings.Join(parts, " ")
			src.titles[id] = &title
		}
	}
	return src
}

func BenchmarkListCandidates(b *testing.B) {
	src := newBenchSource(10000)
	target := Target{SessionID: &src.headers[17].ID, CWD: src.headers[17].CWD}
	for _, q := range []struct{ name, query string }{
		{"empty", ""},
		{"match-all", "proj"},
		{"match-some", "a3f"},
		{"match-multibyte", "界"},
		{"no-match", "zzqq"},
	} {
		b.Run(q.name, func(b *testing.B) {
			s := newTestService(b, src, DefaultConfig())
			// Warm the lowercase memo: the server answers every keystroke
			// of a long-lived session from a warm memo.
			if _, err := s.ListCandidates(context.Background(), target, q.query, 50); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.ListCandidates(context.Background(), target, q.query, 50); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
