package reference

import (
	"context"
	"errors"
	"fmt"
)

// maxSafeInteger is JS Number.MAX_SAFE_INTEGER.
const maxSafeInteger = 1<<53 - 1

// Candidate is one listCandidates item.
type Candidate struct {
	SessionID string  `json:"sessionId"`
	Label     string  `json:"label"`
	CWD       *string `json:"cwd,omitempty"`
	CreatedAt int64   `json:"createdAt"`
}

// RemoteCandidate is a candidate of dsh's remote face: the candidate plus
// the mention that cites it.
type RemoteCandidate struct {
	Candidate
	// Mention is FormatMention(SessionID, &Label).
	Mention string `json:"mention"`
}

// ListCandidates implements dsh listCandidates(agent, query, limit, signal)
// (conformance §6): the sessions other than the target, filtered by a
// case-insensitive substring of id, cwd or label when query is not empty,
// ranked same cwd / no cwd / other cwd with the Source's order kept inside
// each rank, cut to limit. Labels are latest titles, else ids. A cancelled
// ctx gives CodeCancelled, as soon as ctx is done even while the store is
// still listing or reading titles.
//
// A query runs on every keystroke over every session, so it is O(n) with a
// few allocations: ranking is a stable 3-bucket pass instead of a sort,
// filtering stops at limit matches, and the lowercased non-ASCII ids, cwds
// and titles are memoized by the Service (ASCII ones are compared without
// lowering them). A CatalogSource's snapshot replaces ListSessions and
// ReadTitles when it has one (see catalogPicks).
func (s *Service) ListCandidates(ctx context.Context, target Target, query string, limit int64) ([]Candidate, error) {
	if limit <= 0 || limit > maxSafeInteger {
		return nil, newError(CodeInvalidReference, "candidate limit must be a positive safe integer", nil)
	}
	needle := lowerJS(query)
	if err := ctx.Err(); err != nil {
		return nil, errCancelled(err)
	}
	if cs, ok := s.source.(CatalogSource); ok {
		if out, ok, err := catalogAnswer(ctx, cs, target, needle, limit); ok || err != nil {
			return out, err
		}
		// No snapshot now: list and read titles instead.
	}
	return s.listedCandidates(ctx, target, needle, limit)
}

// catalogAnswer answers ListCandidates from cs's catalog; ok is false when
// cs has none now (or keeps serving sessions it has not verified).
func catalogAnswer(ctx context.Context, cs CatalogSource, target Target, needle string, limit int64) (out []Candidate, ok bool, err error) {
	for range 3 {
		cat, err := await(ctx, func() (*Catalog, error) { return cs.Catalog(ctx) })
		if err := ctx.Err(); err != nil {
			return nil, false, errCancelled(err)
		}
		if errors.Is(err, ErrCatalogUnavailable) {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, fmt.Errorf("list sessions: %w", err)
		}
		picked, err := catalogPicks(cat, target, needle, limit)
		if err != nil {
			return nil, false, err
		}
		if cat.Verify == nil || cat.Verify(ctx, picked) {
			return cat.candidates(picked), true, nil
		}
		// A session served changed since the snapshot: ask again.
	}
	return nil, false, nil
}

// listedCandidates is ListCandidates over ListSessions and ReadTitles.
func (s *Service) listedCandidates(ctx context.Context, target Target, needle string, limit int64) ([]Candidate, error) {
	headers, err := await(ctx, func() ([]SessionHeader, error) { return s.source.ListSessions(ctx) })
	if err := ctx.Err(); err != nil {
		return nil, errCancelled(err)
	}
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	listed, ranks := rankHeaders(headers, target)
	if needle == "" {
		return s.unfilteredCut(ctx, headers, listed, ranks, limit)
	}
	return s.filteredCut(ctx, headers, listed, ranks, needle, limit)
}

// rankHeaders returns the indexes of the headers other than the target, in
// the Source's order, with their ranks.
func rankHeaders(headers []SessionHeader, target Target) (listed []int32, ranks []uint8) {
	listed = make([]int32, 0, len(headers))
	ranks = make([]uint8, 0, len(headers))
	for i := range headers {
		if target.isSelf(headers[i].ID) {
			continue
		}
		listed = append(listed, int32(i))
		ranks = append(ranks, candidateRank(headers[i].CWD, target.CWD))
	}
	return listed, ranks
}

// unfilteredCut answers an empty query: without a filter only the cut is
// shown, so only its titles are read.
func (s *Service) unfilteredCut(ctx context.Context, headers []SessionHeader, listed []int32, ranks []uint8, limit int64) ([]Candidate, error) {
	cut := rankAndCut(listed, ranks, limit, nil)
	ids := make([]string, len(cut))
	for i, li := range cut {
		ids[i] = headers[listed[li]].ID
	}
	labels, err := s.readLabels(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]Candidate, len(cut))
	for i, li := range cut {
		out[i] = headers[listed[li]].candidate(labels[i])
	}
	return out, nil
}

// filteredCut answers a query: a label can match, so every listed title is
// read before the cut.
func (s *Service) filteredCut(ctx context.Context, headers []SessionHeader, listed []int32, ranks []uint8, needle string, limit int64) ([]Candidate, error) {
	ids := make([]string, len(listed))
	for i, hi := range listed {
		ids[i] = headers[hi].ID
	}
	labels, err := s.readLabels(ctx, ids)
	if err != nil {
		return nil, err
	}
	m := newLowerMatcher(s.lowered, needle)
	defer m.done()
	cut := rankAndCut(listed, ranks, limit, func(li int) bool {
		return candidateMatches(m, &headers[listed[li]], labels[li])
	})
	out := make([]Candidate, len(cut))
	for i, li := range cut {
		out[i] = headers[listed[li]].candidate(labels[li])
	}
	return out, nil
}

// candidate is the candidate for the session h with label.
func (h *SessionHeader) candidate(label string) Candidate {
	return Candidate{SessionID: h.ID, Label: label, CWD: h.CWD, CreatedAt: h.CreatedAt}
}

// RemoteCandidates implements dsh's remote face candidates(agent, query,
// signal): ListCandidates with the configured candidateLimit, each item
// with its mention.
func (s *Service) RemoteCandidates(ctx context.Context, target Target, query string) ([]RemoteCandidate, error) {
	list, err := s.ListCandidates(ctx, target, query, s.config.CandidateLimit)
	if err != nil {
		return nil, err
	}
	out := make([]RemoteCandidate, len(list))
	for i, c := range list {
		label := c.Label
		out[i] = RemoteCandidate{Candidate: c, Mention: FormatMention(c.SessionID, &label)}
	}
	return out, nil
}

// readLabels returns the label of each id: its latest title, else the id
// (no title, or the title read was rejected).
func (s *Service) readLabels(ctx context.Context, ids []string) ([]string, error) {
	labels := make([]string, len(ids))
	copy(labels, ids)
	if len(ids) == 0 {
		return labels, nil
	}
	titles, err := await(ctx, func() ([]TitleResult, error) { return s.source.ReadTitles(ctx, ids) })
	if err := ctx.Err(); err != nil {
		return nil, errCancelled(err)
	}
	if err != nil {
		return nil, fmt.Errorf("read session titles: %w", err)
	}
	if positional(titles, ids) {
		// The common case needs no map: one result per id, in id order
		// (the ids are then unique, as the Source returns one result per
		// unique id).
		for i, t := range titles {
			labels[i] = t.Label()
		}
		return labels, nil
	}
	byID := make(map[string]*string, len(titles))
	for _, t := range titles {
		if t.Err == nil && t.Title != nil {
			byID[t.SessionID] = t.Title
		}
	}
	for i, id := range ids {
		if title, ok := byID[id]; ok {
			labels[i] = *title
		}
	}
	return labels, nil
}

// positional reports whether titles[i] is the result for ids[i] for every i.
func positional(titles []TitleResult, ids []string) bool {
	if len(titles) != len(ids) {
		return false
	}
	for i := range titles {
		if titles[i].SessionID != ids[i] {
			return false
		}
	}
	return true
}

// candidateRank is 0 for the target's exact cwd, 1 for no cwd, 2 otherwise.
func candidateRank(cwd, targetCWD *string) uint8 {
	switch {
	case cwd == nil:
		return 1
	case targetCWD != nil && *cwd == *targetCWD:
		return 0
	default:
		return 2
	}
}

// rankAndCut returns the positions in ranks of the first limit records in
// (rank, position) order that keep accepts (every record when keep is nil).
// The records are already in the Source's order, so one stable pass per
// rank replaces a sort, and keep is not called once limit records are found.
func rankAndCut(listed []int32, ranks []uint8, limit int64, keep func(li int) bool) []int {
	var cut []int
	for rank := uint8(0); rank <= 2; rank++ {
		for li, r := range ranks {
			if r != rank || keep != nil && !keep(li) {
				continue
			}
			if cut == nil {
				cut = make([]int, 0, min(int64(len(listed)), limit))
			}
			cut = append(cut, li)
			if int64(len(cut)) == limit {
				return cut
			}
		}
	}
	return cut
}

// candidateMatches is dsh's filter: the needle in the lowercased id, cwd or
// label (m tests for m's needle). Message bodies are not searched.
func candidateMatches(m *lowerMatcher, h *SessionHeader, label string) bool {
	return m.contains(h.ID) || h.CWD != nil && m.contains(*h.CWD) || m.contains(label)
}
