package sessionstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-lsp/dsh-lsp/bench/workload"
	"github.com/dsh-lsp/dsh-lsp/reference"
)

// plainSource hides the Indexed's Catalog: a Service over it lists and
// reads titles on every query (the path before catalogs).
type plainSource struct{ reference.Source }

// sameCatalog checks that x.Catalog equals ListSessions and ReadTitles of
// every listed id, and that candidate queries answer the same through the
// catalog as through ListSessions + ReadTitles.
func sameCatalog(t *testing.T, x *Indexed) *reference.Catalog {
	t.Helper()
	ctx := context.Background()
	cat, err := x.Catalog(ctx)
	if err != nil {
		t.Fatalf("Catalog: %v", err)
	}
	headers, err := x.ListSessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cat.Headers, headers) {
		t.Fatalf("catalog lists %d sessions %v, ListSessions %d", len(cat.Headers), ids(cat.Headers), len(headers))
	}
	listed := ids(headers)
	got := make([]titleView, len(cat.Titles))
	for i, r := range cat.Titles {
		got[i] = titleView{ID: r.SessionID, Title: r.Title}
		if r.Err != nil {
			got[i].Err = r.Err.Error()
		}
	}
	if want := titlesOf(t, x, listed); !reflect.DeepEqual(got, want) {
		t.Fatalf("catalog titles differ from ReadTitles:\ncatalog %v\nread    %v", got, want)
	}
	fast, _ := reference.NewService(x, reference.DefaultConfig())
	slow, _ := reference.NewService(plainSource{x}, reference.DefaultConfig())
	targets := []reference.Target{{}}
	if len(headers) > 0 {
		targets = append(targets, reference.Target{SessionID: &headers[0].ID, CWD: headers[len(headers)-1].CWD})
	}
	for _, target := range targets {
		for _, q := range []string{"", "a", "round", "界", "E", "-", "zzzz-nomatch"} {
			for _, limit := range []int64{1, 3, 50} {
				w, werr := slow.ListCandidates(ctx, target, q, limit)
				g, gerr := fast.ListCandidates(ctx, target, q, limit)
				if werr != nil || gerr != nil || !reflect.DeepEqual(g, w) {
					t.Fatalf("ListCandidates(%q, %d): catalog %+v (%v), plain %+v (%v)", q, limit, g, gerr, w, werr)
				}
			}
		}
	}
	return cat
}

// TestIndexedCatalogAfterRandomChanges checks the catalog against
// ListSessions + ReadTitles after random appends, new sessions, bad lines
// (slow logs), truncations and deletions, and that it is rebuilt only
// when something changed.
func TestIndexedCatalogAfterRandomChanges(t *testing.T) {
	for _, comp := range []workload.Compression{workload.None, workload.Zstd} {
		t.Run(string(comp), func(t *testing.T) {
			root := t.TempDir()
			ss := genStore(t, root, comp, 8, 2, 21)
			x := openIndexed(t, root, t.TempDir())
			r := rand.New(rand.NewSource(5))
			ctx := context.Background()
			prev := sameCatalog(t, x)
			for round := 0; round < 30; round++ {
				g := ss[r.Intn(len(ss))]
				var what string
				switch op := r.Intn(8); {
				case op < 3:
					what = "append"
					g.appendBatches(t, comp, 1+r.Intn(3))
				case op == 3:
					what = "new session"
					ss = append(ss, genStore(t, root, comp, 1, 1+r.Intn(3), int64(100+round))[0])
				case op == 4:
					what = "append a bad line"
					appendFile(t, g.path, workload.EncodeBatch(comp, []byte("{not json}\n")))
				case op == 5:
					what = "truncate at a random byte"
					if fi, err := os.Stat(g.path); err == nil && fi.Size() > 0 {
						os.Truncate(g.path, r.Int63n(fi.Size()))
					}
				case op == 6 && len(ss) > 2:
					what = "delete a session"
					os.RemoveAll(filepath.Dir(g.path))
					for i := range ss {
						if ss[i] == g {
							ss = append(ss[:i], ss[i+1:]...)
							break
						}
					}
				default:
					what = "nothing"
				}
				if err := x.Refresh(ctx); err != nil {
					t.Fatal(err)
				}
				t.Logf("round %d: %s on %s", round, what, g.spec.ID)
				cat := sameCatalog(t, x)
				if what == "nothing" && cat != prev {
					t.Errorf("round %d: catalog rebuilt although nothing changed", round)
				}
				if again, _ := x.Catalog(ctx); again != cat {
					t.Errorf("round %d: a second Catalog call built a new snapshot", round)
				}
				prev = cat
			}
		})
	}
}

// TestIndexedCatalogUnavailableDuringFirstPass checks that before the
// first pass has finished Catalog refuses with ErrCatalogUnavailable (so
// ListCandidates reads what is indexed so far, as before), and honours a
// cancelled ctx.
func TestIndexedCatalogUnavailableDuringFirstPass(t *testing.T) {
	root := t.TempDir()
	genStore(t, root, workload.Zstd, 3, 2, 3)
	x := openIndexed(t, root, NoCache)
	x.mu.Lock()
	x.complete = false // as during the first pass
	x.mu.Unlock()
	if _, err := x.Catalog(context.Background()); !errors.Is(err, reference.ErrCatalogUnavailable) {
		t.Fatalf("Catalog during the first pass: err = %v", err)
	}
	svc, _ := reference.NewService(x, reference.DefaultConfig())
	if got, err := svc.ListCandidates(context.Background(), reference.Target{}, "", 50); err != nil || len(got) != 3 {
		t.Fatalf("ListCandidates during the first pass: %d candidates, %v", len(got), err)
	}
	x.mu.Lock()
	x.complete = true
	x.mu.Unlock()
	sameCatalog(t, x)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := x.Catalog(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Catalog with a cancelled ctx: err = %v", err)
	}
}

// BenchmarkIndexedCandidatesNewQueries is completion while typing: each
// query is new (3 hex digits, ~1-3 % of the sessions match), through the
// catalog and, for comparison, through ListSessions + ReadTitles.
func BenchmarkIndexedCandidatesNewQueries(b *testing.B) {
	x := benchIndexed(b, sharedCache(b))
	defer x.Close()
	cat, err := x.Catalog(context.Background())
	if err != nil || len(cat.Headers) == 0 {
		b.Fatalf("no sessions to query in %s (%v)", x.Root(), err)
	}
	// Warm: the search data (and, for a large store, its trigram index)
	// is built in the background after a change, before typing resumes.
	if err := cat.Prepare(); err != nil {
		b.Fatal(err)
	}
	cwd := "/home/alice/work/project-000"
	target := reference.Target{CWD: &cwd}
	for _, path := range []string{"catalog", "plain"} {
		b.Run("path="+path, func(b *testing.B) {
			var src reference.Source = x
			if path == "plain" {
				src = plainSource{x}
			}
			svc, err := reference.NewService(src, reference.DefaultConfig())
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			lat := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				q := fmt.Sprintf("%03x", i%4096)
				t0 := time.Now()
				if _, err := svc.ListCandidates(ctx, target, q, 50); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			reportPercentiles(b, lat)
		})
	}
}

// BenchmarkIndexedCatalogRebuild is the cost a query pays after a refresh
// found a change: a new snapshot (titles of every listed session) and its
// lowered search string, on the first query.
func BenchmarkIndexedCatalogRebuild(b *testing.B) {
	x := benchIndexed(b, sharedCache(b))
	defer x.Close()
	svc, err := reference.NewService(x, reference.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		x.mu.Lock()
		x.gen++ // as rebuildListing does
		x.mu.Unlock()
		if _, err := svc.ListCandidates(ctx, reference.Target{}, "abc", 50); err != nil {
			b.Fatal(err)
		}
	}
}

// TestIndexedCatalogWarmedByBackgroundRefresh checks that a background
// refresh that changed the listing also rebuilds the catalog (once
// queries use catalogs), so no query pays for the rebuild.
func TestIndexedCatalogWarmedByBackgroundRefresh(t *testing.T) {
	root := t.TempDir()
	ss := genStore(t, root, workload.Zstd, 4, 2, 9)
	x := OpenWaited(t, root, IndexOptions{CacheDir: NoCache, RefreshInterval: time.Millisecond})
	ctx := context.Background()
	first := sameCatalog(t, x)
	ss[0].appendBatches(t, workload.Zstd, 3)
	extra := genStore(t, root, workload.Zstd, 1, 2, 99)[0]
	deadline := time.Now().Add(20 * time.Second)
	for {
		time.Sleep(5 * time.Millisecond)
		// ListSessions starts background refreshes; it never builds a catalog.
		hs, err := x.ListSessions(ctx)
		if err != nil {
			t.Fatal(err)
		}
		x.mu.RLock()
		gen := x.gen
		x.mu.RUnlock()
		snap := x.catalog.snap.Load()
		if len(hs) == 5 && snap.gen == gen && snap.cat != first {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("catalog not rebuilt in the background: %d sessions listed (want 5 with %s), catalog gen %d, index gen %d", len(hs), extra.spec.ID, snap.gen, gen)
		}
	}
	x.refreshing.Lock() // no background refresh runs while comparing
	defer x.refreshing.Unlock()
	sameCatalog(t, x)
}

// TestIndexedCatalogPreparedWithoutAQuery checks that once a loaded cache
// or the first pass makes the index complete, the catalog is built in the
// background before any query asks for it (so the first queries after a
// restart do not build it), and that a one-shot Snapshot reader builds
// none.
func TestIndexedCatalogPreparedWithoutAQuery(t *testing.T) {
	for _, tc := range []struct {
		name      string
		restart   bool // open a second time, on the first open's cache
		snapshot  bool
		wantBuilt bool
	}{
		{name: "first pass", wantBuilt: true},
		{name: "restart on the cache", restart: true, wantBuilt: true},
		{name: "snapshot reader", snapshot: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			genStore(t, root, workload.Zstd, 5, 2, 11)
			opts := IndexOptions{CacheDir: t.TempDir(), NoWatch: true, Snapshot: tc.snapshot}
			if tc.restart {
				x := OpenWaited(t, root, opts)
				if err := x.Close(); err != nil {
					t.Fatal(err)
				}
			}
			x, err := OpenIndexed(root, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer x.Close()
			if tc.restart && !x.Complete() {
				t.Fatal("the cache was not loaded")
			}
			if err := x.Wait(context.Background()); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(10 * time.Second)
			for tc.wantBuilt && x.catalog.snap.Load() == nil && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			if err := x.Close(); err != nil { // waits for background work
				t.Fatal(err)
			}
			snap := x.catalog.snap.Load()
			if built := snap != nil; built != tc.wantBuilt {
				t.Fatalf("catalog built without a query: %v, want %v", built, tc.wantBuilt)
			}
			if snap != nil && len(snap.cat.Headers) != 5 {
				t.Fatalf("background catalog lists %d sessions, want 5", len(snap.cat.Headers))
			}
		})
	}
}

// TestIndexedCatalogTakesAPersistedSearchIndex checks the two ends a cache
// uses to persist the catalog's trigram index: searchIndexToPersist gives
// the current catalog's encoded index, and a catalog built with those
// bytes takes them when the sessions and titles are unchanged (nothing
// logged) and rebuilds its own, with a warning, when a session changed;
// both answer like ListSessions + ReadTitles.
func TestIndexedCatalogTakesAPersistedSearchIndex(t *testing.T) {
	root := t.TempDir()
	ss := genStore(t, root, workload.Zstd, 2100, 1, 12) // over the 2,048 that get an index
	var logs []string
	var logMu sync.Mutex
	logf := func(format string, args ...any) {
		logMu.Lock()
		defer logMu.Unlock()
		logs = append(logs, fmt.Sprintf(format, args...))
	}
	x := OpenWaited(t, root, IndexOptions{CacheDir: NoCache, NoWatch: true, RefreshInterval: time.Hour, Logf: logf})
	cat, err := x.Catalog(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := cat.Prepare(); err != nil {
		t.Fatal(err)
	}
	x.mu.RLock()
	gen := x.gen
	x.mu.RUnlock()
	data := x.searchIndexToPersist(gen)
	if data == nil {
		t.Fatal("no search index to persist")
	}
	for _, tc := range []struct {
		name    string
		change  bool
		wantLog bool
	}{{"unchanged", false, false}, {"a session changed", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.change {
				ss[0].appendBatches(t, workload.Zstd, 2)
				if err := x.Refresh(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			x.mu.Lock()
			x.gen++ // the catalog is rebuilt, as after a restart
			x.cachedGen, x.cachedSearchIndex = x.gen, data
			x.mu.Unlock()
			logMu.Lock()
			logs = nil
			logMu.Unlock()
			x.prepareCatalog()
			logMu.Lock()
			got := slices.Clone(logs)
			logMu.Unlock()
			logged := len(got) == 1 && strings.Contains(got[0], "rebuilt it")
			if logged != tc.wantLog || !tc.wantLog && len(got) > 0 {
				t.Errorf("warnings %q, want one saying it was rebuilt: %v", got, tc.wantLog)
			}
			sameCatalog(t, x)
		})
	}
}

// TestCacheHoldsTheSearchIndex: the cache a first pass writes holds the
// catalog's search index, and a restart on a cache without one (or
// without the listed entries' readByListedID flags) writes it back, so
// that no restart after it builds the index or the id maps again.
func TestCacheHoldsTheSearchIndex(t *testing.T) {
	root, cacheDir := t.TempDir(), t.TempDir()
	genStore(t, root, workload.Zstd, 2100, 1, 13) // over the 2,048 that get an index
	opts := IndexOptions{CacheDir: cacheDir, NoWatch: true, RefreshInterval: time.Hour}
	persisted := func(x *Indexed) *cacheFile {
		t.Helper()
		x.Close()
		data, err := os.ReadFile(x.cachePath)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := decodeCache(data)
		if err != nil {
			t.Fatal(err)
		}
		return cf
	}
	x := OpenWaited(t, root, opts)
	cf := persisted(x)
	if cf.SearchIndex == nil {
		t.Fatal("the first pass's cache holds no search index")
	}
	// A cache without it, as an earlier version wrote.
	stripped := encodeCache(cf.Root, cf.Pinned, cf.Entries, slices.Collect(func(yield func(*entry) bool) {
		for _, k := range cf.Listed {
			yield(cf.Entries[k])
		}
	}), cf.Shape, nil)
	if err := os.WriteFile(x.cachePath, stripped, 0o600); err != nil {
		t.Fatal(err)
	}
	x = OpenWaited(t, root, opts)
	cf = persisted(x)
	if cf.SearchIndex == nil {
		t.Fatal("a restart on a cache without a search index did not write it back")
	}
	// The stripped cache had no readByListedID flags either (encodeCache
	// sets none): the one written back has them.
	flagged := 0
	for _, k := range cf.Listed {
		if cf.Entries[k].readByListedID {
			flagged++
		}
	}
	if flagged != len(cf.Listed) {
		t.Fatalf("%d of %d listed entries flagged as read by their own id after the rewrite", flagged, len(cf.Listed))
	}
}
