package sessionstore

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// TestFileIdentityTellsReplacement: a file written anew and renamed over
// the old one (the way a store is replaced) gets another identity even
// when size and modification time match; the same file keeps its identity
// while it grows.
func TestFileIdentityTellsReplacement(t *testing.T) {
	if runtime.GOOS != "windows" && runtime.GOOS != "linux" && runtime.GOOS != "darwin" && runtime.GOOS != "freebsd" {
		t.Skipf("no file identity on %s", runtime.GOOS)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "session.jsonl")
	if err := os.WriteFile(path, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stat := func(p string) (uint64, uint64) {
		t.Helper()
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fileIdentity(fi)
	}
	dev0, ino0 := stat(path)
	if runtime.GOOS == "windows" && underWineForTest() {
		t.Skip("Wine has no stable creation time (it reports the Unix ctime), so fileIdentity returns none there")
	}
	if dev0 == 0 && ino0 == 0 {
		t.Fatalf("no identity for a regular file on %s", runtime.GOOS)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("two\n")
	f.Close()
	if dev, ino := stat(path); dev != dev0 || ino != ino0 {
		t.Errorf("appending changed the identity: (%d, %d) -> (%d, %d)", dev0, ino0, dev, ino)
	}
	// Creation times have 100 ns resolution on Windows; make sure the new
	// file is created at a later tick.
	time.Sleep(10 * time.Millisecond)
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	if dev, ino := stat(path); dev == dev0 && ino == ino0 {
		t.Errorf("a file renamed over the transcript kept its identity (%d, %d)", dev, ino)
	}
}
