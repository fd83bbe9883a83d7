// Package parallel runs a loop over an index range in parts: one per
// processor (Parts) for the few loops that a restart's first answer waits
// for (reading the cache file, and the loops over every session): with
// the other core idle meanwhile, a loop over 100,000 sessions that waits
// on memory takes about half as long in two parts; or a given number
// (Split) for system calls that overlap their waits (a refresh's stats).
package parallel

import (
	"runtime"
	"sync"
)

// Parts calls f(lo, hi) on consecutive parts of [0, n), concurrently, and
// returns when every call has: at most GOMAXPROCS parts, each of at least
// minPerPart indexes (one part, on the calling goroutine, when n is
// smaller than twice that). It suits work that keeps a core busy.
func Parts(n, minPerPart int, f func(lo, hi int)) {
	Split(n, min(runtime.GOMAXPROCS(0), n/max(minPerPart, 1)), f)
}

// Split calls f(lo, hi) on parts consecutive parts of [0, n) of nearly
// equal size (at most n of them), concurrently, and returns when every
// call has; with parts <= 1 it calls f(0, n) on the calling goroutine. It
// suits work that waits on the system more than it computes (stat calls),
// where more parts than processors overlap the waits.
func Split(n, parts int, f func(lo, hi int)) {
	parts = min(parts, n)
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
