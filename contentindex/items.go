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
// with the listing and the labels src holds now (without revalidating
// it), so a query reads nothing from the store.
func (ix *Index) Items(ctx context.Context, src Source, target reference.Target, query string, limit int) ([]Item, error) {
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	hits, err := ix.Search(ctx, query, limit+1)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(hits))
	snippets := make(map[string]string, len(hits))
	for _, h := range hits {
		if target.SessionID == nil || *target.SessionID != h.SessionID {
			ids = append(ids, h.SessionID)
			snippets[h.SessionID] = h.Snippet
		}
	}
	cands := src.ListedCandidates(ids)
	cands = cands[:min(len(cands), limit)]
	out := make([]Item, len(cands))
	for i, c := range reference.CandidateItems(cands) {
		out[i] = Item{CandidateItem: c, Snippet: snippets[c.SessionID]}
	}
	return out, nil
}
