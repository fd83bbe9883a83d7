//go:build !unix

package beneath

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// openNoFollow opens root/rel read-only through os.Root, which never
// resolves outside the root, if no component is a symlink or another
// reparse point and the opened file is the one last checked: a component
// swapped for a link mid-walk can at worst name another file in the root.
func openNoFollow(root, rel string) (*os.File, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	comps := strings.Split(filepath.ToSlash(rel), "/")
	var last fs.FileInfo
	for i := range comps {
		if last, err = r.Lstat(filepath.Join(comps[:i+1]...)); err != nil {
			return nil, err
		}
		if last.Mode()&(fs.ModeSymlink|fs.ModeIrregular) != 0 {
			return nil, ErrSymlink
		}
	}
	f, err := r.Open(rel)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !os.SameFile(last, fi) {
		f.Close()
		return nil, ErrSymlink
	}
	return f, nil
}
