package sessionstore

import (
	"context"

	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/transcript"
)

// SurfaceSummary returns the summary of the surface ReadSurface(id) would
// return now (header, last seq and one sized item per surface event) from
// the index alone: no record is read. ok is false when the index cannot
// answer that way (the session is not indexed or changed since, its read
// fails, it has no items, or it is over the read limit): callers then
// read the surface.
func (ix *Indexed) SurfaceSummary(ctx context.Context, id string) (sum *reference.SurfaceSummary, ok bool) {
	if ctx.Err() != nil {
		return nil, false
	}
	e := ix.summarizable(id)
	if e == nil {
		return nil, false
	}
	h, err := transcript.ParseHeaderLine(e.HeaderLine)
	if err != nil || h.Validate() != nil {
		return nil, false
	}
	closers, captured, err := closersOf(e)
	if err != nil {
		return nil, false
	}
	items, ok := ix.summaryItems(e.view, len(closers))
	if !ok {
		return nil, false
	}
	for i := range closers {
		if c := &closers[i]; transcript.IsSurfaceType(c.Type) {
			items = append(items, reference.SurfaceItemOf(c.Type, c.Data))
		}
	}
	return &reference.SurfaceSummary{Header: h.Reference(), CapturedThroughSeq: captured, Items: items}, true
}

// summarizable returns id's entry when the index alone can summarize its
// surface: it answers, has an item for each surface record, and its
// transcript is unchanged since it was indexed; else nil.
func (ix *Indexed) summarizable(id string) *entry {
	e, cur, same := ix.answering(id)
	if e == nil || !same || cur != e.Sig {
		return nil
	}
	if st := e.view; len(st.Items) != len(st.Locs) || len(st.Locs) != len(st.Fold.Nodes) {
		return nil
	}
	return e
}

// summaryItems returns an item for each stored surface event of st (room
// left for extra more), or false when a size did not fit or the events are
// more than a surface read keeps.
func (ix *Indexed) summaryItems(st *logState, extra int) ([]reference.SurfaceItem, bool) {
	items := make([]reference.SurfaceItem, 0, len(st.Items)+extra)
	var raw int64
	for i, seq := range st.Fold.Nodes {
		if seq >= st.Fold.Count { // a closer (as surfaceOf)
			break
		}
		it, rawMax, ok := st.Items[i].item()
		if !ok {
			return nil, false
		}
		items = append(items, it)
		raw += rawMax
	}
	return items, raw <= ix.limit
}
