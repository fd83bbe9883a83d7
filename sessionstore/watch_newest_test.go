package sessionstore

import (
	"cmp"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
)

// TestNewestEntriesIsTheHeadOfTheWholeOrder: the bounded selection gives
// what sorting every entry newest first (ties in key order) and taking
// the first n gives, ties at the bound included.
func TestNewestEntriesIsTheHeadOfTheWholeOrder(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	for round := range 200 {
		entries := map[dirKey]*entry{}
		for i := range r.Intn(40) {
			k := dirKey{fmt.Sprintf("p%d", r.Intn(3)), fmt.Sprintf("s%02d", i)}
			e := &entry{Proj: k.proj, Seg: k.seg}
			e.Sig.MtimeNs = int64(r.Intn(6)) // many ties
			entries[k] = e
		}
		var all []written
		for k, e := range entries {
			all = append(all, written{k, e.Sig.MtimeNs})
		}
		slices.SortFunc(all, func(a, b written) int {
			return cmp.Or(cmp.Compare(b.mtime, a.mtime), strings.Compare(a.key.proj, b.key.proj), strings.Compare(a.key.seg, b.key.seg))
		})
		n := r.Intn(45) - 2
		want := all[:max(0, min(n, len(all)))]
		if got := newestEntries(entries, n); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("round %d, n %d: newestEntries = %v, want %v", round, n, got, want)
		}
	}
}
