package sessionstore

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dsh-lsp/dsh-lsp/bench/workload"
)

// TestStatesStayHeldWithoutASpillFile: when the spill file cannot be made
// (its directory cannot be created), a large pass keeps its states in
// memory and answers as usual.
func TestStatesStayHeldWithoutASpillFile(t *testing.T) {
	root := t.TempDir()
	genStore(t, root, workload.Zstd, 4, 2, 9)
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	x := OpenWaited(t, root, WithSpillJobs(IndexOptions{CacheDir: filepath.Join(blocker, "cache"), RefreshInterval: time.Hour, NoWatch: true}, 1))
	defer x.Close()
	sameAsStore(t, x, root)
	x.mu.RLock()
	defer x.mu.RUnlock()
	for _, e := range x.all {
		if e.State.present() && e.State.held == nil {
			t.Errorf("%s/%s: state not held, with no spill file possible", e.Proj, e.Seg)
		}
	}
}
