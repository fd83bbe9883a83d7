package beneath

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Abs makes p absolute as the kernel resolves it: filepath.Abs cleans
// "sl/.." as text even when sl is a symlink, so the longest existing
// prefix of p up to its last ".." goes through filepath.EvalSymlinks and
// the rest is only cleaned (the root itself may be a symlink, kept as
// given). Windows resolves ".." as text, as filepath.Abs does.
func Abs(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil || runtime.GOOS == "windows" {
		return abs, err
	}
	if !filepath.IsAbs(p) {
		wd, err := os.Getwd()
		if err != nil {
			return abs, nil
		}
		p = wd + string(filepath.Separator) + p
	}
	comps := strings.Split(p, string(filepath.Separator))
	last := -1
	for i, c := range comps {
		if c == ".." {
			last = i
		}
	}
	if last < 0 {
		return abs, nil
	}
	for k := last + 1; k > 0; k-- {
		head := strings.Join(comps[:k], string(filepath.Separator))
		if head == "" {
			head = string(filepath.Separator)
		}
		if r, err := filepath.EvalSymlinks(head); err == nil {
			return filepath.Join(append([]string{r}, comps[k:]...)...), nil
		}
	}
	return abs, nil
}

// Inside reports whether dir is root or below it, decided on the paths
// with and without symlinks resolved (so a directory that reaches into
// root through a symlink is inside too), and returns both absolute paths
// (Abs).
func Inside(dir, root string) (absDir, absRoot string, inside bool, err error) {
	if absDir, err = Abs(dir); err != nil {
		return "", "", false, err
	}
	if absRoot, err = Abs(root); err != nil {
		return "", "", false, err
	}
	realDir, realRoot := Resolved(absDir), Resolved(absRoot)
	for _, pair := range [][2]string{{absRoot, absDir}, {realRoot, realDir}, {absRoot, realDir}, {realRoot, absDir}} {
		if _, in := Rel(pair[0], pair[1]); in {
			return absDir, absRoot, true, nil
		}
	}
	return absDir, absRoot, false, nil
}

// Resolved resolves the symlinks of the longest existing prefix of the
// absolute path p and appends the rest (a directory to be created need
// not exist yet; MkdirAll would create it through the links).
func Resolved(p string) string {
	rest := ""
	for cur := p; ; {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}
