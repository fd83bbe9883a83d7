package reference

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"unsafe"
)

// catalogFake is a fakeSource that is also a CatalogSource: its snapshot
// is built from the sessions directly (not through ReadTitles, so the
// fake's titleCalls show whether ListCandidates fell back).
type catalogFake struct {
	*fakeSource
	unavailable, blockCatalog bool
	catalogErr                error
	calls                     atomic.Int64
}

func (c *catalogFake) Catalog(ctx context.Context) (*Catalog, error) {
	c.calls.Add(1)
	switch {
	case c.blockCatalog:
		return nil, c.block(ctx)
	case c.unavailable:
		return nil, fmt.Errorf("index still running: %w", ErrCatalogUnavailable)
	case c.catalogErr != nil:
		return nil, c.catalogErr
	}
	cat := &Catalog{}
	for _, s := range c.sessions {
		cat.Headers = append(cat.Headers, SessionHeader{ID: s.id, CWD: s.cwd, CreatedAt: s.createdAt})
		first := c.find(s.id) // titles are read by id: a duplicate id gets the first one's
		cat.Titles = append(cat.Titles, TitleResult{SessionID: s.id, Title: first.title, Err: first.titleErr})
	}
	return cat, nil
}

// randomCatalogFake returns n random sessions with every title outcome
// (none, title, rejected title, empty title) and some duplicate ids.
func randomCatalogFake(rng *rand.Rand, n int) *fakeSource {
	cwds := []*string{nil, ptr("/same"), ptr("/SAME/İ"), ptr("/else/Σ"), ptr("/x")}
	src := &fakeSource{}
	for i := range n {
		s := fakeSession{id: randomLowerString(rng, 4), cwd: cwds[rng.IntN(len(cwds))], createdAt: int64(n - i)}
		if i > 0 && rng.IntN(10) == 0 {
			s.id = src.sessions[rng.IntN(i)].id
		}
		switch rng.IntN(5) {
		case 0:
		case 1:
			s.title, s.titleErr = ptr(randomLowerString(rng, 6)), errDisk
		case 2:
			s.title = ptr("")
		default:
			s.title = ptr(randomLowerString(rng, 6))
		}
		src.sessions = append(src.sessions, s)
	}
	return src
}

// TestListCandidatesCatalogEqualsPlain checks that ListCandidates answers
// exactly the same from a catalog as from ListSessions + ReadTitles, with
// and without a query, for every target and limit, and that the catalog
// path reads no titles.
func TestListCandidatesCatalogEqualsPlain(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for round := range 6 {
		src := randomCatalogFake(rng, []int{0, 1, 5, 40, 300, 300}[round])
		cat := &catalogFake{fakeSource: src}
		plain := newTestService(t, src, DefaultConfig())
		fast := newTestService(t, cat, DefaultConfig())
		targets := []Target{{}, {CWD: ptr("/same")}, {CWD: ptr("/else/Σ")}}
		if len(src.sessions) > 3 {
			targets = append(targets, Target{SessionID: &src.sessions[3].id, CWD: ptr("/same")}, Target{SessionID: &src.sessions[0].id})
		}
		for range 200 {
			query := randomLowerString(rng, 2)
			if rng.IntN(4) == 0 {
				query = ""
			}
			target := targets[rng.IntN(len(targets))]
			limit := int64([]int{1, 3, 50, 1000}[rng.IntN(4)])
			want, err := plain.ListCandidates(context.Background(), target, query, limit)
			if err != nil {
				t.Fatal(err)
			}
			src.titleCalls = nil
			got, err := fast.ListCandidates(context.Background(), target, query, limit)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("round %d query %q limit %d target %v:\ncatalog %+v\nplain   %+v", round, query, limit, target, got, want)
			}
			if len(src.titleCalls) != 0 {
				t.Fatalf("the catalog path read titles: %q", src.titleCalls)
			}
		}
		if cat.calls.Load() != 200 {
			t.Errorf("Catalog called %d times for 200 queries", cat.calls.Load())
		}
	}
}

// TestListCandidatesCatalogFallbackAndErrors checks the other outcomes of
// Catalog: unavailable falls back to ListSessions + ReadTitles; any other
// error fails the query; a malformed catalog is an error, not a wrong
// answer.
func TestListCandidatesCatalogFallbackAndErrors(t *testing.T) {
	newSrc := func() *fakeSource { return randomCatalogFake(rand.New(rand.NewPCG(9, 10)), 50) }
	want, err := newTestService(t, newSrc(), DefaultConfig()).ListCandidates(context.Background(), Target{}, "s", 50)
	if err != nil {
		t.Fatal(err)
	}

	fallback := &catalogFake{fakeSource: newSrc(), unavailable: true}
	got, err := newTestService(t, fallback, DefaultConfig()).ListCandidates(context.Background(), Target{}, "s", 50)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("unavailable catalog: got %+v, %v; want %+v", got, err, want)
	}
	if len(fallback.titleCalls) != 1 {
		t.Errorf("unavailable catalog: %d ReadTitles calls, want 1", len(fallback.titleCalls))
	}

	failing := &catalogFake{fakeSource: newSrc(), catalogErr: errDisk}
	_, err = newTestService(t, failing, DefaultConfig()).ListCandidates(context.Background(), Target{}, "s", 50)
	if !errors.Is(err, errDisk) || err.Error() != "list sessions: disk exploded" {
		t.Errorf("failing catalog: err = %v", err)
	}

	bad := &catalogSnapshot{cat: &Catalog{Headers: []SessionHeader{{ID: "a"}, {ID: "b"}}, Titles: []TitleResult{{SessionID: "a"}}}}
	if _, err := newTestService(t, bad, DefaultConfig()).ListCandidates(context.Background(), Target{}, "", 50); err == nil {
		t.Error("a catalog with fewer titles than sessions gave no error")
	}
	swapped := &catalogSnapshot{cat: &Catalog{Headers: []SessionHeader{{ID: "a"}, {ID: "b"}}, Titles: []TitleResult{{SessionID: "b"}, {SessionID: "a"}}}}
	if _, err := newTestService(t, swapped, DefaultConfig()).ListCandidates(context.Background(), Target{}, "", 50); err == nil {
		t.Error("a catalog with titles out of order gave no error")
	}
}

// catalogSnapshot is a CatalogSource answering a fixed catalog.
type catalogSnapshot struct {
	fakeSource
	cat *Catalog
}

func (c *catalogSnapshot) Catalog(context.Context) (*Catalog, error) { return c.cat, nil }

// TestListCandidatesCatalogCancellation checks CodeCancelled when ctx is
// done before or while the catalog is being taken.
func TestListCandidatesCatalogCancellation(t *testing.T) {
	for _, phase := range []string{"pre-aborted", "catalog", "catalog-with-query"} {
		t.Run(phase, func(t *testing.T) {
			src := &catalogFake{fakeSource: specSource(), blockCatalog: phase != "pre-aborted"}
			src.started = make(chan struct{})
			query := ""
			if phase == "catalog-with-query" {
				query = "same"
			}
			s := newTestService(t, src, DefaultConfig())
			ctx, cancel := context.WithCancel(context.Background())
			if phase == "pre-aborted" {
				cancel()
			} else {
				go func() { <-src.started; cancel() }()
			}
			_, err := s.ListCandidates(ctx, Target{}, query, 50)
			if CodeOf(err) != CodeCancelled || !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v", err)
			}
			cancel()
		})
	}
}

// TestListCandidatesCatalogSeparatorInNeedle checks queries and sessions
// containing the byte that separates fields in the catalog's search
// string: a match must not span two fields or two sessions.
func TestListCandidatesCatalogSeparatorInNeedle(t *testing.T) {
	src := &fakeSource{sessions: []fakeSession{
		{id: "a\x00b", cwd: ptr("c\x00"), title: ptr("\x00T")},
		{id: "ab", cwd: ptr("cd"), title: ptr("ef")},
		{id: "x", title: ptr("y\x00")},
		{id: "b"},
	}}
	plain := newTestService(t, src, DefaultConfig())
	fast := newTestService(t, &catalogFake{fakeSource: src}, DefaultConfig())
	for _, q := range []string{"\x00", "a\x00", "b\x00c", "\x00t", "\x00\x00", "y\x00", "x\x00y", "bc", "ab", "fa", "b", "Y\x00"} {
		want, err := plain.ListCandidates(context.Background(), Target{}, q, 50)
		if err != nil {
			t.Fatal(err)
		}
		got, err := fast.ListCandidates(context.Background(), Target{}, q, 50)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("query %q: catalog %+v (%v), plain %+v", q, got, err, want)
		}
	}
}

// TestCatalogStoresLoweredStringsOnlyWhenChanged checks the catalog's
// memory rules: an id, cwd or label that lower-casing leaves unchanged is
// not copied (its lowered form shares its bytes), each distinct cwd is
// stored once however many sessions share it, and a changed string gets
// its exact lowered form.
func TestCatalogStoresLoweredStringsOnlyWhenChanged(t *testing.T) {
	for _, tc := range []struct {
		name       string
		ids        []string
		cwds       []string // "" for no cwd; equal values are distinct allocations
		titles     []string
		wantIDCopy bool
		wantCWDs   int
	}{
		{"lower-case ids, shared cwds", []string{"a1", "b2", "c3"}, []string{"/p/x", "/p/x", ""}, []string{"fix parser", "Fix Parser", "straße"}, false, 1},
		{"an upper-case id", []string{"a1", "B2"}, []string{"/P/X", "/p/x"}, []string{"x", "Ünï"}, true, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c Catalog
			for i, id := range tc.ids {
				h := SessionHeader{ID: id}
				if tc.cwds[i] != "" {
					cwd := strings.Clone(tc.cwds[i])
					h.CWD = &cwd
				}
				c.Headers = append(c.Headers, h)
				c.Titles = append(c.Titles, TitleResult{SessionID: id, Title: ptr(strings.Clone(tc.titles[i]))})
			}
			if err := c.prepare(); err != nil {
				t.Fatal(err)
			}
			if got := c.lowIDs != nil; got != tc.wantIDCopy {
				t.Errorf("lowered ids stored: %v, want %v", got, tc.wantIDCopy)
			}
			if len(c.cwds) != tc.wantCWDs {
				t.Errorf("%d distinct cwds stored, want %d", len(c.cwds), tc.wantCWDs)
			}
			for i := range c.Headers {
				if got, want := c.lowID(i), lowerJS(tc.ids[i]); got != want {
					t.Errorf("session %d: lowered id %q, want %q", i, got, want)
				}
				if k := c.cwdOf[i]; k >= 0 && c.cwds[k].low != lowerJS(tc.cwds[i]) || k < 0 && tc.cwds[i] != "" {
					t.Errorf("session %d: cwd %d, want lowered %q", i, k, lowerJS(tc.cwds[i]))
				}
				title := *c.Titles[i].Title
				low := c.lowLabels[i]
				if low != lowerJS(title) {
					t.Errorf("session %d: lowered label %q, want %q", i, low, lowerJS(title))
				}
				if shared := unsafe.StringData(low) == unsafe.StringData(title); shared != (low == title) {
					t.Errorf("session %d: lowered label %q shares the title's bytes: %v", i, low, shared)
				}
			}
			for _, cw := range c.cwds {
				if shared := unsafe.StringData(cw.low) == unsafe.StringData(cw.cwd); shared != (cw.low == cw.cwd) {
					t.Errorf("cwd %q: lowered form shares its bytes: %v", cw.cwd, shared)
				}
			}
		})
	}
}

// TestCatalogKnown: Known reports the listed ids, through Lists when the
// source gives it, else from the headers.
func TestCatalogKnown(t *testing.T) {
	headers := []SessionHeader{{ID: "a"}, {ID: "b"}}
	plain := &Catalog{Headers: headers}
	if !plain.Known("a") || !plain.Known("b") || plain.Known("c") || plain.Known("") {
		t.Error("a catalog without Lists does not know exactly its headers' ids")
	}
	asked := &Catalog{Headers: headers, Lists: func(id string) bool { return id == "c" }}
	if asked.Known("a") || !asked.Known("c") {
		t.Error("a catalog with Lists does not answer through it")
	}
}
