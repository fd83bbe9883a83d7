package reference

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// ErrCatalogUnavailable is returned (possibly wrapped) by
// CatalogSource.Catalog when the source cannot give a snapshot that equals
// its ListSessions and ReadTitles answers right now (for example while an
// index's first pass runs); callers then use ListSessions and ReadTitles.
var ErrCatalogUnavailable = errors.New("session catalog unavailable")

// Catalog is an immutable snapshot of a Source's sessions and their
// titles: Headers as ListSessions returns them and, in the same order,
// Titles[i] the ReadTitles result for Headers[i].ID. A source shares one
// Catalog between queries until its sessions change, so nothing may modify
// it once returned; the lowercased strings that candidate filtering needs
// are computed once per Catalog, on first use.
type Catalog struct {
	Headers []SessionHeader
	Titles  []TitleResult
	// Verify, when set, says the snapshot was taken before the source had
	// revalidated every session (a restart on a persisted index): its
	// sessions are the store's, and a session's fields are right once
	// Verify reports the sessions holding it unchanged. A caller verifies
	// the sessions it serves; on false it asks for the catalog again,
	// which then waits for the source's revalidation.
	Verify func(ctx context.Context, ids []string) bool

	once    sync.Once
	prepErr error
	// labels[i] is the label of Headers[i].
	labels []string
	// lowered holds, for each header in order, lowerJS of its id, cwd
	// ("" without one) and label, each followed by catalogSep; fields[i]
	// are the offsets of header i's three fields in it. A needle without
	// catalogSep matches inside one field only, so one strings.Index scan
	// of lowered filters every session.
	lowered string
	fields  []catalogFields

	// tri indexes lowered by trigram (catalog_trigram.go), built after
	// prepare by Prepare or in the background after a query's first use.
	tri        atomic.Pointer[trigramIndex]
	triOnce    sync.Once
	triStarted atomic.Bool
	// prev is an earlier catalog of the same source with a trigram index
	// (Follows), from which this one's is derived when few sessions
	// changed; dropped once used.
	prev atomic.Pointer[Catalog]
}

// catalogSep ends each field in Catalog.lowered.
const catalogSep = 0

// catalogFields locates one header's lowered fields in Catalog.lowered:
// id is lowered[start:idEnd], cwd lowered[idEnd+1:cwdEnd], label
// lowered[cwdEnd+1:end-1].
type catalogFields struct{ start, idEnd, cwdEnd, end int }

// CatalogSource is a Source that can also answer with a Catalog snapshot,
// which lets ListCandidates filter every session without reading their
// titles on each query.
type CatalogSource interface {
	Source
	// Catalog returns the current snapshot, which must equal what
	// ListSessions and ReadTitles (of every listed id) would answer now.
	// It returns an error wrapping ErrCatalogUnavailable when it cannot;
	// like ListSessions it must honour ctx.
	Catalog(ctx context.Context) (*Catalog, error)
}

// Prepare computes the catalog's search data (labels, lowercased strings
// and, for a large catalog, their trigram index) now instead of on its
// first queries, and reports a malformed catalog. A source may call it
// after building a snapshot in the background so that no query pays for
// it.
func (c *Catalog) Prepare() error {
	if err := c.prepare(); err != nil {
		return err
	}
	if len(c.Headers) < minTrigramSessions {
		return nil
	}
	if !c.triStarted.CompareAndSwap(false, true) || !c.deriveTrigrams() {
		// Builds, or waits for the build a query started.
		c.buildTrigrams()
	}
	return nil
}

// Follows tells c that it replaces prev, the same source's previous
// snapshot: when the two list the same sessions (ids and cwds, in order)
// and few labels changed, c's trigram index is derived from prev's in
// one comparison of the lowered strings instead of being rebuilt (a
// live session's appends change one title at a time). Call it before c
// is shared. At most one earlier catalog is kept, until c's index exists.
func (c *Catalog) Follows(prev *Catalog) {
	if prev == nil || prev == c {
		return
	}
	if prev.tri.Load() == nil {
		// prev never got an index (no query used it): derive from what
		// it would have derived from, keeping the chain one link long.
		prev = prev.prev.Load()
		if prev == nil || prev.tri.Load() == nil {
			return
		}
	}
	c.prev.Store(prev)
}

// prepare checks that Titles parallels Headers and computes the labels and
// lowercased strings, once.
func (c *Catalog) prepare() error {
	c.once.Do(func() {
		if len(c.Titles) != len(c.Headers) {
			c.prepErr = fmt.Errorf("session catalog has %d title results for %d sessions", len(c.Titles), len(c.Headers))
			return
		}
		n := len(c.Headers)
		c.labels = make([]string, n)
		c.fields = make([]catalogFields, n)
		size := 0
		for i := range c.Headers {
			size += len(c.Headers[i].ID) + 3
			if cwd := c.Headers[i].CWD; cwd != nil {
				size += len(*cwd)
			}
			if t := c.Titles[i].Title; t != nil {
				size += len(*t)
			}
		}
		b := make([]byte, 0, size+size/8) // lowering non-ASCII may lengthen a little
		for i := range c.Headers {
			h, t := &c.Headers[i], &c.Titles[i]
			if t.SessionID != h.ID {
				c.prepErr = fmt.Errorf("session catalog: title result %d is for session %q, not %q", i, t.SessionID, h.ID)
				return
			}
			label := h.ID
			if t.Err == nil && t.Title != nil {
				label = *t.Title
			}
			c.labels[i] = label
			f := &c.fields[i]
			f.start = len(b)
			b = appendLowerJS(b, h.ID)
			f.idEnd = len(b)
			b = append(b, catalogSep)
			if h.CWD != nil {
				b = appendLowerJS(b, *h.CWD)
			}
			f.cwdEnd = len(b)
			b = append(b, catalogSep)
			b = appendLowerJS(b, label)
			b = append(b, catalogSep)
			f.end = len(b)
		}
		c.lowered = string(b)
	})
	return c.prepErr
}

// appendLowerJS appends lowerJS(s) to b, lowering ASCII s in place
// (one pass, no intermediate string).
func appendLowerJS(b []byte, s string) []byte {
	mark := len(b)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return append(b[:mark], lowerJS(s)...)
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	return b
}

// matches is candidateMatches for Headers[i]: needle (lowerJS output, not
// empty) in its lowercased id, cwd or label.
func (c *Catalog) matches(i int, needle string) bool {
	f := c.fields[i]
	return strings.Contains(c.lowered[f.start:f.idEnd], needle) ||
		c.Headers[i].CWD != nil && strings.Contains(c.lowered[f.idEnd+1:f.cwdEnd], needle) ||
		strings.Contains(c.lowered[f.cwdEnd+1:f.end-1], needle)
}

// catalogCandidates is ListCandidates over a catalog: the same ranking,
// filter and cut as the ListSessions + ReadTitles path. It visits the
// matching sessions in the catalog's order (one strings.Index scan over
// the lowered fields finds them), keeps up to limit of each rank, and
// stops once limit sessions of the first rank are found; it allocates
// only for those.
func catalogCandidates(c *Catalog, target Target, needle string, limit int64) ([]Candidate, error) {
	if err := c.prepare(); err != nil {
		return nil, err
	}
	if needle == "" || usesTrigrams(needle) {
		if x := c.trigrams(); x != nil {
			return indexedCandidates(c, x, target, needle, limit), nil
		}
	}
	rb := rankBuckets{c: c, target: target, limit: limit}
	switch {
	case needle == "":
		for i := range c.Headers {
			if rb.add(i) {
				break
			}
		}
	case strings.IndexByte(needle, catalogSep) >= 0:
		// The needle could span fields in c.lowered: test each field.
		for i := range c.Headers {
			if c.matches(i, needle) && rb.add(i) {
				break
			}
		}
	default:
		c.scanLowered(needle, rb.add)
	}
	return rb.cut(), nil
}

// scanLowered calls visit with each session whose lowered fields contain
// needle (which holds no catalogSep), in order, until visit returns true:
// one strings.Index scan over c.lowered.
func (c *Catalog) scanLowered(needle string, visit func(i int) bool) {
	i := 0
	for pos := 0; pos < len(c.lowered); {
		k := strings.Index(c.lowered[pos:], needle)
		if k < 0 {
			return
		}
		at := pos + k
		for c.fields[i].end <= at {
			i++
		}
		if visit(i) {
			return
		}
		pos = c.fields[i].end
	}
}

// rankBuckets collects a catalog's sessions by rank, up to limit of each.
type rankBuckets struct {
	c       *Catalog
	target  Target
	limit   int64
	buckets [3][]int32
}

// add files session i under its rank, unless it is the target, and
// reports whether the cut is complete (limit sessions of rank 0).
func (rb *rankBuckets) add(i int) bool {
	h := &rb.c.Headers[i]
	if rb.target.isSelf(h.ID) {
		return false
	}
	r := candidateRank(h.CWD, rb.target.CWD)
	if int64(len(rb.buckets[r])) < rb.limit {
		rb.buckets[r] = append(rb.buckets[r], int32(i))
	}
	return int64(len(rb.buckets[0])) == rb.limit
}

// cut returns the first limit sessions collected, rank by rank.
func (rb *rankBuckets) cut() []Candidate {
	n := min(int64(len(rb.buckets[0])+len(rb.buckets[1])+len(rb.buckets[2])), rb.limit)
	out := make([]Candidate, 0, n)
	for _, bucket := range rb.buckets {
		for _, i := range bucket {
			if int64(len(out)) == n {
				return out
			}
			out = append(out, rb.c.candidate(i))
		}
	}
	return out
}

// candidate is the candidate for session i.
func (c *Catalog) candidate(i int32) Candidate {
	return c.Headers[i].candidate(c.labels[i])
}
