// Command cacheopen measures a restart on the persisted index cache, in
// process, and what the index keeps per session:
//
//	go run ./bench/cacheopen [-cache DIR] [-query proj] [-cwd DIR] [-runs 3] [-after 500] [-cpuprofile F] [-memprofile F] [-nowatch] [-phases] STORE
//
// The first run writes the cache when DIR holds none (the first indexing
// pass; its time and peak are reported as "cold"). Every run then opens
// the index on the cache like a restarted server (watches on) and
// reports, from the open: the cache load (OpenIndexed returning), the
// first completion answer (reference.Service.ListCandidates of -query,
// limit 50: what a restarted editor waits for), the latency of the -after
// new queries sent back to back right after that answer on its catalog
// snapshot (the catalog's part of what a user typing just after the
// restart sees: a scan of every session while the search index is still
// building), then that many through the index (revalidation included),
// and the first refresh's end. After the runs it reports the warm
// new-query latency on the built catalog, the Go heap in use after a GC
// divided by the sessions listed (bytes per session of the index:
// entries, listing, catalog and its trigram index), the heap bytes per
// session and build time of the catalog's search data alone (a second
// catalog of the same sessions, prepared), and the process's peak RSS
// (VmHWM).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
)

type result struct {
	Store           string  `json:"store"`
	Sessions        int     `json:"sessions"`
	ColdPassMs      float64 `json:"coldPassMs,omitempty"`
	LoadMs          float64 `json:"cacheLoadMs"`
	FirstAnswerMs   float64 `json:"firstAnswerMs"`
	RefreshedMs     float64 `json:"firstRefreshMs"`
	AfterQueries    int     `json:"afterRestartQueries"`
	AfterP50Us      float64 `json:"afterRestartP50Us"`
	AfterP99Us      float64 `json:"afterRestartP99Us"`
	AfterMaxUs      float64 `json:"afterRestartMaxUs"`
	AfterSpanMs     float64 `json:"afterRestartSpanMs"`
	AfterCatP50Us   float64 `json:"afterRestartCatalogP50Us"`
	AfterCatP99Us   float64 `json:"afterRestartCatalogP99Us"`
	AfterCatMaxUs   float64 `json:"afterRestartCatalogMaxUs"`
	WarmP50Us       float64 `json:"warmNewQueryP50Us"`
	WarmP99Us       float64 `json:"warmNewQueryP99Us"`
	HeapBytes       uint64  `json:"heapInUseBytes"`
	BytesPerSession float64 `json:"heapBytesPerSession"`
	SearchPerSess   float64 `json:"catalogSearchBytesPerSession"`
	SearchBuildMs   float64 `json:"catalogSearchBuildMs"`
	PeakRSSMB       float64 `json:"peakRSSMB"`
}

func main() {
	cacheDir := flag.String("cache", "", "index cache directory (default: a new temporary one, written by a first pass)")
	query := flag.String("query", "proj", "the first completion's query")
	cwd := flag.String("cwd", "/home/alice/work/project-007", "the completion target's cwd")
	runs := flag.Int("runs", 3, "restarts measured; the fastest is reported")
	after := flag.Int("after", 500, "new queries sent back to back right after the first answer")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the restarts to this file")
	memprofile := flag.String("memprofile", "", "write a heap profile (what the index keeps) to this file")
	noWatch := flag.Bool("nowatch", false, "open without watches or polls (what they cost a restart)")
	phases := flag.Bool("phases", false, "print each restart's load and catalog times on stderr")
	flag.Parse()
	if flag.NArg() != 1 {
		fail(fmt.Errorf("usage: cacheopen [-cache DIR] [-query Q] [-runs N] STORE"))
	}
	root := flag.Arg(0)
	res := result{Store: root}
	if *cacheDir == "" {
		d, err := os.MkdirTemp("", "dsh-lsp-cacheopen-")
		if err != nil {
			fail(err)
		}
		defer os.RemoveAll(d)
		*cacheDir = d
	}
	opts := sessionstore.IndexOptions{CacheDir: *cacheDir, NoWatch: *noWatch}
	if entries, _ := os.ReadDir(*cacheDir); len(entries) == 0 {
		start := time.Now()
		x, err := sessionstore.OpenIndexed(root, opts)
		if err != nil {
			fail(err)
		}
		if err := x.Wait(context.Background()); err != nil {
			fail(err)
		}
		x.Close()
		res.ColdPassMs = ms(time.Since(start))
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fail(err)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	target := reference.Target{CWD: cwd}
	var last *sessionstore.Indexed
	for i := 0; i < max(*runs, 1); i++ {
		if last != nil {
			last.Close()
			last = nil
			runtime.GC()
			debug.FreeOSMemory()
		}
		start := time.Now()
		x, err := sessionstore.OpenIndexed(root, opts)
		if err != nil {
			fail(err)
		}
		load := time.Since(start)
		svc, err := reference.NewService(x, reference.DefaultConfig())
		if err != nil {
			fail(err)
		}
		// The first answer; its catalog snapshot is taken first (the
		// same wait), so the queries on it below start right after.
		cat, err := x.Catalog(context.Background())
		if err != nil {
			fail(err)
		}
		if *phases {
			fmt.Fprintf(os.Stderr, "load %v catalog %v\n", load, time.Since(start))
		}
		if _, err := svc.ListCandidates(context.Background(), target, *query, 50); err != nil {
			fail(err)
		}
		first := time.Since(start)
		// Right after the first answer: new queries on its catalog
		// snapshot (the catalog's search alone: a scan of every session
		// while its search index builds), then new queries through the
		// index (revalidation included).
		catSvc, err := reference.NewService(fixedCatalog{x, cat}, reference.DefaultConfig())
		if err != nil {
			fail(err)
		}
		catLat := newQueries(catSvc, target, *after, 7919)
		t0 := time.Now()
		afterLat := newQueries(svc, target, *after, 7919+*after)
		span := time.Since(t0)
		if err := x.Wait(context.Background()); err != nil {
			fail(err)
		}
		refreshed := time.Since(start)
		if i == 0 || first < time.Duration(res.FirstAnswerMs*float64(time.Millisecond)) {
			res.LoadMs, res.FirstAnswerMs, res.RefreshedMs = ms(load), ms(first), ms(refreshed)
			res.AfterQueries, res.AfterSpanMs = len(afterLat), ms(span)
			if len(afterLat) > 0 {
				res.AfterP50Us, res.AfterP99Us, res.AfterMaxUs = pct(afterLat, 50), pct(afterLat, 99), pct(afterLat, 100)
				res.AfterCatP50Us, res.AfterCatP99Us, res.AfterCatMaxUs = pct(catLat, 50), pct(catLat, 99), pct(catLat, 100)
			}
		}
		last = x
	}
	// Warm: new 3-hex-digit queries on the last index, its catalog and
	// search index built (as the background rebuild leaves them).
	svc, _ := reference.NewService(last, reference.DefaultConfig())
	if cat, err := last.Catalog(context.Background()); err == nil {
		res.Sessions = len(cat.Headers)
		cat.Prepare()
	}
	lat := newQueries(svc, target, 2000, 0)
	res.WarmP50Us, res.WarmP99Us = pct(lat, 50), pct(lat, 99)
	cat, _ := last.Catalog(context.Background())
	var mem runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&mem)
	res.HeapBytes = mem.HeapInuse
	if res.Sessions > 0 {
		res.BytesPerSession = float64(mem.HeapInuse) / float64(res.Sessions)
	}
	res.PeakRSSMB = peakRSSMB()
	if *memprofile != "" {
		f, err := os.Create(*memprofile)
		if err != nil {
			fail(err)
		}
		pprof.Lookup("heap").WriteTo(f, 0)
		f.Close()
	}
	// The catalog's search data alone (lowered strings, trigram index):
	// a second catalog of the same sessions, prepared, with the index
	// closed so that no background work allocates meanwhile.
	last.Close()
	if cat != nil && len(cat.Headers) > 0 {
		again := &reference.Catalog{Headers: cat.Headers, Titles: cat.Titles}
		runtime.GC()
		runtime.ReadMemStats(&mem)
		before := mem.HeapAlloc
		t0 := time.Now()
		if err := again.Prepare(); err != nil {
			fail(err)
		}
		res.SearchBuildMs = ms(time.Since(t0))
		runtime.GC()
		runtime.ReadMemStats(&mem)
		res.SearchPerSess = (float64(mem.HeapAlloc) - float64(before)) / float64(len(cat.Headers))
		runtime.KeepAlive(again)
	}
	runtime.KeepAlive(last)
	b, _ := json.MarshalIndent(res, "", "  ")
	fmt.Println(string(b))
}

// newQueries sends n new 3-hex-digit queries (the k-th is the (from+k)-th
// of a fixed sequence) back to back and returns their latencies, sorted.
func newQueries(svc *reference.Service, target reference.Target, n, from int) []time.Duration {
	lat := make([]time.Duration, 0, n)
	for i := from; i < from+n; i++ {
		t0 := time.Now()
		if _, err := svc.ListCandidates(context.Background(), target, fmt.Sprintf("%03x", i*2654435761%4096), 50); err != nil {
			fail(err)
		}
		lat = append(lat, time.Since(t0))
	}
	slices.Sort(lat)
	return lat
}

// pct is the p-th percentile of sorted latencies, in microseconds (100:
// the maximum).
func pct(sorted []time.Duration, p int) float64 {
	return float64(sorted[min(len(sorted)*p/100, len(sorted)-1)].Microseconds())
}

// fixedCatalog is the index answering every query from one catalog
// snapshot, without revalidating: what the catalog's search alone costs.
type fixedCatalog struct {
	*sessionstore.Indexed
	cat *reference.Catalog
}

func (f fixedCatalog) Catalog(context.Context) (*reference.Catalog, error) { return f.cat, nil }

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// peakRSSMB is VmHWM from /proc/self/status (Linux; 0 elsewhere).
func peakRSSMB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb float64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), &kb)
			return kb / 1024
		}
	}
	return 0
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "cacheopen:", err)
	os.Exit(1)
}
