//go:build linux

package beneath

import (
	"bytes"
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
				var f *os.File
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
