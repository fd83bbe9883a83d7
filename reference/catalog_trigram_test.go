package reference

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// randomTrigramCatalog returns a catalog of n sessions whose ids, cwds and
// titles are built from lowerPieces (case-folding traps, non-ASCII,
// invalid bytes, lone surrogates), with shared cwds, duplicate ids and
// every title outcome.
func randomTrigramCatalog(rng *rand.Rand, n int) (headers []SessionHeader, titles []TitleResult) {
	cwds := []*string{nil, ptr("/same"), ptr("/SAME/İ"), ptr("/else/Σ"), ptr("")}
	for range 6 {
		cwds = append(cwds, ptr("/p/"+randomLowerString(rng, 8)))
	}
	for i := range n {
		id := randomLowerString(rng, 10)
		if i > 0 && rng.IntN(20) == 0 {
			id = headers[rng.IntN(i)].ID
		}
		headers = append(headers, SessionHeader{ID: id, CWD: cwds[rng.IntN(len(cwds))], CreatedAt: int64(i)})
		tr := TitleResult{SessionID: id}
		switch rng.IntN(5) {
		case 0:
		case 1:
			tr.Title, tr.Err = ptr(randomLowerString(rng, 12)), errDisk
		case 2:
			tr.Title = ptr("")
		default:
			tr.Title = ptr(randomLowerString(rng, 12))
		}
		titles = append(titles, tr)
	}
	return headers, titles
}

// randomQuery is a query as a person might type it: a piece of an id,
// cwd or label (in either case), or random text, sometimes with the
// field separator.
func randomQuery(rng *rand.Rand, h []SessionHeader, t []TitleResult) string {
	var q string
	if len(h) > 0 && rng.IntN(3) > 0 {
		i := rng.IntN(len(h))
		s := h[i].ID
		switch rng.IntN(3) {
		case 0:
			if h[i].CWD != nil {
				s = *h[i].CWD
			}
		case 1:
			if t[i].Title != nil {
				s = *t[i].Title
			}
		}
		a := rng.IntN(len(s) + 1)
		b := a + rng.IntN(len(s)-a+1)
		q = s[a:b]
		if rng.IntN(3) == 0 {
			q = strings.ToUpper(q)
		}
	} else {
		q = randomLowerString(rng, 4)
	}
	if rng.IntN(30) == 0 {
		q += "\x00" + randomLowerString(rng, 1)
	}
	return q
}

// TestTrigramCandidatesEqualScan checks that a catalog answering from its
// trigram index gives exactly the scan's candidates (the same sessions,
// labels, ranks and order) for random catalogs, queries, targets and
// limits, including catalogs below the size that builds the index.
func TestTrigramCandidatesEqualScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 3))
	usedIndex := 0
	for _, n := range []int{0, 1, 2, 7, 60, 400, 3000} {
		headers, titles := randomTrigramCatalog(rng, n)
		scan := &Catalog{Headers: headers, Titles: titles}
		scan.triStarted.Store(true) // never builds an index: always the scan
		fast := &Catalog{Headers: headers, Titles: titles}
		if err := fast.prepare(); err != nil {
			t.Fatal(err)
		}
		fast.buildTrigrams()
		targets := []Target{{}, {CWD: ptr("/same")}, {CWD: ptr("/else/Σ")}, {CWD: ptr("")}}
		if n > 3 {
			targets = append(targets, Target{SessionID: &headers[3].ID, CWD: ptr("/same")})
		}
		for range 400 {
			query := randomQuery(rng, headers, titles)
			needle := lowerJS(query)
			target := targets[rng.IntN(len(targets))]
			limit := int64([]int{1, 3, 50, 100000}[rng.IntN(4)])
			want, err := catalogCandidates(scan, target, needle, limit)
			if err != nil {
				t.Fatal(err)
			}
			got, err := catalogCandidates(fast, target, needle, limit)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%d sessions, query %q (needle %q), limit %d, target %+v:\ntrigram %+v\nscan    %+v", n, query, needle, limit, target, got, want)
			}
			if usesTrigrams(needle) {
				usedIndex++
			}
		}
	}
	if usedIndex < 1000 {
		t.Errorf("only %d queries went through the trigram index", usedIndex)
	}
}

// TestTrigramCandidatesFoldingTraps pins the JS lower-casing cases of the
// conformance list through the trigram index: STRASSE is not straße, İ
// lowers to i + U+0307 (so "İy" matches "i̇y" and not "iy"), ÜNÏ matches
// Ünïcode.
func TestTrigramCandidatesFoldingTraps(t *testing.T) {
	labels := []string{"STRASSE-up", "straße", "İy", "i\u0307x", "ix", "Ünïcode", "ΣΑΣ-final"}
	var c Catalog
	for i, l := range labels {
		id := strings.Repeat("x", 3) + string(rune('a'+i))
		c.Headers = append(c.Headers, SessionHeader{ID: id})
		c.Titles = append(c.Titles, TitleResult{SessionID: id, Title: ptr(l)})
	}
	if err := c.prepare(); err != nil {
		t.Fatal(err)
	}
	c.buildTrigrams()
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"STRASSE", []string{"STRASSE-up"}},
		{"straße", []string{"straße"}},
		{"İy", []string{"İy"}},
		{"i\u0307x", []string{"i\u0307x"}},
		{"İ", []string{"İy", "i\u0307x"}},
		{"ix", []string{"ix"}},
		{"ÜNÏ", []string{"Ünïcode"}},
		{"σας", []string{"ΣΑΣ-final"}},
		{"nomatch", nil},
	} {
		got, err := catalogCandidates(&c, Target{}, lowerJS(tc.query), 50)
		if err != nil {
			t.Fatal(err)
		}
		var labels []string
		for _, g := range got {
			labels = append(labels, g.Label)
		}
		if !reflect.DeepEqual(labels, tc.want) {
			t.Errorf("query %q: %q, want %q", tc.query, labels, tc.want)
		}
	}
}

// TestDerivedTrigramIndexEqualsScan changes random catalogs step by step
// (a few titles, many titles, a session added, a cwd changed) with each
// new catalog following the last: every query answers exactly like the
// scan, and an index is derived, not rebuilt, when only a few titles
// changed.
func TestDerivedTrigramIndexEqualsScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 4))
	for _, n := range []int{40, 600, minTrigramSessions + 50} {
		headers, titles := randomTrigramCatalog(rng, n)
		prev := &Catalog{Headers: headers, Titles: titles}
		if err := prev.Prepare(); err != nil {
			t.Fatal(err)
		}
		prev.buildTrigrams()
		derived := 0
		for step := range 12 {
			headers = slices.Clone(headers)
			titles = slices.Clone(titles)
			change := []string{"few titles", "few titles", "few titles", "many titles", "new session", "cwd"}[step%6]
			switch change {
			case "few titles":
				for range 1 + rng.IntN(3) {
					titles[rng.IntN(n)].Title = ptr(randomLowerString(rng, 12))
				}
			case "many titles": // every title: more than maxDirty when n is
				for i := range titles {
					titles[i].Title = ptr(fmt.Sprint("retitled ", step, " ", i))
				}
			case "new session":
				id := randomLowerString(rng, 10)
				headers = append([]SessionHeader{{ID: id}}, headers[:n-1]...)
				titles = append([]TitleResult{{SessionID: id, Title: ptr("new " + id)}}, titles[:n-1]...)
			case "cwd":
				headers[rng.IntN(n)].CWD = ptr("/moved")
			}
			next := &Catalog{Headers: headers, Titles: titles}
			next.Follows(prev)
			if err := next.prepare(); err != nil {
				t.Fatal(err)
			}
			if next.deriveTrigrams() {
				derived++
				if change != "few titles" && !(change == "many titles" && n <= maxDirty(n)) {
					t.Errorf("%d sessions, step %d (%s): index derived", n, step, change)
				}
			} else {
				if change == "few titles" {
					t.Errorf("%d sessions, step %d (%s): index rebuilt, not derived", n, step, change)
				}
				next.buildTrigrams()
			}
			if next.prev.Load() != nil {
				t.Errorf("%d sessions, step %d: the previous catalog is still held", n, step)
			}
			scan := &Catalog{Headers: headers, Titles: titles}
			scan.triStarted.Store(true)
			if err := scan.prepare(); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(next.lowLabels, scan.lowLabels) {
				t.Fatalf("%d sessions, step %d (%s): lowered labels taken from the previous catalog differ", n, step, change)
			}
			targets := []Target{{}, {CWD: ptr("/same")}, {CWD: ptr("/moved")}, {CWD: headers[0].CWD}}
			for range 300 {
				query := randomQuery(rng, headers, titles)
				target := targets[rng.IntN(len(targets))]
				limit := int64([]int{1, 3, 50, 100000}[rng.IntN(4)])
				want, _ := catalogCandidates(scan, target, lowerJS(query), limit)
				got := indexedOrScan(t, next, target, lowerJS(query), limit)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%d sessions, step %d (%s), query %q, limit %d, target %+v:\nindex %+v\nscan  %+v", n, step, change, query, limit, target, got, want)
				}
			}
			prev = next
		}
		if derived == 0 {
			t.Errorf("%d sessions: no index was derived", n)
		}
	}
}

// indexedOrScan is catalogCandidates through c's trigram index when it
// was built or derived beforehand.
func indexedOrScan(t *testing.T, c *Catalog, target Target, needle string, limit int64) []Candidate {
	t.Helper()
	if x := c.tri.Load(); x != nil {
		return c.candidates(indexedPicks(c, x, target, needle, limit))
	}
	got, err := catalogCandidates(c, target, needle, limit)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestPrepareWaitsForTheIndexAQueryStarted checks that a large catalog's
// first query starts its trigram index in the background (answering by
// the scan meanwhile) and that Prepare returns only once the index exists.
func TestPrepareWaitsForTheIndexAQueryStarted(t *testing.T) {
	headers, titles := randomTrigramCatalog(rand.New(rand.NewPCG(22, 5)), minTrigramSessions)
	c := &Catalog{Headers: headers, Titles: titles}
	if _, err := catalogCandidates(c, Target{}, "abc", 50); err != nil {
		t.Fatal(err)
	}
	if !c.triStarted.Load() {
		t.Fatal("the first query did not start the trigram index")
	}
	if err := c.Prepare(); err != nil {
		t.Fatal(err)
	}
	if c.tri.Load() == nil {
		t.Fatal("Prepare returned before the trigram index was built")
	}
}
