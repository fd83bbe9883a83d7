package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/dsh-lsp/dsh-lsp/bench/workload"
)

// benchCLIStore returns the store the CLI benchmarks run on:
// $DSH_BENCH_STORE, or one generated in a temporary directory (5,000
// sessions of ~78 KB, raw; $DSH_BENCH_SESSIONS and
// $DSH_BENCH_COMPRESSION=zstd change it).
func benchCLIStore(b *testing.B) string {
	b.Helper()
	if root := os.Getenv("DSH_BENCH_STORE"); root != "" {
		return root
	}
	n := 5000
	if v, err := strconv.Atoi(os.Getenv("DSH_BENCH_SESSIONS")); err == nil && v > 0 {
		n = v
	}
	comp := workload.None
	if os.Getenv("DSH_BENCH_COMPRESSION") == "zstd" {
		comp = workload.Zstd
	}
	root := filepath.Join(b.TempDir(), "store")
	if _, err := workload.Generate(root, workload.Options{Sessions: n, CWDs: 50, Size: 78 << 10, Compression: comp,
		Multibyte: 0.2, Compactions: 1, NoCWD: 0.05, Seed: 5}, nil); err != nil {
		b.Fatal(err)
	}
	return root
}

// runCLIBench runs `dsh-lsp args…` once with cache in XDG_CACHE_HOME and
// returns the process's CPU time (user + system).
func runCLIBench(b *testing.B, cache string, args ...string) time.Duration {
	cmd := exec.Command(binary, args...)
	cmd.Env, _ = cacheEnv(cache)
	out, err := cmd.Output()
	if err != nil || len(out) < 3 {
		b.Fatalf("dsh-lsp %v: %v (%d bytes out)", args, err, len(out))
	}
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// BenchmarkCLICandidates times `dsh-lsp candidates QUERY` (a whole
// process) on a 5,000-session store: with the index cache of an earlier
// run (the target: ≤ 100 ms), cold (no cache: the first indexing pass, and
// the cache written), and with --no-cache (the store read directly).
// cpu-ms/op is the process's user + system time, which a loaded machine
// inflates less than wall time. The floor (one goroutine reading every
// transcript and running json.Valid on every line) is reported with the
// cold run.
func BenchmarkCLICandidates(b *testing.B) {
	root := benchCLIStore(b)
	args := []string{"candidates", "--sessions", root, "--target-cwd", "/home/alice/proj", "proj"}
	b.Run("cache", func(b *testing.B) {
		cache := b.TempDir()
		runCLIBench(b, cache, args...) // writes the cache
		var cpu time.Duration
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			cpu += runCLIBench(b, cache, args...)
		}
		b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
	})
	b.Run("cold", func(b *testing.B) {
		paths, err := filepath.Glob(filepath.Join(root, "*", "*", "session.jsonl*"))
		if err != nil || len(paths) == 0 {
			b.Fatalf("no transcripts under %s", root)
		}
		floor, err := workload.Floor(paths, workload.FloorValid)
		if err != nil {
			b.Fatal(err)
		}
		var cpu time.Duration
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			cpu += runCLIBench(b, b.TempDir(), args...)
		}
		b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
		b.ReportMetric(float64(floor.Elapsed.Microseconds())/1000, "floor-ms")
	})
	b.Run("no-cache", func(b *testing.B) {
		cache := b.TempDir()
		var cpu time.Duration
		for i := 0; i < b.N; i++ {
			cpu += runCLIBench(b, cache, append([]string{"candidates", "--no-cache"}, args[1:]...)...)
		}
		b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
		if _, dir := cacheEnv(cache); hasFiles(dir) {
			b.Fatal("--no-cache wrote an index cache")
		}
	})
}
