//go:build !unix

package sessionstore

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// openNoFollow opens root/rel read-only through os.Root, which resolves
// every component relative to the root's handle and never lets a path
// (or a link swapped in mid-walk) resolve outside the root. On top of
// that, each component is checked not to be a symlink or another reparse
// point (junction, mount point), and the opened file must be the one the
// last check saw: a component swapped for an in-root link between the
// check and the open can at worst name another file inside the root.
func openNoFollow(root, rel string) (*os.File, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	comps := strings.Split(filepath.ToSlash(rel), "/")
	var last fs.FileInfo
	for i, c := range comps {
		if c == "" || c == "." || c == ".." {
			return nil, errors.New("path component " + c + " is not a name")
		}
		fi, err := r.Lstat(filepath.Join(comps[:i+1]...))
		if err != nil {
			return nil, err
		}
		if fi.Mode()&(fs.ModeSymlink|fs.ModeIrregular) != 0 {
			return nil, errSymlinkBelowRoot
		}
		last = fi
	}
	f, err := r.Open(rel)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !os.SameFile(last, fi) {
		f.Close()
		return nil, errSymlinkBelowRoot
	}
	return f, nil
}

// openFileNoFollow opens path read-only, refusing a symlink or reparse
// point as its last component (checked before and after the open).
func openFileNoFollow(path string) (*os.File, error) {
	before, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !before.Mode().IsRegular() {
		return nil, &os.PathError{Op: "open", Path: path, Err: errors.New("not a regular file")}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if after, err := f.Stat(); err != nil || !os.SameFile(before, after) {
		f.Close()
		return nil, &os.PathError{Op: "open", Path: path, Err: errors.New("replaced while being opened")}
	}
	return f, nil
}
