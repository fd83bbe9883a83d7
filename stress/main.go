// Command stress runs the dsh-lsp hardening programs that are too big
// or too slow for unit tests: load, faults and huge stores. Each
// phase prints one JSON line with its measurements and fails (exit 1) when
// an invariant breaks. stress/run.sh runs them with CI-sized flags;
// stress/README.md records full-size runs.
//
//	go run ./stress -phases load,faults,stores -bin /tmp/dsh-lsp -work /tmp/dsh-stress
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"time"
)

var (
	phases      = flag.String("phases", "load,faults,stores", "comma-separated phases to run: load, faults, stores, hover, mix")
	work        = flag.String("work", "", "scratch directory for generated stores (default: a new directory under $TMPDIR, removed afterwards)")
	bin         = flag.String("bin", "", "dsh-lsp binary for the process-level faults (stdin closed, SIGTERM); empty skips them")
	duration    = flag.Duration("duration", 60*time.Second, "load: how long the client sends completion requests")
	rate        = flag.Int("rate", 2000, "load: completion requests per second")
	sourceSize  = flag.String("source-size", "20MB", "load/faults: plaintext size of each of the 3 prepare sources")
	bigSession  = flag.String("big-session", "2GB", "stores: plaintext size of the single huge session (0 skips)")
	tinyCount   = flag.Int("tiny-sessions", 1000000, "stores: number of tiny sessions in one cwd folder (0 skips)")
	sourceKind  = flag.String("source", "default", "session source of the in-process server: default (as the binary), store (storetest.OpenSynced: an index brought up to date before every query) or indexed (sessionstore.OpenIndexed, memory only)")
	withPrepare = flag.Bool("prepare", true, "load: run prepare over the 3 large sources concurrently with the completion flood")
	cpuProfile  = flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	dumpAt      = flag.Duration("dump-goroutines-at", 0, "write a goroutine profile to stderr this long after the start (diagnosis)")
	tinyRoot    = flag.String("tiny-root", "", "stores: reuse this existing store of -tiny-sessions sessions (generated with -keep) instead of generating one")
	tinyTimeout = flag.Duration("tiny-timeout", 20*time.Minute, "stores: give up on one candidates query over the tiny sessions after this long")
	memProfile  = flag.String("memprofile", "", "write an allocation profile at the end of the run to this file")
	keepStores  = flag.Bool("keep", false, "keep the generated stores")
	maxP99      = flag.Duration("max-p99", 0, "load: fail when the completion p99 exceeds this (0: report only)")
	goroutineOK = flag.Int("goroutine-slack", 0, "load/faults: goroutines allowed above the baseline after the server stops")
)

// report prints one phase's measurements as a JSON line.
func report(phase string, fields map[string]any) {
	fields["phase"] = phase
	b, _ := json.Marshal(fields)
	fmt.Println(string(b))
}

// failures collects invariant violations; any makes the run fail.
var failures []string

func failf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	failures = append(failures, msg)
	fmt.Fprintln(os.Stderr, "FAIL:", msg)
}

func main() {
	flag.Parse()
	dir := *work
	if dir == "" {
		d, err := os.MkdirTemp("", "dsh-stress-")
		if err != nil {
			fatal(err)
		}
		dir = d
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fatal(err)
	}
	if !*keepStores {
		defer os.RemoveAll(dir)
	}
	// Index caches of the generated stores go to the scratch directory,
	// not the user's cache (the server persists one per store root).
	os.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	if *dumpAt > 0 {
		time.AfterFunc(*dumpAt, func() { pprof.Lookup("goroutine").WriteTo(os.Stderr, 1) })
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fatal(err)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	for _, p := range strings.Split(*phases, ",") {
		start := time.Now()
		var err error
		switch strings.TrimSpace(p) {
		case "load":
			err = runLoad(filepath.Join(dir, "load"))
		case "faults":
			err = runFaults(filepath.Join(dir, "faults"))
		case "stores":
			err = runStores(filepath.Join(dir, "stores"))
		case "hover":
			err = runHover(filepath.Join(dir, "hover"))
		case "mix":
			err = runMix(filepath.Join(dir, "mix"))
		case "":
			continue
		default:
			err = fmt.Errorf("unknown phase %q", p)
		}
		if err != nil {
			failf("%s: %v", p, err)
		}
		fmt.Fprintf(os.Stderr, "stress: phase %s done in %v\n", p, time.Since(start).Round(time.Millisecond))
	}
	if *memProfile != "" {
		if f, err := os.Create(*memProfile); err == nil {
			pprof.Lookup("allocs").WriteTo(f, 0)
			f.Close()
		}
	}
	if len(failures) > 0 {
		if !*keepStores {
			os.RemoveAll(dir)
		}
		fmt.Fprintf(os.Stderr, "stress: %d failure(s)\n", len(failures))
		os.Exit(1)
	}
	fmt.Fprintln(os.Stderr, "stress: all phases passed")
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "stress:", err)
	os.Exit(2)
}

// hashTree returns path → sha256 of every file under root.
func hashTree(root string) (map[string]string, error) {
	out := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		h := sha256.New()
		if _, err := io.Copy(h, f); err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		out[rel] = hex.EncodeToString(h.Sum(nil))
		return nil
	})
	return out, err
}

// sameTree reports the differences between two hashTree results.
func sameTree(before, after map[string]string) []string {
	var diff []string
	for p, h := range before {
		if after[p] != h {
			diff = append(diff, p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			diff = append(diff, p+" (new)")
		}
	}
	sort.Strings(diff)
	return diff
}

// peakRSS returns the process's peak resident set size in bytes (VmHWM).
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return -1
}
