package parallel

import (
	"runtime"
	"sync"
	"testing"
)

// TestPartsCoverTheRangeOnce: every index is in exactly one part, parts
// are consecutive, and none is smaller than asked unless there is one.
func TestPartsCoverTheRangeOnce(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, tc := range []struct{ n, minPerPart, wantParts int }{
		{0, 10, 1}, {1, 10, 1}, {19, 10, 1}, {20, 10, 2}, {39, 10, 3}, {1000, 10, 4}, {1000, 0, 4},
	} {
		var mu sync.Mutex
		seen := make([]int, tc.n)
		parts := 0
		Parts(tc.n, tc.minPerPart, func(lo, hi int) {
			mu.Lock()
			defer mu.Unlock()
			parts++
			if parts > 1 && tc.minPerPart > 0 && hi-lo < tc.minPerPart {
				t.Errorf("n %d: part [%d, %d) under %d", tc.n, lo, hi, tc.minPerPart)
			}
			for i := lo; i < hi; i++ {
				seen[i]++
			}
		})
		if parts != tc.wantParts {
			t.Errorf("n %d, at least %d each: %d parts, want %d", tc.n, tc.minPerPart, parts, tc.wantParts)
		}
		for i, c := range seen {
			if c != 1 {
				t.Fatalf("n %d: index %d in %d parts", tc.n, i, c)
			}
		}
	}
}

// TestSplitCoversTheRangeOnce: Split makes the parts asked for (at most
// one per index), consecutive and covering every index once.
func TestSplitCoversTheRangeOnce(t *testing.T) {
	for _, tc := range []struct{ n, parts, wantParts int }{
		{0, 4, 1}, {1, 4, 1}, {3, 4, 3}, {10, 0, 1}, {10, 1, 1}, {10, 4, 4}, {1000, 7, 7},
	} {
		var mu sync.Mutex
		seen := make([]int, tc.n)
		parts := 0
		Split(tc.n, tc.parts, func(lo, hi int) {
			mu.Lock()
			defer mu.Unlock()
			parts++
			if tc.n > 0 && hi <= lo {
				t.Errorf("n %d in %d parts: empty part [%d, %d)", tc.n, tc.parts, lo, hi)
			}
			for i := lo; i < hi; i++ {
				seen[i]++
			}
		})
		if parts != tc.wantParts {
			t.Errorf("n %d in %d parts: %d parts, want %d", tc.n, tc.parts, parts, tc.wantParts)
		}
		for i, c := range seen {
			if c != 1 {
				t.Fatalf("n %d in %d parts: index %d in %d parts", tc.n, tc.parts, i, c)
			}
		}
	}
}
