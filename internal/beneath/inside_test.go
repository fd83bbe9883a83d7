package beneath

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestInside: a directory is inside a root lexically, or through a
// symlink on either side; a sibling with a common prefix is not.
func TestInside(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "store")
	if err := os.MkdirAll(filepath.Join(root, "p"), 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		dir    string
		inside bool
	}{
		{root, true},
		{filepath.Join(root, "p", "cache"), true},
		{filepath.Join(root, "p", "..", "..", "other"), false},
		{filepath.Join(base, "store2"), false},
		{filepath.Join(base, "elsewhere", "cache"), false},
	}
	if runtime.GOOS != "windows" {
		// A link from outside into the store, and a root given through a
		// link: both resolve into the store.
		if err := os.Symlink(filepath.Join(root, "p"), filepath.Join(base, "into")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(root, filepath.Join(base, "rootlink")); err != nil {
			t.Fatal(err)
		}
		cases = append(cases,
			struct {
				dir    string
				inside bool
			}{filepath.Join(base, "into", "not-yet", "cache"), true},
		)
		if _, _, in, err := Inside(filepath.Join(root, "p"), filepath.Join(base, "rootlink")); err != nil || !in {
			t.Errorf("a directory of the store, root given through a link: inside %v, %v", in, err)
		}
	}
	for _, c := range cases {
		_, _, in, err := Inside(c.dir, root)
		if err != nil || in != c.inside {
			t.Errorf("Inside(%s, %s) = %v, %v; want %v", c.dir, root, in, err, c.inside)
		}
	}
}
