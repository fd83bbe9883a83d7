package sessionstore

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"
)

// testdata returns the repository testdata directory.
func testdata(t testing.TB) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// readJSON decodes a JSON file into v.
func readJSON(t testing.TB, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// decode decodes raw JSON into a generic value for semantic comparison.
func decode(t testing.TB, raw []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("invalid JSON %s: %v", raw, err)
	}
	return v
}

// jsonEqual reports whether two JSON texts hold equal values.
func jsonEqual(t testing.TB, a, b []byte) bool {
	t.Helper()
	return reflect.DeepEqual(decode(t, a), decode(t, b))
}

// mustJSON marshals v.
func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// treeHash hashes every file (path, mode, bytes) and symlink under root.
func treeHash(t testing.TB, root string) string {
	t.Helper()
	h := sha256.New()
	var paths []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		paths = append(paths, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(paths)
	for _, p := range paths {
		st, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, p)
		h.Write([]byte(rel + "\x00" + st.Mode().String() + "\x00"))
		switch {
		case st.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			h.Write([]byte(target))
		case st.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			h.Write(data)
		}
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestMain checks that the whole test binary (internal and external tests)
// leaves the stores in testdata byte-for-byte unchanged.
func TestMain(m *testing.M) {
	roots := []string{filepath.Join("..", "testdata", "fixtures"), filepath.Join("..", "testdata", "golden", "jsonl-root")}
	before := make([]string, len(roots))
	for i, r := range roots {
		before[i] = treeHash(panicTB{}, r)
	}
	code := m.Run()
	for _, f := range testExits {
		f()
	}
	for i, r := range roots {
		if after := treeHash(panicTB{}, r); after != before[i] {
			fmt.Fprintf(os.Stderr, "FAIL: store bytes under %s changed during the tests\n", r)
			code = 1
		}
	}
	os.Exit(code)
}

// panicTB is a testing.TB for use outside a test (TestMain).
type panicTB struct{ testing.TB }

func (panicTB) Helper()                   {}
func (panicTB) Fatal(args ...any)         { panic(fmt.Sprint(args...)) }
func (panicTB) Fatalf(f string, a ...any) { panic(fmt.Sprintf(f, a...)) }

// guardTree checks the bytes under root are unchanged when the test ends.
func guardTree(t *testing.T, root string) {
	t.Helper()
	before := treeHash(t, root)
	t.Cleanup(func() {
		if after := treeHash(t, root); after != before {
			t.Errorf("store bytes under %s changed during the test", root)
		}
	})
}
