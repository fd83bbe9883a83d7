// Command contentpass measures the content index (contentindex) of stores:
//
//	go run ./bench/contentpass [-queries N] [-nofloor] [-nowatch|-snapshot] [-cache DIR] [-keep DIR [-reuse]]
//	    [-cpuprofile F] [-qprofile F] STORE...
//
// For each store it runs the floor (bench/workload.Floor in "valid" mode:
// one goroutine reads every transcript, zstd-decoding it, and runs
// json.Valid on every line), then opens the store index without a cache
// (or with the one -cache keeps; its first pass is reported apart) the way the server does: watched
// (fsnotify), so a query pays what a served query pays; -nowatch opens it
// polled, as a one-shot reader would, and -snapshot without any
// revalidation, so the figures are the content index's own. It then builds a fresh content index
// in a temporary directory (the first Sync: every session read, projected
// and indexed, on every core) and reports its wall and CPU time against the
// floor's, the index file's size against the indexed (projected) text, the
// process's peak RSS before and after the build, and the latency of
// -queries queries three times: through ix.Items after the sync (what
// completion runs), through ix.Search alone and through ix.Find (a sync,
// then Items: what dsh/search, the CLI and MCP run); p50, p99, max, over a
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
	noWatch, snapshot    bool
	cpuProfile, qProfile string
	cache                string
}

func main() {
	var f flags
	flag.IntVar(&f.queries, "queries", 1000, "queries to time (each through Items and through Search)")
	flag.StringVar(&f.keep, "keep", "", "build the index in this directory instead of a temporary one")
	flag.BoolVar(&f.reuse, "reuse", false, "with -keep: keep the index found there (the build is then a sync of what changed)")
	flag.BoolVar(&f.noFloor, "nofloor", false, "skip the floor")
	flag.BoolVar(&f.noWatch, "nowatch", false, "open the store index polled (NoWatch) rather than watched as the server does")
	flag.BoolVar(&f.snapshot, "snapshot", false, "open the store index as a snapshot (no revalidation, no polls): the content index's own cost")
	flag.StringVar(&f.cache, "cache", "", "persist the store index in this directory (a later run loads it rather than parsing the store); default: none")
	flag.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the build to this file")
	flag.StringVar(&f.qProfile, "qprofile", "", "write a CPU profile of the query loops to this file")
	flag.Parse()
	if flag.NArg() == 0 {
		fail(fmt.Errorf("usage: contentpass [-queries N] STORE"))
	}
	defer func() {
		for _, d := range tmpDirs {
			os.RemoveAll(d)
		}
	}()
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
	out := map[string]any{"store": root, "cores": runtime.GOMAXPROCS(0), "watched": !f.noWatch && !f.snapshot, "snapshot": f.snapshot}
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
	x, err := openStore(f, root)
	if err != nil {
		return nil, err
	}
	defer x.Close()
	runtime.GC()
	rssBefore := peakRSS()
	ix, path, err := openIndex(f)
	if err != nil {
		return nil, err
	}
	defer ix.Close()
	out["metadataPassMs"] = ms(time.Since(start))
	stop := profile(f.cpuProfile)
	c0 = cputime.Process()
	start = time.Now()
	n, err := ix.Sync(ctx, x)
	if err != nil {
		return nil, err
	}
	build, buildCPU := time.Since(start), cputime.Process()-c0
	stop()
	rssAfter := peakRSS()
	st, err := ix.Stats(ctx)
	if err != nil {
		return nil, err
	}
	stop = profile(f.qProfile)
	err = queryLoops(f, ix, x, out)
	stop()
	if err != nil {
		return nil, err
	}
	// A sync that finds nothing changed.
	start = time.Now()
	if _, err := ix.Sync(ctx, x); err != nil {
		return nil, err
	}
	size := fileSize(path)
	for k, v := range map[string]any{
		"files": len(paths), "indexed": n,
		"plainBytes": floor.PlainBytes, "fileBytes": floor.FileBytes,
		"floorMs": ms(floor.Elapsed), "floorCpuMs": ms(floorCPU),
		"contentBuildMs": ms(build), "contentBuildCpuMs": ms(buildCPU),
		"buildOverFloor":  float64(build) / float64(floor.Elapsed),
		"cpuOverFloorCpu": float64(buildCPU) / float64(floorCPU),
		"textBytes":       st.TextBytes, "indexBytes": size, "indexOverText": float64(size) / float64(st.TextBytes),
		"noopSyncMs":           ms(time.Since(start)),
		"peakRssMBBeforeBuild": rssBefore >> 20, "peakRssMBAfterBuild": rssAfter >> 20,
		"load": loadAvg(),
	} {
		out[k] = v
	}
	return out, nil
}

// openStore opens the store index as f says and waits for its first
// pass.
func openStore(f flags, root string) (*sessionstore.Indexed, error) {
	cache := f.cache
	if cache == "" {
		cache = sessionstore.NoCache
	}
	x, err := sessionstore.OpenIndexed(root, sessionstore.IndexOptions{CacheDir: cache, NoWatch: f.noWatch, Snapshot: f.snapshot})
	if err != nil {
		return nil, err
	}
	if err := x.Wait(context.Background()); err != nil {
		x.Close()
		return nil, err
	}
	return x, nil
}

// openIndex opens the content index in -keep's directory (a temporary
// one without it, removed when the process ends), empty unless -reuse.
func openIndex(f flags) (*contentindex.Index, string, error) {
	dir := f.keep
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "contentpass"); err != nil {
			return nil, "", err
		}
		tmpDirs = append(tmpDirs, dir)
	}
	path := filepath.Join(dir, "content.db")
	if !f.reuse {
		contentindex.Remove(path)
	}
	ix, err := contentindex.Open(path, contentindex.Options{})
	return ix, path, err
}

// tmpDirs are removed when main returns.
var tmpDirs []string

// queryLoops times the query mix through Items (what completion runs),
// Search alone, and Find (a sync first: what dsh/search runs), and
// records the figures in out.
func queryLoops(f flags, ix *contentindex.Index, x *sessionstore.Indexed, out map[string]any) error {
	ctx := context.Background()
	for _, l := range []struct {
		name string
		run  func(q string) (int, error)
	}{
		{"items", func(q string) (int, error) {
			its, err := ix.Items(ctx, x, reference.Target{}, q, 20)
			return len(its), err
		}},
		{"search", func(q string) (int, error) {
			hs, err := ix.Search(ctx, q, 21)
			return len(hs), err
		}},
		{"find", func(q string) (int, error) {
			its, err := ix.Find(ctx, x, reference.Target{}, q, 20)
			return len(its), err
		}},
	} {
		lat, cpu, hits, err := timeQueries(f.queries, l.run)
		if err != nil {
			return err
		}
		out[l.name] = lat
		out[l.name+"CpuMsPerQuery"] = ms(cpu) / float64(max(f.queries, 1))
		out["hitsByQuery"] = hits
	}
	out["rssMBAfterQueries"] = currentRSS() >> 20
	return nil
}

// fileSize is the bytes of the index file and its journals.
func fileSize(path string) int64 {
	var size int64
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if fi, err := os.Stat(path + suffix); err == nil {
			size += fi.Size()
		}
	}
	return size
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
	stop, err := workload.CPUProfile(path)
	if err != nil {
		fail(err)
	}
	return stop
}

// peakRSS is the process's VmHWM in bytes (0 where /proc is missing).
func peakRSS() int64 { return procStatus("VmHWM:") }

// currentRSS is the process's VmRSS in bytes (0 where /proc is missing).
func currentRSS() int64 { return procStatus("VmRSS:") }

// procStatus reads a kB figure of /proc/self/status.
func procStatus(key string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), key); ok {
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
