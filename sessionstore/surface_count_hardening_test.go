//go:build linux

package sessionstore_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dsh-lsp/dsh-lsp/sessionstore"
)

// TestManyTinyMessagesPrepareCLI: a raw session of 1,000,000 tiny user
// messages (175 MB) keeps little text but a million events, each costing
// several times its bytes in a prepare. The surface limit counts a fixed
// cost per kept event, so the prepare is refused with the read-limit
// error within the stated bound (3 × limit + 64 MiB) instead of after
// holding ~770,000 events (616 MiB before).
func TestManyTinyMessagesPrepareCLI(t *testing.T) {
	t.Parallel()
	if testing.Short() || raceEnabled {
		t.Skip("builds and runs the binary over a 175 MB session")
	}
	const bound = 3*sessionstore.DefaultReadLimit + 64*mib
	root := filepath.Join(t.TempDir(), "sessions")
	id := "many"
	path, err := sessionstore.SessionPath(root, hostileStr("/p"), id, sessionstore.Raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString(hdrLine(id))
	for i := 0; i < 1_000_000; i++ {
		fmt.Fprintf(w, `{"type":"user/message","seq":%d,"time":1,"data":{"content":[{"type":"text","text":"m%d"}],"source":{"kind":"user"},"role":"user","id":"m%d"},"surfaceOp":"append"}`+"\n", i, i, i)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	r := runCLI(t, t.TempDir(), nil, "prepare", "--sessions", root, "see "+mentionOf(t, id))
	t.Logf("prepare: exit %d, peak RSS %d MiB (bound %d MiB), %v: %s", r.exit, r.maxRSS>>20, bound>>20, r.took.Round(time.Millisecond), firstLine(r.stdout))
	if r.exit == 0 || !strings.Contains(r.stdout, "surface") || !strings.Contains(r.stdout, "read limit") {
		t.Errorf("prepare: exit %d, want the surface read-limit error: %s", r.exit, firstLine(r.stdout))
	}
	if r.maxRSS > bound {
		t.Errorf("prepare peak RSS %d MiB, over the bound of %d MiB", r.maxRSS>>20, bound>>20)
	}
}
