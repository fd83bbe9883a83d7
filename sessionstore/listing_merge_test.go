package sessionstore

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestMergedListingIsTheRebuiltOne adds random entries in random batches,
// as a first pass publishes them, and checks every listing addToListing
// publishes against rebuildListing's of the same entries: duplicate ids
// (the first in key order listed, also when a later batch brings one
// before it), equal creation times, ids equal but for case and ids that
// collate equal (key order decides), entries that are not listable, and
// a batch replacing an entry (which must not merge).
func TestMergedListingIsTheRebuiltOne(t *testing.T) {
	merges, batches := 0, 0
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 1))
		var pool []*entry
		for i := range 300 {
			id := fmt.Sprintf("id-%d", r.IntN(400))
			switch r.IntN(5) {
			case 0:
				id = fmt.Sprintf("ID-%d", r.IntN(400))
			case 1:
				id += "\u200b" // collates equal to id
			}
			pool = append(pool, &entry{
				Proj: fmt.Sprintf("p%d", r.IntN(6)), Seg: fmt.Sprintf("s%03d", i),
				ListedID: id, ListedCreatedAt: int64(r.IntN(30)), ListedRaw: []byte(id),
				Enc: Zstd, HasZstd: true, Listed: r.IntN(8) > 0, IdentityOK: r.IntN(8) > 0,
			})
		}
		r.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
		merged := &Indexed{entries: map[dirKey]*entry{}}
		var ids listedIDs
		for len(pool) > 0 {
			batches++
			n := min(len(pool), 1+r.IntN(40))
			batch := pool[:n:n]
			pool = pool[n:]
			if r.IntN(10) == 0 && len(merged.all) > 0 {
				// a replacement of a published entry: never merged
				old := merged.all[r.IntN(len(merged.all))]
				re := *old
				re.ListedCreatedAt++
				batch = append(batch, &re)
			}
			for _, e := range batch {
				merged.putEntryForTest(e)
			}
			replaces := len(merged.all)+len(batch) != len(merged.entries)
			ok := merged.addToListing(batch, &ids)
			if ok && replaces {
				t.Fatalf("seed %d: a batch replacing an entry was merged", seed)
			}
			if !ok {
				merged.rebuildListing()
			} else {
				merges++
			}
			rebuilt := &Indexed{entries: maps.Clone(merged.entries)}
			rebuilt.rebuildListing()
			if !slices.Equal(merged.all, rebuilt.all) || !slices.Equal(merged.listed, rebuilt.listed) {
				t.Fatalf("seed %d: merged listing %v\nrebuilt %v", seed, keysOf(merged.listed), keysOf(rebuilt.listed))
			}
			for i := range merged.listing {
				if merged.listing[i].ID != rebuilt.listing[i].ID || merged.listing[i].CreatedAt != rebuilt.listing[i].CreatedAt {
					t.Fatalf("seed %d: headers differ at %d", seed, i)
				}
			}
		}
	}
	// The first batch of a seed is rebuilt (nothing listed yet), and the
	// many duplicate ids make some displace one listed: a good share must
	// still be merges (about 44 %).
	t.Logf("%d of %d batches merged", merges, batches)
	if merges < batches/3 {
		t.Fatalf("%d of %d batches merged: the test no longer checks merges", merges, batches)
	}
}

func (ix *Indexed) putEntryForTest(e *entry) { ix.entries[e.dirKey()] = e }

func keysOf(es []*entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Proj+"/"+e.Seg+":"+e.ListedID)
	}
	return out
}

// TestFirstPassPublishesSpacedByItsLength: a server's first pass publishes
// its batches at most every eighth of the pass so far (and every
// progressEvery), so that merging them into the listing stays linear in
// all; a snapshot publishes only at the end.
func TestFirstPassPublishesSpacedByItsLength(t *testing.T) {
	now := time.Now()
	for _, c := range []struct {
		name            string
		pass, sinceLast time.Duration
		batch           int
		snapshot        bool
		due             bool
	}{
		{"early, a full batch", 50 * time.Millisecond, 40 * time.Millisecond, 256, false, true},
		{"early, a small batch", 50 * time.Millisecond, 40 * time.Millisecond, 10, false, false},
		{"early, a small batch after progressEvery", 300 * time.Millisecond, 150 * time.Millisecond, 10, false, true},
		{"16 s in, 1.9 s after the last", 16 * time.Second, 1900 * time.Millisecond, 5000, false, false},
		{"16 s in, 2.1 s after the last", 16 * time.Second, 2100 * time.Millisecond, 5000, false, true},
		{"a snapshot", 16 * time.Second, 10 * time.Second, 5000, true, false},
	} {
		p := publisher{ix: &Indexed{opts: IndexOptions{Snapshot: c.snapshot}}, initial: true,
			start: now.Add(-c.pass), last: now.Add(-c.sinceLast), batch: make([]*entry, c.batch)}
		if got := p.due(); got != c.due {
			t.Errorf("%s: due %v, want %v", c.name, got, c.due)
		}
	}
}
