package sessionstore

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
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
	// Sized to the file: a cache of 100 MB is read into one buffer, not
	// grown through doublings.
	buf := bytes.NewBuffer(make([]byte, 0, fi.Size()+bytes.MinRead))
	_, err = buf.ReadFrom(io.LimitReader(f, max+1))
	data := buf.Bytes()
	if err == nil && int64(len(data)) > max {
		err = fmt.Errorf("%s grew past the %d bytes allowed", path, max)
	}
	return data, err
}
