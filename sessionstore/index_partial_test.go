package sessionstore

import (
	"context"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/dsh-lsp/dsh-lsp/bench/workload"
	"github.com/dsh-lsp/dsh-lsp/reference"
)

// checkPartial checks one Partial answer against the complete index's
// answers (full listing and titles): listed sessions are a subsequence of
// the full listing (so newest first) and each has exactly the full read's
// title.
func checkPartial(t *testing.T, listing []reference.SessionHeader, titles map[string]reference.TitleResult,
	full []reference.SessionHeader, fullTitles map[string]titleView) {
	t.Helper()
	if len(titles) != len(listing) {
		t.Errorf("partial: %d sessions listed, %d titles", len(listing), len(titles))
	}
	j := 0
	for _, h := range listing {
		for j < len(full) && full[j].ID != h.ID {
			j++
		}
		if j == len(full) {
			t.Fatalf("partial listing %v is not a subsequence of the full listing", ids(listing))
		}
		r, ok := titles[h.ID]
		if !ok {
			t.Errorf("partial: %s listed without a title", h.ID)
			continue
		}
		got := titleView{ID: r.SessionID, Title: r.Title}
		if r.Err != nil {
			got.Err = r.Err.Error()
		}
		if want := fullTitles[h.ID]; !reflect.DeepEqual(got, want) {
			t.Errorf("partial title of %s: %s, want %s", h.ID, fmtTitle(got), fmtTitle(want))
		}
	}
}

func ids(hs []reference.SessionHeader) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.ID
	}
	return out
}

// fullAnswers returns x's listing and the titles of every listed session.
func fullAnswers(t *testing.T, x *Indexed) ([]reference.SessionHeader, map[string]titleView) {
	t.Helper()
	full, err := x.ListSessions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]titleView{}
	for _, v := range titlesOf(t, x, ids(full)) {
		m[v.ID] = v
	}
	return full, m
}

// TestIndexedPartial: during the first pass Partial gives a consistent
// prefix of the work (sorted, titled); once complete it gives the whole
// listing with the full read's titles.
func TestIndexedPartial(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	genStore(t, root, workload.None, 600, 3, 11)
	type snap struct {
		listing []reference.SessionHeader
		titles  map[string]reference.TitleResult
		done    int
	}
	var mu sync.Mutex
	var snaps []snap
	var x *Indexed
	ready := make(chan struct{})
	x, err := OpenIndexed(root, IndexOptions{CacheDir: NoCache, RefreshInterval: -1, Progress: func(done, total int) {
		<-ready // x is assigned
		l, ti, complete := x.Partial()
		if complete {
			t.Errorf("Partial reports complete during the first pass (%d/%d)", done, total)
		}
		mu.Lock()
		snaps = append(snaps, snap{l, ti, done})
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	close(ready)
	defer x.Close()
	if err := x.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	full, fullTitles := fullAnswers(t, x)
	if len(full) != 600 {
		t.Fatalf("%d sessions listed, want 600", len(full))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(snaps) == 0 || len(snaps[0].listing) != 0 {
		t.Fatalf("no empty Partial at the start of the first pass: %d snapshots", len(snaps))
	}
	for _, s := range snaps {
		if len(s.listing) != s.done {
			t.Errorf("Partial after %d parsed lists %d sessions", s.done, len(s.listing))
		}
		checkPartial(t, s.listing, s.titles, full, fullTitles)
	}
	listing, titles, complete := x.Partial()
	if !complete || !slices.Equal(ids(listing), ids(full)) {
		t.Fatalf("Partial after the first pass: complete %v, %d sessions, want %d", complete, len(listing), len(full))
	}
	checkPartial(t, listing, titles, full, fullTitles)
}

// TestIndexedPartialAnswersOddLogsFromTheIndex: on the fixtures (legacy
// and odd logs included) Partial after the first pass lists every session
// with the title a full read gives, from the index alone.
func TestIndexedPartialAnswersOddLogsFromTheIndex(t *testing.T) {
	for _, name := range []string{"store-raw", "store-zstd"} {
		t.Run(name, func(t *testing.T) {
			_, x := indexedFixture(t, name)
			listing, titles, complete := x.Partial()
			full, fullTitles := fullAnswers(t, x)
			if !complete || !slices.Equal(ids(listing), ids(full)) {
				t.Fatalf("Partial after the first pass: complete %v, %v, want %v", complete, ids(listing), ids(full))
			}
			checkPartial(t, listing, titles, full, fullTitles)
		})
	}
}
