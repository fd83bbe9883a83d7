package sessionstore

import (
	"bytes"
	"errors"
	"hash/crc32"
	"io"
	"math"
	"os"
	"slices"

	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/transcript"
)

// This file holds the per-transcript state of the index: the fold's state
// (fold.go) after the records parsed so far, plus where each surface
// record is stored, kept so that a grown file is parsed only from where the
// last parse stopped (the keep-record-locations policy of the fold). The
// parse applies dsh's scan rules (spec §3) and reports the error a read of
// the log gives, in dsh's order: a scan error (framing first, then the
// first decode error) before the header checks, before the fold's.

// recLoc locates one record (line) of a transcript: for raw logs Off is
// the file offset of the line; for zstd logs Off is the file offset of the
// frame holding it and Inner the line's offset in the frame's plaintext.
// Torn marks a line of a torn final frame (decoded without checksum). CRC
// is the CRC-32 of the line: a re-read by offset checks it, so a log
// rewritten in place is noticed instead of handing unchecked bytes on.
type recLoc struct {
	Off   int64
	Inner int64
	Torn  bool
	CRC   uint32
}

// logState is the incremental parse state of one transcript.
type logState struct {
	// Offset is where parsing resumes: after the last complete good line
	// fed (raw) or after the last complete frame (zstd).
	Offset int64
	// TailCRC is the CRC-32 of the (up to) 64 bytes before Offset, to
	// detect a file rewritten in place with the same or a larger size.
	TailCRC uint32
	// Lines and Frames count the event lines and the complete frames
	// (the header's included) before Offset, for error messages.
	Lines  int
	Frames int
	// Fold is the fold's state after the records before Offset (or, in a
	// view, also those of a torn final frame).
	Fold transcript.FoldState
	// Locs (parallel to Fold.Nodes) are where each surface node's record
	// is stored: ReadSurface decodes only those records.
	Locs []recLoc
	// Items (parallel to Locs) are what each surface node projects to,
	// sized: a hover's message count, compaction and prompt size come
	// from them without reading the log (SurfaceSummary). A state
	// persisted without them has none (len differs from Locs).
	Items []nodeItem
}

// nodeItem is one surface node's reference.SurfaceItem, packed (the index
// keeps one per surface event of every session), and an upper bound of
// the size of its event's encoding (what the read limit counts). A size
// past what 32 bits hold is stored as math.MaxUint32: never summarised.
type nodeItem struct {
	Kind       reference.SurfaceItemKind
	Checkpoint bool
	TextLen    uint32
	QuotedLen  uint32
	RawMax     uint32
}

func packUint32(n int64) uint32 { return uint32(min(max(n, 0), math.MaxUint32)) }

// newNodeItem is e's nodeItem.
func newNodeItem(e *transcript.Event) nodeItem {
	it := reference.SurfaceItemOf(e.Type, e.Data)
	return nodeItem{Kind: it.Kind, Checkpoint: it.Checkpoint, TextLen: packUint32(int64(it.TextLen)),
		QuotedLen: packUint32(int64(it.QuotedLen)), RawMax: packUint32(eventRawMax(e))}
}

// item unpacks n; ok is false when a size did not fit.
func (n nodeItem) item() (it reference.SurfaceItem, rawMax int64, ok bool) {
	if n.TextLen == math.MaxUint32 || n.QuotedLen == math.MaxUint32 || n.RawMax == math.MaxUint32 {
		return reference.SurfaceItem{}, 0, false
	}
	return reference.SurfaceItem{Kind: n.Kind, Checkpoint: n.Checkpoint, TextLen: int(n.TextLen), QuotedLen: int(n.QuotedLen)}, int64(n.RawMax), true
}

func (st *logState) clone() *logState {
	c := *st
	c.Fold = st.Fold.Clone()
	c.Locs = slices.Clone(st.Locs)
	c.Items = slices.Clone(st.Items)
	return &c
}

// eventRawMax bounds len(surfaceEvent(e).Raw): the keys, seq, time and
// markers around the raw values take well under 256 bytes.
func eventRawMax(e *transcript.Event) int64 {
	return int64(len(e.Type)+len(e.Data)+len(e.SurfaceOp)+len(e.SourceEventSeqs)) + 256
}

// logParser feeds new bytes of one transcript into a logState.
type logParser struct {
	path string
	enc  Encoding
	id   string
	f    *os.File
	st   *logState
	// limit is the read limit (Store.limit; 0: DefaultReadLimit): the
	// most decoded bytes of one frame or line.
	limit int64
	// decoded is this read's decoded-bytes budget (zstd); nil starts a
	// fresh one.
	decoded *transcript.DecodedBudget
	// header is the header read by a parse from offset 0.
	header     *transcript.Header
	headerLine []byte
	// badAt is the offset of a raw log's first bad line (-1: none): the
	// rest is a torn tail unless a later turn/end makes it corruption.
	badAt int64
	fd    *transcript.Fold
	loc   recLoc // the record being folded
}

// budget returns the parser's decoded-bytes budget for this read.
func (p *logParser) budget() *transcript.DecodedBudget {
	if p.decoded == nil {
		p.decoded = &transcript.DecodedBudget{Limit: limitOr(p.limit)}
	}
	return p.decoded
}

// fold returns the parser's fold, resumed from p.st on first use.
func (p *logParser) fold() *transcript.Fold {
	if p.fd == nil {
		p.fd = transcript.ResumeFold(p.id, p.st.Fold)
		p.fd.OnNode = func(e *transcript.Event, si int, shadowed []int64) {
			if len(p.st.Items) == len(p.st.Locs) {
				p.st.Items = slices.Replace(p.st.Items, si, si+len(shadowed), newNodeItem(e))
			}
			p.st.Locs = slices.Replace(p.st.Locs, si, si+len(shadowed), p.loc)
		}
	}
	return p.fd
}

// apply folds e, stored at loc.
func (p *logParser) apply(e *transcript.Event, loc recLoc) {
	p.loc = loc
	p.fold().Stored(e)
	p.st.Fold = p.fd.FoldState
}

// frameCache keeps the last decoded frame while records are read in
// file order.
type frameCache struct {
	off  int64
	torn bool
	text []byte
	// win, once set, reads the records (surface_window.go).
	win *transcript.Window
}

// frameText returns the plaintext of the frame holding loc, decoding it
// unless it is the last one decoded.
func (fc *frameCache) frameText(loc recLoc, limit int64) ([]byte, error) {
	if fc.text != nil && fc.off == loc.Off && fc.torn == loc.Torn {
		return fc.text, nil
	}
	frame, err := fc.win.Frame(loc.Off, limit)
	if err != nil && !(loc.Torn && errors.Is(err, io.ErrUnexpectedEOF)) {
		return nil, err
	}
	var text []byte
	if loc.Torn {
		text, err = transcript.DecodeTornFrame(bufGateFor(limit), frame, limit)
	} else {
		text, err = transcript.DecodeFrameLimit(bufGateFor(limit), frame, limit)
	}
	if err != nil {
		return nil, err
	}
	fc.off, fc.torn, fc.text = loc.Off, loc.Torn, text
	return text, nil
}

// readRecord re-reads the single event stored at loc (a surface event is
// never a packed row) through fc's window, caching the last decoded frame.
func (p *logParser) readRecord(loc recLoc, fc *frameCache) (*transcript.Event, error) {
	if fc.win == nil {
		fc.win = &transcript.Window{R: p.f}
	}
	var line []byte
	if p.enc == Raw {
		l, err := fc.win.Line(loc.Off, limitOr(p.limit))
		if err != nil {
			return nil, err
		}
		line = l
	} else {
		text, err := fc.frameText(loc, limitOr(p.limit))
		if err != nil {
			return nil, err
		}
		if loc.Inner > int64(len(text)) {
			return nil, errRecordChanged
		}
		text = text[loc.Inner:]
		if i := bytes.IndexByte(text, '\n'); i >= 0 {
			text = text[:i]
		}
		line = text
	}
	if crc32.ChecksumIEEE(line) != loc.CRC {
		return nil, errRecordChanged
	}
	evs, err := transcript.DecodeRecord(line)
	if err != nil || len(evs) != 1 {
		return nil, errRecordChanged
	}
	return &evs[0], nil
}

// errRecordChanged is a surface record that no longer holds what the
// index read there: the log was rewritten in place since.
var errRecordChanged = &transcript.Error{Kind: transcript.KindIO, Backend: true,
	Msg: "the transcript changed in place while it was read (a record no longer matches the index)"}

// openState opens a transcript for resuming or reading a saved parse
// state: it must still be the file sig describes (same device and inode),
// at least st.Offset long, with the same bytes before st.Offset (tail
// CRC). ok is false otherwise (a replaced, truncated or rewritten file).
func openState(path string, sig fileSig, st *logState) (f *os.File, cur fileSig, ok bool, err error) {
	if f, err = openRegular(path); err != nil {
		return nil, fileSig{}, false, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fileSig{}, false, err
	}
	cur = sigOf(fi)
	if cur.Dev != sig.Dev || cur.Ino != sig.Ino || cur.Size < st.Offset {
		f.Close()
		return nil, cur, false, nil
	}
	if crc, err := tailCRC(f, st.Offset); err != nil || crc != st.TailCRC {
		f.Close()
		return nil, cur, false, nil
	}
	return f, cur, true, nil
}

// tailCRC returns the CRC-32 of the up to 64 bytes before off.
func tailCRC(f *os.File, off int64) (uint32, error) {
	start := max(off-64, 0)
	buf := make([]byte, off-start)
	if _, err := f.ReadAt(buf, start); err != nil && !(errors.Is(err, io.EOF) && len(buf) == 0) {
		return 0, err
	}
	return crc32.ChecksumIEEE(buf), nil
}

// feedText feeds every complete line of text to the scanner and applies
// the resulting events; loc returns the record location of a line
// starting at text offset i. It returns the length of a final partial
// line, and a scan error (corruption) if any.
func (p *logParser) feedText(sc *transcript.LineScanner, text []byte, loc func(i int) recLoc) (int, error) {
	pos := 0
	for pos < len(text) {
		i := bytes.IndexByte(text[pos:], '\n')
		if i < 0 {
			return len(text) - pos, nil
		}
		line := text[pos : pos+i]
		wasBad := sc.Bad()
		if err := sc.Feed(line, 0); err != nil {
			return 0, transcript.MarkBackend(err)
		}
		switch {
		case sc.Bad():
			if !wasBad {
				p.badAt = loc(pos).Off
			}
		default:
			if r := sc.TakeSkipped(); r.N > 0 {
				// assistant/chunk members: log-only, only counted.
				p.fold().Skip(r.N, r.Seq0+r.N-1, r.Last)
				p.st.Fold = p.fd.FoldState
			}
			if len(sc.Events) > 0 {
				l := loc(pos)
				l.CRC = crc32.ChecksumIEEE(line)
				for k := range sc.Events {
					p.apply(&sc.Events[k], l)
				}
			}
			p.st.Lines = sc.Lines
		}
		sc.Events = sc.Events[:0]
		pos += i + 1
	}
	return 0, nil
}

// parseRaw continues a raw transcript from st.Offset to size; from offset
// 0 the first line is the header. A final line without "\n" is left for
// the next parse (a torn tail for now), and so is everything from a bad
// line on (fed only to see whether a later turn/end makes it corruption).
func (p *logParser) parseRaw(size int64) error {
	st := p.st
	sc := &transcript.LineScanner{NextSeq: st.Fold.Count, SkipRows: true, Lines: st.Lines}
	p.badAt = -1
	bp := transcript.GetReadBuf()
	defer transcript.PutReadBuf(bp)
	buf := *bp
	carry := 0
	off := st.Offset
	// A line longer than the read chunk grows the buffer up to the
	// limit: only within a slot of the decode memory budget, so that the
	// pass's workers (one per core) do not each hold one at once.
	var sl transcript.Slot
	defer func() { transcript.Keep(sl) }()
	for off+int64(carry) < size {
		if carry == len(buf) {
			if int64(carry) > limitOr(p.limit) {
				return transcript.Limitf(limitOr(p.limit), "a line holds more bytes than the read limit")
			}
			if sl == nil {
				sl = bufGateFor(limitOr(p.limit)).ReserveOne()
			}
			buf = transcript.GrowBuf(buf, limitOr(p.limit)+1)
			*bp = buf
		}
		n := int(min(int64(len(buf)-carry), size-off-int64(carry)))
		m, err := p.f.ReadAt(buf[carry:carry+n], off+int64(carry))
		data := buf[:carry+m]
		base := off
		if base == 0 && p.header == nil {
			n, herr := p.rawHeader(data)
			if herr != nil {
				return herr
			}
			data, base = data[n:], int64(n)
		}
		consumed := 0
		if p.header != nil || base > 0 {
			partial, ferr := p.feedText(sc, data, func(i int) recLoc { return recLoc{Off: base + int64(i)} })
			if ferr != nil {
				return ferr
			}
			consumed = len(data) - partial
		}
		off = base + int64(consumed)
		if p.badAt < 0 {
			st.Offset = off
		}
		carry = copy(buf, data[consumed:])
		if m < n {
			if err != nil && !errors.Is(err, io.EOF) {
				return err
			}
			break
		}
	}
	if p.header == nil && st.Offset == 0 {
		return transcript.Backendf("empty or header-less session log")
	}
	if p.badAt >= 0 {
		st.Offset = p.badAt
	}
	return nil
}

// rawHeader parses the header line at the start of data, when complete,
// and returns its length with the "\n" (0 when not complete yet).
func (p *logParser) rawHeader(data []byte) (int, error) {
	i := bytes.IndexByte(data, '\n')
	if i < 0 {
		return 0, nil
	}
	h, err := transcript.ParseHeaderLine(data[:i])
	if err != nil {
		return 0, err
	}
	p.header, p.headerLine, p.id = h, append([]byte(nil), data[:i]...), h.ID
	return i + 1, nil
}

// parseZstd continues a zstd transcript from st.Offset (a frame boundary)
// to size, reading it in chunks and decoding frame by frame into recycled
// buffers; from offset 0 the first frame is the header's. Complete frames
// are committed to p.st; a torn final frame is returned (a copy of its
// bytes) for a provisional parse. After the first decode-stage error only
// the framing of the rest is read: a framing error wins over it.
func (p *logParser) parseZstd(size int64) (torn []byte, err error) {
	st := p.st
	sc := &transcript.LineScanner{NextSeq: st.Fold.Count, Strict: true, SkipRows: true, Lines: st.Lines}
	bp := transcript.GetReadBuf()
	defer transcript.PutReadBuf(bp)
	tp := transcript.TextBufs.Get().(*[]byte)
	defer transcript.PutTextBuf(tp)
	buf := *bp
	limit := limitOr(p.limit)
	var pending error
	off := st.Offset
	carry := 0 // bytes of an incomplete frame at buf[:carry], from off
	// A frame whose compressed bytes pass the read chunk grows the buffer
	// up to the limit: only with every slot of the decode memory budget,
	// which that frame's decode (and the rest of this parse) then uses.
	var held transcript.Slot
	defer func() { transcript.Keep(held) }()
	for off+int64(carry) < size {
		if carry == len(buf) {
			if int64(carry) > limit {
				return nil, transcript.Limitf(limit, "a zstd frame decodes to more bytes than the read limit")
			}
			if held == nil {
				held = bufGateFor(limit).ReserveAll()
			}
			buf = append(buf, make([]byte, len(buf))...)
			*bp = buf
		}
		n := int(min(int64(len(buf)-carry), size-off-int64(carry)))
		m, rerr := p.f.ReadAt(buf[carry:carry+n], off+int64(carry))
		data := buf[:carry+m]
		pos := 0
		for pos < len(data) {
			end, complete, ferr := transcript.FrameEndBase(data, pos, off-int64(pos))
			if ferr != nil {
				return nil, ferr
			}
			if !complete {
				break
			}
			frameOff := off
			off += int64(end - pos)
			frame := data[pos:end]
			pos = end
			if pending == nil {
				pending = p.frame(sc, frame, frameOff, tp, limit, held != nil)
			}
			if pending == nil {
				st.Offset = off
			}
		}
		carry = copy(buf, data[pos:])
		if m < n {
			if rerr != nil && !errors.Is(rerr, io.EOF) {
				return nil, rerr
			}
			break
		}
	}
	switch {
	case pending != nil:
		return nil, pending
	case st.Frames == 0:
		return nil, transcript.Backendf("empty or header-less Zstandard session log")
	case carry > 0:
		return append([]byte(nil), buf[:carry]...), nil
	}
	return nil, nil
}

// frame decodes and feeds one complete zstd frame at off (the header
// frame when it is the first), returning a decode-stage error. held says
// the parse holds every decode slot (a frame larger than the read chunk).
func (p *logParser) frame(sc *transcript.LineScanner, frame []byte, off int64, tp *[]byte, limit int64, held bool) error {
	p.st.Frames++
	if p.st.Frames == 1 {
		text, err := transcript.DecodeHeaderFrame(frame)
		if err != nil {
			return err
		}
		if len(text) == 0 || bytes.IndexByte(text, '\n') != len(text)-1 {
			return transcript.Backendf("first zstd frame is not exactly one header line")
		}
		h, err := transcript.ParseHeaderLine(text[:len(text)-1])
		if err != nil {
			return err
		}
		p.header, p.headerLine, p.id = h, text[:len(text)-1], h.ID
		return nil
	}
	text, sl, err := transcript.DecodeFrameInto(bufGateFor(limit), frame, *tp, limit, p.budget(), held)
	if err != nil {
		return err
	}
	if len(text) == 0 || text[len(text)-1] != '\n' {
		transcript.Reuse(sl)
		return transcript.Backendf("complete frame %d contains a torn JSONL record", p.st.Frames)
	}
	_, err = p.feedText(sc, text, func(i int) recLoc { return recLoc{Off: off, Inner: int64(i)} })
	// The fold keeps nothing of the text (it copies what it keeps), so a
	// buffer from the memory budget goes back for reuse; only a small one
	// is kept for the next frame.
	if sl != nil {
		sl.Reuse()
	} else {
		*tp = text[:0]
	}
	return err
}

// parseTorn provisionally feeds the lines a torn final frame yields
// (non-strict) into p.st, which must be a clone.
func (p *logParser) parseTorn(frame []byte) error {
	lo, _ := transcript.FrameContentBounds(frame)
	if err := p.budget().Admit(lo); err != nil {
		return err
	}
	text, err := transcript.DecodeTornFrame(bufGateFor(limitOr(p.limit)), frame, limitOr(p.limit))
	if err != nil {
		return err
	}
	if err := p.budget().Spend(len(text)); err != nil {
		return err
	}
	sc := &transcript.LineScanner{NextSeq: p.st.Fold.Count, SkipRows: true, Lines: p.st.Lines}
	_, err = p.feedText(sc, text, func(i int) recLoc { return recLoc{Off: p.st.Offset, Inner: int64(i), Torn: true} })
	return err
}
