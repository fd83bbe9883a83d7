// Command indexpass measures the first index pass without a cache against
// the floor of the same files, in the same run:
//
//	go run ./bench/indexpass [-runs 3] [-cpuprofile FILE] [-snapshot] STORE...
//
// For each store it alternates the floor (bench/workload.Floor in "valid"
// mode: one goroutine reads every transcript, zstd-decoding it, and runs
// json.Valid on every line) and a fresh sessionstore.OpenIndexed with no
// cache until its first pass is complete (the index uses every core,
// GOMAXPROCS). The best of -runs of each is reported as JSON, with the
// ratio index / floor, and the CPU time of each (user + system, from
// getrusage), which a loaded machine distorts much less than wall time.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/dsh-lsp/dsh-lsp/bench/workload"
	"github.com/dsh-lsp/dsh-lsp/internal/cputime"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
)

func main() {
	runs := flag.Int("runs", 3, "runs of each measurement; the fastest is reported")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the index passes to this file")
	memprofile := flag.String("memprofile", "", "write a profile of what the first index pass allocated (every 64 KiB) to this file")
	skipFloor := flag.Bool("nofloor", false, "measure the index pass only")
	snapshot := flag.Bool("snapshot", false, "open the index as the CLI does (one answer: no listing published before the pass ends)")
	flag.Parse()
	if flag.NArg() == 0 {
		fail(fmt.Errorf("usage: indexpass [-runs N] STORE [STORE]"))
	}
	var prof *os.File
	if *cpuprofile != "" {
		var err error
		if prof, err = os.Create(*cpuprofile); err != nil {
			fail(err)
		}
	}
	if *memprofile != "" {
		runtime.MemProfileRate = 64 << 10
	}
	for _, root := range flag.Args() {
		paths := workload.Transcripts(root)
		if len(paths) == 0 {
			fail(fmt.Errorf("%s: no transcripts", root))
		}
		var floor workload.FloorResult
		var best, floorCPU, indexCPU time.Duration
		var listed, unreadable int
		for i := 0; i < max(*runs, 1); i++ {
			if !*skipFloor {
				c0 := cpuTime()
				r, err := workload.Floor(paths, workload.FloorValid)
				if err != nil {
					fail(err)
				}
				if c := cpuTime() - c0; i == 0 || c < floorCPU {
					floorCPU = c
				}
				if i == 0 || r.Elapsed < floor.Elapsed {
					floor = r
				}
			}
			if prof != nil && i == 0 {
				pprof.StartCPUProfile(prof)
			}
			c0 := cpuTime()
			start := time.Now()
			x, err := sessionstore.OpenIndexed(root, sessionstore.IndexOptions{CacheDir: sessionstore.NoCache, RefreshInterval: time.Hour, Snapshot: *snapshot})
			if err != nil {
				fail(err)
			}
			if err := x.Wait(context.Background()); err != nil {
				fail(err)
			}
			d := time.Since(start)
			if c := cpuTime() - c0; i == 0 || c < indexCPU {
				indexCPU = c
			}
			if prof != nil && i == 0 {
				pprof.StopCPUProfile()
			}
			if *memprofile != "" && i == 0 {
				writeHeapProfile(*memprofile)
			}
			st := x.Stats()
			listed, unreadable = st.Listed, st.Unreadable
			x.Close()
			if i == 0 || d < best {
				best = d
			}
			runtime.GC()
		}
		out := map[string]any{
			"store": root, "files": len(paths), "listed": listed, "unreadable": unreadable,
			"indexMs": ms(best), "indexCpuMs": ms(indexCPU), "cores": runtime.GOMAXPROCS(0),
		}
		if !*skipFloor {
			out["floorMs"] = ms(floor.Elapsed)
			out["plainBytes"] = floor.PlainBytes
			out["fileBytes"] = floor.FileBytes
			out["lines"] = floor.Lines
			out["floorCpuMs"] = ms(floorCPU)
			out["ratio"] = float64(best) / float64(floor.Elapsed)
			// On a shared machine wall clocks mostly measure the other
			// load; CPU time says what the pass costs. With the index's
			// work spread over `cores` cores, its wall time on an idle
			// machine is about indexCpu / cores.
			out["cpuRatio"] = float64(indexCPU) / float64(floorCPU)
			out["idleWallRatioEstimate"] = float64(indexCPU) / float64(runtime.GOMAXPROCS(0)) / float64(floorCPU)
		}
		json.NewEncoder(os.Stdout).Encode(out)
	}
}

// writeHeapProfile writes the allocations so far (alloc_space) to path.
func writeHeapProfile(path string) {
	f, err := os.Create(path)
	if err != nil {
		fail(err)
	}
	defer f.Close()
	runtime.GC() // the profile then holds every allocation until now
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		fail(err)
	}
}

// cpuTime is the process's user + system CPU time so far.
func cpuTime() time.Duration { return cputime.Process() }

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func fail(err error) {
	fmt.Fprintln(os.Stderr, "indexpass:", err)
	os.Exit(2)
}
