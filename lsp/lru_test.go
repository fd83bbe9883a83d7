package lsp

import (
	"testing"
	"time"
)

func TestLeastRecentlyUsed(t *testing.T) {
	t0 := time.Unix(1000, 0)
	for _, tc := range []struct {
		name string
		m    map[string]time.Time
		want string
	}{
		{"one", map[string]time.Time{"a": t0}, "a"},
		{"oldest first", map[string]time.Time{"a": t0, "b": t0.Add(time.Second), "c": t0.Add(2 * time.Second)}, "a"},
		{"oldest last", map[string]time.Time{"a": t0.Add(2 * time.Second), "b": t0.Add(time.Second), "c": t0}, "c"},
		{"oldest between", map[string]time.Time{"a": t0.Add(time.Second), "b": t0.Add(-time.Hour), "c": t0}, "b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := leastRecentlyUsed(tc.m, func(u time.Time) time.Time { return u }); got != tc.want {
				t.Errorf("leastRecentlyUsed = %q, want %q", got, tc.want)
			}
		})
	}
}
