//go:build linux

package beneath

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestOpen checks both Linux open paths (openat2, and the openat
// walk used where openat2 is missing) on every kind of hostile component.
func TestOpen(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(root, "p", "s"), filepath.Join(outside, "s")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p string) {
		if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(root, "p", "s", "f"))
	write(filepath.Join(outside, "s", "f"))
	write(filepath.Join(outside, "f"))
	mk := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	// p/dirlink -> outside/s (a session directory that is a symlink)
	mk(os.Symlink(filepath.Join(outside, "s"), filepath.Join(root, "p", "dirlink")))
	// projlink -> outside (a project directory that is a symlink)
	mk(os.Symlink(outside, filepath.Join(root, "projlink")))
	// p/s/filelink -> outside/f; p/s/inlink -> f (a link inside the root)
	mk(os.Symlink(filepath.Join(outside, "f"), filepath.Join(root, "p", "s", "filelink")))
	mk(os.Symlink("f", filepath.Join(root, "p", "s", "inlink")))
	mk(syscall.Mkfifo(filepath.Join(root, "p", "s", "fifo"), 0o644))
	mk(os.Symlink("/dev/zero", filepath.Join(root, "p", "s", "zero")))
	// A root given through a symlink is fine: only links below it count.
	rootLink := filepath.Join(base, "rootlink")
	mk(os.Symlink(root, rootLink))

	cases := []struct {
		root, rel string
		ok        bool
	}{
		{root, "p/s/f", true},
		{rootLink, "p/s/f", true},
		{root, "p/dirlink/f", false},
		{root, "projlink/s/f", false},
		{root, "p/s/filelink", false},
		{root, "p/s/inlink", false},
		{root, "p/s/fifo", false},
		{root, "p/s/zero", false},
		{root, "p/s", false},
		{root, "p/s/missing", false},
		{root, "../outside/f", false},
	}
	for _, walk := range []struct {
		name     string
		noOpenat bool
		held     bool // from the root held open, as a pass opens
	}{
		{"openat2", false, false},
		{"openat2 from the held root", false, true},
		{"openat walk", true, false},
	} {
		noOpenat2.Store(walk.noOpenat)
		for _, c := range cases {
			var d *Root
			if walk.held {
				if d = OpenRoot(c.root); d == nil {
					t.Fatalf("cannot hold %s open", c.root)
				}
			}
			done := make(chan struct{})
			var err error
			go func() {
				defer close(done)
				defer d.Close()
				var f File
				if f, _, err = Open(d, c.root, filepath.Join(c.root, c.rel)); err == nil {
					f.Close()
				}
			}()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("%s: open %s hangs", walk.name, c.rel)
			}
			if (err == nil) != c.ok {
				t.Errorf("%s: %s below %s: error %v, want ok=%v", walk.name, c.rel, c.root, err, c.ok)
			}
		}
	}
	noOpenat2.Store(false)
}

// TestReadRegular checks the cache reader on a FIFO, /dev/zero
// through a symlink, a symlink to a regular file and an oversized file.
func TestReadRegular(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	if err := os.WriteFile(good, []byte("cache"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(good, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		max  int64
		ok   bool
	}{
		{good, 100, true},
		{good, 4, false},
		{fifo, 100, false},
		{zero, 1 << 30, false},
		{link, 100, false},
		{"/dev/zero", 1 << 30, false},
	} {
		done := make(chan struct{})
		var data []byte
		var err error
		go func() { defer close(done); data, err = ReadRegular(c.path, c.max) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("reading %s hangs", c.path)
		}
		if (err == nil) != c.ok || (c.ok && string(data) != "cache") {
			t.Errorf("%s (max %d): %q, %v; want ok=%v", c.path, c.max, data, err, c.ok)
		}
	}
	// A large file is read in parallel parts: every byte in its place.
	big := make([]byte, parallelReadBytes+12345)
	for i := range big {
		big[i] = byte(i * 7 / 5)
	}
	bigPath := filepath.Join(dir, "big")
	if err := os.WriteFile(bigPath, big, 0o644); err != nil {
		t.Fatal(err)
	}
	if data, err := ReadRegular(bigPath, 1<<30); err != nil || !bytes.Equal(data, big) {
		t.Errorf("a file of %d bytes read in parts: %d bytes, %v", len(big), len(data), err)
	}
}

// TestOpenReadsAndStatsAsTheOSPackage: what Open returns (a descriptor of
// its own with openat2, an *os.File after an openat walk) reads at offsets
// as io.ReaderAt says and stats as os.Stat does.
func TestOpenReadsAndStatsAsTheOSPackage(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "p", "s", "session.jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	data := []byte("0123456789abcdef")
	if err := os.WriteFile(path, data, 0o640); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 6, 11, 0, 0, 123456789, time.UTC)
	if err := os.Chtimes(path, at, at); err != nil {
		t.Fatal(err)
	}
	want, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	defer noOpenat2.Store(false)
	for _, walk := range []bool{false, true} {
		noOpenat2.Store(walk)
		f, fi, err := Open(nil, root, path)
		if err != nil {
			t.Fatalf("walk %v: %v", walk, err)
		}
		if fi.Name() != want.Name() || fi.Size() != want.Size() || fi.Mode() != want.Mode() || !fi.ModTime().Equal(want.ModTime()) || fi.IsDir() {
			t.Errorf("walk %v: stat %s %d %v %v, want %s %d %v %v", walk, fi.Name(), fi.Size(), fi.Mode(), fi.ModTime(), want.Name(), want.Size(), want.Mode(), want.ModTime())
		}
		got, wantSys := fi.Sys().(*syscall.Stat_t), want.Sys().(*syscall.Stat_t)
		if got == nil || got.Dev != wantSys.Dev || got.Ino != wantSys.Ino {
			t.Errorf("walk %v: Sys %+v, want device %d inode %d", walk, got, wantSys.Dev, wantSys.Ino)
		}
		for _, r := range []struct {
			off, n  int64
			read    string
			wantEOF bool
		}{
			{0, 16, "0123456789abcdef", false},
			{4, 4, "4567", false},
			{12, 8, "cdef", true},
			{16, 4, "", true},
			{40, 1, "", true},
		} {
			p := make([]byte, r.n)
			n, err := f.ReadAt(p, r.off)
			if string(p[:n]) != r.read || (err == io.EOF) != r.wantEOF || (err != nil && err != io.EOF) {
				t.Errorf("walk %v: ReadAt(%d bytes at %d) = %q, %v; want %q (EOF %v)", walk, r.n, r.off, p[:n], err, r.read, r.wantEOF)
			}
		}
		if _, err := f.ReadAt(make([]byte, 1), -1); err == nil {
			t.Errorf("walk %v: a read at a negative offset did not fail", walk)
		}
		if err := f.Close(); err != nil {
			t.Errorf("walk %v: close: %v", walk, err)
		}
		if err := f.Close(); err == nil {
			t.Errorf("walk %v: a second close did not fail", walk)
		}
	}
}
