package sessionstore

import (
	"testing"
	"unsafe"
)

// TestEntryStaysSmall: an index holds one entry per session (100,000 and
// more); the rare fields live behind entry.faults and the flags lie
// together, which keeps an entry in the allocator's 240-byte class.
func TestEntryStaysSmall(t *testing.T) {
	if n := unsafe.Sizeof(entry{}); n > 240 {
		t.Errorf("an entry takes %d bytes, want at most 240", n)
	}
}
