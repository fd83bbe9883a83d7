package sessionstore

import (
	"context"
	"path/filepath"

	"github.com/dsh-lsp/dsh-lsp/reference"
)

// ReadSurface implements reference.Source. For an indexed log in the
// current format it brings the session's parse state up to date (parsing
// only appended bytes, streaming zstd frames) and then decodes only the
// records of the events on the surface, so memory is bounded by the
// surface, not the log. Logs the index does not decide (legacy shapes,
// bad lines, an open turn that needs crash closers, ...) are read by the
// store.
func (x *Indexed) ReadSurface(ctx context.Context, id string) (*reference.Surface, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	x.mu.RLock()
	e := x.titleEntry(id)
	x.mu.RUnlock()
	if e == nil {
		// Not indexed yet (first pass still running, or a session newer
		// than the last scan): index this one log now, streaming, rather
		// than letting the store materialise it.
		e = x.indexOnDemand(id)
	}
	if err := e.readLimitErr(); err != nil && e.RefID == id && e.ReadErrLimit == x.store.limit {
		return nil, err // remembered: the file has not changed since
	}
	if e == nil || e.state == nil || e.TitleID != id {
		return x.store.ReadSurface(ctx, id)
	}
	// Bring this one entry up to date with the file now (the refresher
	// picks the change up on its own; the fresh entry is not published).
	c := candidate{proj: e.Proj, seg: e.Seg, hasRaw: e.HasRaw, hasZst: e.HasZstd}
	sig, ok := lstatSig(e.path(x.root))
	if !ok {
		return x.store.ReadSurface(ctx, id)
	}
	if sig != e.Sig {
		if e.Enc == Zstd {
			c.zst = sig
		} else {
			c.raw = sig
		}
		e = x.index(c, e, e.Enc)
		if e.state == nil || e.TitleID != id {
			return x.store.ReadSurface(ctx, id)
		}
	}
	s, err := x.surfaceOf(ctx, e)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return x.store.ReadSurface(ctx, id)
	}
	x.fastSurfaces.Add(1)
	return s, nil
}

// surfaceOf builds readSurface's snapshot from an entry's view state.
func (x *Indexed) surfaceOf(ctx context.Context, e *entry) (*reference.Surface, error) {
	st := e.state
	h, err := parseHeaderLine(e.HeaderLine)
	if err != nil {
		return nil, errSlow
	}
	if err := h.Validate(); err != nil {
		return nil, errSlow
	}
	// The file must still be the one the state describes.
	f, _, ok, err := openState(e.path(x.root), e.Sig, st)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errSlow
	}
	defer f.Close()
	p := &logParser{path: e.path(x.root), enc: e.Enc, id: e.TitleID, f: f, st: st, limit: x.store.limit}
	// The crash closers a full read appends come from the fold's state
	// (finished on a copy: the log may still grow).
	fd := resumeFold(e.TitleID, st.Fold.clone())
	closers, err := fd.finish()
	if err != nil {
		return nil, errSlow // the store's read reports the error
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
	fc := &frameCache{}
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
		ev, err := p.readRecord(st.Locs[i], fc)
		if err != nil || ev.Seq != seq {
			return nil, errSlow
		}
		// The fold upgraded the event the same way (a legacy record
		// whose upgrade needs earlier events never gets here).
		if upgradeEvent(e.TitleID, ev, func(int64) string { return "" }) != nil {
			return nil, errSlow
		}
		s.Events = append(s.Events, surfaceEvent(ev))
		if !budget.add(s.Events[len(s.Events)-1]) {
			return nil, attach(budget.err(), e.TitleID, e.path(x.root))
		}
	}
	for i := range closers {
		if c := &closers[i]; isSurfaceType(c.Type) {
			s.Events = append(s.Events, surfaceEvent(c))
		}
	}
	return s, nil
}

// indexOnDemand indexes the log a full read of id would load, without
// publishing the entry (the refresher will). It returns nil when the
// store's lookup fails (the store then reports why).
func (x *Indexed) indexOnDemand(id string) *entry {
	path, enc, err := x.store.find(id)
	if err != nil {
		return nil
	}
	dir := filepath.Dir(path)
	c := candidate{proj: filepath.Base(filepath.Dir(dir)), seg: filepath.Base(dir)}
	if filepath.Join(x.root, c.proj, c.seg, enc.FileName()) != path {
		return nil
	}
	c.raw, c.hasRaw = lstatSig(filepath.Join(dir, Raw.FileName()))
	c.zst, c.hasZst = lstatSig(filepath.Join(dir, Zstd.FileName()))
	e := x.index(c, nil, enc)
	// The store's find picks the encoding per directory; the entry must
	// be for exactly that transcript.
	if e.Enc != enc || (x.findEntry([]*entry{e}) != e) {
		return nil
	}
	return e
}
