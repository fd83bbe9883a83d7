package sessionstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"

	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/transcript"
)

// ReadSurface implements reference.Source. It brings the session's entry
// up to date with the file (parsing only appended bytes) and then decodes
// only the records of the events on the surface, so memory is bounded by
// the surface, not the log. A record whose bytes changed since they were
// indexed (a log rewritten in place) makes the read parse the log again.
func (x *Indexed) ReadSurface(ctx context.Context, id string) (*reference.Surface, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	e, err := x.current(id)
	if err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		if err := e.answerErr(id, x.root); err != nil {
			return nil, err
		}
		s, err := x.surfaceOf(ctx, e)
		if err == nil {
			x.fastSurfaces.Add(1)
			return s, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err != transcript.ErrRecordChanged || attempt == 2 {
			return nil, attach(err, id, e.path(x.root))
		}
		e = x.reindex(e)
	}
}

// current returns the entry a read of id uses, up to date with its file
// (the refresher picks the change up on its own; a fresh entry is not
// published), or the lookup's error.
func (x *Indexed) current(id string) (*entry, error) {
	x.mu.RLock()
	e := x.titleEntry(id)
	x.mu.RUnlock()
	if e == nil {
		// Not indexed yet (first pass still running, or a session newer
		// than the last scan): index this one log now.
		return x.indexOnDemand(id)
	}
	sig, ok := lstatSig(e.path(x.root))
	if !ok {
		return x.indexOnDemand(id)
	}
	if sig != e.Sig || e.transient(x.store.limit) {
		c := candidate{proj: e.Proj, seg: e.Seg, hasRaw: e.HasRaw, hasZst: e.HasZstd}
		if e.Enc == Zstd {
			c.zst = sig
		} else {
			c.raw = sig
		}
		if e.transient(x.store.limit) {
			return x.indexNow(c, nil, e.Enc), nil
		}
		e = x.index(c, e, e.Enc)
	}
	return e, nil
}

// reindex parses e's transcript again from the start.
func (x *Indexed) reindex(e *entry) *entry {
	c := candidate{proj: e.Proj, seg: e.Seg, hasRaw: e.HasRaw, hasZst: e.HasZstd}
	sig, _ := lstatSig(e.path(x.root))
	if e.Enc == Zstd {
		c.zst, c.hasZst = sig, true
	} else {
		c.raw, c.hasRaw = sig, true
	}
	return x.indexNow(c, nil, e.Enc)
}

// surfaceOf builds readSurface's snapshot from an entry's view state.
func (x *Indexed) surfaceOf(ctx context.Context, e *entry) (*reference.Surface, error) {
	st := e.state
	h, err := transcript.ParseHeaderLine(e.HeaderLine)
	if err != nil {
		return nil, err
	}
	// The file must still be the one the state describes.
	f, _, ok, err := openState(e.path(x.root), e.Sig, st)
	if err != nil {
		return nil, &transcript.Error{Kind: KindIO, Msg: "cannot read transcript", Err: err}
	}
	if !ok {
		return nil, transcript.ErrRecordChanged
	}
	defer f.Close()
	p := &logParser{enc: e.Enc, id: e.TitleID, f: f, st: st, limit: x.store.limit}
	// The crash closers a read appends come from the fold's state
	// (finished on a copy: the log may still grow).
	fd := transcript.ResumeFold(e.TitleID, st.Fold.Clone())
	closers, err := fd.Finish()
	if err != nil {
		return nil, err
	}
	s := &reference.Surface{
		Session: h.Object(),
		Header:  h.Reference(),
		Events:  make([]reference.SurfaceEvent, 0, len(st.Fold.Nodes)+len(closers)),
	}
	if fd.Count > 0 {
		last := fd.LastSeq
		s.CapturedThroughSeq = &last
	}
	records := p.cursor(e.Sig.Size)
	defer records.Close()
	budget := &surfaceBudget{limit: x.store.limit}
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
		// The record's bytes are the ones the fold checked (CRC); it
		// upgrades the same way (a legacy replacing tool/result takes the
		// message id the fold kept for it).
		if transcript.UpgradeEvent(e.TitleID, ev, func(seq int64) string { return st.Fold.IDs[seq] }) != nil {
			return nil, transcript.ErrRecordChanged
		}
		s.Events = append(s.Events, surfaceEvent(ev))
		if !budget.add(s.Events[len(s.Events)-1]) {
			return nil, budget.err()
		}
	}
	for i := range closers {
		if c := &closers[i]; transcript.IsSurfaceType(c.Type) {
			s.Events = append(s.Events, surfaceEvent(c))
		}
	}
	return s, nil
}

// indexOnDemand indexes the transcript a read of id finds (dsh findLog),
// without publishing the entry (the refresher will), or returns the
// lookup's error (not found, duplicate).
func (x *Indexed) indexOnDemand(id string) (*entry, error) {
	path, enc, err := x.store.find(id)
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(path)
	c := candidate{proj: filepath.Base(filepath.Dir(dir)), seg: filepath.Base(dir)}
	c.raw, c.hasRaw = lstatSig(filepath.Join(dir, Raw.FileName()))
	c.zst, c.hasZst = lstatSig(filepath.Join(dir, Zstd.FileName()))
	return x.index(c, nil, enc), nil
}

// surfaceEvent is readSurface's copy of a surface event: Raw is a fresh
// encoding and Data points into it, so no read buffer or decoded frame
// stays referenced.
func surfaceEvent(e *transcript.Event) reference.SurfaceEvent {
	// Sized for the whole encoding up front: growing it from nil copies
	// each event's data several times.
	raw := e.AppendJSON(make([]byte, 0, len(e.Type)+len(e.Data)+len(e.SurfaceOp)+len(e.SourceEventSeqs)+128))
	var data json.RawMessage
	if i := bytes.Index(raw, []byte(`,"data":`)); i >= 0 && bytes.HasPrefix(raw[i+8:], e.Data) {
		data = raw[i+8 : i+8+len(e.Data) : i+8+len(e.Data)]
	} else {
		data = append(json.RawMessage(nil), e.Data...)
	}
	return reference.SurfaceEvent{Type: e.Type, Seq: e.Seq, Data: data, Raw: raw}
}
