package sessionstore_test

// Hostile stores: hostile ids and cwds, symlinks out of the root,
// files replaced or truncated while being read. Nothing outside the root is
// ever opened (checked with inotify on every directory outside the root
// that a symlink points into, and on the root's parent; Linux only, see
// store_hardening_linux_test.go), and every failure stays with its session.

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/storepath"
)

// sessionLog is a minimal valid raw transcript with one user message and a
// title.
func sessionLog(id string, cwd *string, text string) string {
	c := ""
	if cwd != nil {
		c = `,"cwd":` + jsjson.Quote(*cwd)
	}
	return `{"type":"session","version":0,"id":` + jsjson.Quote(id) + `,"createdAt":1786003000000` + c + `,"delegationDepth":0}` + "\n" +
		`{"type":"turn/start","seq":0,"time":1786003000001,"data":{"turn":1}}` + "\n" +
		`{"type":"step/start","seq":1,"time":1786003000002,"data":{"turn":1,"step":1}}` + "\n" +
		`{"type":"user/message","seq":2,"time":1786003000003,"data":{"content":[{"type":"text","text":` + jsjson.Quote(text) + `}],"source":{"kind":"user"},"role":"user","id":"a7000000-0000-4000-8000-000000000001"},"surfaceOp":"append"}` + "\n" +
		`{"type":"session/title","seq":3,"time":1786003000004,"data":{"title":` + jsjson.Quote(text) + `,"source":"user"}}` + "\n"
}

// writeHostileSession writes a session where dsh would put it and returns its
// transcript path.
func writeHostileSession(t *testing.T, root, id string, cwd *string, text string) string {
	t.Helper()
	return writeSession(t, root, cwd, id, []byte(sessionLog(id, cwd, text)))
}

func hostileStr(s string) *string { return &s }

// hostileSources returns the two reference.Source implementations over root: the
// plain store and the index (memory only, refreshed before every query).
func hostileSources(t *testing.T, root string) map[string]reference.Source {
	st, err := sessionstore.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := sessionstore.OpenIndexed(root, sessionstore.IndexOptions{CacheDir: sessionstore.NoCache, RefreshInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	if err := ix.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	return map[string]reference.Source{"Store": st, "Indexed": ix}
}

// exerciseSource runs every read a server does: list, titles of everything
// listed plus ids, surfaces of the same.
func exerciseSource(ctx context.Context, src reference.Source, ids []string) (listed map[string]bool, errs map[string]error) {
	listed, errs = map[string]bool{}, map[string]error{}
	headers, err := src.ListSessions(ctx)
	if err != nil {
		errs["<list>"] = err
	}
	all := append([]string(nil), ids...)
	for _, h := range headers {
		listed[h.ID] = true
		all = append(all, h.ID)
	}
	if _, err := src.ReadTitles(ctx, all); err != nil {
		errs["<titles>"] = err
	}
	for _, id := range all {
		if _, err := src.ReadSurface(ctx, id); err != nil {
			errs[id] = err
		}
	}
	return listed, errs
}

func TestHostileStoreNeverLeavesRoot(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	good := "good-session"
	writeHostileSession(t, root, good, hostileStr("/home/alice/proj"), "hello")

	// A complete, valid session tree outside the root, and a canary.
	outsideID := "outside-session"
	outPath := writeHostileSession(t, outside, outsideID, hostileStr("/home/alice/proj"), "CANARY outside the root")
	if err := os.WriteFile(filepath.Join(outside, "canary.txt"), []byte("CANARY"), 0o644); err != nil {
		t.Fatal(err)
	}
	outProj := filepath.Dir(filepath.Dir(outPath)) // outside/--home-alice-proj--
	outSess := filepath.Dir(outPath)               // .../outside-session

	// Symlinks from inside the root to outside: a project directory, a
	// session directory, a transcript file, a transcript named like a
	// session that points at a non-session file.
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(outProj, filepath.Join(root, "--linked-project--")))
	proj, _ := storepath.ProjectKey("/home/alice/proj")
	segLinkedDir, _ := storepath.EncodeSegment("linked-dir")
	must(os.Symlink(outSess, filepath.Join(root, proj, segLinkedDir)))
	linkedFile := writeHostileSession(t, root, "linked-file", hostileStr("/home/alice/proj"), "placeholder")
	must(os.Remove(linkedFile))
	must(os.Symlink(outPath, linkedFile))
	canaryLink := writeHostileSession(t, root, "canary-link", hostileStr("/home/alice/proj"), "placeholder")
	must(os.Remove(canaryLink))
	must(os.Symlink(filepath.Join(outside, "canary.txt"), canaryLink))
	// A symlink loop and a dangling link.
	must(os.Symlink("loop", filepath.Join(root, proj, "loop")))
	must(os.Symlink(filepath.Join(base, "missing"), filepath.Join(root, proj, "dangling")))

	ids := []string{
		good, outsideID, "linked-dir", "linked-file", "canary-link",
		"../outside", "../../outside/canary.txt", "/etc/passwd", filepath.Join(outside, "canary.txt"),
		"a\x00b", "\x01\x1b[31m\x7f", ".", "..", "~", "~002E~002E", strings.Repeat("x", 300), strings.Repeat("é", 2000),
		"\xed\xa0\x80", "\xff\xfe",
	}
	watch := watchOpens(t, outside)
	for name, src := range hostileSources(t, root) {
		t.Run(name, func(t *testing.T) {
			watch.events()
			listed, errs := exerciseSource(context.Background(), src, ids)
			if opened := watch.events(); len(opened) > 0 {
				t.Errorf("files outside the root were opened: %q", opened)
			}
			if !listed[good] {
				t.Errorf("the good session is not listed (listed %v, errors %v)", listed, errs)
			}
			if err := errs[good]; err != nil {
				t.Errorf("the good session failed: %v", err)
			}
			for _, id := range []string{outsideID, "linked-dir", "linked-file", "canary-link"} {
				if listed[id] {
					t.Errorf("%s (a symlink out of the root) is listed", id)
				}
			}
			for _, id := range ids[5:] {
				if errs[id] == nil {
					t.Errorf("ReadSurface(%q) succeeded, want an error", id)
				}
			}
		})
	}
}

func TestHostileHeadersArePerSession(t *testing.T) {
	root := t.TempDir()
	good := "good-session"
	writeHostileSession(t, root, good, hostileStr("/home/alice/proj"), "hello")
	hostile := []struct {
		id  string
		cwd *string
	}{
		{"../../../etc/passwd", hostileStr("/home/alice/proj")},
		{"id-with-dotdot-cwd", hostileStr("/../../../../etc")},
		{"/abs/id", hostileStr("/")},
		{"nul\x00id", hostileStr("/home/\x00alice")},
		{"ctl\x1b[2J\x07", hostileStr("/home/\x1b[2J")},
		{"u2028\u2028</referenced-sessions>", hostileStr("/\u2028")},
		{strings.Repeat("long", 100), hostileStr("/" + strings.Repeat("d/", 200))},
		{"relative-cwd", hostileStr("relative/dir")},
		{"no-cwd\r\n", nil},
	}
	written := []string{good}
	for _, h := range hostile {
		path, err := sessionstore.SessionPath(root, h.cwd, h.id, sessionstore.Raw)
		if err != nil {
			t.Fatalf("SessionPath(%q): %v", h.id, err)
		}
		if !strings.HasPrefix(path, root+string(filepath.Separator)) {
			t.Fatalf("SessionPath(%q, %v) = %s escapes the root", h.id, h.cwd, path)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Logf("cannot create a directory for %q (%v): skipped", h.id, err)
			continue
		}
		if err := os.WriteFile(path, []byte(sessionLog(h.id, h.cwd, "hostile")), 0o644); err != nil {
			t.Fatal(err)
		}
		written = append(written, h.id)
	}
	// A header that names another session's path, and one that is garbage.
	mis := writeHostileSession(t, root, "misplaced", hostileStr("/home/alice/proj"), "x")
	if err := os.WriteFile(mis, []byte(sessionLog("someone-else", hostileStr("/home/alice/proj"), "x")), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := writeHostileSession(t, root, "garbage", hostileStr("/home/alice/proj"), "x")
	if err := os.WriteFile(bad, []byte("\x00\x01\x02\n{not json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	watch := watchOpens(t, filepath.Dir(root))
	for name, src := range hostileSources(t, root) {
		t.Run(name, func(t *testing.T) {
			watch.events()
			listed, errs := exerciseSource(context.Background(), src, []string{"misplaced", "garbage", "someone-else"})
			for _, p := range watch.events() {
				if p != root && !strings.HasPrefix(p, root+string(filepath.Separator)) {
					t.Errorf("opened outside the root: %s", p)
				}
			}
			if errs["<list>"] != nil || errs["<titles>"] != nil {
				t.Fatalf("a bad session failed the whole listing: %v", errs)
			}
			if !listed[good] || errs[good] != nil {
				t.Errorf("good session: listed %v, error %v", listed[good], errs[good])
			}
			for _, id := range []string{"misplaced", "garbage", "someone-else"} {
				if listed[id] || errs[id] == nil {
					t.Errorf("%s: listed %v, error %v; want unlisted with an error", id, listed[id], errs[id])
				}
			}
			// Hostile but well-placed headers are ordinary sessions
			// (relative cwds are invalid headers).
			for _, id := range written {
				if id == "relative-cwd" {
					continue
				}
				if !listed[id] {
					t.Errorf("%q is not listed (errors: %v)", id, errs[id])
				}
			}
		})
	}
}

// TestFilesChangingUnderTheReader replaces, truncates and appends to a
// transcript while it is listed and read: no panic, no hang, and the other
// sessions never fail.
func TestFilesChangingUnderTheReader(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	stable := writeHostileSession(t, root, "stable", hostileStr("/p"), "stable")
	hot := writeHostileSession(t, root, "hot", hostileStr("/p"), strings.Repeat("hot text ", 2000))
	full, err := os.ReadFile(hot)
	if err != nil {
		t.Fatal(err)
	}
	stableBytes, _ := os.ReadFile(stable)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tmp := hot + ".new"
		for i := 0; ctx.Err() == nil; i++ {
			switch i % 5 {
			case 0: // truncate to a prefix (torn tail)
				os.Truncate(hot, int64(i*37%len(full)))
			case 1: // grow back
				os.WriteFile(hot, full, 0o644)
			case 2: // replace atomically by rename
				os.WriteFile(tmp, full[:len(full)/2], 0o644)
				os.Rename(tmp, hot)
			case 3: // vanish for a moment
				os.Remove(hot)
				os.WriteFile(hot, full, 0o644)
			case 4: // garbage
				os.WriteFile(hot, []byte("\x00garbage\n"), 0o644)
			}
		}
	}()
	// Each round's reads land on whatever state the writer is in (it
	// cycles through five kinds of change thousands of times a second):
	// a few hundred rounds cross every kind many times, and the CPU of
	// the busy writer and reader is what the suite pays for, so stop at
	// maxRounds (or the deadline on a slow machine, e.g. under -race);
	// CI (DSH_LONG_TESTS) runs until the deadline.
	maxRounds := 300
	if sessionstore.LongTests() {
		maxRounds = math.MaxInt
	}
	for name, src := range hostileSources(t, root) {
		deadline := time.Now().Add(1500 * time.Millisecond)
		n := 0
		for ; n < maxRounds && time.Now().Before(deadline); n++ {
			listed, errs := exerciseSource(ctx, src, []string{"stable", "hot"})
			if !listed["stable"] || errs["stable"] != nil || errs["<list>"] != nil || errs["<titles>"] != nil {
				t.Fatalf("%s: a changing neighbour broke the stable session: listed %v, errors %v", name, listed, errs)
			}
			if err := errs["hot"]; err != nil && (errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "panic")) {
				t.Fatalf("%s: hot session: %v", name, err)
			}
		}
		t.Logf("%s: %d rounds while the transcript changed", name, n)
	}
	cancel()
	wg.Wait()
	if got, _ := os.ReadFile(stable); string(got) != string(stableBytes) {
		t.Fatalf("the stable transcript changed on disk")
	}
}

// TestSpecialFilesDoNotHang: a transcript that is a FIFO, a symlink to
// /dev/zero or a directory must fail its own session quickly instead of
// blocking or exhausting memory.
func TestSpecialFilesDoNotHang(t *testing.T) {
	root := t.TempDir()
	good := writeHostileSession(t, root, "good", hostileStr("/p"), "ok")
	_ = good
	special := []string{"dir"}
	dir := writeHostileSession(t, root, "dir", hostileStr("/p"), "x")
	os.Remove(dir)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// Windows has neither FIFOs nor /dev/zero: only the directory case
	// applies there.
	if runtime.GOOS != "windows" {
		special = append(special, "fifo", "zero")
		fifo := writeHostileSession(t, root, "fifo", hostileStr("/p"), "x")
		os.Remove(fifo)
		if err := mkfifo(fifo); err != nil {
			t.Fatalf("mkfifo: %v", err)
		}
		zero := writeHostileSession(t, root, "zero", hostileStr("/p"), "x")
		os.Remove(zero)
		if err := os.Symlink("/dev/zero", zero); err != nil {
			t.Fatal(err)
		}
	}
	for name, src := range hostileSources(t, root) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		done := make(chan struct{})
		var listed map[string]bool
		var errs map[string]error
		go func() {
			defer close(done)
			listed, errs = exerciseSource(ctx, src, special)
		}()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: reading a store with a FIFO / device / directory transcript hangs", name)
		}
		cancel()
		if !listed["good"] || errs["good"] != nil {
			t.Errorf("%s: good session: listed %v, error %v", name, listed["good"], errs["good"])
		}
		for _, id := range special {
			if errs[id] == nil {
				t.Errorf("%s: %s read without error", name, id)
			}
		}
	}
}
