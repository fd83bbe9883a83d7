package sessionstore

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
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
	f, err := openRegular(e.path(x.root))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// The file must still be the one the state describes.
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if cur := sigOf(fi); cur.Dev != e.Sig.Dev || cur.Ino != e.Sig.Ino || cur.Size < st.Offset {
		return nil, errSlow
	}
	if crc, err := tailCRC(f, st.Offset); err != nil || crc != st.TailCRC {
		return nil, errSlow
	}
	p := &logParser{path: e.path(x.root), enc: e.Enc, id: e.TitleID, f: f, st: st}
	s := &reference.Surface{
		Session: h.Object(),
		Header:  h.Reference(),
		Events:  make([]reference.SurfaceEvent, 0, len(st.Nodes)),
	}
	if st.NextSeq > 0 {
		last := st.NextSeq - 1
		s.CapturedThroughSeq = &last
	}
	fc := &frameCache{}
	for i, seq := range st.Nodes {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		ev, err := p.readRecord(st.Locs[i], fc)
		if err != nil || ev.Seq != seq {
			return nil, errSlow
		}
		// Raw is a fresh copy; Data points into it, so no decoded frame or
		// read buffer stays referenced (bounded memory).
		raw := ev.appendJSON(nil)
		data := append([]byte(nil), ev.Data...)
		if i := bytes.Index(raw, []byte(`,"data":`)); i >= 0 && bytes.HasPrefix(raw[i+8:], ev.Data) {
			data = raw[i+8 : i+8+len(ev.Data) : i+8+len(ev.Data)]
		}
		s.Events = append(s.Events, reference.SurfaceEvent{Type: ev.Type, Seq: ev.Seq, Data: data, Raw: raw})
	}
	if st.OpenTurn {
		// A full read appends dsh's crash closers to an open turn; they
		// need the open turn's events, re-read (streaming) from its start.
		closers, err := p.openTurnClosers(ctx)
		if err != nil {
			return nil, err
		}
		for i := range closers {
			c := &closers[i]
			if checkMessage(c) != nil {
				return nil, errSlow // the full read reports the error
			}
			if isSurfaceType(c.Type) { // closers only append
				s.Events = append(s.Events, reference.SurfaceEvent{Type: c.Type, Seq: c.Seq, Data: c.Data, Raw: c.appendJSON(nil)})
			}
			last := c.Seq
			s.CapturedThroughSeq = &last
		}
	}
	return s, nil
}

// openTurnClosers re-reads the events of the open turn (from the record at
// p.st.TurnStart up to seq p.st.NextSeq-1) and returns the crash closers a
// full read would append. Memory is bounded by one line or frame.
func (p *logParser) openTurnClosers(ctx context.Context) ([]Event, error) {
	st := p.st
	var (
		cs      closerState
		next    = int64(-1) // seq expected next (-1: the turn/start's)
		lastT   int64
		reached bool
	)
	feed := func(line []byte) (bool, error) {
		evs, err := DecodeRecord(line)
		if err != nil {
			return false, errSlow
		}
		for i := range evs {
			e := &evs[i]
			if next < 0 {
				if e.Type != "turn/start" {
					return false, errSlow
				}
				next = e.Seq
			}
			if e.Seq != next {
				return false, errSlow
			}
			cs.feed(e)
			lastT = e.Time
			next++
			if next == st.NextSeq {
				reached = true
				return true, nil
			}
		}
		return false, nil
	}
	var err error
	if p.enc == Raw {
		err = eachLineFrom(ctx, p.f, st.TurnStart.Off, feed)
	} else {
		err = eachFrameLineFrom(ctx, p.f, st.TurnStart, feed)
	}
	if err != nil {
		return nil, err
	}
	if !reached {
		return nil, errSlow
	}
	return cs.closers(st.NextSeq-1, lastT), nil
}

// eachLineFrom calls fn with each complete line of a raw transcript from
// off on, until fn returns true or the file ends.
func eachLineFrom(ctx context.Context, f *os.File, off int64, fn func([]byte) (bool, error)) error {
	buf := make([]byte, 1<<20)
	n := 0
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if n == len(buf) {
			buf = append(buf, make([]byte, len(buf))...)
		}
		m, rerr := f.ReadAt(buf[n:], off+int64(n))
		n += m
		pos := 0
		for {
			i := bytes.IndexByte(buf[pos:n], '\n')
			if i < 0 {
				break
			}
			done, err := fn(buf[pos : pos+i])
			if done || err != nil {
				return err
			}
			pos += i + 1
		}
		if rerr != nil {
			if errors.Is(rerr, io.EOF) {
				return nil
			}
			return rerr
		}
		off += int64(pos)
		n = copy(buf, buf[pos:n])
	}
}

// eachFrameLineFrom calls fn with each line of a zstd transcript from the
// line at loc on (complete frames, then the lines a torn final frame
// yields), until fn returns true or the file ends.
func eachFrameLineFrom(ctx context.Context, f *os.File, loc recLoc, fn func([]byte) (bool, error)) error {
	off, inner := loc.Off, loc.Inner
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		frame, err := readFrameAt(f, off)
		var text []byte
		switch {
		case errors.Is(err, io.ErrUnexpectedEOF):
			text = decodePartialFrame(frame)
		case err != nil:
			return errSlow
		default:
			if text, err = decodeFrame(frame); err != nil {
				return errSlow
			}
		}
		if inner > int64(len(text)) {
			return errSlow
		}
		text = text[inner:]
		inner = 0
		for {
			i := bytes.IndexByte(text, '\n')
			if i < 0 {
				break
			}
			done, err := fn(text[:i])
			if done || err != nil {
				return err
			}
			text = text[i+1:]
		}
		if len(frame) == 0 || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil
		}
		off += int64(len(frame))
	}
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
