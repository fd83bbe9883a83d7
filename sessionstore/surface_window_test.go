package sessionstore

import (
	"bytes"
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/dsh-lsp/dsh-lsp/bench/workload"
)

// TestSurfaceReadsRecycleTheirWindow: a surface read's random-access
// window goes back to a pool, so reading every session (a content build)
// does not allocate a window each, and the events a read returned are
// copies that later reads, in the same recycled window, leave unchanged.
func TestSurfaceReadsRecycleTheirWindow(t *testing.T) {
	for _, comp := range []workload.Compression{workload.None, workload.Zstd} {
		t.Run(string(comp), func(t *testing.T) {
			root := t.TempDir()
			ss := genStore(t, root, comp, 6, 3, 5)
			x := OpenWaited(t, root, IndexOptions{CacheDir: NoCache, RefreshInterval: time.Hour, NoWatch: true})
			ctx := context.Background()
			ids := make([]string, len(ss))
			for i, g := range ss {
				ids[i] = g.spec.ID
			}
			first, err := x.ReadSurface(ctx, ids[0])
			if err != nil {
				t.Fatal(err)
			}
			var kept [][]byte
			for _, ev := range first.Events {
				kept = append(kept, bytes.Clone(ev.Raw))
			}
			var before, after runtime.MemStats
			const rounds = 20
			runtime.ReadMemStats(&before)
			for range rounds {
				for _, id := range ids[1:] {
					if _, err := x.ReadSurface(ctx, id); err != nil {
						t.Fatal(err)
					}
				}
			}
			runtime.ReadMemStats(&after)
			for i, ev := range first.Events {
				if !bytes.Equal(ev.Raw, kept[i]) {
					t.Fatalf("event %d of the first surface changed after later reads: %q, was %q", i, ev.Raw, kept[i])
				}
			}
			perRead := (after.TotalAlloc - before.TotalAlloc) / uint64(rounds*(len(ids)-1))
			// transcript's surfaceWindowSize.
			if window := uint64(256 << 10); perRead >= window*3/4 {
				t.Errorf("a surface read allocates %d bytes, the window is %d: not recycled", perRead, window)
			}
		})
	}
}
