// Command floor measures the plain cost of reading transcripts: read (and
// zstd-decompress) the bytes and JSON-decode every line with a simple line
// loop. It is the lower bound prepare is compared against.
//
//	go run ./bench/floor [-mode decode|valid|read] [-repeat 3] [-cpuprofile FILE] PATH...
//
// A PATH that is a directory is searched for session.jsonl[.zstd] files.
// The best of -repeat runs is printed as JSON.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/dsh-lsp/dsh-lsp/bench/workload"
)

func main() {
	mode := flag.String("mode", "decode", "read, valid or decode")
	repeat := flag.Int("repeat", 3, "runs; the fastest is reported")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the runs to this file (to set the floor's shares beside a pass's)")
	flag.Parse()
	stopProfile, err := workload.CPUProfile(*cpuprofile)
	if err != nil {
		fail(err)
	}
	defer stopProfile()
	var paths []string
	for _, arg := range flag.Args() {
		st, err := os.Stat(arg)
		if err != nil {
			fail(err)
		}
		if !st.IsDir() {
			paths = append(paths, arg)
			continue
		}
		paths = append(paths, workload.Transcripts(arg)...)
	}
	if len(paths) == 0 {
		fail(fmt.Errorf("no transcripts given"))
	}
	var best workload.FloorResult
	for i := 0; i < max(*repeat, 1); i++ {
		r, err := workload.Floor(paths, workload.FloorMode(*mode))
		if err != nil {
			fail(err)
		}
		if i == 0 || r.Elapsed < best.Elapsed {
			best = r
		}
	}
	json.NewEncoder(os.Stdout).Encode(map[string]any{
		"mode": best.Mode, "files": best.Files, "lines": best.Lines,
		"plainBytes": best.PlainBytes, "fileBytes": best.FileBytes,
		"ms":   float64(best.Elapsed.Microseconds()) / 1000,
		"MBps": float64(best.PlainBytes) / (1 << 20) / best.Elapsed.Seconds(),
	})
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "floor:", err)
	os.Exit(2)
}
