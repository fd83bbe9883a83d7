package reference

import (
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"
)

// benchCatalog is newBenchSource(n) as a catalog (not prepared).
func benchCatalog(n int) *Catalog {
	src := newBenchSource(n)
	c := &Catalog{Headers: src.headers}
	for _, h := range src.headers {
		c.Titles = append(c.Titles, TitleResult{SessionID: h.ID, Title: src.titles[h.ID]})
	}
	return c
}

// BenchmarkCatalogCandidatesNewQueries is completion while typing at 10k
// and 100k sessions: every query is new (3 hex digits, each in ~1-3 % of
// the ids at 10k; or a word being typed, 3 to 6 letters), answered by the
// scan of the lowered strings and by the trigram index, with p50/p99 per
// query, the index's build time, its bytes per session, and the heap
// bytes per session of all the catalog's search data (lowered strings,
// cwd table, index) beyond its Headers and Titles.
func BenchmarkCatalogCandidatesNewQueries(b *testing.B) {
	words := []string{"migra", "refac", "pars", "compl", "überp", "straß", "界面", "proj", "serv", "cach"}
	for _, n := range []int{10000, 100000} {
		c := benchCatalog(n)
		heap0 := heapInUse()
		if err := c.prepare(); err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		c.buildTrigrams()
		build := time.Since(t0)
		search := float64(heapInUse()-heap0) / float64(n)
		scan := &Catalog{Headers: c.Headers, Titles: c.Titles}
		scan.triStarted.Store(true)
		if err := scan.prepare(); err != nil {
			b.Fatal(err)
		}
		target := Target{CWD: c.Headers[17].CWD}
		for _, kind := range []string{"hex", "word"} {
			for _, path := range []string{"scan", "trigram"} {
				cat := c
				if path == "scan" {
					cat = scan
				}
				b.Run(fmt.Sprintf("sessions=%d/query=%s/path=%s", n, kind, path), func(b *testing.B) {
					lat := make([]time.Duration, 0, b.N)
					b.ReportAllocs()
					for i := 0; i < b.N; i++ {
						q := fmt.Sprintf("%03x", i*2654435761%4096)
						if kind == "word" {
							w := words[i%len(words)]
							q = w[:3+i/len(words)%(len(w)-2)]
						}
						t := time.Now()
						if _, err := catalogCandidates(cat, target, lowerJS(q), 50); err != nil {
							b.Fatal(err)
						}
						lat = append(lat, time.Since(t))
					}
					slices.Sort(lat)
					b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
					b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
					if path == "trigram" {
						b.ReportMetric(float64(build.Milliseconds()), "build-ms")
						b.ReportMetric(float64(c.tri.Load().size())/float64(n), "index-B/session")
						b.ReportMetric(search, "search-B/session")
					}
				})
			}
		}
	}
}

// heapInUse is the live heap after a GC.
func heapInUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// size is the index's memory in bytes, without the map's overhead.
func (x *trigramIndex) size() int {
	n := 4*len(x.offs) + 4*len(x.count) + len(x.post) + 8*len(x.ids.keys) + 4*len(x.noCWD) + 4*len(x.dirty)
	for _, l := range x.byCWD {
		n += 24 + 4*len(l)
	}
	return n
}

// BenchmarkCatalogSearchIndexDecode is a restart given the persisted
// search index at 100,000 sessions: UnmarshalSearchIndex (lowered strings,
// checks, decoding) against Prepare building it, with the encoding's
// bytes per session.
func BenchmarkCatalogSearchIndexDecode(b *testing.B) {
	src := benchCatalog(100000)
	if err := src.Prepare(); err != nil {
		b.Fatal(err)
	}
	data := src.MarshalSearchIndex()
	b.Run("decode", func(b *testing.B) {
		for b.Loop() {
			c := &Catalog{Headers: src.Headers, Titles: src.Titles}
			if err := c.UnmarshalSearchIndex(data); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(data))/float64(len(src.Headers)), "encoded-B/session")
	})
	b.Run("build", func(b *testing.B) {
		for b.Loop() {
			c := &Catalog{Headers: src.Headers, Titles: src.Titles}
			if err := c.Prepare(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
