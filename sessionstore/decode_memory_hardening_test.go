//go:build linux

package sessionstore_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dsh-lsp/dsh-lsp/sessionstore"
)

// TestIndexPassDecodeMemoryWhateverGOMAXPROCS lists a store of compressed
// bombs (each a frame whose size shows only by decoding it to the limit)
// with 16 index workers on this machine: every worker asks for a
// limit-sized buffer at once, and the decode memory budget, taken before
// allocating, must keep the peak at the stated bound (3 × limit + 64 MiB)
// rather than one buffer per worker.
func TestIndexPassDecodeMemoryWhateverGOMAXPROCS(t *testing.T) {
	t.Parallel()
	if testing.Short() || raceEnabled {
		t.Skip("builds and runs the binary over compressed bombs")
	}
	const limit = 32 * mib
	const bound = 3*limit + 64*mib
	root := filepath.Join(t.TempDir(), "sessions")
	writeZstdSession(t, root, "good", zframe(hdrLine("good")), zframe(eventLines("good", "good session")))
	cb := compressedBomb(t)
	const bombs = 16
	for i := 0; i < bombs; i++ {
		id := fmt.Sprintf("bomb-%02d", i)
		writeZstdSession(t, root, id, zframe(hdrLine(id)), zframe(eventLines(id, "b")), cb)
	}
	// Through the index, and through the store's own reads (--no-cache).
	for _, extra := range [][]string{nil, {"--no-cache"}} {
		args := append([]string{"candidates", "--sessions", root, "--max-read-mb", "32"}, extra...)
		r := runCLI(t, t.TempDir(), []string{"GOMAXPROCS=16"}, args...)
		t.Logf("candidates %v over %d compressed bombs, GOMAXPROCS=16: exit %d, peak RSS %d MiB (bound %d MiB), %v",
			extra, bombs, r.exit, r.maxRSS>>20, bound>>20, r.took.Round(time.Millisecond))
		if r.exit != 0 {
			t.Fatalf("candidates %v failed: %s%s", extra, r.stdout, r.stderr)
		}
		var items []struct{ SessionID, Label string }
		if err := json.Unmarshal([]byte(r.stdout), &items); err != nil {
			t.Fatalf("candidates output: %v\n%s", err, r.stdout)
		}
		if len(items) != bombs+1 {
			t.Errorf("candidates %v: listed %d sessions, want %d (bombs are listed, their reads fail)", extra, len(items), bombs+1)
		}
		if r.maxRSS > bound {
			t.Errorf("candidates %v: peak RSS %d MiB, over the bound of %d MiB", extra, r.maxRSS>>20, bound>>20)
		}
	}
}

// TestIndexPassLongRawLinesWhateverGOMAXPROCS: raw sessions each holding
// one 16 MiB message line grow their worker's read buffer past the read
// chunk and parse a line that long; with 16 workers that must stay within
// the stated bound (3 × limit + 64 MiB, default limit), not a grown buffer
// and a long line's parse per worker.
func TestIndexPassLongRawLinesWhateverGOMAXPROCS(t *testing.T) {
	t.Parallel()
	if testing.Short() || raceEnabled {
		t.Skip("builds and runs the binary over 256 MiB of long lines")
	}
	const bound = 3*sessionstore.DefaultReadLimit + 64*mib
	root := filepath.Join(t.TempDir(), "sessions")
	const sessions = 16
	text := strings.Repeat("m", 16*mib)
	for i := 0; i < sessions; i++ {
		id := fmt.Sprintf("long-%02d", i)
		path, err := sessionstore.SessionPath(root, hostileStr("/p"), id, sessionstore.Raw)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(hdrLine(id)+strings.Replace(eventLines(id, "x"), `"text":"x"`, `"text":"`+text+`"`, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := runCLI(t, t.TempDir(), []string{"GOMAXPROCS=16"}, "candidates", "--sessions", root)
	t.Logf("candidates over %d sessions of a 16 MiB line, GOMAXPROCS=16: exit %d, peak RSS %d MiB (bound %d MiB), %v",
		sessions, r.exit, r.maxRSS>>20, bound>>20, r.took.Round(time.Millisecond))
	if r.exit != 0 {
		t.Fatalf("candidates failed: %s%s", firstLine(r.stdout), firstLine(r.stderr))
	}
	var items []struct{ SessionID, Label string }
	if err := json.Unmarshal([]byte(r.stdout), &items); err != nil || len(items) != sessions {
		t.Errorf("listed %d sessions (%v), want %d", len(items), err, sessions)
	}
	if r.maxRSS > bound {
		t.Errorf("peak RSS %d MiB, over the bound of %d MiB", r.maxRSS>>20, bound>>20)
	}
}

// TestIndexPassLargeZstdFramesWhateverGOMAXPROCS: zstd sessions each
// holding one frame of 16 MiB of raw blocks (as many bytes on disk) grow
// their worker's read buffer past the read chunk, then decode and parse
// the frame; with 16 workers that must stay within the stated bound (3 ×
// limit + 64 MiB, default limit), not a grown buffer, a decode and a long
// line's parse per worker.
func TestIndexPassLargeZstdFramesWhateverGOMAXPROCS(t *testing.T) {
	t.Parallel()
	if testing.Short() || raceEnabled {
		t.Skip("builds and runs the binary over 256 MiB of zstd frames")
	}
	const bound = 3*sessionstore.DefaultReadLimit + 64*mib
	root := filepath.Join(t.TempDir(), "sessions")
	const sessions = 16
	line := []byte(userMessagePrefix + strings.Repeat("z", 16*mib) + userMessageSuffix)
	frame := rawBlocks(zstdFrameHeader(), line, true)
	for i := 0; i < sessions; i++ {
		id := fmt.Sprintf("frame-%02d", i)
		writeZstdSession(t, root, id, zframe(hdrLine(id)), zframe(eventLines(id, "x")), frame)
	}
	r := runCLI(t, t.TempDir(), []string{"GOMAXPROCS=16"}, "candidates", "--sessions", root)
	t.Logf("candidates over %d sessions of a 16 MiB frame, GOMAXPROCS=16: exit %d, peak RSS %d MiB (bound %d MiB), %v",
		sessions, r.exit, r.maxRSS>>20, bound>>20, r.took.Round(time.Millisecond))
	if r.exit != 0 {
		t.Fatalf("candidates failed: %s%s", firstLine(r.stdout), firstLine(r.stderr))
	}
	var items []struct{ SessionID, Label string }
	if err := json.Unmarshal([]byte(r.stdout), &items); err != nil || len(items) != sessions {
		t.Errorf("listed %d sessions (%v), want %d", len(items), err, sessions)
	}
	for _, it := range items {
		if it.Label != "x" {
			t.Errorf("%s: label %q, want its title", it.SessionID, it.Label)
		}
	}
	if r.maxRSS > bound {
		t.Errorf("peak RSS %d MiB, over the bound of %d MiB", r.maxRSS>>20, bound>>20)
	}
}
