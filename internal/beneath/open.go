// Package beneath opens files below a directory (a store root) without
// ever leaving it: no symlink below the directory is followed, a
// component swapped for a link while the path is walked fails the open,
// and only regular files open (a FIFO or /dev/zero cannot hang or flood
// the reader). It also decides, with symlinks resolved, whether one
// directory lies inside another, so that nothing is written into a store.
//
// Linux opens with openat2 (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS), from
// a root held open for a whole pass (OpenRoot); other Unix systems walk
// the path with openat(O_NOFOLLOW); Windows goes through os.Root and
// checks every component for a reparse point.
package beneath

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"

	"github.com/dsh-lsp/dsh-lsp/internal/hugepage"
	"github.com/dsh-lsp/dsh-lsp/internal/parallel"
)

// ErrSymlink is the cause of an open refused because a component of the
// path below the root is a symlink (or a reparse point).
var ErrSymlink = errors.New("a path component below the store root is a symbolic link or reparse point")

// File is a file Open opened, read at offsets and then closed.
type File interface {
	io.ReaderAt
	io.Closer
}

// Open opens path below root read-only, without following a symlink below
// root, race-free (a session directory swapped for a link outside fails
// the open), non-blocking, and only if it is a regular file, which it
// returns with its stat. d is root held open (OpenRoot), or nil.
func Open(d *Root, root, path string) (File, fs.FileInfo, error) {
	rel, in := Rel(root, path)
	if !in || rel == "." {
		return nil, nil, fmt.Errorf("%s is not below the store root %s", path, root)
	}
	return openIn(d, root, rel, path)
}

// openOSFile is Open through an *os.File.
func openOSFile(d *Root, root, rel, path string) (File, fs.FileInfo, error) {
	f, err := openNoFollowIn(d, root, rel)
	if err != nil {
		return nil, nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	fi, err := f.Stat()
	if err == nil {
		err = checkRegular(path, fi)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// checkRegular refuses a file that is not a regular one.
func checkRegular(path string, fi fs.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (mode %s)", path, fi.Mode().Type())
	}
	return nil
}

// Rel returns path relative to root when path is root or below it
// (lexically).
func Rel(root, path string) (rel string, in bool) {
	rel, err := filepath.Rel(root, path)
	return rel, err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// OpenRegular opens path (a cache file) like Open from its directory, and
// only if it holds at most max bytes: a FIFO, a symlink or /dev/zero there
// must not hang or exhaust the reader. It returns the file and its size.
func OpenRegular(path string, max int64) (File, int64, error) {
	f, fi, err := Open(nil, filepath.Dir(path), path)
	if err != nil {
		return nil, 0, err
	}
	if fi.Size() > max {
		f.Close()
		return nil, 0, fmt.Errorf("%s holds %d bytes, more than the %d allowed", path, fi.Size(), max)
	}
	return f, fi.Size(), nil
}

// ReadRegular reads path whole, opened as OpenRegular does.
func ReadRegular(path string, max int64) ([]byte, error) {
	f, size, err := OpenRegular(path, max)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := ReadRange(f, path, 0, size, false)
	if err != nil {
		return nil, err
	}
	// A file that grew meanwhile is another one than was sized: refused,
	// like one that shrank (ReadAt's io.EOF).
	if n, _ := f.ReadAt(make([]byte, 1), size); n != 0 {
		return nil, fmt.Errorf("%s grew while it was read", path)
	}
	return data, nil
}

// ReadRange reads the bytes from..to of f (at path), into a buffer sized
// to them, in parallel parts when large: most of reading a 100 MB cache
// from the page cache is faulting in the new buffer's pages (about 90 ms
// at 100,000 sessions on one core). Bytes kept as long as the process
// serves (kept: a cache's head, which a restart's first answer waits for)
// are read into huge pages (package hugepage); others are not, so that
// the advice stays on a few long-lived arrays.
func ReadRange(f io.ReaderAt, path string, from, to int64, kept bool) ([]byte, error) {
	var data []byte
	if kept {
		data = hugepage.Make[byte](int(to - from))
	} else {
		data = make([]byte, to-from)
	}
	var mu sync.Mutex
	var errs []error
	parallel.Parts(len(data), parallelReadBytes, func(lo, hi int) {
		if _, err := f.ReadAt(data[lo:hi], from+int64(lo)); err != nil {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		}
	})
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return data, nil
}

// parallelReadBytes is the fewest bytes ReadRange reads in each of its
// parallel parts.
const parallelReadBytes = 4 << 20
