package gcgoal

import (
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// live is the live heap the tests' liveHeap reports; frees counts the
// calls of their freeOSMemory.
var live, frees atomic.Uint64

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
	oldLive, oldFree := liveHeap, freeOSMemory
	freeOSMemory = func() { frees.Add(1) }
	frees.Store(0)
	live.Store(1 << 30) // a heap for which the bulk percentage is headroom enough
	liveHeap = func() uint64 { return live.Load() }
	reset := func() { set, idle, bulk, running, goals, applied, stopRetarget = false, 0, 0, 0, nil, -1, nil }
	reset()
	t.Cleanup(func() { setGCPercent, liveHeap, freeOSMemory = old, oldLive, oldFree; reset() })
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

func TestBulkWorkOnASmallHeapGetsTheHeadroom(t *testing.T) {
	applied := record(t)
	live.Store(10 << 20)
	Set(25, 35)
	done := Bulk() // 32 MB on 10 MB live: 320 %, at most 200 %
	live.Store(64 << 20)
	retarget() // up to the bulk heap goal: 64 MB on 64 MB, 100 %
	live.Store(1 << 30)
	retarget() // 35 %
	retarget() // unchanged: not applied again
	done()
	if got, want := applied(), []int{25, 200, 100, 35, 25}; !slices.Equal(got, want) {
		t.Errorf("targets applied %v, want %v", got, want)
	}
}

// TestBulkTargetByLiveHeap: bulk work collects when the heap reaches
// bulkHeapGoal while that is more than the percentage and the headroom
// give, and never lets the heap grow by less than bulkHeadroom.
func TestBulkTargetByLiveHeap(t *testing.T) {
	record(t)
	Set(25, 35)
	const mb = 1 << 20
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, maxBulkPercent},
		{40 * mb, maxBulkPercent}, // 88 MB to the goal: 220 %
		{64 * mb, 100},            // 64 MB to the goal
		{80 * mb, 60},             // 48 MB to the goal
		{100 * mb, 35},            // 28 MB to the goal; 35 % is 35 MB
		{150 * mb, 35},            // past the goal: the percentage
		{1 << 30, 35},
	} {
		goal := c.live + c.live*uint64(bulkTarget(c.live))/100
		if got := bulkTarget(c.live); got != c.want {
			t.Errorf("bulkTarget(%d MB) = %d %%, want %d %%", c.live/mb, got, c.want)
		}
		if c.live > 0 && c.live < bulkHeapGoal && c.want < maxBulkPercent && goal < bulkHeapGoal-mb {
			t.Errorf("bulkTarget(%d MB): goal %d MB, under the bulk heap goal", c.live/mb, goal/mb)
		}
	}
}

func TestBulkTargetFollowsTheLiveHeapWhileItRuns(t *testing.T) {
	applied := record(t)
	Set(25, 35)
	done := Bulk()
	defer done()
	live.Store(80 << 20)
	awaitTarget(t, applied, 60)
}

func TestReadLiveHeap(t *testing.T) {
	keep := make([]byte, 8<<20)
	runtime.GC()
	if n := readLiveHeap(); n < 8<<20 {
		t.Errorf("live heap %d bytes with 8 MiB held", n)
	}
	runtime.KeepAlive(keep)
}

func TestWithoutSetNoLoopFollowsTheHeap(t *testing.T) {
	record(t)
	done := Bulk()
	mu.Lock()
	started := stopRetarget != nil
	mu.Unlock()
	done()
	if started {
		t.Error("bulk work without Set started the loop that follows the live heap")
	}
}

func TestSetDuringBulkWorkFollowsTheHeap(t *testing.T) {
	applied := record(t)
	done := Bulk()
	defer done()
	Set(25, 35)
	live.Store(80 << 20)
	awaitTarget(t, applied, 60)
}

// awaitTarget waits until the target p has been applied (the loop that
// follows the live heap applies it), failing after 10 s.
func awaitTarget(t *testing.T, applied func() []int, p int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !slices.Contains(applied(), p) {
		if time.Now().After(deadline) {
			t.Fatalf("the bulk target did not follow the live heap to %d %%: %v", p, applied())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRaisedGoalHoldsWhileItsWorkRuns: a first pass's goal (BulkUpTo)
// lifts the target over other bulk work's while it runs, and its end
// returns the garbage it let build up, once.
func TestRaisedGoalHoldsWhileItsWorkRuns(t *testing.T) {
	applied := record(t)
	live.Store(100 << 20)
	Set(25, 35)
	other := Bulk() // 128 MB goal on 100 MB live: 32 MB of headroom, 35 % is more
	pass := BulkUpTo(FirstPassHeapGoal)
	pass()
	pass()
	other()
	if got, want := applied(), []int{25, 35, 92, 35, 25}; !slices.Equal(got, want) {
		t.Errorf("targets applied %v, want %v", got, want)
	}
	if n := frees.Load(); n != 1 {
		t.Errorf("free pages returned %d times, want once when the raised goal ended", n)
	}
	Bulk()() // an ordinary goal's end returns nothing
	if n := frees.Load(); n != 1 {
		t.Errorf("free pages returned %d times after an ordinary bulk work, want 1", n)
	}
}
