package sessionstore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/dsh-lsp/dsh-lsp/bench/workload"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/freshtest"
)

func openFresh(t *testing.T, root string, opts sessionstore.IndexOptions) *sessionstore.Indexed {
	t.Helper()
	return sessionstore.OpenWaited(t, root, opts)
}

func mustView(t *testing.T, ctx context.Context, x *sessionstore.Indexed) string {
	t.Helper()
	v, err := freshtest.View(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func mustExpected(t *testing.T, ctx context.Context, root string) string {
	t.Helper()
	v, err := freshtest.Expected(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// awaitFresh waits (on the condition, bounded) until x answers like a
// full re-read and returns how long after since the first such answer
// was asked for. The re-read runs alongside the queries, so that its own
// time does not count.
func awaitFresh(t *testing.T, x *sessionstore.Indexed, root, step string, since time.Time) time.Duration {
	t.Helper()
	ctx := context.Background()
	wantc := make(chan string, 1)
	go func() {
		v, err := freshtest.Expected(ctx, root)
		if err != nil {
			v = "re-read failed: " + err.Error()
		}
		wantc <- v
	}()
	type answer struct {
		at   time.Duration
		view string
	}
	var answers []answer
	want := ""
	deadline := time.Now().Add(20 * time.Second)
	for {
		at := time.Since(since)
		answers = append(answers, answer{at, mustView(t, ctx, x)})
		if want == "" {
			select {
			case want = <-wantc:
			default:
			}
		}
		if want != "" {
			for _, a := range answers {
				if a.view == want {
					return a.at
				}
			}
			answers = answers[:0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the index never answered like a full re-read:\nindex:\n%s\nstore:\n%s", step, mustView(t, ctx, x), want)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestFreshAnswersAfterWrites runs every write of freshtest.Steps against
// an index watching the store, one polling it (no notifications) and one
// whose watches ran out after the root and a project, in both encodings:
// the index must come to answer exactly like a full re-read.
func TestFreshAnswersAfterWrites(t *testing.T) {
	t.Parallel()
	modes := []struct {
		name string
		opts sessionstore.IndexOptions
	}{
		{"watched", sessionstore.IndexOptions{CacheDir: sessionstore.NoCache}},
		{"polled", sessionstore.IndexOptions{CacheDir: sessionstore.NoCache, NoWatch: true}},
		{"watch limit reached", sessionstore.WithWatchLimit(sessionstore.IndexOptions{CacheDir: sessionstore.NoCache}, 3)},
	}
	for _, comp := range []workload.Compression{workload.None, workload.Zstd} {
		for _, m := range modes {
			t.Run(string(comp)+"/"+m.name, func(t *testing.T) {
				t.Parallel()
				if runtime.GOOS == "windows" && !m.opts.NoWatch {
					t.Skip("Windows polls the store (internal/watchbudget/watchbudget_other.go); the polled mode runs")
				}
				root := t.TempDir()
				s, err := freshtest.New(root, comp, 8, 11)
				if err != nil {
					t.Fatal(err)
				}
				x := openFresh(t, root, m.opts)
				watching, _, unwatched := x.WatchState()
				switch m.name {
				case "watched":
					if !watching || unwatched != 0 {
						t.Fatalf("watching %v with %d directories unwatched, want all watched", watching, unwatched)
					}
				case "polled":
					if watching {
						t.Fatal("NoWatch index is watching")
					}
				default:
					if !watching || unwatched == 0 {
						t.Fatalf("watching %v with %d directories unwatched, want some polled", watching, unwatched)
					}
				}
				ctx := context.Background()
				if got, want := mustView(t, ctx, x), mustExpected(t, ctx, root); got != want {
					t.Fatalf("first pass:\nindex:\n%s\nstore:\n%s", got, want)
				}
				for _, step := range freshtest.Steps() {
					start := time.Now()
					if err := step.Do(s); err != nil {
						t.Fatalf("%s: %v", step.Name, err)
					}
					d := awaitFresh(t, x, root, step.Name, start)
					t.Logf("%s: fresh after %v", step.Name, d.Round(time.Millisecond/10))
				}
			})
		}
	}
}

// TestFreshNoticeServedAtOnce checks that an answer given after a
// notification never comes from the entries it made stale: the query
// itself refreshes what was noticed (no background refresh is waited for).
// The index here has no watcher and does not poll, so only the notice
// can make it see the write: first it must still answer the old state
// (or the test could not fail), then, once noticed, the new one.
func TestFreshNoticeServedAtOnce(t *testing.T) {
	for _, comp := range []workload.Compression{workload.None, workload.Zstd} {
		t.Run(string(comp), func(t *testing.T) {
			root := t.TempDir()
			s, err := freshtest.New(root, comp, 6, 12)
			if err != nil {
				t.Fatal(err)
			}
			x := openFresh(t, root, sessionstore.IndexOptions{CacheDir: sessionstore.NoCache, NoWatch: true, RefreshInterval: time.Hour})
			x.StopPolling()
			ctx := context.Background()
			for _, step := range freshtest.Steps() {
				before := mustView(t, ctx, x)
				if err := step.Do(s); err != nil {
					t.Fatalf("%s: %v", step.Name, err)
				}
				want := mustExpected(t, ctx, root)
				if want == before {
					continue // nothing an answer shows changed
				}
				if got := mustView(t, ctx, x); got != before {
					t.Fatalf("%s: the index changed without a notice (the test cannot tell notices apart)", step.Name)
				}
				x.NoteEverything()
				if got := mustView(t, ctx, x); got != want {
					t.Fatalf("%s: first answer after the notice is stale:\nindex:\n%s\nstore:\n%s", step.Name, got, want)
				}
			}
		})
	}
}

// TestFreshPollCoversColdSessions checks the polling fallback's bound: a
// poll stats at most pollChunk cold sessions, and consecutive polls rotate
// through all of them, so an append to a session whose mtime stayed old
// (a resumed session on a coarse-clock file system) is seen within
// sessions/pollChunk polls, and each answer after an expired poll sees
// what a poll covered.
func TestFreshPollCoversColdSessions(t *testing.T) {
	defer sessionstore.SetPollChunk(2)()
	root := t.TempDir()
	s, err := freshtest.New(root, workload.None, 8, 13)
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	for _, g := range s.Sessions {
		os.Chtimes(g.Path, old, old)
	}
	projects, _ := filepath.Glob(filepath.Join(root, "*"))
	for _, p := range projects {
		os.Chtimes(p, old, old)
	}
	x := openFresh(t, root, sessionstore.IndexOptions{CacheDir: sessionstore.NoCache, NoWatch: true, RefreshInterval: time.Hour})
	ctx := context.Background()
	// Resume, keeping its old mtime, the closed session (turn 25
	// retitles it) that the rotation (in key order from the start)
	// reaches last.
	var g *freshtest.Session
	key := func(g *freshtest.Session) string { rel, _ := filepath.Rel(root, filepath.Dir(g.Path)); return rel }
	for _, c := range s.Sessions {
		if c.Written == 24 && (g == nil || key(c) > key(g)) {
			g = c
		}
	}
	if err := s.AppendTurn(g); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(g.Path, old, old)
	want := mustExpected(t, ctx, root)
	polls := 0
	for ; polls <= len(s.Sessions)/2+1; polls++ {
		x.ExpirePoll()
		if mustView(t, ctx, x) == want {
			break
		}
	}
	if polls == 0 {
		t.Fatal("the first poll already saw the cold session: the rotation is not tested")
	}
	if polls > len(s.Sessions)/2+1 {
		t.Fatalf("%d polls of 2 sessions each did not reach the resumed session", polls)
	}
	t.Logf("seen after %d polls", polls+1)
}

// TestFreshRestartOnChangedStore checks that an index loaded from a cache
// written before the store changed answers its very first query like a
// full re-read (it stat-checks the cached entries before serving them).
func TestFreshRestartOnChangedStore(t *testing.T) {
	for _, comp := range []workload.Compression{workload.None, workload.Zstd} {
		for _, watch := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/watch=%v", comp, watch), func(t *testing.T) {
				root, cache := t.TempDir(), t.TempDir()
				s, err := freshtest.New(root, comp, 10, 14)
				if err != nil {
					t.Fatal(err)
				}
				opts := sessionstore.IndexOptions{CacheDir: cache, NoWatch: !watch, RefreshInterval: time.Hour}
				x, err := sessionstore.OpenIndexed(root, opts)
				if err != nil {
					t.Fatal(err)
				}
				if err := x.Wait(context.Background()); err != nil {
					t.Fatal(err)
				}
				x.Close()
				if _, err := os.Stat(x.CachePath()); err != nil {
					t.Fatalf("no cache written: %v", err)
				}
				ctx := context.Background()
				before := mustExpected(t, ctx, root)
				for _, step := range freshtest.Steps() {
					if err := step.Do(s); err != nil {
						t.Fatalf("%s: %v", step.Name, err)
					}
				}
				want := mustExpected(t, ctx, root)
				if want == before {
					t.Fatal("the steps changed no answer")
				}
				y, err := sessionstore.OpenIndexed(root, opts)
				if err != nil {
					t.Fatal(err)
				}
				defer y.Close()
				if !y.Complete() {
					t.Fatal("the cache was not loaded")
				}
				if got := mustView(t, ctx, y); got != want {
					t.Fatalf("first answer after the restart is stale:\nindex:\n%s\nstore:\n%s", got, want)
				}
			})
		}
	}
}
