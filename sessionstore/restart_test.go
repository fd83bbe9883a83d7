package sessionstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/dsh-lsp/dsh-lsp/bench/workload"
	"github.com/dsh-lsp/dsh-lsp/reference"
)

// writeTitled writes a raw session in cwd /w with one title event.
func writeTitled(t *testing.T, root, id string, createdAt int64, title string) string {
	t.Helper()
	cwd := "/w"
	path, err := SessionPath(root, &cwd, id, Raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	data := fmt.Sprintf(`{"type":"session","version":0,"id":%q,"createdAt":%d,"delegationDepth":0,"cwd":"/w"}`+"\n", id, createdAt) + titleLine(0, title)
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func titleLine(seq int, title string) string {
	return fmt.Sprintf(`{"type":"session/title","seq":%d,"time":%d,"data":{"title":%q,"messageSeqs":[],"source":{"kind":"user"}}}`+"\n", seq, 1700000000000+seq, title)
}

// ageDirs sets the mtime of every directory under root an hour back, as a
// store nobody wrote to lately.
func ageDirs(t *testing.T, root string) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			err = os.Chtimes(path, old, old)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// candidatesText renders ListCandidates(query) over src.
func candidatesText(ctx context.Context, src reference.Source, query string) (string, error) {
	svc, err := reference.NewService(src, reference.DefaultConfig())
	if err != nil {
		return "", err
	}
	cs, err := svc.ListCandidates(ctx, reference.Target{}, query, 50)
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&b, "%s=%s ", c.SessionID, c.Label)
	}
	return b.String(), err
}

// TestRestartAnswersCompletionBeforeItsFirstRefresh restarts on the
// persisted index with the first refresh held back: an unchanged store is
// answered at once, and so is one whose transcripts were only touched or
// replaced by copies (their bytes are checked, and kept, not parsed); a
// served session appended to or rewritten in place, or a session added,
// while the server was down makes the answer wait for the refresh and
// show the change.
func TestRestartAnswersCompletionBeforeItsFirstRefresh(t *testing.T) {
	changes := []string{"none", "transcripts touched", "transcripts replaced by copies",
		"served session appended", "served session rewritten, same size", "session added",
		"transcripts touched, larger than an early answer reads"}
	for _, change := range changes {
		t.Run(change, func(t *testing.T) {
			root, cacheDir := t.TempDir(), t.TempDir()
			paths := []string{writeTitled(t, root, "s1", 3, "alpha")}
			appended := writeTitled(t, root, "s2", 2, "beta")
			paths = append(paths, appended, writeTitled(t, root, "s3", 1, "gamma"))
			ageDirs(t, root)
			first := openIndexed(t, root, cacheDir)
			want, err := candidatesText(context.Background(), first, "")
			if err != nil {
				t.Fatal(err)
			}
			first.Close()
			switch change {
			case "served session appended":
				f, err := os.OpenFile(appended, os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				f.WriteString(titleLine(1, "delta"))
				f.Close()
				want = strings.Replace(want, "s2=beta", "s2=delta", 1)
			case "served session rewritten, same size":
				rewriteKeepingSize(t, appended, "beta", "bEta")
				want = strings.Replace(want, "s2=beta", "s2=bEta", 1)
			case "transcripts touched", "transcripts touched, larger than an early answer reads":
				if strings.HasSuffix(change, "reads") {
					defer func(n int64) { earlySumBytes = n }(earlySumBytes)
					earlySumBytes = 1
				}
				for _, p := range paths {
					if err := os.Chtimes(p, time.Now(), time.Now().Add(time.Minute)); err != nil {
						t.Fatal(err)
					}
				}
			case "transcripts replaced by copies":
				for _, p := range paths {
					replaceByCopy(t, p)
				}
			case "session added":
				writeTitled(t, root, "s4", 4, "epsilon")
				want = "s4=epsilon " + want
			}

			gate := make(chan struct{})
			x, err := OpenIndexed(root, IndexOptions{CacheDir: cacheDir, RefreshInterval: time.Hour, firstRefreshGate: gate})
			if err != nil {
				t.Fatal(err)
			}
			defer x.Close()
			defer func() {
				select {
				case <-gate:
				default:
					close(gate)
				}
			}()
			type answer struct {
				text string
				err  error
			}
			answered := make(chan answer, 1)
			go func() {
				text, err := candidatesText(context.Background(), x, "")
				answered <- answer{text, err}
			}()
			if early := change == "none" || change == "transcripts touched" || change == "transcripts replaced by copies"; early {
				var a answer
				select {
				case a = <-answered:
				case <-time.After(20 * time.Second):
					t.Fatal("no answer while the first refresh was held back")
				}
				if a.err != nil || a.text != want {
					t.Fatalf("answered %q (%v), want %q", a.text, a.err, want)
				}
				if !x.unverified() {
					t.Fatal("the first refresh ran although it was held back")
				}
				// A query cancelled while its sessions are checked says
				// nothing about them: the early path stays open.
				cancelled, cancel := context.WithCancel(context.Background())
				cancel()
				cat, err := x.Catalog(context.Background())
				if err != nil || cat.Verify == nil {
					t.Fatalf("no catalog to verify (%v)", err)
				}
				if cat.Verify(cancelled, []int32{0}) || !x.servedFirst() {
					t.Fatal("a cancelled check closed the early path (or passed)")
				}
				// The first refresh keeps every entry: none is parsed.
				close(gate)
				if err := x.Wait(context.Background()); err != nil {
					t.Fatal(err)
				}
				waitFor(t, "the first refresh", func() bool { return !x.unverified() })
				wantKept := int64(3)
				if change == "none" {
					wantKept = 0
				}
				if st := x.Stats(); st.Parsed != 0 || st.SameBytes != wantKept {
					t.Fatalf("first refresh: %d parsed, %d kept by their bytes; want 0 and %d", st.Parsed, st.SameBytes, wantKept)
				}
				if text, err := candidatesText(context.Background(), x, ""); err != nil || text != want {
					t.Fatalf("after the first refresh: %q (%v), want %q", text, err, want)
				}
				return
			}
			// The early path must close (the shape or a served session
			// differs) and the answer wait for the held refresh.
			for deadline := time.Now().Add(10 * time.Second); x.servedFirst(); {
				if time.Now().After(deadline) {
					t.Fatal("the early path stayed open")
				}
				time.Sleep(time.Millisecond)
			}
			select {
			case a := <-answered:
				t.Fatalf("answered %q before the first refresh", a.text)
			default:
			}
			close(gate)
			if a := <-answered; a.err != nil || a.text != want {
				t.Fatalf("answered %q (%v), want %q", a.text, a.err, want)
			}
		})
	}
}

// rewriteKeepingSize replaces the first from in path's bytes by to, of
// the same length, in place (same inode), with a new mtime.
func rewriteKeepingSize(t *testing.T, path, from, to string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(data, []byte(from))
	if i < 0 || len(from) != len(to) {
		t.Fatalf("%s: no %q to replace by %q", path, from, to)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte(to), int64(i)); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, time.Now(), time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
}

// replaceByCopy replaces path by a copy of its bytes: a new inode and
// mtime, as a restore or a copy of the store leaves it.
func replaceByCopy(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tmp := path + ".copy"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(tmp, time.Now(), time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// TestClosedBeforeItsFirstRefreshLeavesTheCache: a one-shot run that
// answers from the cache and exits stops the cache's check and writes
// nothing back (what that check found so far is not all of the store).
func TestClosedBeforeItsFirstRefreshLeavesTheCache(t *testing.T) {
	root, cacheDir := t.TempDir(), t.TempDir()
	writeTitled(t, root, "s1", 1, "alpha")
	ageDirs(t, root)
	openIndexed(t, root, cacheDir).Close()
	gate := make(chan struct{})
	x, err := OpenIndexed(root, IndexOptions{CacheDir: cacheDir, RefreshInterval: time.Hour, firstRefreshGate: gate})
	if err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(x.cachePath)
	if err != nil {
		t.Fatal(err)
	}
	if text, err := candidatesText(context.Background(), x, ""); err != nil || text != "s1=alpha " {
		t.Fatalf("answered %q (%v)", text, err)
	}
	x.mu.Lock()
	x.dirty = true // as if the check had found changes before it stopped
	x.mu.Unlock()
	x.Close()
	after, err := os.ReadFile(x.cachePath)
	if err != nil {
		t.Fatal(err)
	}
	if string(after) != string(before) {
		t.Fatal("the cache was rewritten by an index closed before its first refresh")
	}
}

// TestHeaderLineKeptOnceWhenCompact: a compact header line (as dsh writes
// it) is kept as the listing form only, and read back byte for byte; any
// other line is kept as it is.
func TestHeaderLineKeptOnceWhenCompact(t *testing.T) {
	for _, line := range []string{
		`{"type":"session","version":0,"id":"a","createdAt":1,"delegationDepth":0}`,
		`{"version":0,"type":"session","id":"a","createdAt":1,"delegationDepth":0}`,
		`{"type":"session", "version":0,"id":"a","createdAt":1,"delegationDepth":0}`,
	} {
		e := &entry{ListedRaw: []byte(`{"version":0,"id":"a","createdAt":1,"delegationDepth":0}`)}
		e.setHeaderLine([]byte(line))
		if got := string(e.headerLine()); got != line {
			t.Errorf("%s: read back as %s", line, got)
		}
		if compact := line[1] == '"' && line[2] == 't' && !strings.Contains(line, ", "); e.HeaderFromListed != compact {
			t.Errorf("%s: kept once %v, want %v", line, e.HeaderFromListed, compact)
		}
	}
}

// TestShapeNotRecordedFromFreshDirectories: a directory whose mtime is
// younger than dirTrustAge when listed may gain an entry without its
// mtime moving, so no shape is recorded from it.
func TestShapeNotRecordedFromFreshDirectories(t *testing.T) {
	old, fresh := time.Now().Add(-time.Hour).UnixNano(), time.Now().UnixNano()
	for _, tc := range []struct {
		root, project int64
		want          bool
	}{{old, old, true}, {fresh, old, false}, {old, fresh, false}} {
		ix := &Indexed{rootMtime: tc.root}
		ix.setProjects(map[string]projectScan{"p": {mtime: tc.project}})
		if got := ix.scannedShape.projects != nil; got != tc.want {
			t.Errorf("root %d project %d: shape recorded %v, want %v", tc.root, tc.project, got, tc.want)
		}
	}
}

// TestRestartCatalogTakesTitlesFromListedEntries: the cache flags the
// listed entries a read of their own id loads, and the catalog of the
// loaded listing takes their titles without the id lookup; it equals
// ListSessions + ReadTitles, also for an id listed from two directories.
func TestRestartCatalogTakesTitlesFromListedEntries(t *testing.T) {
	root, cacheDir := t.TempDir(), t.TempDir()
	writeTitled(t, root, "s1", 3, "alpha")
	writeTitled(t, root, "s2", 2, "beta")
	// The same id in a second working directory: both directories hold
	// the segment, so a read by id finds no single transcript.
	cwd := "/v"
	path, err := SessionPath(root, &cwd, "s1", Raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	data := `{"type":"session","version":0,"id":"s1","createdAt":1,"delegationDepth":0,"cwd":"/v"}` + "\n" + titleLine(0, "other")
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	ageDirs(t, root)
	first := openIndexed(t, root, cacheDir)
	want := sameCatalog(t, first)
	first.Close()

	x := openIndexed(t, root, cacheDir)
	x.mu.RLock()
	flagged, lookedUp := 0, 0
	for _, e := range x.listed {
		if e.readByListedID {
			flagged++
		}
		if x.titleEntry(e.ListedID) == e {
			lookedUp++
		}
	}
	loaded := x.gen == x.cachedGen
	x.mu.RUnlock()
	if !loaded || flagged != lookedUp || flagged != 1 {
		t.Fatalf("loaded listing %v: %d listed entries flagged, %d answer their own id (want 1: s2)", loaded, flagged, lookedUp)
	}
	if got := sameCatalog(t, x); !reflect.DeepEqual(got.Titles, want.Titles) {
		t.Fatalf("restarted catalog titles %v, want %v", got.Titles, want.Titles)
	}
}

// TestRestartedListingsShareTheEntriesStrings: after a restart on the
// cache, a scan's project listings keep the entries' segment strings
// (which lie in the loaded cache), not copies of their own.
func TestRestartedListingsShareTheEntriesStrings(t *testing.T) {
	root, cache := t.TempDir(), t.TempDir()
	genStore(t, root, workload.None, 6, 3, 7)
	openIndexed(t, root, cache).Close()
	x := openIndexed(t, root, cache)
	if err := x.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	x.refreshMu.Lock()
	defer x.refreshMu.Unlock()
	shared := 0
	for proj, ps := range x.projects {
		for _, seg := range ps.segs {
			e := x.entryMap()[dirKey{proj, seg}]
			if e == nil {
				continue
			}
			if unsafe.StringData(seg) != unsafe.StringData(e.Seg) {
				t.Errorf("%s/%s: the listing keeps its own copy of the segment", proj, seg)
			}
			shared++
		}
	}
	if shared != 6 {
		t.Errorf("%d listed segments with entries, want 6", shared)
	}
}

// TestAPassIsReadyBeforeItsCacheIsWritten: what waits for the first pass
// (a complete answer, the end of a server's progress) does not wait for
// the cache file to be written; Close does, and a restart then loads it.
func TestAPassIsReadyBeforeItsCacheIsWritten(t *testing.T) {
	root, cacheDir := t.TempDir(), t.TempDir()
	writeTitled(t, root, "s1", 1, "alpha")
	writeTitled(t, root, "s2", 2, "beta")
	gate := make(chan struct{})
	x, err := OpenIndexed(root, IndexOptions{CacheDir: cacheDir, RefreshInterval: time.Hour, persistGate: gate})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := x.Wait(ctx); err != nil {
		close(gate)
		x.Close()
		t.Fatalf("the first pass waited for its cache file: %v", err)
	}
	want, err := candidatesText(ctx, x, "")
	if err != nil || want != "s2=beta s1=alpha " {
		t.Errorf("answer after the pass: %q, %v", want, err)
	}
	if _, err := os.Stat(x.cachePath); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the cache file was written through a closed gate: %v", err)
	}
	close(gate)
	x.Close()
	y := OpenWaited(t, root, IndexOptions{CacheDir: cacheDir, RefreshInterval: time.Hour})
	if !y.fresh.fromCache {
		t.Error("the restart did not load the cache Close wrote")
	}
	if got, err := candidatesText(ctx, y, ""); err != nil || got != want {
		t.Errorf("after the restart: %q, %v; want %q", got, err, want)
	}
}

// TestAFirstScanStatsInOneBatch: a first scan, with no entries yet, stats
// its session directories in batches of scanBatchSize (in parallel), not
// one at a time.
func TestAFirstScanStatsInOneBatch(t *testing.T) {
	root := t.TempDir()
	for i := range 300 {
		writeTitled(t, root, fmt.Sprintf("s%03d", i), int64(i+1), "t")
	}
	x := OpenWaited(t, root, IndexOptions{CacheDir: NoCache, NoWatch: true, RefreshInterval: time.Hour})
	if _, stats, _ := x.ScanCounts(); stats != 300 {
		t.Errorf("%d directories stat'd, want 300", stats)
	}
	if n := x.StatBatches(); n != 1 {
		t.Errorf("the first scan stat'd in %d batches, want 1", n)
	}
}

// TestRestartScansTheStoreOnce: after a restart on the cache, the first
// refresh's full scan is the only one; the poll loop, ticking while that
// refresh waits, does not decide a second full scan of its own (a second
// of stats and 100 MB of garbage at 100,000 sessions, as the user starts
// typing).
func TestRestartScansTheStoreOnce(t *testing.T) {
	root, cacheDir := t.TempDir(), t.TempDir()
	for i := range 12 {
		writeTitled(t, root, fmt.Sprintf("s%02d", i), int64(i), "title")
	}
	ageDirs(t, root)
	opts := IndexOptions{CacheDir: cacheDir, watchLimit: 4}
	first, err := OpenIndexed(root, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	first.Close() // writes the cache
	gate := make(chan struct{})
	opts.firstRefreshGate = gate
	x, err := OpenIndexed(root, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if !x.Complete() || !x.unverified() {
		t.Fatal("the restart did not load the cache")
	}
	// What the first refresh's scan finds as it goes: a session it could
	// not watch (the cap), which the poll loop is to poll.
	x.refreshMu.Lock()
	for k := range x.entryMap() {
		x.markUnwatched(k.proj+"/"+k.seg, false, true)
		break
	}
	x.refreshMu.Unlock()
	ticks := x.pollTicks.Load()
	waitFor(t, "two poll ticks before the first refresh", func() bool { return x.pollTicks.Load() >= ticks+2 })
	close(gate)
	if err := x.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	// A poll after the check: the loop went past its decision since.
	polled := x.coldChecks.Load()
	waitFor(t, "a poll after the first refresh", func() bool { return x.coldChecks.Load() > polled })
	// Where nothing is watched (Windows), each poll is a quick scan of
	// the whole store: count the full ones.
	if n := x.fullScans.Load(); n != 1 {
		t.Fatalf("%d full scans of the store after a restart, want 1 (the first refresh's)", n)
	}
}

// waitFor polls cond until it holds, failing the test after a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within a minute", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestFirstPassCountsAsAScanWhenItEnds checks that a first pass without a
// cache dates the scan it stands for from its end, not from its scan's
// start: every transcript was read after that, so a pass longer than the
// full-scan interval must not make the next poll scan the whole store
// again. A restart's pass re-reads only what changed, so it stays dated
// from its scan.
func TestFirstPassCountsAsAScanWhenItEnds(t *testing.T) {
	root, cacheDir := t.TempDir(), t.TempDir()
	for i := range 6 {
		writeTitled(t, root, fmt.Sprintf("s%02d", i), int64(i), "title")
	}
	// open indexes root with cacheDir and returns the index and when its
	// first pass read its last transcript.
	open := func(cacheDir string) (*Indexed, time.Time) {
		var mu sync.Mutex
		var lastRead time.Time
		x, err := OpenIndexed(root, IndexOptions{CacheDir: cacheDir, Progress: func(done, total int) {
			if done == total {
				mu.Lock()
				lastRead = time.Now()
				mu.Unlock()
			}
		}})
		if err != nil {
			t.Fatal(err)
		}
		if err := x.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		if lastRead.IsZero() {
			t.Fatal("no progress report of the pass's end")
		}
		return x, lastRead
	}
	x, lastRead := open(cacheDir)
	x.mu.RLock()
	if x.lastScan.Before(lastRead) || x.lastFull.Before(lastRead) {
		t.Errorf("first pass dated %v (full %v), before its last read at %v", x.lastScan, x.lastFull, lastRead)
	}
	x.mu.RUnlock()
	x.Close() // writes the cache
	writeTitled(t, root, "s00", 0, "retitled")
	x, lastRead = open(cacheDir)
	defer x.Close()
	x.mu.RLock()
	defer x.mu.RUnlock()
	if !x.lastFull.Before(lastRead) {
		t.Errorf("restart's pass dated %v, not before its last read at %v: the sessions it did not read are as of its scan", x.lastFull, lastRead)
	}
}
