package reference

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
)

// lowerPieces are the parts random strings are built from: ASCII of both
// cases, SpecialCasing (İ, ẞ), Final_Sigma context (Σ, case-ignorables),
// Kelvin sign, combining marks, astral characters, invalid bytes and the
// WTF-8 form of lone surrogates.
var lowerPieces = []string{
	"a", "Z", "i", "I", "s", "S", "k", "-", " ", ".", "'", "/", "0",
	"İ", "i\u0307", "Σ", "σ", "ς", "ß", "ẞ", "SS", "\u212a", "Ω", "\u0301",
	"Ü", "ü", "界", "😀", "ǅ",
	"\xed\xa0\x80", "\xed\xb0\x80", "\xed\xa0\xbd\xed\xb8\x80", "\xff", "\xc3",
}

func randomLowerString(rng *rand.Rand, maxPieces int) string {
	var b strings.Builder
	for range rng.IntN(maxPieces + 1) {
		b.WriteString(lowerPieces[rng.IntN(len(lowerPieces))])
	}
	return b.String()
}

// TestLowerMatcherEqualsLowerJS checks that the memoized and ASCII paths
// answer exactly strings.Contains(lowerJS(s), needle), on misses, on hits,
// on hits in the old generation and across generation swaps.
func TestLowerMatcherEqualsLowerJS(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	texts := make([]string, 400)
	for i := range texts {
		texts[i] = randomLowerString(rng, 8)
	}
	var needles []string
	for range 40 {
		needles = append(needles, lowerJS(randomLowerString(rng, 3)))
	}
	// Needles cut from lowered texts, so that many tests match.
	for _, s := range texts[:40] {
		l := lowerJS(s)
		i := rng.IntN(len(l) + 1)
		needles = append(needles, l[i:i+rng.IntN(len(l)-i+1)])
	}
	for _, bound := range []struct{ entries, bytes int }{{0, 0}, {7, 1 << 20}, {1 << 20, 64}} {
		memo := &lowerMemo{maxEntries: bound.entries, maxBytes: bound.bytes}
		for pass := range 3 {
			for _, needle := range needles {
				m := newLowerMatcher(memo, needle)
				for _, s := range texts {
					want := strings.Contains(lowerJS(s), needle)
					if got := m.contains(s); got != want {
						t.Fatalf("bound %v pass %d: contains(%q, %q) = %v, want %v", bound, pass, s, needle, got, want)
					}
					if got, want := m.lower(s), lowerJS(s); got != want {
						t.Fatalf("bound %v pass %d: lower(%q) = %q, want %q", bound, pass, s, got, want)
					}
				}
				m.done()
			}
		}
		if bound.entries == 0 && len(memo.cur) == 0 {
			t.Errorf("unbounded memo stored nothing")
		}
		if bound.entries == 7 && len(memo.cur) > 7 {
			t.Errorf("memo generation has %d entries, bound 7", len(memo.cur))
		}
	}
}

// TestLowerMemoConcurrent runs matchers on one memo from several
// goroutines (meaningful under -race) with a small bound forcing swaps.
func TestLowerMemoConcurrent(t *testing.T) {
	memo := &lowerMemo{maxEntries: 5, maxBytes: 1 << 20}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 9))
			for range 200 {
				s, needle := randomLowerString(rng, 6), lowerJS(randomLowerString(rng, 2))
				m := newLowerMatcher(memo, needle)
				got, want := m.contains(s), strings.Contains(lowerJS(s), needle)
				m.done()
				if got != want {
					t.Errorf("contains(%q, %q) = %v, want %v", s, needle, got, want)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestASCIICase(t *testing.T) {
	tests := []struct {
		in           string
		ascii, upper bool
	}{
		{"", true, false},
		{"abc-xyz/0123456789_@[`{~", true, false},
		{"A", true, true},
		{"Z", true, true},
		{"@[`{", true, false},
		{"0123456789abcdeZ", true, true},
		{"0123456789abcdefA", true, true},
		{"abcdefgh\x7f", true, false},
		{"abcdefgh\xc3\xa9", false, false},
		{"ABCDEFG\xff", false, false},
		{"é", false, false},
	}
	for _, tt := range tests {
		if ascii, upper := asciiCase(tt.in); ascii != tt.ascii || upper != tt.upper {
			t.Errorf("asciiCase(%q) = %v, %v, want %v, %v", tt.in, ascii, upper, tt.ascii, tt.upper)
		}
	}
}

func TestContainsLowerASCII(t *testing.T) {
	tests := []struct {
		s, needle string
		want      bool
	}{
		{"Project-007", "project", true},
		{"Project-007", "ject-0", true},
		{"Project-007", "", true},
		{"Project-007", "007x", false},
		{"PROJ", "proj", true},
		{"PRO", "proj", false},
		{"proj", "PROJ", false}, // needles are lowered: uppercase never matches
		{"i", "i\u0307", false},
		{"ppproj", "pproj", true},
		{"[", "{", false},
	}
	for _, tt := range tests {
		if got := containsLowerASCII(tt.s, tt.needle); got != tt.want {
			t.Errorf("containsLowerASCII(%q, %q) = %v, want %v", tt.s, tt.needle, got, tt.want)
		}
	}
}

// naiveCandidates is ListCandidates as first written: filter by
// strings.Contains(lowerJS(...)) in the Source's order, stable sort by
// rank, cut.
func naiveCandidates(f *fakeSource, target Target, query string, limit int) []string {
	needle := lowerJS(query)
	type rec struct {
		c    Candidate
		rank uint8
	}
	var recs []rec
	for _, s := range f.sessions {
		if target.isSelf(s.id) {
			continue
		}
		// Titles are read by id: with duplicate ids the first session's.
		label := s.id
		if first := f.find(s.id); first.titleErr == nil && first.title != nil {
			label = *first.title
		}
		if needle != "" && !strings.Contains(lowerJS(s.id), needle) &&
			(s.cwd == nil || !strings.Contains(lowerJS(*s.cwd), needle)) &&
			!strings.Contains(lowerJS(label), needle) {
			continue
		}
		recs = append(recs, rec{Candidate{SessionID: s.id, Label: label, CWD: s.cwd, CreatedAt: s.createdAt}, candidateRank(s.cwd, target.CWD)})
	}
	slices.SortStableFunc(recs, func(a, b rec) int { return int(a.rank) - int(b.rank) })
	out := []string{}
	for _, r := range recs[:min(len(recs), limit)] {
		out = append(out, r.c.SessionID+"="+r.c.Label)
	}
	return out
}

// reversedTitles answers ReadTitles in reverse order, so ListCandidates
// cannot take titles by position.
type reversedTitles struct{ *fakeSource }

func (r reversedTitles) ReadTitles(ctx context.Context, ids []string) ([]TitleResult, error) {
	out, err := r.fakeSource.ReadTitles(ctx, ids)
	slices.Reverse(out)
	return out, err
}

// TestListCandidatesMatchesNaive compares ListCandidates with the naive
// algorithm on random sessions and queries, repeated on one Service so
// later queries run on a warm memo.
func TestListCandidatesMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	cwds := []*string{nil, ptr("/same"), ptr("/SAME/İ"), ptr("/else/Σ"), ptr("/x")}
	src := &fakeSource{}
	for i := range 300 {
		s := fakeSession{id: randomLowerString(rng, 4), cwd: cwds[rng.IntN(len(cwds))], createdAt: int64(300 - i)}
		switch rng.IntN(4) {
		case 0:
		case 1:
			s.title, s.titleErr = ptr(randomLowerString(rng, 6)), errDisk
		default:
			s.title = ptr(randomLowerString(rng, 6))
		}
		src.sessions = append(src.sessions, s)
	}
	targets := []Target{{}, {SessionID: &src.sessions[5].id, CWD: ptr("/same")}, {CWD: ptr("/else/Σ")}}
	for _, source := range []Source{src, reversedTitles{src}} {
		s := newTestService(t, source, DefaultConfig())
		for range 300 {
			query := randomLowerString(rng, 2)
			target := targets[rng.IntN(len(targets))]
			limit := []int{1, 3, 50, 1000}[rng.IntN(4)]
			got, err := s.ListCandidates(context.Background(), target, query, int64(limit))
			if err != nil {
				t.Fatal(err)
			}
			gotIDs := []string{}
			for _, c := range got {
				gotIDs = append(gotIDs, c.SessionID+"="+c.Label)
			}
			if want := naiveCandidates(src, target, query, limit); !slices.Equal(gotIDs, want) {
				t.Fatalf("query %q limit %d target %v:\ngot  %q\nwant %q", query, limit, target, gotIDs, want)
			}
		}
	}
}
