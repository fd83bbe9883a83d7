package sessionstore

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestBackgroundStatsRunOnOneGoroutineInOrder: the background poll's
// system calls run one at a time, in order, leaving the other cores to
// requests; a caller that waits gets them spread over goroutines. Both
// visit every session once.
func TestBackgroundStatsRunOnOneGoroutineInOrder(t *testing.T) {
	const n = 1200
	for _, bg := range []bool{true, false} {
		ctx := context.Background()
		if bg {
			ctx = background(ctx)
		}
		var running, most atomic.Int32
		visits := make([]atomic.Int32, n)
		var order []int
		var mu sync.Mutex
		forEachStat(ctx, n, func(i int) {
			if r := running.Add(1); r > most.Load() {
				most.Store(r)
			}
			visits[i].Add(1)
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			time.Sleep(time.Microsecond)
			running.Add(-1)
		})
		for i := range visits {
			if v := visits[i].Load(); v != 1 {
				t.Fatalf("background %v: session %d visited %d times", bg, i, v)
			}
		}
		if bg && (most.Load() != 1 || !slices.IsSorted(order)) {
			t.Errorf("background: %d at once, in order %v; want one at a time, in order", most.Load(), slices.IsSorted(order))
		}
	}
}
