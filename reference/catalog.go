package reference

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dsh-lsp/dsh-lsp/internal/binenc"
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
	// the sessions it serves, given by their positions in Headers; on
	// false it asks for the catalog again, which then waits for the
	// source's revalidation.
	Verify func(ctx context.Context, served []int32) bool
	// SearchIndex, when set, is what MarshalSearchIndex gave for an
	// earlier catalog of the same source (a persisted cache): the trigram
	// index is decoded from it, when it was made from the same sessions
	// and titles, instead of built (SearchIndexErr says why not). The
	// catalog drops it once its trigram index exists: decoded, it is
	// garbage (SearchIndexGiven still reports it was given).
	SearchIndex []byte
	// Lists, when set, reports whether id is the id of one of Headers
	// (Known), from the source's own lookup of this snapshot's listing:
	// a set of every id would take 3.6 MB at 100,000 sessions.
	Lists func(id string) bool

	knownOnce sync.Once
	known     map[string]bool

	once    sync.Once
	prepErr error
	// lowIDs[i] is lowerJS(Headers[i].ID); nil while lower-casing changes
	// no id (dsh's ids are lower-case uuids), the ids being their own
	// lowered form then.
	lowIDs []string
	// lowLabels[i] is lowerJS of session i's label: the label itself when
	// lower-casing leaves it unchanged, else a slice of one shared string
	// (this catalog's, or its predecessor's for a label it also had).
	lowLabels []string
	// cwdOf[i] is the index in cwds of session i's cwd, -1 without one.
	cwdOf []int32
	// cwds are the distinct cwds in order of first use, each stored once
	// with its lowered form; cwdIndex finds one by value.
	cwds     []catalogCWD
	cwdIndex map[string]int32

	// tri indexes the lowered fields by trigram (catalog_trigram.go),
	// built by Prepare or in the background after a query's first use.
	tri        atomic.Pointer[trigramIndex]
	triOnce    sync.Once
	triStarted atomic.Bool
	// searchIndexErr is why SearchIndex was not taken (set in once or
	// triOnce); searchRest is SearchIndex after the lowered strings prepare
	// took from it, what the trigram index decodes from.
	searchIndexErr error
	searchRest     *binenc.Reader
	searchGiven    bool
	// prev is an earlier catalog of the same source with a trigram index
	// (Follows), from which this one's is derived when few sessions
	// changed; dropped once used.
	prev atomic.Pointer[Catalog]
}

// Known reports whether id is the id of one of c.Headers: through Lists
// when set, else a set of the ids made on first use.
func (c *Catalog) Known(id string) bool {
	if c.Lists != nil {
		return c.Lists(id)
	}
	c.knownOnce.Do(func() {
		c.known = make(map[string]bool, len(c.Headers))
		for _, h := range c.Headers {
			c.known[h.ID] = true
		}
	})
	return c.known[id]
}

// catalogCWD is one distinct cwd of a catalog and lowerJS of it (the same
// string when lower-casing leaves it unchanged).
type catalogCWD struct{ cwd, low string }

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

// Prepare computes the catalog's search data (lowercased strings and,
// for a large catalog, their trigram index) now instead of on its first
// queries, and reports a malformed catalog. A source may call it after
// building a snapshot in the background so that no query pays for it.
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

// prepare checks that Titles parallels Headers and computes the
// lowercased strings, once: from SearchIndex when it was made from the
// same sessions and titles (no lowering at all), else by lowering them.
func (c *Catalog) prepare() error {
	c.once.Do(func() {
		if c.prepErr = c.indexCWDs(); c.prepErr != nil {
			return
		}
		if c.SearchIndex != nil {
			c.searchGiven = true
			rest, err := c.lowersFromSearchIndex(c.SearchIndex)
			if err == nil {
				c.searchRest = rest
				return
			}
			c.searchIndexErr = err
			c.lowIDs, c.lowLabels = nil, nil
		}
		c.lowerStrings()
	})
	return c.prepErr
}

// indexCWDs checks that each title result is for its session and gives
// each distinct cwd an index (cwdOf, cwds, cwdIndex) and its lowered form.
func (c *Catalog) indexCWDs() error {
	if len(c.Titles) != len(c.Headers) {
		return fmt.Errorf("session catalog has %d title results for %d sessions", len(c.Titles), len(c.Headers))
	}
	c.cwdOf = make([]int32, len(c.Headers))
	c.cwdIndex = make(map[string]int32)
	for i := range c.Headers {
		h := &c.Headers[i]
		if t := &c.Titles[i]; t.SessionID != h.ID {
			return fmt.Errorf("session catalog: title result %d is for session %q, not %q", i, t.SessionID, h.ID)
		}
		c.cwdOf[i] = -1
		if h.CWD != nil {
			k, ok := c.cwdIndex[*h.CWD]
			if !ok {
				k = int32(len(c.cwds))
				c.cwds = append(c.cwds, catalogCWD{*h.CWD, lowerJS(*h.CWD)})
				c.cwdIndex[*h.CWD] = k
			}
			c.cwdOf[i] = k
		}
	}
	return nil
}

// lowerStrings lowers the ids and labels. Lower-casing returns most
// unchanged, so only the strings it changes are stored again; a label the
// previous catalog (Follows) had for the same session at the same place
// is not lowered again.
func (c *Catalog) lowerStrings() {
	n := len(c.Headers)
	c.lowLabels = make([]string, n)
	// The changed labels are lowered into one buffer (no allocation per
	// label); spans[i] locates session i's, {-1, 0} when lowering leaves
	// it unchanged, {-2, 0} when the previous catalog (Follows) has the
	// same session with the same label at i: its lowered form is taken
	// (lowering 100,000 labels again costs ~0.1 s).
	p := c.prev.Load()
	if p != nil && p.tri.Load() == nil {
		p = nil // Follows keeps only a prepared catalog; never read an unprepared one
	}
	var buf []byte
	spans := make([][2]int32, n)
	for i := range c.Headers {
		h := &c.Headers[i]
		if low := lowerJS(h.ID); low != h.ID || c.lowIDs != nil {
			if c.lowIDs == nil {
				c.lowIDs = make([]string, n)
				for j := range i {
					c.lowIDs[j] = c.Headers[j].ID
				}
			}
			c.lowIDs[i] = low
		}
		label := c.label(i)
		spans[i] = [2]int32{-1, 0}
		if p != nil && i < len(p.Headers) && p.Headers[i].ID == h.ID && p.label(i) == label {
			spans[i][0] = -2 // as in the previous catalog
		} else if low := lowerJS(label); low != label {
			spans[i] = [2]int32{int32(len(buf)), int32(len(buf) + len(low))}
			buf = append(buf, low...)
		}
	}
	all := string(buf)
	for i, sp := range spans {
		switch sp[0] {
		case -2:
			c.lowLabels[i] = p.lowLabels[i]
		case -1:
			c.lowLabels[i] = c.label(i)
		default:
			c.lowLabels[i] = all[sp[0]:sp[1]]
		}
	}
}

// label is session i's label (indexCWDs checked that Titles[i] is
// session i's).
func (c *Catalog) label(i int) string { return c.Titles[i].Label() }

// lowID is lowerJS of session i's id.
func (c *Catalog) lowID(i int) string {
	if c.lowIDs != nil {
		return c.lowIDs[i]
	}
	return c.Headers[i].ID
}

// matches is candidateMatches for Headers[i]: needle (lowerJS output, not
// empty) in its lowercased id, cwd or label.
func (c *Catalog) matches(i int, needle string) bool {
	return strings.Contains(c.lowID(i), needle) ||
		c.cwdOf[i] >= 0 && strings.Contains(c.cwds[c.cwdOf[i]].low, needle) ||
		strings.Contains(c.lowLabels[i], needle)
}

// catalogPicks is ListCandidates over a catalog, as the positions in c of
// the sessions it answers with: the same ranking, filter and cut as the
// ListSessions + ReadTitles path. With a trigram index it collects rank by
// rank from the index; else it visits the matching sessions in the
// catalog's order, keeps up to limit of each rank, and stops once limit
// sessions of the first rank are found.
func catalogPicks(c *Catalog, target Target, needle string, limit int64) ([]int32, error) {
	if err := c.prepare(); err != nil {
		return nil, err
	}
	if x := c.trigrams(); x != nil {
		return indexedPicks(c, x, target, needle, limit), nil
	}
	rb := rankBuckets{c: c, target: target, limit: limit}
	if needle == "" {
		for i := range c.Headers {
			if rb.add(i) {
				break
			}
		}
		return rb.cut(), nil
	}
	// Each distinct cwd is tested once, not once per session.
	cwdHit := make([]bool, len(c.cwds))
	for k := range c.cwds {
		cwdHit[k] = strings.Contains(c.cwds[k].low, needle)
	}
	for i := range c.Headers {
		if (c.cwdOf[i] >= 0 && cwdHit[c.cwdOf[i]] || strings.Contains(c.lowID(i), needle) || strings.Contains(c.lowLabels[i], needle)) && rb.add(i) {
			break
		}
	}
	return rb.cut(), nil
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
func (rb *rankBuckets) cut() []int32 {
	n := min(int64(len(rb.buckets[0])+len(rb.buckets[1])+len(rb.buckets[2])), rb.limit)
	out := make([]int32, 0, n)
	for _, bucket := range rb.buckets {
		for _, i := range bucket {
			if int64(len(out)) == n {
				return out
			}
			out = append(out, i)
		}
	}
	return out
}

// candidates returns the candidates of the sessions at picked.
func (c *Catalog) candidates(picked []int32) []Candidate {
	out := make([]Candidate, len(picked))
	for k, i := range picked {
		out[k] = c.candidate(i)
	}
	return out
}

// candidate is the candidate for session i.
func (c *Catalog) candidate(i int32) Candidate {
	return c.Headers[i].candidate(c.label(int(i)))
}
