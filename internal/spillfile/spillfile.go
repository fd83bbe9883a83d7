// Package spillfile is a temporary file that a process appends bytes to
// and reads back at any offset, for data too large to keep in memory and
// not worth keeping after the process: it is gone when the process is,
// however the process ends (unlinked at once where the OS allows it,
// delete-on-close on Windows). Appends are gathered and written in
// batches; bytes not yet written are read from memory.
package spillfile

import (
	"io"
	"os"
	"sync"
)

// File is a spill file: what was appended, at offsets counted from 0,
// either written or pending in memory (a write takes every pending byte,
// so bytes appended together lie whole in one or the other).
type File struct {
	mu    sync.Mutex
	f     *os.File
	batch int
	// pending holds the bytes from pendingAt on, not yet written.
	pending   []byte
	pendingAt int64
	closed    bool
}

// Create makes a spill file in dir that writes its appends once batch
// bytes are pending.
func Create(dir string, batch int) (*File, error) {
	f, err := create(dir)
	if err != nil {
		return nil, err
	}
	return &File{f: f, batch: batch}, nil
}

// Append appends b at the file's end and writes the pending bytes once
// there are a batch of them. On a failed write the bytes stay pending and
// readable, and the error says to stop appending.
func (s *File) Append(b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending = append(s.pending, b...)
	if len(s.pending) < s.batch {
		return nil
	}
	if _, err := s.f.WriteAt(s.pending, s.pendingAt); err != nil {
		return err
	}
	s.pendingAt += int64(len(s.pending))
	s.pending = s.pending[:0]
	return nil
}

// ReadAt reads the pending bytes from memory and the written ones from
// the file; after Close, nothing.
func (s *File) ReadAt(p []byte, off int64) (int, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return 0, os.ErrClosed
	}
	if off >= s.pendingAt {
		defer s.mu.Unlock()
		if off-s.pendingAt >= int64(len(s.pending)) {
			return 0, io.EOF
		}
		n := copy(p, s.pending[off-s.pendingAt:])
		if n < len(p) {
			return n, io.EOF
		}
		return n, nil
	}
	s.mu.Unlock()
	return s.f.ReadAt(p, off)
}

// Close closes the file, which is then gone, and drops the pending bytes.
func (s *File) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed, s.pending = true, nil
	s.f.Close()
}
