package sessionstore

import (
	"context"

	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/transcript"
)

// SurfaceSummary returns the summary of the surface ReadSurface(id) would
// return now — header, last seq and one sized item per surface event —
// from the index alone: an open, fstat and 64-byte read check that the
// transcript is still the one indexed, and the crash closers are folded
// from the saved state; no record is read. ok is false when the index
// cannot answer that way (the session is not indexed or changed since,
// its log is one the index leaves to the store, its state was persisted
// without items, or it is over the read limit): callers then read the
// surface.
func (x *Indexed) SurfaceSummary(ctx context.Context, id string) (sum *reference.SurfaceSummary, ok bool) {
	if ctx.Err() != nil {
		return nil, false
	}
	x.mu.RLock()
	e := x.titleEntry(id)
	x.mu.RUnlock()
	if e == nil || e.state == nil || e.TitleID != id || e.err != nil {
		return nil, false
	}
	st := e.state
	if len(st.Items) != len(st.Locs) || len(st.Locs) != len(st.Fold.Nodes) {
		return nil, false
	}
	// The file must still be the one the state describes (as surfaceOf).
	f, cur, same, err := openState(e.path(x.root), e.Sig, st)
	if err != nil {
		return nil, false
	}
	f.Close()
	if !same || cur != e.Sig {
		return nil, false // changed since it was indexed: read it
	}
	h, err := transcript.ParseHeaderLine(e.HeaderLine)
	if err != nil || h.Validate() != nil {
		return nil, false
	}
	fd := transcript.ResumeFold(e.TitleID, st.Fold.Clone())
	closers, err := fd.Finish()
	if err != nil {
		return nil, false
	}
	sum = &reference.SurfaceSummary{Header: h.Reference(), Items: make([]reference.SurfaceItem, 0, len(st.Items)+len(closers))}
	if fd.Count > 0 {
		last := fd.LastSeq
		sum.CapturedThroughSeq = &last
	}
	// A surface read keeps at most the read limit of events.
	var raw int64
	for i, seq := range st.Fold.Nodes {
		if seq >= st.Fold.Count { // a closer (as surfaceOf)
			break
		}
		it, rawMax, ok := st.Items[i].item()
		if !ok {
			return nil, false
		}
		sum.Items = append(sum.Items, it)
		raw += rawMax
	}
	if raw > limitOr(x.store.limit) {
		return nil, false
	}
	for i := range closers {
		if c := &closers[i]; transcript.IsSurfaceType(c.Type) {
			sum.Items = append(sum.Items, reference.SurfaceItemOf(c.Type, c.Data))
		}
	}
	return sum, true
}
