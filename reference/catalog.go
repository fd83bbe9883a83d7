package reference

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
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

	once    sync.Once
	prepErr error
	// labels[i] is the label of Headers[i]; lowID, lowCWD and lowLabel
	// are LowerJS of its id, cwd ("" without one) and label.
	labels                  []string
	lowID, lowCWD, lowLabel []string
}

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
		c.lowID, c.lowCWD, c.lowLabel = make([]string, n), make([]string, n), make([]string, n)
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
			c.lowID[i] = LowerJS(h.ID)
			if h.CWD != nil {
				c.lowCWD[i] = LowerJS(*h.CWD)
			}
			c.lowLabel[i] = LowerJS(label)
		}
	})
	return c.prepErr
}

// matches is candidateMatches for Headers[i]: needle (LowerJS output, not
// empty) in its lowercased id, cwd or label.
func (c *Catalog) matches(i int, needle string) bool {
	return strings.Contains(c.lowID[i], needle) ||
		c.Headers[i].CWD != nil && strings.Contains(c.lowCWD[i], needle) ||
		strings.Contains(c.lowLabel[i], needle)
}

// catalogCandidates is ListCandidates over a catalog: the same ranking,
// filter and cut as the ListSessions + ReadTitles path, without
// allocating per session (ranks are recomputed in each of the three
// passes instead of being stored).
func catalogCandidates(c *Catalog, target Target, needle string, limit int64) ([]Candidate, error) {
	if err := c.prepare(); err != nil {
		return nil, err
	}
	var out []Candidate
	for rank := uint8(0); rank <= 2; rank++ {
		for i := range c.Headers {
			h := &c.Headers[i]
			if candidateRank(h.CWD, target.CWD) != rank || target.isSelf(h.ID) ||
				needle != "" && !c.matches(i, needle) {
				continue
			}
			if out == nil {
				out = make([]Candidate, 0, min(int64(len(c.Headers)), limit))
			}
			out = append(out, Candidate{SessionID: h.ID, Label: c.labels[i], CWD: h.CWD, CreatedAt: h.CreatedAt})
			if int64(len(out)) == limit {
				return out, nil
			}
		}
	}
	if out == nil {
		out = []Candidate{}
	}
	return out, nil
}
