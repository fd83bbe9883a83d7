package contentindex

import (
	"context"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
	"github.com/dsh-lsp/dsh-lsp/reference"
)

// Item is a search hit as every surface returns it (CONTRACT §9): the
// candidate-list item of the session plus the snippet.
type Item struct {
	reference.CandidateItem
	Snippet string
}

// MarshalJSON writes {"sessionId","label","cwd"?,"createdAt","uri",
// "mention","snippet"} with the candidate item's string semantics.
func (it Item) MarshalJSON() ([]byte, error) {
	b, err := it.CandidateItem.MarshalJSON()
	if err != nil {
		return nil, err
	}
	s, err := jsjson.Marshal(it.Snippet)
	if err != nil {
		return nil, err
	}
	out := append(b[:len(b)-1:len(b)-1], `,"snippet":`...)
	out = append(out, s...)
	return append(out, '}'), nil
}

// Find syncs the index with src (so the answer reflects the store as a
// query of the store index would see it) and returns the hits of query as
// items, best first, at most limit, leaving out the target session itself
// and sessions no longer listed. Labels are latest titles, else ids, as in
// a candidate list.
func (ix *Index) Find(ctx context.Context, src Source, target reference.Target, query string, limit int) ([]Item, error) {
	if _, err := ix.Sync(ctx, src); err != nil {
		return nil, err
	}
	return ix.Items(ctx, src, target, query, limit)
}

// Items is Find without the sync: it answers from the index as it is,
// with the listing and the labels of its last sync (which a change to
// either brings), so a query reads nothing from the store. An index last
// synced from another source than src labels its hits from src.
func (ix *Index) Items(ctx context.Context, src Source, target reference.Target, query string, limit int) ([]Item, error) {
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	hits, err := ix.Search(ctx, query, limit+1)
	if err != nil {
		return nil, err
	}
	s := ix.snap()
	kept := hits[:0]
	for _, h := range hits {
		if _, ok := s.headers[h.SessionID]; !ok {
			continue
		}
		if target.SessionID != nil && *target.SessionID == h.SessionID {
			continue
		}
		kept = append(kept, h)
	}
	if len(kept) > limit {
		kept = kept[:limit]
	}
	labels := s.labels
	if s.src != src && len(kept) > 0 {
		if labels, err = sourceLabels(ctx, src, kept); err != nil {
			return nil, err
		}
	}
	out := make([]Item, 0, len(kept))
	for _, h := range kept {
		hd := s.headers[h.SessionID]
		label, ok := labels[h.SessionID]
		if !ok {
			label = h.SessionID
		}
		c := reference.CandidateItems([]reference.Candidate{{SessionID: h.SessionID, Label: label, CWD: hd.CWD, CreatedAt: hd.CreatedAt}})[0]
		out = append(out, Item{CandidateItem: c, Snippet: h.Snippet})
	}
	return out, nil
}

// sourceLabels reads the latest titles of the hits from src.
func sourceLabels(ctx context.Context, src Source, hits []Hit) (map[string]string, error) {
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.SessionID
	}
	trs, err := src.ReadTitles(ctx, ids)
	if err != nil {
		return nil, err
	}
	labels := map[string]string{}
	for _, t := range trs {
		if t.Err == nil && t.Title != nil {
			labels[t.SessionID] = *t.Title
		}
	}
	return labels, nil
}
