// Package gcgoal sets the garbage collector's target by what the process is
// doing: bulk work (a first indexing pass, a content index build, loading a
// persisted index) trades memory for CPU, serving trades CPU for memory.
//
// A server at 100,000 sessions keeps about 116 MB live while it serves and
// allocates little (a completion answer is tens of kilobytes), so a low
// target costs it little CPU and takes its peak RSS down; a first pass
// allocates gigabytes of short-lived records, so there each point of target
// is CPU (bench/README.md, "The collector's target by phase"). The binary
// calls Set once; until then, and in tests and other programs, Bulk does
// nothing.
package gcgoal

import (
	"runtime/debug"
	"sync"
)

var (
	mu sync.Mutex
	// set says Set was called.
	set bool
	// idle and bulk are the targets (GOGC percentages) without and with
	// bulk work running.
	idle, bulk int
	// running counts the bulk work running now.
	running int
	// setGCPercent applies a target; tests record the calls instead.
	setGCPercent = debug.SetGCPercent
)

// Set makes the collector's target idlePercent while no bulk work runs and
// bulkPercent while some does (percentages, as GOGC), and applies the one
// that holds now.
func Set(idlePercent, bulkPercent int) {
	mu.Lock()
	defer mu.Unlock()
	set, idle, bulk = true, idlePercent, bulkPercent
	applyLocked()
}

// Bulk marks bulk work as running until done is called (once; later calls
// do nothing). Overlapping bulk work shares the bulk target, which holds
// until the last one is done.
func Bulk() (done func()) {
	mu.Lock()
	running++
	if running == 1 {
		applyLocked()
	}
	mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			mu.Lock()
			defer mu.Unlock()
			running--
			if running == 0 {
				applyLocked()
			}
		})
	}
}

// applyLocked applies the target that holds now, if Set was called.
// Callers hold mu.
func applyLocked() {
	if !set {
		return
	}
	if running > 0 {
		setGCPercent(bulk)
	} else {
		setGCPercent(idle)
	}
}
