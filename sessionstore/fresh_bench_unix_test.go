//go:build unix

package sessionstore

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-lsp/dsh-lsp/bench/workload"
)

// The poll benchmark's store: $DSH_BENCH_POLL_SESSIONS sessions (default
// 3000), idle for a day (as most of a large store is), of which the index
// watches only pollBenchWatches directories (the rest is polled); or the
// store at $DSH_BENCH_POLL_STORE under the system's watch cap, indexed
// with the cache in $DSH_BENCH_POLL_CACHE (default none):
//
//	DSH_BENCH_POLL_STORE=/path/to/s10k DSH_BENCH_POLL_CACHE=/tmp/c go test ./sessionstore -run '^$' -bench PollUnwatched
var (
	pollStoreOnce sync.Once
	pollStoreRoot string
	pollStoreErr  error
)

const pollBenchWatches = 500

func pollBenchStore(b *testing.B) string {
	b.Helper()
	pollStoreOnce.Do(func() {
		if root := os.Getenv("DSH_BENCH_POLL_STORE"); root != "" {
			pollStoreRoot = root
			return
		}
		n := 3000
		if v, err := strconv.Atoi(os.Getenv("DSH_BENCH_POLL_SESSIONS")); err == nil && v > 0 {
			n = v
		}
		dir, err := os.MkdirTemp("", "dsh-lsp-bench-poll-")
		if err != nil {
			pollStoreErr = err
			return
		}
		AtTestExit(func() { os.RemoveAll(dir) })
		pollStoreRoot = filepath.Join(dir, "store")
		infos, err := workload.Generate(pollStoreRoot, workload.Options{
			Sessions: n, CWDs: max(n/50, 2), Turns: 2, Compression: workload.None, Seed: int64(n),
		}, nil)
		if err != nil {
			pollStoreErr = err
			return
		}
		idle := time.Now().Add(-24 * time.Hour)
		for _, in := range infos {
			if err := os.Chtimes(in.Path, idle, idle); err != nil {
				pollStoreErr = err
				return
			}
		}
	})
	if pollStoreErr != nil {
		b.Fatal(pollStoreErr)
	}
	return pollStoreRoot
}

// BenchmarkPollUnwatched is the cost of keeping the unwatched part of a
// store fresh when the watch cap leaves most sessions unwatched:
//   - poll: one poll (what the background poller runs every pollEvery);
//   - query: ListSessions when the last poll is older than pollFresh but
//     within the background poller's interval (what a query pays then);
//   - idle: the process's CPU time per second while the background
//     poller runs and nothing is asked (cpu-ms/s).
func BenchmarkPollUnwatched(b *testing.B) {
	root := pollBenchStore(b)
	opts := IndexOptions{CacheDir: NoCache, watchLimit: pollBenchWatches}
	if os.Getenv("DSH_BENCH_POLL_STORE") != "" {
		opts.watchLimit = 0
		if c := os.Getenv("DSH_BENCH_POLL_CACHE"); c != "" {
			opts.CacheDir = c
		}
	}
	x, err := OpenIndexed(root, opts)
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	ctx := context.Background()
	if err := x.Wait(ctx); err != nil {
		b.Fatal(err)
	}
	setLastPoll := func(age time.Duration) {
		x.fresh.mu.Lock()
		x.fresh.lastPoll = time.Now().Add(-age)
		x.fresh.mu.Unlock()
	}
	x.fresh.mu.Lock()
	b.Logf("%d sessions, %d session directories and %d projects unwatched", len(x.entryMap()), len(x.fresh.unwatched), len(x.fresh.unwatchedProjects))
	x.fresh.mu.Unlock()
	b.Run("poll", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			setLastPoll(time.Hour)
			if err := x.refresh(ctx, false, modePoll); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("query", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			setLastPoll(150 * time.Millisecond)
			if _, err := x.ListSessions(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("idle", func(b *testing.B) {
		cpu0, t0 := processCPU(b), time.Now()
		for i := 0; i < b.N; i++ {
			time.Sleep(pollEvery)
		}
		b.ReportMetric(float64((processCPU(b)-cpu0).Milliseconds())/time.Since(t0).Seconds(), "cpu-ms/s")
	})
}

// processCPU is the CPU time (user and system) the process used so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
