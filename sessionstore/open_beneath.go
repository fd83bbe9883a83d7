package sessionstore

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Transcripts are opened relative to the store root without following any
// symlink on the path below it, in one race-free step: on Linux by
// openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS) (open_linux.go), on other
// unix systems (macOS) by openat with O_NOFOLLOW for every component
// (open_unix.go), on Windows through os.Root, refusing reparse points
// (open_other.go). A session directory swapped for a symlink to an outside
// directory between listing and reading therefore fails the read instead
// of returning the outside session. The final file is opened non-blocking
// (a FIFO cannot hang the open) and must be a regular file (a device such
// as /dev/zero cannot be read endlessly).

// roots holds the store roots opened in this process (cleaned, as given
// and absolute): openRegular confines a path to the deepest one above it.
var roots sync.Map // string → struct{}

// registerRoot records root for openRegular.
func registerRoot(root string) {
	if root == "" {
		return
	}
	roots.Store(filepath.Clean(root), struct{}{})
	if abs, err := filepath.Abs(root); err == nil {
		roots.Store(abs, struct{}{})
	}
}

// rootOf returns the deepest registered store root above path, or the
// directory of path when none is (only the last component is then
// protected).
func rootOf(path string) string {
	p := filepath.Clean(path)
	for d := filepath.Dir(p); ; {
		if _, ok := roots.Load(d); ok {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	return filepath.Dir(p)
}

// errSymlinkBelowRoot is the cause of an open refused because a component
// of the path below the store root is a symlink (or a reparse point).
var errSymlinkBelowRoot = errors.New("a path component below the store root is a symbolic link or reparse point")

// openRegular opens path, a file below a store root opened in this process
// (Open, OpenIndexed), read-only, without following a symlink anywhere
// below that root, and only if it is a regular file.
func openRegular(path string) (*os.File, error) { return openBeneath(rootOf(path), path) }

// openBeneath opens path, which must lie below root, read-only without
// following any symlink below root (root itself may be one), and only if
// it is a regular file.
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

// readRegularFile reads a file that must be a regular file of at most max
// bytes, opened without following a symlink in its last component and
// non-blocking (the index cache: a FIFO or a link to /dev/zero there must
// not hang or exhaust the server).
func readRegularFile(path string, max int64) ([]byte, error) {
	f, err := openFileNoFollow(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (mode %s)", path, fi.Mode().Type())
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("%s holds %d bytes, more than the %d allowed", path, fi.Size(), max)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s grew past the %d bytes allowed", path, max)
	}
	return data, nil
}
