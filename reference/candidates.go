package reference

import (
	"context"
	"fmt"
	"sort"
	"strings"
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

// rankedHeader is a listed session with its candidate rank and label.
type rankedHeader struct {
	header SessionHeader
	rank   int
	label  string
}

// ListCandidates implements dsh listCandidates(agent, query, limit, signal)
// (conformance §6): the sessions other than the target, filtered by a
// case-insensitive substring of id, cwd or label when query is not empty,
// ranked same cwd / no cwd / other cwd with the Source's order kept inside
// each rank, cut to limit. Labels are latest titles, else ids. A cancelled
// ctx gives CodeCancelled, as soon as ctx is done even while the store is
// still listing or reading titles.
func (s *Service) ListCandidates(ctx context.Context, target Target, query string, limit int64) ([]Candidate, error) {
	if limit <= 0 || limit > maxSafeInteger {
		return nil, newError(CodeInvalidReference, "candidate limit must be a positive safe integer", nil)
	}
	needle := LowerJS(query)
	if err := ctx.Err(); err != nil {
		return nil, errCancelled(err)
	}
	headers, err := await(ctx, func() ([]SessionHeader, error) { return s.source.ListSessions(ctx) })
	if err := ctx.Err(); err != nil {
		return nil, errCancelled(err)
	}
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	records := make([]rankedHeader, 0, len(headers))
	for _, h := range headers {
		if target.isSelf(h.ID) {
			continue
		}
		records = append(records, rankedHeader{header: h, rank: candidateRank(h.CWD, target.CWD)})
	}
	if needle == "" {
		// Without a filter only the cut is shown, so only its titles are read.
		records = rankAndCut(records, limit)
	}
	ids := make([]string, len(records))
	for i, r := range records {
		ids[i] = r.header.ID
	}
	labels, err := s.readLabels(ctx, ids)
	if err != nil {
		return nil, err
	}
	kept := records[:0]
	for i, r := range records {
		r.label = labels[i]
		if needle == "" || candidateMatches(r.header, r.label, needle) {
			kept = append(kept, r)
		}
	}
	kept = rankAndCut(kept, limit)
	out := make([]Candidate, len(kept))
	for i, r := range kept {
		out[i] = Candidate{SessionID: r.header.ID, Label: r.label, CWD: r.header.CWD, CreatedAt: r.header.CreatedAt}
	}
	return out, nil
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

// candidateRank is 0 for the target's exact cwd, 1 for no cwd, 2 otherwise.
func candidateRank(cwd, targetCWD *string) int {
	switch {
	case cwd == nil:
		return 1
	case targetCWD != nil && *cwd == *targetCWD:
		return 0
	default:
		return 2
	}
}

// rankAndCut sorts records by (rank, index) and keeps the first limit: a
// stable sort keeps the Source's order (the index) inside a rank.
func rankAndCut(records []rankedHeader, limit int64) []rankedHeader {
	sort.SliceStable(records, func(a, b int) bool { return records[a].rank < records[b].rank })
	return records[:min(int64(len(records)), limit)]
}

// candidateMatches is dsh's filter: the needle in the lowercased id, cwd or
// label. Message bodies are not searched.
func candidateMatches(h SessionHeader, label, needle string) bool {
	if strings.Contains(LowerJS(h.ID), needle) {
		return true
	}
	if h.CWD != nil && strings.Contains(LowerJS(*h.CWD), needle) {
		return true
	}
	return strings.Contains(LowerJS(label), needle)
}
