//go:build linux

package sessionstore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
)

// inotifyUsage counts this process's inotify instances and the watches
// they hold, as the kernel reports them (/proc/self/fdinfo).
func inotifyUsage(t *testing.T) (instances, watches int) {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		link, err := os.Readlink("/proc/self/fd/" + fd.Name())
		if err != nil || link != "anon_inode:inotify" {
			continue
		}
		info, err := os.ReadFile("/proc/self/fdinfo/" + fd.Name())
		if err != nil {
			continue // closed meanwhile
		}
		instances++
		watches += strings.Count(string(info), "inotify wd:")
	}
	return instances, watches
}

// TestWatchesStayUnderTheCapAndTheRestIsPolled opens a store of more
// directories than the cap allows: the kernel must show at most the cap
// in watches, and a write in a polled directory must still be answered.
// Not parallel: it counts the process's watches.
func TestWatchesStayUnderTheCapAndTheRestIsPolled(t *testing.T) {
	const userBudget = 80 // cap 10
	defer sessionstore.SetUserWatchLimit(userBudget)()
	root := t.TempDir()
	header := func(p int, id string) string {
		return fmt.Sprintf(`{"type":"session","version":0,"id":%q,"createdAt":1,"cwd":"/p%d","delegationDepth":0}`+"\n", id, p)
	}
	for p := 0; p < 6; p++ {
		for k := 0; k < 10; k++ {
			dir := filepath.Join(root, fmt.Sprintf("--p%d--", p), fmt.Sprintf("s%d-%d", p, k))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "session.jsonl"), []byte(header(p, fmt.Sprintf("s%d-%d", p, k))), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	_, before := inotifyUsage(t)
	x := openFresh(t, root, sessionstore.IndexOptions{CacheDir: sessionstore.NoCache})
	_, after := inotifyUsage(t)
	limit := sessionstore.WatchCap(userBudget)
	if held := after - before; held > limit {
		t.Fatalf("the index holds %d inotify watches for a store of 67 directories, want at most %d (1/8 of a user budget of %d)", held, limit, userBudget)
	}
	watching, _, unwatched := x.WatchState()
	if !watching || unwatched == 0 {
		t.Fatalf("watching %v with %d directories polled, want the directories past the cap polled", watching, unwatched)
	}
	// A write to a session past the cap (polled) is seen by the next
	// answer once the last poll is older than the poll age.
	polled := x.UnwatchedSessions()
	slices.Sort(polled)
	if len(polled) == 0 {
		t.Fatal("no session directory is polled")
	}
	proj, id, _ := strings.Cut(polled[0], "/")
	f, err := os.OpenFile(filepath.Join(root, proj, id, "session.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, `{"type":"session/title","seq":0,"time":5,"data":{"title":"written while polled","messageSeqs":[],"source":{"kind":"fallback"}}}`)
	f.Close()
	x.ExpirePoll()
	titles, err := x.ReadTitles(context.Background(), []string{id})
	if err != nil {
		t.Fatal(err)
	}
	if got := titles[0].Label(); got != "written while polled" {
		t.Fatalf("after a write to the polled session %s the index gives the title %q, want the written one", polled[0], got)
	}
}

// polledListing lists x's sessions once its last poll is too old for an
// answer, and returns how many there are and whether id is among them.
func polledListing(t *testing.T, x *sessionstore.Indexed, id string) (n int, found bool) {
	t.Helper()
	x.ExpirePoll()
	hs, err := x.ListSessions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hs {
		found = found || h.ID == id
	}
	return len(hs), found
}

// watchedInodes returns the inodes this process's inotify instances watch
// (hex, as /proc/self/fdinfo shows them).
func watchedInodes(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		if link, err := os.Readlink("/proc/self/fd/" + fd.Name()); err != nil || link != "anon_inode:inotify" {
			continue
		}
		info, err := os.ReadFile("/proc/self/fdinfo/" + fd.Name())
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(info), "\n") {
			for _, f := range strings.Fields(line) {
				if strings.HasPrefix(f, "ino:") && strings.HasPrefix(line, "inotify wd:") {
					out[strings.TrimPrefix(f, "ino:")] = true
				}
			}
		}
	}
	return out
}

func inodeHex(t *testing.T, path string) string {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return strconv.FormatUint(fi.Sys().(*syscall.Stat_t).Ino, 16)
}

// agedHeader is the header line of session id of project p of
// writeAgedStore.
func agedHeader(p int, id string) []byte {
	return []byte(fmt.Sprintf(`{"type":"session","version":0,"id":%q,"createdAt":1,"cwd":"/p%d","delegationDepth":0}`+"\n", id, p))
}

// writeAgedStore writes 6 projects of 10 sessions, s<p>-<k> in --p<p>--,
// whose transcripts were last written from base on, a minute apart:
// older the earlier listed, p5's the newest.
func writeAgedStore(t *testing.T, root string, base time.Time) {
	t.Helper()
	for p := 0; p < 6; p++ {
		for k := 0; k < 10; k++ {
			id := fmt.Sprintf("s%d-%d", p, k)
			dir := filepath.Join(root, fmt.Sprintf("--p%d--", p), id)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			f := filepath.Join(dir, "session.jsonl")
			if err := os.WriteFile(f, agedHeader(p, id), 0o644); err != nil {
				t.Fatal(err)
			}
			at := base.Add(time.Duration(p*10+k) * time.Minute)
			if err := os.Chtimes(f, at, at); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestCappedWatchesGoToProjectsThenTheNewestSessions: when the cap leaves
// sessions unwatched, the watches go to the project directories (where dsh
// creates sessions; an unwatched one is stat'd on every poll), then to the
// most recently written sessions (the ones dsh is writing to), not to the
// first ones listed. The newest sessions here are in the project listed
// last.
func TestCappedWatchesGoToProjectsThenTheNewestSessions(t *testing.T) {
	const userBudget = 80 // cap 10: the root, the 6 projects, 3 sessions
	defer sessionstore.SetUserWatchLimit(userBudget)()
	root := t.TempDir()
	var want []string
	for p := range 6 {
		want = append(want, filepath.Join(root, fmt.Sprintf("--p%d--", p)))
	}
	for k := 7; k < 10; k++ {
		want = append(want, filepath.Join(root, "--p5--", fmt.Sprintf("s5-%d", k)))
	}
	writeAgedStore(t, root, time.Now().Add(-48*time.Hour))
	cache := t.TempDir()
	var x *sessionstore.Indexed
	for _, start := range []string{"first pass", "restart on the cache"} {
		before := watchedInodes(t)
		x = openFresh(t, root, sessionstore.IndexOptions{CacheDir: cache})
		after := watchedInodes(t)
		if n := len(after) - len(before); n > sessionstore.WatchCap(userBudget) {
			t.Fatalf("%s: %d watches, want at most %d", start, n, sessionstore.WatchCap(userBudget))
		}
		for _, dir := range want {
			if !after[inodeHex(t, dir)] {
				t.Errorf("%s: %s has no watch", start, dir)
			}
		}
		// Its first refresh set them up so (a first pass as it parsed the
		// newest first, a restart's scan from the cache's mtimes): no
		// watch was moved to a newer session after it (each moved one is
		// noted, to be stat'd once more).
		if n := x.Notices(); n != 0 {
			t.Errorf("%s: %d change notices after the first refresh of an unchanged store, want 0", start, n)
		}
		if start == "first pass" {
			x.Close() // writes the cache
		}
	}
	// A session created in the project listed first is listed.
	if _, _, unwatched := x.WatchState(); unwatched == 0 {
		t.Fatal("no session is polled: the cap did not bind")
	}
	dir := filepath.Join(root, "--p0--", "late")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "session.jsonl"), agedHeader(0, "late"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Its notification may land after the first answer: wait for it.
	for deadline := time.Now().Add(10 * time.Second); ; {
		n, found := polledListing(t, x, "late")
		if found && n == 61 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a session was created in a watched project the index lists %d sessions (late found: %v), want 61 with late", n, found)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestPolledDirectoryWithoutATranscript: in a project past the watch cap
// whose listing does not change, a session directory whose transcript is
// deleted, and one that never had a transcript, are seen by the polls when
// a transcript appears in them (polls do not look up every listed
// session, only those without an entry).
func TestPolledDirectoryWithoutATranscript(t *testing.T) {
	const userBudget = 80 // cap 10: the root, one project, 8 sessions
	defer sessionstore.SetUserWatchLimit(userBudget)()
	root := t.TempDir()
	base := time.Now().Add(-48 * time.Hour)

	writeAgedStore(t, root, base)
	bare := filepath.Join(root, "--p0--", "bare")
	if err := os.MkdirAll(bare, 0o755); err != nil {
		t.Fatal(err)
	}
	old := base.Add(-time.Hour)
	for _, d := range []string{bare, filepath.Join(root, "--p0--")} {
		if err := os.Chtimes(d, old, old); err != nil {
			t.Fatal(err)
		}
	}
	x := openFresh(t, root, sessionstore.IndexOptions{CacheDir: sessionstore.NoCache})
	listed := func(want int, id string, present bool) {
		t.Helper()
		// Two polls: the first after a full scan goes through every
		// session of the project, the next only through those without
		// an entry.
		for range 2 {
			if n, found := polledListing(t, x, id); n != want || found != present {
				t.Fatalf("%d sessions listed (%s listed: %v), want %d (%v)", n, id, found, want, present)
			}
		}
	}
	listed(60, "bare", false)
	transcript := filepath.Join(root, "--p0--", "s0-0", "session.jsonl")
	if err := os.Remove(transcript); err != nil {
		t.Fatal(err)
	}
	listed(59, "s0-0", false)
	if err := os.WriteFile(transcript, agedHeader(0, "s0-0"), 0o644); err != nil {
		t.Fatal(err)
	}
	listed(60, "s0-0", true)
	if err := os.WriteFile(filepath.Join(bare, "session.jsonl"), agedHeader(0, "bare"), 0o644); err != nil {
		t.Fatal(err)
	}
	listed(61, "bare", true)
}

// TestRemovedPolledDirectoryIsNoLongerPolled: a session directory past the
// watch cap that never had a transcript (no entry) is polled; once it is
// removed, the scan that finds it gone drops it from the polls.
func TestRemovedPolledDirectoryIsNoLongerPolled(t *testing.T) {
	const userBudget = 80 // cap 10: the root, the 6 projects, 3 sessions
	defer sessionstore.SetUserWatchLimit(userBudget)()
	root, bare := agedStoreWithABareDirectory(t)
	x := openFresh(t, root, sessionstore.IndexOptions{CacheDir: sessionstore.NoCache})
	polled := func() bool { return slices.Contains(x.UnwatchedSessions(), "--p0--/bare") }
	if !polled() {
		t.Fatalf("the directory without a transcript is not polled: %v", x.UnwatchedSessions())
	}
	if err := os.Remove(bare); err != nil {
		t.Fatal(err)
	}
	// Its project is watched; the notification may land after an answer.
	for deadline := time.Now().Add(10 * time.Second); polled(); {
		if time.Now().After(deadline) {
			t.Fatal("a removed session directory is still polled")
		}
		polledListing(t, x, "bare")
		time.Sleep(10 * time.Millisecond)
	}
}

// TestFirstPassReadsWritesBeforeItsWatches: a first pass without a cache
// watches a session directory only as its parse starts; what dsh writes
// between the scan and then is in the parse (it reads to the size it
// stats after the watch), for a session under the cap and one past it.
func TestFirstPassReadsWritesBeforeItsWatches(t *testing.T) {
	const userBudget = 80 // cap 10: the root, the 6 projects, 3 sessions
	defer sessionstore.SetUserWatchLimit(userBudget)()
	root := t.TempDir()
	writeAgedStore(t, root, time.Now().Add(-48*time.Hour))
	titled := map[string]string{"s5-9": "newest, watched", "s0-0": "oldest, polled"}
	var once sync.Once
	x, err := sessionstore.OpenIndexed(root, sessionstore.IndexOptions{CacheDir: sessionstore.NoCache, Progress: func(done, total int) {
		once.Do(func() { // after the scan, before the first parse
			for id, title := range titled {
				p := id[1:2]
				f, err := os.OpenFile(filepath.Join(root, "--p"+p+"--", id, "session.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					t.Error(err)
					return
				}
				fmt.Fprintf(f, `{"type":"session/title","seq":0,"time":5,"data":{"title":%q,"messageSeqs":[],"source":{"kind":"fallback"}}}`+"\n", title)
				f.Close()
			}
		})
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if err := x.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, titles, complete := x.Partial()
	if !complete {
		t.Fatal("the first pass is over but the index is not complete")
	}
	for id, want := range titled {
		if got := titles[id]; got.Title == nil || *got.Title != want {
			t.Errorf("%s: title %v (err %v) right after the first pass, want %q", id, got.Title, got.Err, want)
		}
	}
}

// TestTranscriptInADirectoryBareAtTheFirstPass: a session directory
// without a transcript has no parse to watch it in a first pass without a
// cache; it is watched after the scan, and a transcript written in it
// later is listed without a poll (nothing is polled under the cap).
func TestTranscriptInADirectoryBareAtTheFirstPass(t *testing.T) {
	root, bare := agedStoreWithABareDirectory(t)
	x := openFresh(t, root, sessionstore.IndexOptions{CacheDir: sessionstore.NoCache})
	if watching, _, unwatched := x.WatchState(); !watching || unwatched != 0 {
		t.Fatalf("watching %v, %d directories polled; want every directory watched", watching, unwatched)
	}
	if err := os.WriteFile(filepath.Join(bare, "session.jsonl"), agedHeader(0, "bare"), 0o644); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		hs, err := x.ListSessions(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(hs, func(h reference.SessionHeader) bool { return h.ID == "bare" }) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a transcript written in a directory bare at the first pass is not listed after 10 s (%d sessions listed)", len(hs))
		}
	}
}

// agedStoreWithABareDirectory writes writeAgedStore's store, written two
// days ago, and a session directory "bare" without a transcript in its
// first project; it returns the root and that directory.
func agedStoreWithABareDirectory(t *testing.T) (root, bare string) {
	t.Helper()
	root = t.TempDir()
	writeAgedStore(t, root, time.Now().Add(-48*time.Hour))
	bare = filepath.Join(root, "--p0--", "bare")
	if err := os.MkdirAll(bare, 0o755); err != nil {
		t.Fatal(err)
	}
	return root, bare
}
