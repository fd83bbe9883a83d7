package spillfile

import (
	"bytes"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"testing"
)

// TestReadBackWrittenOrPending: every state appended to a
// spill file reads back as added, whether its batch was written or is
// still pending in memory, at every point of a run of adds; after close,
// none reads.
func TestReadBackWrittenOrPending(t *testing.T) {
	s, err := Create(t.TempDir(), 100)
	if err != nil {
		t.Fatal(err)
	}
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
		if err := s.Append(b); err != nil {
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
	s.Close()
	if _, err := r.ReadAt(make([]byte, 1), 0); err == nil {
		t.Error("a state read after close")
	}
	if _, err := r.ReadAt(make([]byte, 1), s.pendingAt); err == nil {
		t.Error("a pending state read after close")
	}
}

// TestLeavesNothingBehind: the file has no name in its directory while
// it is used (Unix), and none after Close (everywhere).
func TestLeavesNothingBehind(t *testing.T) {
	dir := t.TempDir()
	s, err := Create(dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Append([]byte("state")); err != nil {
		t.Fatal(err)
	}
	if names, _ := os.ReadDir(dir); runtime.GOOS != "windows" && len(names) != 0 {
		t.Errorf("a spill file in use is named in its directory: %v", names)
	}
	s.Close()
	if names, _ := os.ReadDir(dir); len(names) != 0 {
		t.Errorf("a closed spill file is left in its directory: %v", names)
	}
}
