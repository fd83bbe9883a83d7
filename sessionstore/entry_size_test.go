package sessionstore

import (
	"testing"
	"unsafe"
)

// TestPerSessionRecordsStaySmall: an index holds one entry per session
// (100,000 and more), and a first pass one job per session; the rare
// fields live behind entry.faults and the flags lie together, which keeps
// an entry in the allocator's 240-byte class, and a job keeps one
// signature, not the directory's two.
func TestPerSessionRecordsStaySmall(t *testing.T) {
	if n := unsafe.Sizeof(entry{}); n > 240 {
		t.Errorf("an entry takes %d bytes, want at most 240", n)
	}
	if n := unsafe.Sizeof(indexJob{}); n > 80 {
		t.Errorf("an index job takes %d bytes, want at most 80", n)
	}
}
