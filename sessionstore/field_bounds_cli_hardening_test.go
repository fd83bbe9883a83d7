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

// TestHostileFieldsCLI is the probe's reproduction against the real
// binary: four sessions of 100 MiB titles (a few KB of zstd each) and 300
// headers with a cwd of nearly 1 MiB. The listing must answer with the
// big-title sessions under their ids, leave the long-cwd ones out, and
// neither its output nor the cache it writes may grow with the fields;
// peak RSS stays within the stated bound of the read limit.
func TestHostileFieldsCLI(t *testing.T) {
	t.Parallel()
	if testing.Short() || raceEnabled {
		t.Skip("builds and runs the binary over 400 MiB of titles")
	}
	const bound = 3*sessionstore.DefaultReadLimit + 64*mib
	root := filepath.Join(t.TempDir(), "sessions")
	hostileFieldStore(t, root, 4, 100<<20, 300)
	home := t.TempDir()
	r := runCLI(t, home, nil, "candidates", "--sessions", root)
	t.Logf("candidates: exit %d, %d bytes of output, peak RSS %d MiB (bound %d MiB), %v", r.exit, len(r.stdout), r.maxRSS>>20, bound>>20, r.took.Round(time.Millisecond))
	if r.exit != 0 {
		t.Fatalf("candidates failed: %s%s", firstLine(r.stdout), firstLine(r.stderr))
	}
	var items []struct{ SessionID, Label string }
	if err := json.Unmarshal([]byte(r.stdout), &items); err != nil {
		t.Fatalf("candidates output: %v", err)
	}
	labels := map[string]string{}
	for _, it := range items {
		labels[it.SessionID] = it.Label
	}
	for i := 0; i < 4; i++ {
		// A rejected title read: listed under its id, as dsh does.
		if id := fmt.Sprintf("big-title-%d", i); labels[id] != id {
			t.Errorf("%s: label %d bytes, want the id", id, len(labels[id]))
		}
	}
	if labels["good"] != "good session" || len(labels["at-bound"]) != sessionstore.MaxTitleBytes {
		t.Errorf("good / at-bound labels: %q / %d bytes", labels["good"], len(labels["at-bound"]))
	}
	for id := range labels {
		if strings.HasPrefix(id, "long-cwd-") {
			t.Errorf("%s is listed", id)
		}
	}
	if len(r.stdout) > 64<<10 {
		t.Errorf("candidates wrote %d KiB", len(r.stdout)>>10)
	}
	if r.maxRSS > bound {
		t.Errorf("peak RSS %d MiB, over the bound of %d MiB", r.maxRSS>>20, bound>>20)
	}
	caches, _ := filepath.Glob(filepath.Join(home, "cache", "dsh-lsp", "index-*"))
	if len(caches) != 1 {
		t.Fatalf("cache files: %v", caches)
	}
	fi, err := os.Stat(caches[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cache file %d KiB", fi.Size()>>10)
	if fi.Size() > 1<<20 {
		t.Errorf("the cache file is %d KiB", fi.Size()>>10)
	}
	// The next start answers from that cache, the same.
	again := runCLI(t, home, nil, "candidates", "--sessions", root)
	t.Logf("candidates from the cache: peak RSS %d MiB, %v", again.maxRSS>>20, again.took.Round(time.Millisecond))
	if again.exit != 0 || again.stdout != r.stdout {
		t.Errorf("second candidates differ: exit %d", again.exit)
	}
	if again.maxRSS > 64*mib {
		t.Errorf("candidates from the cache peaked at %d MiB", again.maxRSS>>20)
	}
}
