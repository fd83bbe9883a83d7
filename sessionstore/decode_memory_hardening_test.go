//go:build linux

package sessionstore_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// TestIndexPassDecodeMemoryWhateverGOMAXPROCS lists a store of compressed
// bombs (each a frame whose size shows only by decoding it to the limit)
// with 16 index workers on this machine: every worker asks for a
// limit-sized buffer at once, and the decode memory budget, taken before
// allocating, must keep the peak at the stated bound (3 × limit + 64 MiB)
// rather than one buffer per worker.
func TestIndexPassDecodeMemoryWhateverGOMAXPROCS(t *testing.T) {
	t.Parallel()
	if testing.Short() || raceEnabled {
		t.Skip("builds and runs the binary over compressed bombs")
	}
	const limit = 32 * mib
	const bound = 3*limit + 64*mib
	root := filepath.Join(t.TempDir(), "sessions")
	writeZstdSession(t, root, "good", zframe(hdrLine("good")), zframe(eventLines("good", "good session")))
	cb := compressedBomb(t)
	const bombs = 16
	for i := 0; i < bombs; i++ {
		id := fmt.Sprintf("bomb-%02d", i)
		writeZstdSession(t, root, id, zframe(hdrLine(id)), zframe(eventLines(id, "b")), cb)
	}
	r := runCLI(t, t.TempDir(), []string{"GOMAXPROCS=16"}, "candidates", "--sessions", root, "--max-read-mb", "32")
	t.Logf("candidates over %d compressed bombs, GOMAXPROCS=16: exit %d, peak RSS %d MiB (bound %d MiB), %v",
		bombs, r.exit, r.maxRSS>>20, bound>>20, r.took.Round(time.Millisecond))
	if r.exit != 0 {
		t.Fatalf("candidates failed: %s%s", r.stdout, r.stderr)
	}
	var items []struct{ SessionID, Label string }
	if err := json.Unmarshal([]byte(r.stdout), &items); err != nil {
		t.Fatalf("candidates output: %v\n%s", err, r.stdout)
	}
	if len(items) != bombs+1 {
		t.Errorf("listed %d sessions, want %d (bombs are listed, their reads fail)", len(items), bombs+1)
	}
	if r.maxRSS > bound {
		t.Errorf("peak RSS %d MiB, over the bound of %d MiB", r.maxRSS>>20, bound>>20)
	}
}
