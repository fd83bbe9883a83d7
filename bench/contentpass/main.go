// Command contentpass measures the content index (contentindex) of stores:
//
//	go run ./bench/contentpass [-queries N] [-nofloor] [-nowatch] [-keep DIR [-reuse]]
//	    [-cpuprofile F] [-qprofile F] STORE...
//
// For each store it runs the floor (bench/workload.Floor in "valid" mode:
// one goroutine reads every transcript, zstd-decoding it, and runs
// json.Valid on every line), then opens the store index without a cache
// (its first pass is reported apart) the way the server does: watched
// (fsnotify), so a query pays what a served query pays; -nowatch opens it
// polled, as a one-shot reader would. It then builds a fresh content index
// in a temporary directory (the first Sync: every session read, projected
// and indexed, on every core) and reports its wall and CPU time against the
// floor's, the index file's size against the indexed (projected) text, the
// process's peak RSS before and after the build, and the latency of
// -queries queries, twice: through ix.Items after the sync (what
// completion and dsh/search run: the search, then the hits' labels from
// the store index) and through ix.Search alone; p50, p99, max, over a
// fixed mix: words every generated session holds, prefixes, CJK, a phrase,
// rare and absent strings.
//
// -keep DIR builds in DIR (removing an index there first unless -reuse,
// which measures the queries on the index DIR holds after a sync that
// finds nothing to do). -cpuprofile profiles the build, -qprofile the
// query loops.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dsh-lsp/dsh-lsp/bench/workload"
	"github.com/dsh-lsp/dsh-lsp/contentindex"
	"github.com/dsh-lsp/dsh-lsp/internal/cputime"
	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
)

// queries mixes what matches every generated session (its vocabulary is
// small), prefixes, CJK and strings that match nothing.
var queries = []string{
	"migration", "customer_id", "zstd frame", "migr", "latency p99", "日本語", "中文", "引号",
	"straße", "Привет", "TODO fix", "xyzzy-none", "量子纠缠", "go test", "handler request",
}

type flags struct {
	queries              int
	keep                 string
	reuse, noFloor       bool
	noWatch              bool
	cpuProfile, qProfile string
}

func main() {
	var f flags
	flag.IntVar(&f.queries, "queries", 1000, "queries to time (each through Items and through Search)")
	flag.StringVar(&f.keep, "keep", "", "build the index in this directory instead of a temporary one")
	flag.BoolVar(&f.reuse, "reuse", false, "with -keep: keep the index found there (the build is then a sync of what changed)")
	flag.BoolVar(&f.noFloor, "nofloor", false, "skip the floor")
	flag.BoolVar(&f.noWatch, "nowatch", false, "open the store index polled (NoWatch) rather than watched as the server does")
	flag.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the build to this file")
	flag.StringVar(&f.qProfile, "qprofile", "", "write a CPU profile of the query loops to this file")
	flag.Parse()
	if flag.NArg() == 0 {
		fail(fmt.Errorf("usage: contentpass [-queries N] STORE"))
	}
	for _, root := range flag.Args() {
		out, err := measure(f, root)
		if err != nil {
			fail(err)
		}
		json.NewEncoder(os.Stdout).Encode(out)
	}
}

func measure(f flags, root string) (map[string]any, error) {
	ctx := context.Background()
	paths := workload.Transcripts(root)
	c0 := cputime.Process()
	floor := workload.FloorResult{Elapsed: 1}
	if !f.noFloor {
		var err error
		if floor, err = workload.Floor(paths, workload.FloorValid); err != nil {
			return nil, err
		}
	}
	floorCPU := max(cputime.Process()-c0, 1)
	start := time.Now()
	x, err := sessionstore.OpenIndexed(root, sessionstore.IndexOptions{CacheDir: sessionstore.NoCache, NoWatch: f.noWatch})
	if err != nil {
		return nil, err
	}
	defer x.Close()
	if err := x.Wait(ctx); err != nil {
		return nil, err
	}
	metaPass := time.Since(start)
	runtime.GC()
	rssBefore := peakRSS()
	dir := f.keep
	if dir == "" {
		if dir, err = os.MkdirTemp("", "contentpass"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
	}
	path := filepath.Join(dir, "content.db")
	if !f.reuse {
		contentindex.Remove(path)
	}
	ix, err := contentindex.Open(path, contentindex.Options{})
	if err != nil {
		return nil, err
	}
	defer ix.Close()
	stop := profile(f.cpuProfile)
	c0 = cputime.Process()
	start = time.Now()
	n, err := ix.Sync(ctx, x)
	if err != nil {
		return nil, err
	}
	build := time.Since(start)
	buildCPU := cputime.Process() - c0
	stop()
	rssAfter := peakRSS()
	st, err := ix.Stats(ctx)
	if err != nil {
		return nil, err
	}
	stop = profile(f.qProfile)
	items, itemsCPU, hits, err := timeQueries(f.queries, func(q string) (int, error) {
		its, err := ix.Items(ctx, x, reference.Target{}, q, 20)
		return len(its), err
	})
	if err != nil {
		return nil, err
	}
	search, searchCPU, _, err := timeQueries(f.queries, func(q string) (int, error) {
		hs, err := ix.Search(ctx, q, 21)
		return len(hs), err
	})
	if err != nil {
		return nil, err
	}
	stop()
	// A sync that finds nothing changed: what each dsh/search pays.
	start = time.Now()
	if _, err := ix.Sync(ctx, x); err != nil {
		return nil, err
	}
	noop := time.Since(start)
	var size int64
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if fi, err := os.Stat(path + suffix); err == nil {
			size += fi.Size()
		}
	}
	return map[string]any{
		"store": root, "files": len(paths), "indexed": n, "cores": runtime.GOMAXPROCS(0), "watched": !f.noWatch,
		"plainBytes": floor.PlainBytes, "fileBytes": floor.FileBytes,
		"floorMs": ms(floor.Elapsed), "floorCpuMs": ms(floorCPU),
		"metadataPassMs": ms(metaPass),
		"contentBuildMs": ms(build), "contentBuildCpuMs": ms(buildCPU),
		"buildOverFloor":  float64(build) / float64(floor.Elapsed),
		"cpuOverFloorCpu": float64(buildCPU) / float64(floorCPU),
		"textBytes":       st.TextBytes, "indexBytes": size, "indexOverText": float64(size) / float64(st.TextBytes),
		"items": items, "itemsCpuMsPerQuery": ms(itemsCPU) / float64(max(f.queries, 1)),
		"search": search, "searchCpuMsPerQuery": ms(searchCPU) / float64(max(f.queries, 1)),
		"hitsByQuery":          hits,
		"noopSyncMs":           ms(noop),
		"peakRssMBBeforeBuild": rssBefore >> 20, "peakRssMBAfterBuild": rssAfter >> 20,
		"load": loadAvg(),
	}, nil
}

// timeQueries runs n queries of the mix through run and returns their
// latency percentiles (and the slowest per query), the CPU time of the
// loop and each query's hit count.
func timeQueries(n int, run func(q string) (int, error)) (map[string]any, time.Duration, map[string]int, error) {
	var lat []time.Duration
	per := map[string]float64{}
	hits := map[string]int{}
	c0 := cputime.Process()
	for i := 0; i < n; i++ {
		q := queries[i%len(queries)]
		t := time.Now()
		k, err := run(q)
		if err != nil {
			return nil, 0, nil, fmt.Errorf("query %q: %w", q, err)
		}
		d := time.Since(t)
		lat = append(lat, d)
		per[q] = max(per[q], ms(d))
		hits[q] = k
	}
	cpu := cputime.Process() - c0
	if len(lat) == 0 {
		return map[string]any{}, cpu, hits, nil
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	return map[string]any{
		"p50Ms": ms(lat[len(lat)/2]), "p99Ms": ms(lat[len(lat)*99/100]), "maxMs": ms(lat[len(lat)-1]),
		"maxMsByQuery": per,
	}, cpu, hits, nil
}

// profile starts a CPU profile into path ("" does nothing) and returns
// its stop.
func profile(path string) func() {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		fail(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fail(err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}

// peakRSS is the process's VmHWM in bytes (0 where /proc is missing).
func peakRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// loadAvg is the 1-minute load average when the run ends ("" where /proc
// is missing): the machine may be shared.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func fail(err error) {
	fmt.Fprintln(os.Stderr, "contentpass:", err)
	os.Exit(2)
}
