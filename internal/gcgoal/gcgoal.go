// Package gcgoal sets the garbage collector's target by what the process is
// doing: bulk work (a first indexing pass, a content index build, loading a
// persisted index) trades memory for CPU, serving trades CPU for memory.
//
// A server at 100,000 sessions keeps about 116 MB live while it serves and
// allocates little (a completion answer is tens of kilobytes), so a low
// target costs it little CPU and takes its peak RSS down; a first pass
// allocates gigabytes of short-lived records, so there each point of target
// is CPU (bench/README.md, "The collector's target by phase"). While the
// live heap is small, a proportional target alone would collect every few
// megabytes, so bulk work also gets at least bulkHeadroom of growth between
// collections, and may let the heap reach bulkHeapGoal. The binary calls
// Set once; until then, and in tests and other programs, Bulk does
// nothing.
package gcgoal

import (
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"sync"
	"time"
)

// bulkHeadroom is the least the heap may grow between two collections
// during bulk work. A first pass over 5,000 sessions keeps about 25 MB
// live: at 35 % it collected every 9 MB and spent about 5 % of its time
// doing so. Above 91 MB live, 35 % is more than this, so the peaks at
// 100,000 sessions (116 MB live) are those of the percentage alone.
const bulkHeadroom = 32 << 20

// bulkHeapGoal is a heap size bulk work may grow to before it collects,
// whatever is live below it: a first pass's live heap grows from nothing
// to what the whole store keeps (110 MB at 100,000 sessions), and its peak
// is the goal at its end (150-160 MB there, at 35 %). A collection marks
// what is live, so collecting every 32 MB while 60 MB were live cost as
// much as collecting every 50 MB while 110 MB were: half of the pass's
// marking was spent before the heap reached its size. With the goal held
// here, the first half of the pass collects half as often. It binds only
// below 95 MB live (where 35 % gives less): the content index build, the
// process's peak, keeps 170 MB and more live at 100,000 sessions, so its
// peak does not move. A higher goal would raise the first pass's own peak
// without cutting more collections (bench/README.md).
const bulkHeapGoal = 128 << 20

// FirstPassHeapGoal is the heap goal of a first pass without a cache
// (BulkUpTo): it is the only bulk work that reads the whole store, its
// live heap ends at what the store keeps (110-130 MB at 100,000 sessions),
// and it allocates the most (1.4 GB there). At 192 MB instead of 128 that
// pass collected 26 times instead of 44, for 0.7 s of collector CPU
// instead of 1.6 s and a first-pass peak of 231-259 MB instead of 204-224,
// under the 300 MB a first pass may take. Loading a cache and the content
// index build, what a restart does, keep bulkHeapGoal and the served peak
// (bench/README.md, "The first pass's heap goal, measured A/B").
const FirstPassHeapGoal = 192 << 20

// retargetEvery is how often the bulk target follows the live heap.
const retargetEvery = 50 * time.Millisecond

var (
	mu sync.Mutex
	// set says Set was called.
	set bool
	// idle and bulk are the targets (GOGC percentages) without and with
	// bulk work running.
	idle, bulk int
	// running counts the bulk work running now; goals holds the heap
	// goals of the running work that asked for one above bulkHeapGoal.
	running int
	goals   []uint64
	// applied is the target applied last (-1: none yet).
	applied = -1
	// stopRetarget ends the loop that follows the live heap while bulk
	// work runs (nil when none runs).
	stopRetarget chan struct{}
	// setGCPercent applies a target, liveHeap reads the heap the last
	// collection found live and freeOSMemory collects and returns the free
	// pages; tests replace them.
	setGCPercent = debug.SetGCPercent
	liveHeap     = readLiveHeap
	freeOSMemory = debug.FreeOSMemory
)

// Set makes the collector's target idlePercent while no bulk work runs and
// bulkPercent while some does (percentages, as GOGC), and applies the one
// that holds now.
func Set(idlePercent, bulkPercent int) {
	mu.Lock()
	defer mu.Unlock()
	set, idle, bulk = true, idlePercent, bulkPercent
	applyLocked(false)
	followLiveHeapLocked()
}

// Bulk marks bulk work as running until done is called (once; later calls
// do nothing). Overlapping bulk work shares the bulk target, which holds
// until the last one is done.
func Bulk() (done func()) { return BulkUpTo(bulkHeapGoal) }

// BulkUpTo is Bulk for work that may let the heap reach goal bytes before
// it collects (at least bulkHeapGoal): the highest goal of the running
// work holds.
func BulkUpTo(goal uint64) (done func()) {
	mu.Lock()
	running++
	raised := goal > bulkHeapGoal
	if raised {
		goals = append(goals, goal)
	}
	if running == 1 || raised {
		applyLocked(false)
		followLiveHeapLocked()
	}
	mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			mu.Lock()
			running--
			free := raised && set
			if raised {
				i := slices.Index(goals, goal)
				goals = slices.Delete(goals, i, i+1)
				applyLocked(true)
			}
			if running == 0 {
				if stopRetarget != nil {
					close(stopRetarget)
					stopRetarget = nil
				}
				applyLocked(false)
			}
			mu.Unlock()
			if free {
				// The garbage the raised goal let build up goes now, and
				// its pages back to the system, so the work after it
				// (the content index build after a first pass) does not
				// stack its peak on this one's (297 MB instead of 287).
				freeOSMemory()
			}
		})
	}
}

// applyLocked applies the target that holds now, if Set was called; with
// onlyChanged, only when it differs from the one applied last. Callers
// hold mu.
func applyLocked(onlyChanged bool) {
	if !set {
		return
	}
	p := idle
	if running > 0 {
		p = bulkTarget(liveHeap())
	}
	if !onlyChanged || p != applied {
		setGCPercent(p)
		applied = p
	}
}

// bulkTarget is the bulk target for a live heap of live bytes: the bulk
// percentage, or more when that would let the heap grow by less than
// bulkHeadroom or stay under the running work's heap goal; at most
// maxBulkPercent.
func bulkTarget(live uint64) int {
	headroom, goal := uint64(bulkHeadroom), uint64(bulkHeapGoal)
	if len(goals) > 0 {
		goal = max(goal, slices.Max(goals))
	}
	if live < goal {
		headroom = max(headroom, goal-live)
	}
	return max(bulk, int(min(headroom*100/max(live, 1), maxBulkPercent)))
}

// maxBulkPercent bounds the headroom's percentage while little is live (at
// the start of a process nothing is): the runtime's smallest heap goal
// grows with the percentage (4 MB at 100 %), and at 3,200 % a first pass
// over 5,000 sessions peaked at 100 MB instead of 35.
const maxBulkPercent = 200

// followLiveHeapLocked starts the loop that follows the live heap when
// bulk work runs after Set and the loop does not. Callers hold mu.
func followLiveHeapLocked() {
	if set && running > 0 && stopRetarget == nil {
		stopRetarget = make(chan struct{})
		go retargetLoop(stopRetarget)
	}
}

// retargetLoop applies the target as the live heap changes, until stop is
// closed.
func retargetLoop(stop chan struct{}) {
	t := time.NewTicker(retargetEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			retarget()
		}
	}
}

// retarget applies the bulk target for the live heap now, while bulk work
// runs.
func retarget() {
	mu.Lock()
	defer mu.Unlock()
	if running > 0 {
		applyLocked(true)
	}
}

// readLiveHeap returns the heap the last collection marked live.
func readLiveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
