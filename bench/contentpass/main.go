// Command contentpass measures the content index (contentindex) of stores:
//
//	go run ./bench/contentpass [-queries N] [-keep DIR] STORE...
//
// For each store it runs the floor (bench/workload.Floor in "valid" mode:
// one goroutine reads every transcript, zstd-decoding it, and runs
// json.Valid on every line), then opens the store index without a cache
// (its first pass is reported apart), then builds a fresh content index in
// a temporary directory (the first Sync: every session read, projected and
// indexed, on every core) and reports its wall and CPU time against the
// floor, the index file's size against the indexed (projected) text, the
// process's peak RSS before and after the build, and the latency of
// -queries searches (ix.Items after the sync, as completion asks; p50, p99,
// max) over a fixed mix: words every generated session holds, prefixes,
// CJK, a phrase, rare and absent strings.
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

func main() {
	nq := flag.Int("queries", 1000, "searches to time")
	keep := flag.String("keep", "", "build the index in this directory instead of a temporary one")
	noFloor := flag.Bool("nofloor", false, "skip the floor")
	flag.Parse()
	if flag.NArg() == 0 {
		fail(fmt.Errorf("usage: contentpass [-queries N] STORE"))
	}
	for _, root := range flag.Args() {
		paths := workload.Transcripts(root)
		c0 := cputime.Process()
		floor := workload.FloorResult{Elapsed: 1}
		var err error
		if !*noFloor {
			if floor, err = workload.Floor(paths, workload.FloorValid); err != nil {
				fail(err)
			}
		}
		floorCPU := max(cputime.Process()-c0, 1)
		start := time.Now()
		x, err := sessionstore.OpenIndexed(root, sessionstore.IndexOptions{CacheDir: sessionstore.NoCache, RefreshInterval: time.Hour, NoWatch: true})
		if err != nil {
			fail(err)
		}
		if err := x.Wait(context.Background()); err != nil {
			fail(err)
		}
		metaPass := time.Since(start)
		runtime.GC()
		rssBefore := peakRSS()
		dir := *keep
		if dir == "" {
			if dir, err = os.MkdirTemp("", "contentpass"); err != nil {
				fail(err)
			}
			defer os.RemoveAll(dir)
		}
		path := filepath.Join(dir, "content.db")
		os.Remove(path)
		ix, err := contentindex.Open(path, contentindex.Options{})
		if err != nil {
			fail(err)
		}
		c0 = cputime.Process()
		start = time.Now()
		n, err := ix.Sync(context.Background(), x)
		if err != nil {
			fail(err)
		}
		build := time.Since(start)
		buildCPU := cputime.Process() - c0
		rssAfter := peakRSS()
		st, err := ix.Stats(context.Background())
		if err != nil {
			fail(err)
		}
		var lat []time.Duration
		per := map[string]time.Duration{}
		hits := map[string]int{}
		for i := 0; i < *nq; i++ {
			q := queries[i%len(queries)]
			t := time.Now()
			items, err := ix.Items(context.Background(), x, reference.Target{}, q, 20)
			if err != nil {
				fail(err)
			}
			d := time.Since(t)
			lat = append(lat, d)
			per[q] = max(per[q], d)
			hits[q] = len(items)
		}
		// A sync that finds nothing changed: what each dsh/search pays.
		start = time.Now()
		if _, err := ix.Sync(context.Background(), x); err != nil {
			fail(err)
		}
		noop := time.Since(start)
		ix.Close()
		x.Close()
		var size int64
		for _, suffix := range []string{"", "-wal", "-shm"} {
			if fi, err := os.Stat(path + suffix); err == nil {
				size += fi.Size()
			}
		}
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		perMs := map[string]float64{}
		for q, d := range per {
			perMs[q] = ms(d)
		}
		out := map[string]any{
			"store": root, "files": len(paths), "indexed": n, "cores": runtime.GOMAXPROCS(0),
			"plainBytes": floor.PlainBytes, "fileBytes": floor.FileBytes,
			"floorMs": ms(floor.Elapsed), "floorCpuMs": ms(floorCPU),
			"metadataPassMs": ms(metaPass),
			"contentBuildMs": ms(build), "contentBuildCpuMs": ms(buildCPU),
			"buildOverFloor":  float64(build) / float64(floor.Elapsed),
			"cpuOverFloorCpu": float64(buildCPU) / float64(floorCPU),
			"textBytes":       st.TextBytes, "indexBytes": size, "indexOverText": float64(size) / float64(st.TextBytes),
			"queryP50Ms": ms(lat[len(lat)/2]), "queryP99Ms": ms(lat[len(lat)*99/100]), "queryMaxMs": ms(lat[len(lat)-1]),
			"queryMaxMsByQuery": perMs, "hitsByQuery": hits,
			"noopSyncMs":           ms(noop),
			"peakRssMBBeforeBuild": rssBefore >> 20, "peakRssMBAfterBuild": rssAfter >> 20,
		}
		json.NewEncoder(os.Stdout).Encode(out)
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

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func fail(err error) {
	fmt.Fprintln(os.Stderr, "contentpass:", err)
	os.Exit(2)
}
