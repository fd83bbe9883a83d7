//go:build linux

package sessionstore_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/dsh-lsp/dsh-lsp/bench/workload"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/freshtest"
)

// idleStore writes n sessions under root, all last written an hour ago
// (idle, as most of a large store is), and returns it.
func idleStore(t *testing.T, root string, n int) *freshtest.Store {
	t.Helper()
	s, err := freshtest.New(root, workload.None, n, 21)
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	for _, g := range s.Sessions {
		if err := os.Chtimes(g.Path, old, old); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// openCapped opens an index over root that may watch only a few
// directories (the root, a project, a few sessions): most of the store is
// polled.
func openCapped(t *testing.T, root string) *sessionstore.Indexed {
	t.Helper()
	x := openFresh(t, root, sessionstore.WithWatchLimit(sessionstore.IndexOptions{CacheDir: sessionstore.NoCache}, 6))
	if watching, _, unwatched := x.WatchState(); !watching || len(x.UnwatchedSessions()) == 0 {
		t.Fatalf("watching %v with %d directories unwatched, want most session directories polled", watching, unwatched)
	}
	return x
}

// sessionKey is the "proj/seg" key of g's session directory.
func sessionKey(t *testing.T, root string, g *freshtest.Session) string {
	t.Helper()
	rel, err := filepath.Rel(root, filepath.Dir(g.Path))
	if err != nil {
		t.Fatal(err)
	}
	return filepath.ToSlash(rel)
}

// TestAppendToUnwatchedSessionAnsweredWithinFreshnessBound: with the
// watch cap leaving most sessions unwatched, an append to an idle
// unwatched session (its second turn: a title) is in every answer asked
// for 300 ms after it (the freshness contract), whether the background
// poller or the query itself covered it.
func TestAppendToUnwatchedSessionAnsweredWithinFreshnessBound(t *testing.T) {
	root := t.TempDir()
	s := idleStore(t, root, 24)
	x := openCapped(t, root)
	ctx := context.Background()
	unwatched := x.UnwatchedSessions()
	for round := 0; round < 3; round++ {
		g := s.Pick(func(g *freshtest.Session) bool {
			return g.Written == 1 && slices.Contains(unwatched, sessionKey(t, root, g))
		})
		if g == nil {
			t.Fatal("no unwatched session left to append to")
		}
		before := mustView(t, ctx, x)
		if err := s.AppendTurn(g); err != nil {
			t.Fatal(err)
		}
		want := mustExpected(t, ctx, root)
		if want == before {
			t.Fatalf("round %d: the append to %s changes no answer (the test cannot fail)", round, g.Spec.ID)
		}
		time.Sleep(300 * time.Millisecond)
		if got := mustView(t, ctx, x); got != want {
			t.Fatalf("round %d: 300 ms after an append to the unwatched session %s the answer is stale:\nindex:\n%s\nstore:\n%s", round, g.Spec.ID, got, want)
		}
	}
}

// TestQueryPollStatsOnlyTheUnwatchedSet: a query whose last poll is too
// old polls first, and that poll stats only what has no watch: no scan of
// the whole store, of N idle sessions at most the poll chunk of cold
// unwatched ones, and none of those through the change scan while they
// are unchanged; after an append, the changed one.
func TestQueryPollStatsOnlyTheUnwatchedSet(t *testing.T) {
	const n, chunk = 40, 4
	defer sessionstore.SetPollChunk(chunk)()
	root := t.TempDir()
	s := idleStore(t, root, n)
	x := openCapped(t, root)
	ctx := context.Background()
	for round := 0; round < 3; round++ {
		scans0, stats0, checks0 := x.ScanCounts()
		x.ExpirePoll()
		if _, err := x.ListSessions(ctx); err != nil {
			t.Fatal(err)
		}
		scans, stats, checks := x.ScanCounts()
		// The background poller may poll in the same window: at most one
		// poll's checks each.
		if scans != scans0 || stats != stats0 || checks-checks0 > 2*chunk || checks == checks0 {
			t.Fatalf("round %d: a query's poll ran %d whole-store scans, checked %d cold sessions of %d idle ones and scanned %d, want no whole scan, 1 to %d checked (the unwatched chunk) and none scanned",
				round, scans-scans0, checks-checks0, n, stats-stats0, 2*chunk)
		}
	}
	// An append to an unwatched session, with its old mtime kept (a
	// coarse clock): the check sees the size change and scans it.
	unwatched := x.UnwatchedSessions()
	g := s.Pick(func(g *freshtest.Session) bool { return slices.Contains(unwatched, sessionKey(t, root, g)) })
	if g == nil {
		t.Fatal("no unwatched session")
	}
	_, stats0, _ := x.ScanCounts()
	if err := s.AppendTurn(g); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(g.Path, old, old)
	want := mustExpected(t, ctx, root)
	for polls := 0; mustView(t, ctx, x) != want; polls++ {
		if polls > n/chunk+1 {
			t.Fatalf("%d polls of %d cold sessions each did not see the append to %s", polls, chunk, g.Spec.ID)
		}
		x.ExpirePoll()
	}
	if _, stats, _ := x.ScanCounts(); stats == stats0 {
		t.Fatal("the append was seen without its session being scanned")
	}
}

// TestFullScanLeavesIdleUnwatchedSessionsToTheirTurn: a full scan stats
// every session, so it does not queue the idle unwatched ones for the next
// poll again (at 100,000 sessions, 78,000 map lookups every 30 s).
func TestFullScanLeavesIdleUnwatchedSessionsToTheirTurn(t *testing.T) {
	root := t.TempDir()
	idleStore(t, root, 40)
	x := openCapped(t, root)
	ctx := context.Background()
	x.ExpirePoll()
	if _, err := x.ListSessions(ctx); err != nil { // a poll: the first marks go
		t.Fatal(err)
	}
	if n, kept := x.HotPolled(); n != 0 || kept {
		t.Fatalf("after a poll of an idle store, %d unwatched sessions are queued out of turn (map kept: %t), want none and no map", n, kept)
	}
	if err := x.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if n, _ := x.HotPolled(); n != 0 {
		t.Fatalf("after a full scan of an idle store, %d unwatched sessions are queued out of turn, want 0", n)
	}
}

// TestQueryDoesNotWaitForPollWhilePollerIsLive: while the background
// poller's last poll is within its interval, an answer is served without
// waiting for a poll (here, one that cannot run: refreshes are held).
func TestQueryDoesNotWaitForPollWhilePollerIsLive(t *testing.T) {
	root := t.TempDir()
	idleStore(t, root, 12)
	x := openCapped(t, root)
	for _, age := range []time.Duration{0, sessionstore.PollEvery * 3 / 4, sessionstore.PollEvery} {
		x.AgePoll(age)
		release := x.HoldRefreshes()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := x.ListSessions(ctx)
		cancel()
		release()
		if err != nil {
			t.Fatalf("with the last poll %v old, the answer waited for a poll: %v", age, err)
		}
	}
	// A lagging poller: the answer polls (and waits) first.
	x.AgePoll(time.Second)
	release := x.HoldRefreshes()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	_, err := x.ListSessions(ctx)
	cancel()
	release()
	if err == nil {
		t.Fatal("with the last poll 1 s old, the answer did not wait for a poll")
	}
}

// TestRemovalsLeaveTheAnswers: a project directory removed with its
// sessions, and a transcript removed from a session directory that stays,
// leave every answer asked for 300 ms later, whether the store is watched
// or mostly polled.
func TestRemovalsLeaveTheAnswers(t *testing.T) {
	modes := []struct {
		name string
		opts sessionstore.IndexOptions
	}{
		{"watched", sessionstore.IndexOptions{CacheDir: sessionstore.NoCache}},
		{"watch limit reached", sessionstore.WithWatchLimit(sessionstore.IndexOptions{CacheDir: sessionstore.NoCache}, 6)},
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			root := t.TempDir()
			s := idleStore(t, root, 16)
			x := openFresh(t, root, m.opts)
			ctx := context.Background()
			first := s.Sessions[0]
			project := filepath.Dir(filepath.Dir(first.Path))
			other := s.Pick(func(g *freshtest.Session) bool { return filepath.Dir(filepath.Dir(g.Path)) != project })
			if other == nil {
				t.Fatal("the store has one project")
			}
			for _, step := range []struct {
				name string
				do   func() error
			}{
				{"project removed", func() error { return os.RemoveAll(project) }},
				{"transcript removed", func() error { return os.Remove(other.Path) }},
			} {
				before := mustView(t, ctx, x)
				if err := step.do(); err != nil {
					t.Fatal(err)
				}
				want := mustExpected(t, ctx, root)
				if want == before {
					t.Fatalf("%s: no answer changes (the test cannot fail)", step.name)
				}
				time.Sleep(300 * time.Millisecond)
				if got := mustView(t, ctx, x); got != want {
					t.Fatalf("%s: 300 ms later the answer is stale:\nindex:\n%s\nstore:\n%s", step.name, got, want)
				}
			}
		})
	}
}

// TestIdleUnwatchedSessionsWaitTheirTurn: after a restart on the
// cache, the first refresh's scan marks the unwatched sessions; the idle
// ones (indexed and cold) wait for their turn in the rotation rather than
// fill the out-of-turn list, whose next poll would only drop them (78,000
// map entries at 100,000 sessions). So too after a first pass without a
// cache, whose parses mark them just before reading them (at 100,000
// sessions its first poll stat'd 76,000 again).
func TestIdleUnwatchedSessionsWaitTheirTurn(t *testing.T) {
	for _, restart := range []bool{true, false} {
		root := t.TempDir()
		idleStore(t, root, 40)
		opts := sessionstore.WithWatchLimit(sessionstore.IndexOptions{CacheDir: t.TempDir()}, 6)
		if restart {
			sessionstore.OpenWaited(t, root, opts).Close() // writes the cache
		} else {
			opts.CacheDir = sessionstore.NoCache
		}
		x := openFresh(t, root, opts)
		if err := x.Refresh(context.Background()); err != nil {
			t.Fatal(err)
		}
		if len(x.UnwatchedSessions()) == 0 {
			t.Fatal("no session is unwatched: the cap did not bind")
		}
		if n, _ := x.HotPolled(); n != 0 {
			t.Errorf("restart %v: on an idle store, %d unwatched sessions are queued out of turn, want 0", restart, n)
		}
	}
}

// TestPollStatsABoundedHotSet: when every unwatched session is hot at once
// (a store whose transcripts were all just touched, as a copy or a restore
// leaves them), a poll stats at most pollHotMax of them out of turn, not
// all: every query would otherwise wait for all of them (1.7 s at 100,000
// sessions). A write to one of the others is still seen, in its turn. So
// too when nothing is watched (NoWatch: each poll is a quick scan).
func TestPollStatsABoundedHotSet(t *testing.T) {
	for _, mode := range []string{"watch cap", "no watch"} {
		t.Run(mode, func(t *testing.T) { testPollStatsABoundedHotSet(t, mode == "no watch") })
	}
}

func testPollStatsABoundedHotSet(t *testing.T, noWatch bool) {
	const n, chunk, hotMax = 40, 4, 3
	defer sessionstore.SetPollChunk(chunk)()
	defer sessionstore.SetPollHotMax(hotMax)()
	root := t.TempDir()
	s := idleStore(t, root, n)
	// Directories as old as the transcripts: a project listed within the
	// last seconds is listed, and its sessions stat'd, by every poll.
	old := time.Now().Add(-time.Hour)
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			err = os.Chtimes(path, old, old)
		}
		return err
	})
	var x *sessionstore.Indexed
	if noWatch {
		x = openFresh(t, root, sessionstore.IndexOptions{CacheDir: sessionstore.NoCache, NoWatch: true})
	} else {
		x = openCapped(t, root)
	}
	ctx := context.Background()
	now := time.Now()
	for _, g := range s.Sessions {
		if err := os.Chtimes(g.Path, now, now); err != nil {
			t.Fatal(err)
		}
	}
	if err := x.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	unwatched := x.UnwatchedSessions()
	if noWatch {
		unwatched = nil
		for _, g := range s.Sessions {
			unwatched = append(unwatched, sessionKey(t, root, g))
		}
	} else if hot, _ := x.HotPolled(); len(unwatched) < n/2 || hot != hotMax {
		t.Fatalf("%d of %d unwatched sessions queued out of turn after touching every transcript, want %d (the bound)", hot, len(unwatched), hotMax)
	}
	for round := 0; round < 3; round++ {
		_, stats0, _ := x.ScanCounts()
		x.ExpirePoll()
		if _, err := x.ListSessions(ctx); err != nil {
			t.Fatal(err)
		}
		// The background poller may poll in the same window: at most one
		// poll's stats each.
		if _, stats, _ := x.ScanCounts(); stats-stats0 > 2*hotMax {
			t.Fatalf("round %d: a query's poll stat'd %d sessions out of turn of %d hot, want at most %d", round, stats-stats0, len(unwatched), 2*hotMax)
		}
	}
	// An append to a hot unwatched session, its mtime kept (a coarse
	// clock): seen within a rotation of the unwatched sessions.
	g := s.Pick(func(g *freshtest.Session) bool { return slices.Contains(unwatched, sessionKey(t, root, g)) })
	if err := s.AppendTurn(g); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(g.Path, now, now)
	want := mustExpected(t, ctx, root)
	for polls := 0; mustView(t, ctx, x) != want; polls++ {
		if polls > n/chunk+1 {
			t.Fatalf("%d polls did not see the append to %s", polls, g.Spec.ID)
		}
		x.ExpirePoll()
	}
}
