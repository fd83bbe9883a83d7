package sessionstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
	"github.com/dsh-lsp/dsh-lsp/reference"
)

// This file is the streamed read: the transcript is read line by line
// (raw) or frame by frame (zstd) through the same scanner as the full
// load, and each event goes through the one fold (fold.go) with a policy
// that keeps only what the answer needs: the surface events (ReadSurface)
// or nothing but the latest title (ReadTitle). A read of a multi-GB log
// then costs memory in proportion to its surface and its longest line or
// frame, not to the log.

// streamBuf is the initial read buffer of a streamed raw read.
const streamBuf = 1 << 20

// readTitleStream reads id's title from path the way Load + Title does,
// streaming. It returns errNeedLoad when only the full load can decide.
func (s *Store) readTitleStream(ctx context.Context, id, path string, enc Encoding) (*Title, error) {
	f, _, _, err := s.stream(ctx, id, path, enc, false)
	if err != nil {
		return nil, err
	}
	t, err := f.latest()
	return t, attach(err, id, "")
}

// readSurfaceStream is Load + Log.SurfaceSnapshot, streaming: only the
// surface events are kept (memory in proportion to the surface, not the
// log). It returns errNeedLoad when only the full load can decide.
func (s *Store) readSurfaceStream(ctx context.Context, id, path string, enc Encoding) (*reference.Surface, error) {
	f, h, kept, err := s.stream(ctx, id, path, enc, true)
	if err != nil {
		return nil, err
	}
	out := &reference.Surface{Session: h.Object(), Header: h.Reference(), Events: make([]reference.SurfaceEvent, 0, len(f.Nodes))}
	if f.Count > 0 {
		last := f.LastSeq
		out.CapturedThroughSeq = &last
	}
	for _, seq := range f.Nodes {
		out.Events = append(out.Events, kept[seq])
	}
	return out, nil
}

// stream runs streamOnce, again while the file changes under the read
// (as readStable).
func (s *Store) stream(ctx context.Context, id, path string, enc Encoding, surface bool) (f *fold, h *Header, kept map[int64]reference.SurfaceEvent, err error) {
	for attempt := 0; attempt < 4; attempt++ {
		var stable bool
		f, h, kept, stable, err = s.streamOnce(ctx, id, path, enc, surface)
		if stable || err == errNeedLoad || ctx.Err() != nil {
			break
		}
	}
	return f, h, kept, err
}

func ioErr(id, path string, err error) error {
	return &Error{Kind: KindIO, SessionID: id, Path: path, Msg: "cannot read transcript", Err: err}
}

// streamOnce is one streamed read with Load's checks; stable reports that
// the file did not change while it was read.
func (s *Store) streamOnce(ctx context.Context, id, path string, enc Encoding, surface bool) (*fold, *Header, map[int64]reference.SurfaceEvent, bool, error) {
	file, err := openRegular(path)
	if err != nil {
		return nil, nil, nil, true, ioErr(id, path, err)
	}
	defer file.Close()
	st1, err1 := file.Stat()
	var (
		h    *Header
		f    = newFold(id)
		kept map[int64]reference.SurfaceEvent
		read int64
	)
	budget := &surfaceBudget{limit: s.limit}
	if surface {
		// The keep-the-surface policy: a fresh copy of each surface
		// event (e's data may alias a read buffer), dropped when shadowed;
		// the kept bytes are held to the read limit.
		kept = map[int64]reference.SurfaceEvent{}
		f.onNode = func(e *Event, _ int, shadowed []int64) {
			for _, s := range shadowed {
				budget.drop(kept[s])
				delete(kept, s)
			}
			if ev := surfaceEvent(e); budget.add(ev) {
				kept[e.Seq] = ev
			} else {
				clear(kept)
			}
		}
	}
	if enc == Zstd {
		h, read, err = streamZstd(ctx, file, f, s.limit)
	} else {
		h, read, err = streamRaw(ctx, file, f, s.limit)
	}
	if err != nil && !isLogError(err) {
		if ctx.Err() != nil {
			return nil, nil, nil, true, ctx.Err()
		}
		return nil, nil, nil, true, ioErr(id, path, err)
	}
	st2, err2 := os.Stat(path)
	stable := err1 == nil && err2 == nil && os.SameFile(st1, st2) && st1.Size() == st2.Size() &&
		st1.ModTime().Equal(st2.ModTime()) && read == st2.Size()
	if err != nil { // a scan error
		return nil, nil, nil, stable, attach(err, id, path)
	}
	if err := s.checkIdentity(h, path, enc); err != nil {
		return nil, nil, nil, stable, attach(err, id, path)
	}
	if h.ID != id {
		return nil, nil, nil, stable, attach(corruptf("header id %s does not match the requested id", jsjson.Quote(h.ID)), id, path)
	}
	if err := h.Validate(); err != nil {
		return nil, nil, nil, stable, attach(err, id, path)
	}
	if _, err := f.finish(); err != nil {
		if err == errNeedLoad {
			return nil, nil, nil, stable, err
		}
		return nil, nil, nil, stable, attach(err, id, path)
	}
	if budget.over {
		return nil, nil, nil, stable, attach(budget.err(), id, path)
	}
	return f, h, kept, stable, nil
}

func isLogError(err error) bool {
	var le *logError
	return errors.As(err, &le)
}

// drain hands the scanner's accepted events to the fold and forgets them.
func drain(sc *LineScanner, f *fold) {
	if r := sc.takeSkipped(); r.n > 0 {
		f.skip(r.n, r.seq0+r.n-1, r.last)
	}
	for i := range sc.events {
		f.stored(&sc.events[i])
	}
	clear(sc.events)
	sc.events = sc.events[:0]
}

// feedDrain is LineScanner.feedLines, handing events to f line by line.
func feedDrain(sc *LineScanner, f *fold, text []byte, base int64) (int, error) {
	return sc.feedLinesThen(text, base, func() { drain(sc, f) })
}

// surfaceEvent is readSurface's copy of a surface event: Raw is a fresh
// encoding and Data points into it, so no read buffer or decoded frame
// stays referenced.
func surfaceEvent(e *Event) reference.SurfaceEvent {
	// Sized for the whole encoding up front: growing it from nil copied
	// each event's data several times (issue 16, cold hovers).
	raw := e.appendJSON(make([]byte, 0, len(e.Type)+len(e.Data)+len(e.SurfaceOp)+len(e.SourceEventSeqs)+128))
	var data json.RawMessage
	if i := bytes.Index(raw, []byte(`,"data":`)); i >= 0 && bytes.HasPrefix(raw[i+8:], e.Data) {
		data = raw[i+8 : i+8+len(e.Data) : i+8+len(e.Data)]
	} else {
		data = append(json.RawMessage(nil), e.Data...)
	}
	return reference.SurfaceEvent{Type: e.Type, Seq: e.Seq, Data: data, Raw: raw}
}
