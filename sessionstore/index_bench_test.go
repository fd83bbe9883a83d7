package sessionstore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/dsh-lsp/dsh-lsp/bench/workload"
	"github.com/dsh-lsp/dsh-lsp/reference"
)

// Benchmarks of the index. They run on a generated store of
// $DSH_BENCH_SESSIONS sessions (default 1000), or on the store at
// $DSH_BENCH_STORE (e.g. one written by `go run ./bench/gen`):
//
//	DSH_BENCH_STORE=bench/out/stores/zstd-s10000 go test ./sessionstore -run '^$' -bench Indexed -benchtime 2000x

var (
	benchStoreOnce sync.Once
	benchStoreRoot string
	benchStoreErr  error
)

func benchStore(b *testing.B) string {
	b.Helper()
	benchStoreOnce.Do(func() {
		if root := os.Getenv("DSH_BENCH_STORE"); root != "" {
			benchStoreRoot, benchStoreErr = filepath.Abs(root)
			return
		}
		n := 1000
		if v, err := strconv.Atoi(os.Getenv("DSH_BENCH_SESSIONS")); err == nil && v > 0 {
			n = v
		}
		dir, err := os.MkdirTemp("", "dsh-lsp-bench-")
		if err != nil {
			benchStoreErr = err
			return
		}
		benchStoreRoot = filepath.Join(dir, "store")
		_, benchStoreErr = workload.Generate(benchStoreRoot, workload.Options{
			Sessions: n, CWDs: max(n/50, 2), Compression: workload.Zstd, Multibyte: 0.2,
			Compactions: 1, NoCWD: 0.05, Seed: int64(n),
		}, nil)
	})
	if benchStoreErr != nil {
		b.Fatal(benchStoreErr)
	}
	return benchStoreRoot
}

var (
	benchCacheOnce sync.Once
	benchCacheDir  string
)

// sharedCache is one cache directory for the whole benchmark run, so only
// the first benchmark pays for the first index.
func sharedCache(b *testing.B) string {
	benchCacheOnce.Do(func() {
		benchCacheDir, _ = os.MkdirTemp("", "dsh-lsp-bench-cache-")
	})
	return benchCacheDir
}

func benchIndexed(b *testing.B, cacheDir string) *Indexed {
	b.Helper()
	x, err := OpenIndexed(benchStore(b), IndexOptions{CacheDir: cacheDir})
	if err != nil {
		b.Fatal(err)
	}
	if err := x.Wait(context.Background()); err != nil {
		b.Fatal(err)
	}
	return x
}

// BenchmarkIndexedCandidates is completion's server-side core work on
// every keystroke: listCandidates over the index (ListSessions, and
// ReadTitles of every session for a non-empty query).
func BenchmarkIndexedCandidates(b *testing.B) {
	x := benchIndexed(b, sharedCache(b))
	defer x.Close()
	svc, err := reference.NewService(x, reference.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	cwd := "/home/alice/work/project-000"
	target := reference.Target{CWD: &cwd}
	for _, q := range []string{"", "proj", "project-007", "界", "zzzz-nomatch"} {
		b.Run("query="+q, func(b *testing.B) {
			ctx := context.Background()
			lat := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				if _, err := svc.ListCandidates(ctx, target, q, 50); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			reportPercentiles(b, lat)
		})
	}
}

// BenchmarkIndexedReadTitlesAll is ReadTitles of every listed session.
func BenchmarkIndexedReadTitlesAll(b *testing.B) {
	x := benchIndexed(b, sharedCache(b))
	defer x.Close()
	ctx := context.Background()
	hs, _ := x.ListSessions(ctx)
	ids := make([]string, len(hs))
	for i, h := range hs {
		ids[i] = h.ID
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := x.ReadTitles(ctx, ids); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIndexedRefreshUnchanged is the stat scan of a refresh when
// nothing changed: full (every transcript) and quick (project
// directories and recently modified transcripts; all are hot in a freshly
// generated store, so the quick figure here is an upper bound).
func BenchmarkIndexedRefreshUnchanged(b *testing.B) {
	x := benchIndexed(b, sharedCache(b))
	defer x.Close()
	ctx := context.Background()
	for _, mode := range []refreshMode{modeFull, modeQuick} {
		b.Run(fmt.Sprintf("full=%v", mode == modeFull), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if err := x.refresh(ctx, false, mode); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkIndexedOpenCached is a restart with a valid cache: load it,
// stat-scan the store, until Complete.
func BenchmarkIndexedOpenCached(b *testing.B) {
	cache := sharedCache(b)
	benchIndexed(b, cache).Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		benchIndexed(b, cache).Close()
	}
}

// BenchmarkIndexedOpenNoCache is the first index of the store.
func BenchmarkIndexedOpenNoCache(b *testing.B) {
	benchStore(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		benchIndexed(b, NoCache).Close()
	}
}

// BenchmarkStoreCandidates is the same query through the plain store
// (every title read parses its log), for comparison.
func BenchmarkStoreCandidates(b *testing.B) {
	st, err := Open(benchStore(b))
	if err != nil {
		b.Fatal(err)
	}
	svc, _ := reference.NewService(st, reference.DefaultConfig())
	cwd := "/home/alice/work/project-000"
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := svc.ListCandidates(ctx, reference.Target{CWD: &cwd}, "proj", 50); err != nil {
			b.Fatal(err)
		}
	}
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	s := append([]time.Duration(nil), lat...)
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	at := func(p int) float64 {
		i := (len(s)*p+99)/100 - 1
		return float64(s[max(i, 0)].Microseconds()) / 1000
	}
	b.ReportMetric(at(50), "p50-ms")
	b.ReportMetric(at(99), "p99-ms")
}
