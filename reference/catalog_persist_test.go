package reference

import (
	"encoding/binary"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"testing"

	"github.com/cespare/xxhash/v2"

	"github.com/dsh-lsp/dsh-lsp/internal/binenc"
)

// persistCatalog returns a catalog of n random sessions with its trigram
// index built, and a fresh, unprepared catalog of the same sessions.
func persistCatalog(t *testing.T, rng *rand.Rand, n int) (built, fresh *Catalog) {
	t.Helper()
	headers, titles := randomTrigramCatalog(rng, n)
	built = &Catalog{Headers: headers, Titles: titles}
	if err := built.Prepare(); err != nil {
		t.Fatal(err)
	}
	return built, &Catalog{Headers: slices.Clone(headers), Titles: slices.Clone(titles)}
}

// sameAnswersAsScan checks that c answers random queries exactly like the
// scan of the same sessions.
func sameAnswersAsScan(t *testing.T, rng *rand.Rand, c *Catalog) {
	t.Helper()
	scan := &Catalog{Headers: c.Headers, Titles: c.Titles}
	scan.triStarted.Store(true)
	targets := []Target{{}, {CWD: ptr("/same")}, {CWD: ptr("/else/Σ")}}
	for range 300 {
		query := randomQuery(rng, c.Headers, c.Titles)
		target := targets[rng.IntN(len(targets))]
		limit := int64([]int{1, 3, 50, 100000}[rng.IntN(4)])
		want, err := catalogCandidates(scan, target, lowerJS(query), limit)
		if err != nil {
			t.Fatal(err)
		}
		got, err := catalogCandidates(c, target, lowerJS(query), limit)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("query %q, limit %d, target %+v:\nindex %+v\nscan  %+v", query, limit, target, got, want)
		}
	}
}

// TestSearchIndexRoundTrip checks that a catalog given the encoded index
// of a catalog of the same sessions (built, or derived with changed
// sessions) has it at once, without building, and answers exactly like
// the scan; and that a catalog without an index encodes to nil.
func TestSearchIndexRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 6))
	for _, tc := range []struct {
		name    string
		derived bool
	}{{"built", false}, {"derived, with changed sessions", true}} {
		t.Run(tc.name, func(t *testing.T) {
			built, fresh := persistCatalog(t, rng, minTrigramSessions+300)
			if tc.derived {
				titles := slices.Clone(built.Titles)
				for range 5 {
					titles[rng.IntN(len(titles))].Title = ptr(randomLowerString(rng, 12))
				}
				next := &Catalog{Headers: built.Headers, Titles: titles}
				next.Follows(built)
				if err := next.Prepare(); err != nil {
					t.Fatal(err)
				}
				if len(next.tri.Load().dirty) == 0 {
					t.Fatal("the index was not derived")
				}
				built, fresh = next, &Catalog{Headers: slices.Clone(built.Headers), Titles: slices.Clone(titles)}
			}
			data := built.MarshalSearchIndex()
			if data == nil {
				t.Fatal("no encoding of a built index")
			}
			if err := fresh.UnmarshalSearchIndex(data); err != nil {
				t.Fatal(err)
			}
			if fresh.tri.Load() == nil || !fresh.triStarted.Load() {
				t.Fatal("the decoded index is not in use")
			}
			if !slices.Equal(fresh.tri.Load().sigs, byteSigs(fresh)) || !slices.Equal(built.tri.Load().sigs, byteSigs(built)) {
				t.Fatal("the index's byte signatures are not those of its catalog's sessions")
			}
			sameAnswersAsScan(t, rng, fresh)
			if again := fresh.MarshalSearchIndex(); !slices.Equal(again, data) {
				t.Error("the decoded index encodes differently")
			}
			if err := fresh.UnmarshalSearchIndex(data); err == nil {
				t.Error("a second index was accepted")
			}
		})
	}
	small, _ := persistCatalog(t, rng, 100)
	if data := small.MarshalSearchIndex(); data != nil {
		t.Errorf("a catalog below %d sessions encoded %d bytes, want nil", minTrigramSessions, len(data))
	}
}

// TestSearchIndexRejectsAnotherCatalog checks that an encoded index is
// refused by a catalog whose sessions or lowered strings differ, or with
// another version, and that such a catalog still builds its own index
// and answers like the scan.
func TestSearchIndexRejectsAnotherCatalog(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 7))
	for _, tc := range []struct {
		name   string
		change func(c *Catalog, data []byte) []byte
	}{
		{"a title changed", func(c *Catalog, data []byte) []byte {
			c.Titles[7].Title, c.Titles[7].Err = ptr("a title never seen"), nil
			return data
		}},
		{"two sessions swapped", func(c *Catalog, data []byte) []byte {
			c.Headers[1], c.Headers[2] = c.Headers[2], c.Headers[1]
			c.Titles[1], c.Titles[2] = c.Titles[2], c.Titles[1]
			return data
		}},
		{"a session fewer", func(c *Catalog, data []byte) []byte {
			c.Headers, c.Titles = c.Headers[1:], c.Titles[1:]
			return data
		}},
		{"a cwd removed", func(c *Catalog, data []byte) []byte {
			for i := range c.Headers {
				if c.Headers[i].CWD != nil {
					c.Headers[i].CWD = nil
					break
				}
			}
			return data
		}},
		{"another lower-casing", func(_ *Catalog, data []byte) []byte {
			data = slices.Clone(data)
			data[len(searchIndexMagic)+4+4] ^= 1 // the first byte of its name
			return withChecksum(data)
		}},
		{"another version", func(_ *Catalog, data []byte) []byte {
			data = slices.Clone(data)
			binary.LittleEndian.PutUint32(data[len(searchIndexMagic):], SearchIndexVersion+1)
			return withChecksum(data)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			built, fresh := persistCatalog(t, rng, minTrigramSessions+10)
			data := tc.change(fresh, built.MarshalSearchIndex())
			if err := fresh.UnmarshalSearchIndex(data); err == nil {
				t.Fatal("accepted")
			}
			if fresh.tri.Load() != nil {
				t.Fatal("an index was installed")
			}
			if err := fresh.Prepare(); err != nil {
				t.Fatal(err)
			}
			sameAnswersAsScan(t, rng, fresh)
		})
	}
}

// withChecksum replaces data's trailing checksum by that of its body.
func withChecksum(data []byte) []byte {
	body := data[:len(data)-8]
	binary.LittleEndian.PutUint64(data[len(body):], checksum64(body))
	return data
}

// TestSearchIndexDamagedBytes checks that truncated or altered encodings
// give an error, never a panic; and that an alteration with its checksum
// recomputed (deliberate) is either refused or gives an index whose
// queries do not panic.
func TestSearchIndexDamagedBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 8))
	built, _ := persistCatalog(t, rng, minTrigramSessions+5)
	data := built.MarshalSearchIndex()
	fresh := func() *Catalog { return &Catalog{Headers: built.Headers, Titles: built.Titles} }
	for _, n := range []int{0, 1, 8, 12, 20, 40, len(data) / 2, len(data) - 9, len(data) - 1} {
		if err := fresh().UnmarshalSearchIndex(data[:n]); err == nil {
			t.Errorf("truncated to %d of %d bytes: accepted", n, len(data))
		}
	}
	accepted := 0
	for range 400 {
		bad := slices.Clone(data)
		k := rng.IntN(len(bad) - 8)
		bad[k] ^= byte(1 + rng.IntN(255))
		if err := fresh().UnmarshalSearchIndex(bad); err == nil {
			t.Fatalf("byte %d altered: accepted without its checksum", k)
		}
		c := fresh()
		if c.UnmarshalSearchIndex(withChecksum(bad)) == nil {
			accepted++
			for range 50 {
				catalogCandidates(c, Target{CWD: ptr("/same")}, lowerJS(randomQuery(rng, c.Headers, c.Titles)), 50)
			}
		}
	}
	t.Logf("%d of 400 deliberate alterations decoded", accepted)
}

// TestSearchIndexForgedTableSizeAllocatesLittle: a table size claimed by
// a forged encoding (checksum recomputed) larger than its bytes is refused
// before the table is allocated.
func TestSearchIndexForgedTableSizeAllocatesLittle(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 9))
	built, _ := persistCatalog(t, rng, minTrigramSessions+5)
	bad := slices.Clone(built.MarshalSearchIndex())
	r := binenc.NewReader(bad[len(searchIndexMagic):])
	r.Uint32LE()                            // version
	r.Fixed(int(r.Uint32LE()))              // lower-casing
	r.Uint32LE()                            // sessions
	r.Fixed(8)                              // fingerprint
	readLowered(r, len(built.Headers), nil) // ids
	readLowered(r, len(built.Headers), nil) // labels
	r.Uint32LE()                            // trigram count
	at := len(bad) - r.Len()                // the table size
	binary.LittleEndian.PutUint32(bad[at:], 30)
	bad = withChecksum(bad)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err := (&Catalog{Headers: built.Headers, Titles: built.Titles}).UnmarshalSearchIndex(bad)
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatal("a table of 2^30 slots in a few kilobytes was accepted")
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
		t.Fatalf("refusing it allocated %d MB", grew>>20)
	}
}

// TestCatalogSearchIndexField: a catalog given SearchIndex decodes it in
// place of a build when it fits (a query meanwhile scans, with the same
// answers), and builds its own, saying why, when it does not.
func TestCatalogSearchIndexField(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 9))
	built, fresh := persistCatalog(t, rng, minTrigramSessions+200)
	data := built.MarshalSearchIndex()
	fresh.SearchIndex = data
	sameAnswersAsScan(t, rng, fresh) // the first query starts the decode
	if err := fresh.Prepare(); err != nil {
		t.Fatal(err)
	}
	if err := fresh.SearchIndexErr(); err != nil || !fresh.HasSearchIndex() {
		t.Fatalf("the fitting search index was not taken: %v", err)
	}
	if fresh.SearchIndex != nil || !fresh.SearchIndexGiven() {
		t.Fatal("the decoded search index's bytes are kept, or the catalog forgot it was given one")
	}
	if !slices.Equal(fresh.lowLabels, built.lowLabels) || !slices.Equal(fresh.lowIDs, built.lowIDs) {
		t.Fatal("the lowered strings taken from the search index differ from lowering")
	}
	if !slices.Equal(fresh.tri.Load().sigs, byteSigs(fresh)) {
		t.Fatal("the decoded index's byte signatures are not those of the catalog's sessions")
	}
	if again := fresh.MarshalSearchIndex(); !slices.Equal(again, data) {
		t.Error("the taken index encodes differently from the one given")
	}
	other, _ := persistCatalog(t, rng, minTrigramSessions+200)
	other = &Catalog{Headers: other.Headers, Titles: other.Titles, SearchIndex: data}
	if err := other.Prepare(); err != nil {
		t.Fatal(err)
	}
	if other.SearchIndexErr() == nil || !other.HasSearchIndex() || !other.SearchIndexGiven() {
		t.Fatal("another catalog's search index was taken, or none was built")
	}
	for i := range other.Headers {
		if want := lowerJS(other.label(i)); other.lowLabels[i] != want {
			t.Fatalf("session %d: lowered label %q, want %q", i, other.lowLabels[i], want)
		}
	}
	sameAnswersAsScan(t, rng, other)
}

// TestSearchFingerprintIsOneRunningHash: the fingerprint hashed in
// parallel parts is the running xxHash-64 of the sessions' (id, cwd,
// label) hashes in order, the value persisted indexes were written with,
// below and above the size from which it runs in parallel.
func TestSearchFingerprintIsOneRunningHash(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	for _, n := range []int{0, 7, parallelFingerprintSessions + 13} {
		c, _ := persistCatalog(t, rng, n)
		h := xxhash.New()
		var b [24]byte
		for i := range c.Headers {
			var cwd uint64
			if k := c.cwdOf[i]; k >= 0 {
				cwd = loweredSum(c.cwds[k].cwd, c.cwds[k].low)
			}
			binary.LittleEndian.PutUint64(b[:], loweredSum(c.Headers[i].ID, c.lowID(i)))
			binary.LittleEndian.PutUint64(b[8:], cwd)
			binary.LittleEndian.PutUint64(b[16:], loweredSum(c.label(i), c.lowLabels[i]))
			h.Write(b[:])
		}
		if got, want := c.searchFingerprint(), h.Sum64(); got != want {
			t.Errorf("%d sessions: fingerprint %x, want %x", n, got, want)
		}
	}
}
