package sessionstore

import (
	"testing"
	"unsafe"

	"github.com/dsh-lsp/dsh-lsp/bench/workload"
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

// TestParsedEntriesShareTheirStrings: the entries a pass parses share one
// cwd string per working directory, take their id from their header's
// JSON and read id from their listed one, as a cache load shares them.
func TestParsedEntriesShareTheirStrings(t *testing.T) {
	root := t.TempDir()
	genStore(t, root, workload.None, 12, 3, 7)
	x := openIndexed(t, root, NoCache)
	x.mu.RLock()
	defer x.mu.RUnlock()
	cwds := map[string]*string{}
	for _, e := range x.listed {
		raw := unsafe.Pointer(unsafe.SliceData(e.ListedRaw))
		id := unsafe.Pointer(unsafe.StringData(e.ListedID))
		if uintptr(id) < uintptr(raw) || uintptr(id) >= uintptr(raw)+uintptr(len(e.ListedRaw)) {
			t.Errorf("%s: the listed id is a copy, not its header's bytes", e.ListedID)
		}
		if unsafe.StringData(e.ReadID) != unsafe.StringData(e.ListedID) {
			t.Errorf("%s: the read id is a copy of the listed one", e.ListedID)
		}
		if e.ListedCWD == nil {
			continue
		}
		if c, ok := cwds[*e.ListedCWD]; ok && c != e.ListedCWD {
			t.Errorf("%s: cwd %s is a copy of another session's", e.ListedID, *e.ListedCWD)
		}
		cwds[*e.ListedCWD] = e.ListedCWD
	}
	if len(x.listed) != 12 || len(cwds) > 3 {
		t.Fatalf("%d sessions listed in %d cwds, want 12 in at most 3", len(x.listed), len(cwds))
	}
}
