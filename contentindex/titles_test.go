package contentindex

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestTitleSetMatchesItsRows keeps a titleSet and a plain slice of the
// same rows through random syncs (rows added below every rowid, rows
// gone, enough of both to slice the signatures again several times) and
// checks after each that the set lists the same rows, and that matching
// takes exactly the rows whose title holds every term, in rowid order.
func TestTitleSetMatchesItsRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	alphabet := []string{"a", "b", "c", "1", "2", " ", "-", "é", "界"}
	word := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		return b.String()
	}
	var rows []titleRow
	next := int64(0)
	add := func(n int) []titleRow {
		added := make([]titleRow, n)
		for i := n - 1; i >= 0; i-- {
			next--
			added[i] = titleRow{rowid: next, ltitle: word(rng.IntN(16))}
		}
		return added
	}
	rows = add(500)
	set := newTitleSet(slices.Clone(rows))
	rebuilt := 0
	for step := range 300 {
		gone := map[int64]bool{}
		for range rng.IntN(3) * rng.IntN(40) {
			if len(rows) > 0 {
				gone[rows[rng.IntN(len(rows))].rowid] = true
			}
		}
		added := add(rng.IntN(3) * rng.IntN(30))
		before := set.baseSigs
		set = set.with(added, gone)
		if set.baseSigs != before {
			rebuilt++
		}
		rows = append(slices.Clone(added), slices.DeleteFunc(rows, func(r titleRow) bool { return gone[r.rowid] })...)

		var listed []titleRow
		set.each(func(r *titleRow) bool { listed = append(listed, *r); return true }, nil)
		if !slices.Equal(listed, rows) || set.len() != len(rows) {
			t.Fatalf("step %d: the set lists %d rows (len %d), want %d", step, len(listed), set.len(), len(rows))
		}
		for range 5 {
			terms := []string{word(1 + rng.IntN(2))}
			if rng.IntN(3) == 0 {
				terms = append(terms, word(1))
			}
			var want []int64
			for _, r := range rows {
				if holdsAll(r.ltitle, terms) {
					want = append(want, r.rowid)
				}
			}
			var got []int64
			set.matching(terms, func(rowid int64) bool { got = append(got, rowid); return true })
			if !slices.Equal(got, want) {
				t.Fatalf("step %d, terms %q: matching took %v, want %v", step, terms, got, want)
			}
		}
	}
	if rebuilt < 3 {
		t.Errorf("the signatures were sliced again %d times; the test means to cover several", rebuilt)
	}
}

func holdsAll(s string, terms []string) bool {
	for _, t := range terms {
		if !strings.Contains(s, t) {
			return false
		}
	}
	return true
}
