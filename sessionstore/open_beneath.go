package sessionstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

// errSymlinkBelowRoot is the cause of an open refused because a component
// of the path below the store root is a symlink (or a reparse point).
var errSymlinkBelowRoot = errors.New("a path component below the store root is a symbolic link or reparse point")

// openBeneath opens path below root read-only, without following a
// symlink below root, race-free (openNoFollow per OS: a session directory
// swapped for a link outside fails the read), non-blocking (a FIFO cannot
// hang it), and only if it is a regular file (not /dev/zero).
func openBeneath(root, path string) (*os.File, error) {
	rel, err := filepath.Rel(root, path)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return nil, fmt.Errorf("%s is not below the store root %s", path, root)
	}
	f, err := openNoFollow(root, rel)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file (mode %s)", path, fi.Mode().Type())
	}
	return f, nil
}

// readRegularFile reads path (the index cache) like openBeneath from its
// directory, and only if it holds at most max bytes: a FIFO, a symlink or
// /dev/zero there must not hang or exhaust the server.
func readRegularFile(path string, max int64) ([]byte, error) {
	f, err := openBeneath(filepath.Dir(path), path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("%s holds %d bytes, more than the %d allowed", path, fi.Size(), max)
	}
	// Sized to the file, and in parallel parts when large: most of reading
	// a 100 MB cache from the page cache is faulting in the new buffer's
	// pages (about 90 ms at 100,000 sessions on one core).
	size := fi.Size()
	data := make([]byte, size)
	parts := 1
	if size >= parallelReadBytes {
		parts = min(runtime.GOMAXPROCS(0), 4)
	}
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for p := range parts {
		from, to := size*int64(p)/int64(parts), size*int64(p+1)/int64(parts)
		wg.Go(func() { _, errs[p] = f.ReadAt(data[from:to], from) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	// A file that grew meanwhile is another one than was sized: refused,
	// like one that shrank (ReadAt's io.EOF above).
	if n, _ := f.ReadAt(make([]byte, 1), size); n != 0 {
		return nil, fmt.Errorf("%s grew while it was read", path)
	}
	return data, nil
}

// parallelReadBytes is the size from which readRegularFile reads in
// parallel parts.
const parallelReadBytes = 8 << 20
