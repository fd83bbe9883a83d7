package sessionstore

import (
	"bytes"
	"io"
	"math"
	"math/rand/v2"
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

// TestSpilledStatesReadBackWrittenOrPending: every state added to the
// spill file reads back as added, whether its batch was written or is
// still pending in memory, at every point of a run of adds; after close,
// none reads.
func TestSpilledStatesReadBackWrittenOrPending(t *testing.T) {
	f, err := createSpillFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := &spillFile{f: f, batch: 100}
	r := io.NewSectionReader(s, 0, math.MaxInt64)
	rng := rand.New(rand.NewPCG(1, 2))
	var states [][]byte
	var offs []int64
	at := int64(0)
	for i := range 200 {
		b := make([]byte, rng.IntN(70))
		for k := range b {
			b[k] = byte(rng.IntN(256))
		}
		if err := s.add(b); err != nil {
			t.Fatal(err)
		}
		states, offs = append(states, b), append(offs, at)
		at += int64(len(b))
		for k, want := range states {
			got := make([]byte, len(want))
			if _, err := r.ReadAt(got, offs[k]); err != nil && len(want) > 0 {
				t.Fatalf("after add %d: state %d at %d: %v", i, k, offs[k], err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("after add %d: state %d at %d reads %x, want %x", i, k, offs[k], got, want)
			}
		}
	}
	if s.pendingAt == 0 {
		t.Fatal("nothing was written: the test did not read from the file")
	}
	if len(s.pending) == 0 {
		t.Fatal("nothing was pending: the test did not read from memory")
	}
	s.close()
	if _, err := r.ReadAt(make([]byte, 1), 0); err == nil {
		t.Error("a state read after close")
	}
	if _, err := r.ReadAt(make([]byte, 1), s.pendingAt); err == nil {
		t.Error("a pending state read after close")
	}
}
