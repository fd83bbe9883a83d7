package main

import (
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/dsh-lsp/dsh-lsp/sessionstore"
)

// TestDemoStoreIsPrivateReadOnlyAndRemoved: the sample store is unpacked
// into a directory only the user can enter, with nothing in it writable,
// as a store the index reads like any other; the cleanup removes it.
func TestDemoStoreIsPrivateReadOnlyAndRemoved(t *testing.T) {
	root, cleanup, err := extractDemoStore()
	if err != nil {
		t.Fatal(err)
	}
	removed := false
	defer func() {
		if !removed {
			cleanup()
		}
	}()
	if runtime.GOOS != "windows" {
		fi, err := os.Stat(root)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != 0o700 {
			t.Errorf("demo store root mode %o, want 700", got)
		}
		err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || path == root {
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			if fi.Mode().Perm()&0o222 != 0 {
				t.Errorf("%s is writable (mode %o)", path, fi.Mode().Perm())
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	ix, err := sessionstore.OpenIndexed(root, sessionstore.IndexOptions{CacheDir: sessionstore.NoCache, Snapshot: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	headers, err := ix.ListSessions(context.Background())
	ix.Close()
	if err != nil || len(headers) < 5 {
		t.Fatalf("the index lists %d demo sessions (%v), want the 5 samples", len(headers), err)
	}
	cleanup()
	removed = true
	if _, err := os.Lstat(root); !os.IsNotExist(err) {
		t.Errorf("demo store %s still exists after cleanup (%v)", root, err)
	}
}

// TestDemoLeavesNoTemporaryFiles: a demo run removes the store it
// unpacked.
func TestDemoLeavesNoTemporaryFiles(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	t.Setenv("TMP", tmp)
	t.Setenv("TEMP", tmp)
	if err := runDemo(io.Discard); err != nil {
		t.Fatal(err)
	}
	left, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range left {
		t.Errorf("the demo left %s in the temporary directory", e.Name())
	}
}
