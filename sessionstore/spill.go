package sessionstore

import (
	"cmp"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync"

	"github.com/dsh-lsp/dsh-lsp/internal/beneath"
	"github.com/dsh-lsp/dsh-lsp/internal/spillfile"
)

// spillJobs is the fewest parses in one pass whose states go to the spill
// file: a first pass, or a restart on a much changed store (tests lower
// it: IndexOptions.spillJobs).
const spillJobs = 1024

// stateSpill keeps the parse states of large passes in a temporary file,
// as a restart keeps them in the cache file, rather than in memory: at
// 100,000 sessions the states are 50-100 MB that a first pass would hold
// until the process ends (they are read back when a session grows, and
// when the cache is written). The file is gone when the process is,
// however it ends (package spillfile); it lives in the cache directory, or
// the temporary directory without one, and never in the store.
type stateSpill struct {
	mu sync.Mutex
	// sec is the file's section, nil until the first state; failed is set
	// when the file could not be made or written: states are then held.
	sec    *stateSection
	file   *spillfile.File
	at     int64
	failed bool
}

// spillBatch is how many states' bytes the spill gathers before it
// writes them in one call: one write per state was 100,000 system calls
// in a first pass over 100,000 sessions, about 1 % of its CPU time.
const spillBatch = 256 << 10

// spill moves e's held state into the spill file, when the pass is large
// (ix.spilling). e must not be shared yet: parseOnce calls it before
// publishing the entry. On any failure the state stays held.
func (ix *Indexed) spill(e *entry) {
	b := e.State.held
	if !ix.spilling.Load() || b == nil {
		return
	}
	s := &ix.states
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed || s.sec == nil && !s.open(ix) {
		return
	}
	err := s.file.Append(b)
	// Even when the write failed, b is pending in memory and readable.
	e.State = savedState{in: s.sec, off: s.at, n: uint32(len(b)), sum: crc32.Checksum(b, castagnoli)}
	s.at += int64(len(b))
	if err != nil {
		ix.logf("sessionstore: parse states kept in memory: %v", err)
		s.failed = true
	}
}

// open makes the spill file; it reports false when there is none.
func (s *stateSpill) open(ix *Indexed) bool {
	if s.failed {
		return false
	}
	s.failed = true
	dir := os.TempDir()
	if ix.cachePath != "" {
		dir = filepath.Dir(ix.cachePath)
	} else if _, _, inside, err := beneath.Inside(dir, ix.root); err != nil || inside {
		return false
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false
	}
	f, err := spillfile.Create(dir, cmp.Or(ix.opts.spillBatch, spillBatch))
	if err != nil {
		ix.logf("sessionstore: parse states kept in memory: %v", err)
		return false
	}
	s.file = f
	s.sec = &stateSection{r: io.NewSectionReader(s.file, 0, math.MaxInt64)}
	s.failed = false
	return true
}

// close closes the spill file. States that lie
// in it read as lost afterwards, as those of a closed cache do.
func (s *stateSpill) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.file != nil {
		s.file.Close()
	}
	s.sec, s.file = nil, nil
}
