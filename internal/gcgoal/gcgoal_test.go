package gcgoal

import (
	"slices"
	"sync"
	"testing"
)

// record replaces the collector's setter with a recorder for the test and
// resets the package's state; it returns the targets applied so far.
func record(t *testing.T) func() []int {
	t.Helper()
	var mu sync.Mutex
	var got []int
	old := setGCPercent
	setGCPercent = func(p int) int {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, p)
		return 0
	}
	reset := func() { set, idle, bulk, running = false, 0, 0, 0 }
	reset()
	t.Cleanup(func() { setGCPercent = old; reset() })
	return func() []int {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(got)
	}
}

func TestTargetFollowsBulkWork(t *testing.T) {
	applied := record(t)
	Set(25, 35)
	a := Bulk()
	b := Bulk() // overlapping: no change
	a()
	a() // a second call does nothing
	b()
	c := Bulk()
	c()
	if got, want := applied(), []int{25, 35, 25, 35, 25}; !slices.Equal(got, want) {
		t.Errorf("targets applied %v, want %v", got, want)
	}
}

func TestSetDuringBulkWorkAppliesTheBulkTarget(t *testing.T) {
	applied := record(t)
	done := Bulk()
	Set(25, 35)
	done()
	if got, want := applied(), []int{35, 25}; !slices.Equal(got, want) {
		t.Errorf("targets applied %v, want %v", got, want)
	}
}

func TestWithoutSetNothingIsApplied(t *testing.T) {
	applied := record(t)
	done := Bulk()
	done()
	if got := applied(); len(got) != 0 {
		t.Errorf("targets applied without Set: %v", got)
	}
}

func TestConcurrentBulkWorkEndsAtTheIdleTarget(t *testing.T) {
	applied := record(t)
	Set(25, 35)
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() { Bulk()() })
	}
	wg.Wait()
	got := applied()
	if got[len(got)-1] != 25 {
		t.Errorf("last target %d after all bulk work ended, want 25 (all: %v)", got[len(got)-1], got)
	}
	if running != 0 {
		t.Errorf("running = %d after all bulk work ended", running)
	}
}
