//go:build linux

package sessionstore_test

// The index cache must never land inside the store,
// however the paths are spelled (symlinks on either side), and a cache
// path that is a FIFO, a link to /dev/zero or an oversized file is ignored
// at once (the index is rebuilt) instead of hanging or exhausting memory.

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-lsp/dsh-lsp/sessionstore"
)

// noCacheFilesUnder fails if any index cache file (or its temporary) lies
// under root.
func noCacheFilesUnder(t *testing.T, root string) {
	t.Helper()
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && (strings.HasPrefix(d.Name(), "index-") || strings.HasPrefix(d.Name(), ".index-")) {
			t.Errorf("cache file written under the store root: %s", path)
		}
		return nil
	})
}

func TestCacheNeverInsideRoot(t *testing.T) {
	base := t.TempDir()
	realRoot := filepath.Join(base, "real-sessions")
	writeRawSession(t, realRoot, "s1", "one")
	rootLink := filepath.Join(base, "sessions-link")
	if err := os.Symlink(realRoot, rootLink); err != nil {
		t.Fatal(err)
	}
	inside := filepath.Join(realRoot, "cache-here")
	if err := os.MkdirAll(inside, 0o755); err != nil {
		t.Fatal(err)
	}
	cacheLink := filepath.Join(base, "cache-link") // -> inside the store
	if err := os.Symlink(inside, cacheLink); err != nil {
		t.Fatal(err)
	}
	xdg := filepath.Join(base, "xdg")
	if err := os.MkdirAll(xdg, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(inside, filepath.Join(xdg, "dsh-lsp")); err != nil {
		t.Fatal(err)
	}
	before := treeSum(t, realRoot)
	cases := []struct {
		name, root, cacheDir, xdg string
	}{
		{"cache dir is a symlink into the store", realRoot, cacheLink, ""},
		{"a not-yet-created dir below a symlink into the store", realRoot, filepath.Join(cacheLink, "a", "b"), ""},
		{"root given through a symlink, cache inside the real root", rootLink, inside, ""},
		{"root given through a symlink, cache dir a symlink into it", rootLink, cacheLink, ""},
		{"$XDG_CACHE_HOME/dsh-lsp symlinked into the store", realRoot, "", xdg},
		{"both through symlinks, default cache dir", rootLink, "", xdg},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.xdg != "" {
				t.Setenv("XDG_CACHE_HOME", c.xdg)
			}
			var warnings []string
			x, err := sessionstore.OpenIndexed(c.root, sessionstore.IndexOptions{CacheDir: c.cacheDir, NoWatch: true,
				Logf: func(f string, a ...any) { warnings = append(warnings, f) }})
			if err != nil {
				t.Fatal(err)
			}
			if err := x.Wait(context.Background()); err != nil {
				t.Fatal(err)
			}
			if p := x.CachePath(); p != "" {
				t.Errorf("cache path %s: want memory only", p)
			}
			if hs, err := x.ListSessions(context.Background()); err != nil || len(hs) != 1 {
				t.Errorf("listing: %v, %v", hs, err)
			}
			x.Close()
			noCacheFilesUnder(t, realRoot)
		})
	}
	// A cache directory outside the store is used.
	x, err := sessionstore.OpenIndexed(rootLink, sessionstore.IndexOptions{CacheDir: filepath.Join(base, "cache-ok"), NoWatch: true})
	if err != nil {
		t.Fatal(err)
	}
	x.Wait(context.Background())
	if x.CachePath() == "" {
		t.Errorf("a cache directory outside the store was refused")
	}
	x.Close()
	if after := treeSum(t, realRoot); after != before {
		t.Errorf("the store changed")
	}
}

func TestCacheFileNotRegular(t *testing.T) {
	root := filepath.Join(t.TempDir(), "sessions")
	writeRawSession(t, root, "s1", "one")
	cacheDir := t.TempDir()
	// Learn the cache file name from a first run.
	x, err := sessionstore.OpenIndexed(root, sessionstore.IndexOptions{CacheDir: cacheDir, NoWatch: true})
	if err != nil {
		t.Fatal(err)
	}
	x.Wait(context.Background())
	cachePath := x.CachePath()
	x.Close()
	if cachePath == "" {
		t.Fatal("no cache path")
	}
	for _, c := range []struct {
		name string
		make func(path string) error
	}{
		{"FIFO", func(p string) error { return syscall.Mkfifo(p, 0o600) }},
		{"symlink to /dev/zero", func(p string) error { return os.Symlink("/dev/zero", p) }},
		{"oversized (sparse 1 GiB)", func(p string) error {
			f, err := os.Create(p)
			if err != nil {
				return err
			}
			defer f.Close()
			return f.Truncate(1 << 30)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, path := cacheDir, cachePath
			os.Remove(path)
			if err := c.make(path); err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var warnings []string
			done := make(chan *sessionstore.Indexed)
			go func() {
				x, err := sessionstore.OpenIndexed(root, sessionstore.IndexOptions{CacheDir: dir, NoWatch: true,
					Logf: func(f string, a ...any) {
						mu.Lock()
						warnings = append(warnings, fmt.Sprintf(f, a...))
						mu.Unlock()
					}})
				if err != nil {
					t.Error(err)
				}
				done <- x
			}()
			var x *sessionstore.Indexed
			select {
			case x = <-done:
			case <-time.After(20 * time.Second):
				t.Fatalf("OpenIndexed hangs on a %s cache file", c.name)
			}
			if x == nil {
				return
			}
			defer x.Close()
			x.Wait(context.Background())
			if hs, err := x.ListSessions(context.Background()); err != nil || len(hs) != 1 {
				t.Errorf("listing: %v, %v", hs, err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(warnings) == 0 || !strings.Contains(warnings[0], "ignoring index cache") {
				t.Errorf("no warning about the ignored cache file: %q", warnings)
			}
		})
	}
}
