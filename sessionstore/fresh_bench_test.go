package sessionstore

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/dsh-lsp/dsh-lsp/bench/workload"
)

// The poll benchmark's store: $DSH_BENCH_POLL_SESSIONS sessions (default
// 3000), idle for a day (as most of a large store is), of which the index
// watches only pollBenchWatches directories (the rest is polled).
var (
	pollStoreOnce sync.Once
	pollStoreRoot string
	pollStoreErr  error
)

const pollBenchWatches = 500

func pollBenchStore(b *testing.B) string {
	b.Helper()
	pollStoreOnce.Do(func() {
		n := 3000
		if v, err := strconv.Atoi(os.Getenv("DSH_BENCH_POLL_SESSIONS")); err == nil && v > 0 {
			n = v
		}
		dir, err := os.MkdirTemp("", "dsh-lsp-bench-poll-")
		if err != nil {
			pollStoreErr = err
			return
		}
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
//     within the background poller's interval (what a query pays then).
func BenchmarkPollUnwatched(b *testing.B) {
	root := pollBenchStore(b)
	x, err := OpenIndexed(root, IndexOptions{CacheDir: NoCache, watchLimit: pollBenchWatches})
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
	b.Logf("%d sessions, %d session directories and %d projects unwatched", len(x.entries), len(x.fresh.unwatched), len(x.fresh.unwatchedProjects))
	x.fresh.mu.Unlock()
	b.Run("poll", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			setLastPoll(time.Hour)
			if err := x.refreshWith(ctx, false, modePoll); err != nil {
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
}
