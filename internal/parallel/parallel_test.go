package parallel

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
)

// partsOf runs loop over n indexes and returns the parts it made, sorted;
// it fails t unless they cover every index once.
func partsOf(t *testing.T, name string, n int, loop func(f func(lo, hi int))) [][2]int {
	t.Helper()
	var mu sync.Mutex
	var parts [][2]int
	loop(func(lo, hi int) {
		mu.Lock()
		defer mu.Unlock()
		parts = append(parts, [2]int{lo, hi})
	})
	slices.SortFunc(parts, func(a, b [2]int) int { return a[0] - b[0] })
	next := 0
	for _, p := range parts {
		if p[0] != next || p[1] < p[0] {
			t.Fatalf("%s: parts %v do not cover [0, %d) once", name, parts, n)
		}
		next = p[1]
	}
	if next != n {
		t.Fatalf("%s: parts %v do not cover [0, %d) once", name, parts, n)
	}
	return parts
}

// TestPartsCoverTheRangeOnce: every index is in exactly one part, parts
// are consecutive, and none is smaller than asked unless there is one.
func TestPartsCoverTheRangeOnce(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, tc := range []struct{ n, minPerPart, wantParts int }{
		{0, 10, 1}, {1, 10, 1}, {19, 10, 1}, {20, 10, 2}, {39, 10, 3}, {1000, 10, 4}, {1000, 0, 4},
	} {
		name := fmt.Sprintf("Parts(%d, %d)", tc.n, tc.minPerPart)
		parts := partsOf(t, name, tc.n, func(f func(lo, hi int)) { Parts(tc.n, tc.minPerPart, f) })
		if len(parts) != tc.wantParts {
			t.Errorf("%s: %d parts, want %d", name, len(parts), tc.wantParts)
		}
		for _, p := range parts {
			if len(parts) > 1 && tc.minPerPart > 0 && p[1]-p[0] < tc.minPerPart {
				t.Errorf("%s: part %v under %d", name, p, tc.minPerPart)
			}
		}
	}
}

// TestSplitCoversTheRangeOnce: Split makes the parts asked for (at most
// one per index, none empty), consecutive and covering every index once.
func TestSplitCoversTheRangeOnce(t *testing.T) {
	for _, tc := range []struct{ n, parts, wantParts int }{
		{0, 4, 1}, {1, 4, 1}, {3, 4, 3}, {10, 0, 1}, {10, 1, 1}, {10, 4, 4}, {1000, 7, 7},
	} {
		name := fmt.Sprintf("Split(%d, %d)", tc.n, tc.parts)
		parts := partsOf(t, name, tc.n, func(f func(lo, hi int)) { Split(tc.n, tc.parts, f) })
		if len(parts) != tc.wantParts {
			t.Errorf("%s: %d parts, want %d", name, len(parts), tc.wantParts)
		}
		for _, p := range parts {
			if tc.n > 0 && p[1] == p[0] {
				t.Errorf("%s: empty part %v", name, p)
			}
		}
	}
}
