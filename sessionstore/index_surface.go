package sessionstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"

	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/transcript"
)

// ReadSurface implements reference.Source. It brings the session's entry
// up to date with the file and then decodes only the records of the
// surface events, so memory is bounded by the surface, not the log. A
// record whose bytes changed since they were indexed (a log rewritten in
// place) makes the read parse the log again.
func (ix *Indexed) ReadSurface(ctx context.Context, id string) (*reference.Surface, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	e, err := ix.current(id)
	if err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		if err := e.answerErr(id, ix.root); err != nil {
			return nil, err
		}
		s, err := ix.surfaceOf(ctx, e)
		if err == nil {
			ix.surfaces.Add(1)
			return s, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err != transcript.ErrRecordChanged || attempt == 2 {
			return nil, attach(err, id, e.path(ix.root))
		}
		e = ix.reindex(e)
	}
}

// current returns the entry a read of id uses, up to date with its file
// (not published: the refresher picks the change up on its own), or the
// lookup's error.
func (ix *Indexed) current(id string) (*entry, error) {
	ix.mu.RLock()
	e := ix.titleEntry(id)
	ix.mu.RUnlock()
	if e == nil {
		// Not indexed yet: index this one log now.
		return ix.indexOnDemand(id)
	}
	sig, ok := lstatSig(e.path(ix.root))
	switch {
	case !ok:
		return ix.indexOnDemand(id)
	case e.transient(ix.limit):
		return ix.parseDir(nil, e.reparse(sig, nil)), nil
	case sig != e.Sig:
		return ix.parseOnce(nil, e.reparse(sig, e)), nil
	}
	return e, nil
}

// reindex parses e's transcript again from the start.
func (ix *Indexed) reindex(e *entry) *entry {
	sig, _ := lstatSig(e.path(ix.root))
	j := e.reparse(sig, nil)
	j.hasRaw, j.hasZstd = j.hasRaw || e.Enc == Raw, j.hasZstd || e.Enc == Zstd
	return ix.parseDir(nil, j)
}

// surfaceOf builds readSurface's snapshot from an entry's view state.
func (ix *Indexed) surfaceOf(ctx context.Context, e *entry) (*reference.Surface, error) {
	st, err := e.view()
	if err != nil {
		return nil, transcript.ErrRecordChanged
	}
	h, err := transcript.ParseHeaderLine(e.headerLine())
	if err != nil {
		return nil, err
	}
	f, _, ok, err := openState(nil, ix.root, e.path(ix.root), e.Sig, stateTail{Offset: st.Offset, TailCRC: st.TailCRC, Sum: st.Sum})
	if err != nil {
		return nil, unreadable(err)
	}
	if !ok {
		return nil, transcript.ErrRecordChanged
	}
	defer f.Close()
	p := &logParser{enc: e.Enc, id: e.ReadID, f: f, st: st, limit: ix.limit}
	closers, captured, err := closersOf(e.ReadID, st)
	if err != nil {
		return nil, err
	}
	s := &reference.Surface{
		Session:            h.Object(),
		Header:             h.Reference(),
		CapturedThroughSeq: captured,
		Events:             make([]reference.SurfaceEvent, 0, len(st.Fold.Nodes)+len(closers)),
	}
	if s.Events, err = ix.storedSurface(ctx, p, e, st, s.Events); err != nil {
		return nil, err
	}
	for i := range closers {
		s.Events = append(s.Events, surfaceEvent(&closers[i]))
	}
	return s, nil
}

// closersOf finishes st's fold for id, st being a decoded copy (the log
// may still grow): the crash closers on the surface a read appends, and
// the last seq a read captures (nil for a log without events).
func closersOf(id string, st *logState) ([]transcript.Event, *int64, error) {
	fd := transcript.ResumeFold(id, st.Fold.Clone())
	closers, err := fd.Finish()
	if err != nil {
		return nil, nil, err
	}
	closers = slices.DeleteFunc(closers, func(c transcript.Event) bool { return !transcript.IsSurfaceType(c.Type) })
	var captured *int64
	if fd.Count > 0 {
		last := fd.LastSeq
		captured = &last
	}
	return closers, captured, nil
}

// storedSurface appends copies of the stored surface events of e's view
// st, read through p, to events, holding them to the read limit: counted
// in the bytes of their raw records plus surfaceEventCost each, so that a
// log of a million tiny messages is held to it too. A record that is not
// the one the fold checked is transcript.ErrRecordChanged.
func (ix *Indexed) storedSurface(ctx context.Context, p *logParser, e *entry, st *logState, events []reference.SurfaceEvent) ([]reference.SurfaceEvent, error) {
	records := p.cursor(e.Sig.Size)
	defer records.Close()
	var kept int64
	for i, seq := range st.Fold.Nodes {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if seq >= st.Fold.Count { // a closer (closers only append)
			break
		}
		ev, err := records.ReadAt(st.Locs[i])
		if errors.Is(err, ErrReadLimit) {
			return nil, err
		}
		if err != nil || ev.Seq != seq {
			return nil, transcript.ErrRecordChanged
		}
		// A legacy replacing tool/result takes the message id the fold kept.
		if transcript.UpgradeEvent(e.ReadID, ev, func(seq int64) string { return st.Fold.IDs[seq] }) != nil {
			return nil, transcript.ErrRecordChanged
		}
		events = append(events, surfaceEvent(ev))
		if kept += int64(len(events[len(events)-1].Raw)) + surfaceEventCost; kept > ix.limit {
			return nil, transcript.Limitf(ix.limit, "the session's surface (the messages a read keeps) holds more bytes than the read limit")
		}
	}
	return events, nil
}

// indexOnDemand indexes, without publishing, the transcript a read of id
// finds (dsh findLog), or returns the lookup's error.
func (ix *Indexed) indexOnDemand(id string) (*entry, error) {
	path, enc, err := ix.layout.find(id)
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(path)
	d := sessionDir{proj: filepath.Base(filepath.Dir(dir)), seg: filepath.Base(dir)}
	ix.statTranscripts(&d)
	return ix.parseOnce(nil, newJob(d, nil, enc)), nil
}

// surfaceEvent is readSurface's copy of a surface event: Raw is a fresh
// encoding (sized up front) and Data points into it, so no read buffer or
// decoded frame stays referenced.
func surfaceEvent(e *transcript.Event) reference.SurfaceEvent {
	raw := e.AppendJSON(make([]byte, 0, len(e.Type)+len(e.Data)+len(e.SurfaceOp)+len(e.SourceEventSeqs)+128))
	var data json.RawMessage
	if i := bytes.Index(raw, []byte(`,"data":`)); i >= 0 && bytes.HasPrefix(raw[i+8:], e.Data) {
		data = raw[i+8 : i+8+len(e.Data) : i+8+len(e.Data)]
	} else {
		data = append(json.RawMessage(nil), e.Data...)
	}
	return reference.SurfaceEvent{Type: e.Type, Seq: e.Seq, Data: data, Raw: raw}
}

// surfaceEventCost is what a kept event costs besides its bytes (its
// structs, fold and projection entries; measured: 1,000,000 messages of
// 175 bytes peaked at 4.8 × their raw bytes in a prepare).
const surfaceEventCost = 256

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
	e, st := ix.summarizable(id)
	if e == nil {
		return nil, false
	}
	h, err := transcript.ParseHeaderLine(e.headerLine())
	if err != nil || h.Validate() != nil {
		return nil, false
	}
	closers, captured, err := closersOf(e.ReadID, st)
	if err != nil {
		return nil, false
	}
	items, ok := ix.summaryItems(st, len(closers))
	if !ok {
		return nil, false
	}
	for _, c := range closers {
		items = append(items, reference.SurfaceItemOf(c.Type, c.Data, nil))
	}
	return &reference.SurfaceSummary{Header: h.Reference(), CapturedThroughSeq: captured, Items: items}, true
}

// summarizable returns id's entry and its decoded view when the index
// alone can summarize its surface: it answers, has an item for each
// surface record, and its transcript is unchanged since it was indexed;
// else nil.
func (ix *Indexed) summarizable(id string) (*entry, *logState) {
	e, cur, same := ix.answering(id)
	if e == nil || !same || cur != e.Sig {
		return nil, nil
	}
	st, err := e.view()
	if err != nil || len(st.Items) != len(st.Locs) || len(st.Locs) != len(st.Fold.Nodes) {
		return nil, nil
	}
	return e, st
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
