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

// TestPartsCoverTheRangeOnce: both ways of looping in parts make the
// parts expected, consecutive and covering every index once; Parts makes
// none smaller than asked unless there is one, Split none empty.
func TestPartsCoverTheRangeOnce(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	type loop struct {
		name string
		run  func(n, arg int, f func(lo, hi int))
		// minSize is the smallest part allowed when there are several.
		minSize func(n, arg int) int
	}
	parts := loop{"Parts", Parts, func(_, minPerPart int) int { return minPerPart }}
	split := loop{"Split", Split, func(n, _ int) int { return min(n, 1) }}
	for _, tc := range []struct {
		loop
		n, arg, wantParts int
	}{
		{parts, 0, 10, 1}, {parts, 1, 10, 1}, {parts, 19, 10, 1}, {parts, 20, 10, 2}, {parts, 39, 10, 3},
		{parts, 1000, 10, 4}, {parts, 1000, 0, 4},
		{split, 0, 4, 1}, {split, 1, 4, 1}, {split, 3, 4, 3}, {split, 10, 0, 1}, {split, 10, 1, 1},
		{split, 10, 4, 4}, {split, 1000, 7, 7},
	} {
		name := fmt.Sprintf("%s(%d, %d)", tc.name, tc.n, tc.arg)
		got := partsOf(t, name, tc.n, func(f func(lo, hi int)) { tc.run(tc.n, tc.arg, f) })
		if len(got) != tc.wantParts {
			t.Errorf("%s: %d parts, want %d", name, len(got), tc.wantParts)
		}
		for _, p := range got {
			if len(got) > 1 && p[1]-p[0] < tc.minSize(tc.n, tc.arg) {
				t.Errorf("%s: part %v under %d", name, p, tc.minSize(tc.n, tc.arg))
			}
		}
	}
}
