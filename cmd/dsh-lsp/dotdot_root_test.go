//go:build !windows

package main

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSessionsDotDotAfterSymlinkResolvedAsTheKernelDoes: --sessions
// sl/../other/sl, where sl links to the store, names the store (the kernel
// takes ".." from the link's target), so the CLI lists its session; and a
// cache directory inside the real store is refused, never written.
func TestSessionsDotDotAfterSymlinkResolvedAsTheKernelDoes(t *testing.T) {
	t.Parallel()
	b := t.TempDir()
	store := filepath.Join(b, "store")
	if err := os.MkdirAll(filepath.Join(store, "--p--", "s"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(store, "--p--", "s", "session.jsonl"),
		[]byte(`{"type":"session","version":0,"id":"s","createdAt":1,"cwd":"/p","delegationDepth":0}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(b, "other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(store, filepath.Join(other, "sl")); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"candidates", "--sessions", "sl/../other/sl"},
		{"candidates", "--sessions", "sl/../store"},
	} {
		cmd := exec.Command(binary, args...)
		cmd.Dir = other
		cmd.Env = cleanEnv(t.TempDir(), "XDG_CACHE_HOME="+filepath.Join(store, "x"))
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, errb.String())
		}
		if !strings.Contains(out.String(), `"sessionId":"s"`) {
			t.Errorf("%v: %s, want the store's session s (the path the kernel resolves)", args, out.String())
		}
		filepath.WalkDir(store, func(p string, d fs.DirEntry, err error) error {
			if err == nil && strings.HasPrefix(d.Name(), "index-") {
				t.Errorf("%v: the index cache was written under the store: %s", args, p)
			}
			return nil
		})
	}
}
