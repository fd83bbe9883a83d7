package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestServeWritesACPUProfile: serve --cpuprofile F writes a pprof profile
// (gzip-compressed) of the run to F once the client goes away; a path
// that cannot be created is refused before serving.
func TestServeWritesACPUProfile(t *testing.T) {
	prof := filepath.Join(t.TempDir(), "cpu.prof")
	// No client: stdin ends at once, as a client gone without exit (1).
	if r := runCLI(t, "", "serve", "--sessions", storeRaw, "--cpuprofile", prof); r.code != 1 {
		t.Fatalf("serve exited %d, want 1: %s", r.code, r.stderr)
	}
	data, err := os.ReadFile(prof)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
		t.Fatalf("profile is not gzip-compressed pprof data: % x", data[:min(len(data), 8)])
	}
	r := runCLI(t, "", "serve", "--sessions", storeRaw, "--cpuprofile", filepath.Join(t.TempDir(), "missing", "cpu.prof"))
	if r.code != 2 || !bytes.Contains([]byte(r.stderr), []byte("cpu profile")) {
		t.Fatalf("unwritable profile path: exit %d, stderr %q; want 2 and the reason", r.code, r.stderr)
	}
}
