//go:build linux

package lsp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/dsh-lsp/dsh-lsp/lsp"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
)

// inotifyInstances counts this process's inotify instances as the kernel
// shows them.
func inotifyInstances(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, fd := range fds {
		if link, err := os.Readlink("/proc/self/fd/" + fd.Name()); err == nil && link == "anon_inode:inotify" {
			n++
		}
	}
	return n
}

// closeRecorder is the production index, recording which roots were
// closed.
type closeRecorder struct {
	*sessionstore.Indexed
	rec *closedRoots
}

type closedRoots struct {
	mu     sync.Mutex
	closed map[string]int
}

func (c closeRecorder) Close() error {
	c.rec.mu.Lock()
	c.rec.closed[c.Root()]++
	c.rec.mu.Unlock()
	return c.Indexed.Close()
}

// TestReplacedStoresAreClosed pushes many sessionsDir settings: each
// replaced store but the last one (kept warm for a switch back) must be
// closed once (its watcher and inotify instance released), so the
// server's inotify instances stay bounded, and the current store stays
// open until shutdown closes it. Not parallel: it
// counts the process's inotify instances.
func TestReplacedStoresAreClosed(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	base := t.TempDir()
	const pushes = 40
	for i := 0; i <= pushes; i++ {
		if err := os.MkdirAll(filepath.Join(base, fmt.Sprintf("r%d", i), "--p--"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	rec := &closedRoots{closed: map[string]int{}}
	before := inotifyInstances(t)
	s := start(t, lsp.Options{
		ResolveRoot: func(flag string) (string, error) { return flag, nil },
		OpenSource: func(root string) (lsp.Source, error) {
			x, err := sessionstore.OpenIndexed(root, sessionstore.IndexOptions{})
			if err != nil {
				return nil, err
			}
			return closeRecorder{x, rec}, nil
		},
	})
	root := func(i int) string { return filepath.Join(base, fmt.Sprintf("r%d", i)) }
	if _, err := s.Initialize(map[string]any{"sessionsDir": root(0)}); err != nil {
		t.Fatal(err)
	}
	s.Notify("initialized", map[string]any{})
	ctx := context.Background()
	for i := 1; i <= pushes; i++ {
		dsh, _ := json.Marshal(map[string]any{"sessionsDir": root(i)})
		s.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]json.RawMessage{"dsh": dsh}})
		if err := s.Call(ctx, "dsh/candidates", map[string]any{"query": ""}, nil); err != nil {
			t.Fatalf("candidates after push %d: %v", i, err)
		}
	}
	// Closes run in the background: wait for them (bounded).
	var held int
	for deadline := time.Now().Add(10 * time.Second); ; {
		held = inotifyInstances(t) - before
		if held <= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if held > 2 {
		t.Fatalf("after %d sessionsDir pushes the server holds %d inotify instances, want at most 2 (the current store's and the previous one's)", pushes, held)
	}
	rec.mu.Lock()
	for i := 0; i < pushes-1; i++ {
		if n := rec.closed[root(i)]; n != 1 {
			t.Errorf("replaced store %s closed %d times, want once", root(i), n)
		}
	}
	for _, i := range []int{pushes - 1, pushes} {
		if n := rec.closed[root(i)]; n != 0 {
			t.Errorf("store %s (current or previous) was closed %d times before shutdown", root(i), n)
		}
	}
	rec.mu.Unlock()
	if err := s.Shutdown(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); inotifyInstances(t) > before && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if held := inotifyInstances(t) - before; held > 0 {
		t.Errorf("after shutdown the server holds %d inotify instances, want none", held)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, i := range []int{pushes - 1, pushes} {
		if n := rec.closed[root(i)]; n != 1 {
			t.Errorf("store %s was closed %d times by shutdown, want once", root(i), n)
		}
	}
}
