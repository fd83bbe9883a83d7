// Package parallel runs a loop over an index range in parts, one per
// processor, for the few loops that a restart's first answer waits for
// (reading the cache file, and the loops over every session): with the
// other core idle meanwhile, a loop over 100,000 sessions that waits on
// memory takes about half as long in two parts.
package parallel

import (
	"runtime"
	"sync"
)

// Parts calls f(lo, hi) on consecutive parts of [0, n), concurrently, and
// returns when every call has: at most GOMAXPROCS parts, each of at least
// minPerPart indexes (one part, on the calling goroutine, when n is
// smaller than twice that).
func Parts(n, minPerPart int, f func(lo, hi int)) {
	parts := min(runtime.GOMAXPROCS(0), n/max(minPerPart, 1))
	if parts <= 1 {
		f(0, n)
		return
	}
	var wg sync.WaitGroup
	for p := 1; p < parts; p++ {
		wg.Go(func() { f(n*p/parts, n*(p+1)/parts) })
	}
	f(0, n/parts)
	wg.Wait()
}
