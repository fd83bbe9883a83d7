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
)

// This file holds the per-transcript state of the index: the fold's state
// (fold.go) after the records parsed so far, plus where each surface
// record is stored, kept so that a grown file is parsed only from where the
// last parse stopped (the keep-record-locations policy of the fold). A log
// the fold fails on, or that needs the full load (a legacy replacing
// tool/result), or whose scan finds a bad line, is "slow": its title is then
// read with the store's streamed read, which reports the error.

// errSlow marks a log whose answer the index leaves to the store's read
// (a failed fold or scan: the store reports the error with its path).
var errSlow = errors.New("sessionstore: log needs a full read")

// recLoc locates one record (line) of a transcript: for raw logs Off is
// the file offset of the line; for zstd logs Off is the file offset of the
// frame holding it and Inner the line's offset in the frame's plaintext.
// Torn marks a line of a torn final frame (decoded without checksum).
type recLoc struct {
	Off   int64
	Inner int64
	Torn  bool
}

// logState is the incremental parse state of one transcript.
type logState struct {
	// Offset is where parsing resumes: after the last complete line fed
	// (raw) or after the last complete frame (zstd).
	Offset int64
	// TailCRC is the CRC-32 of the (up to) 64 bytes before Offset, to
	// detect a file rewritten in place with the same or a larger size.
	TailCRC uint32
	// Fold is the fold's state after the records before Offset (or, in a
	// view, also those of a torn final frame).
	Fold foldState
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
func newNodeItem(e *Event) nodeItem {
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
	c.Fold = st.Fold.clone()
	c.Locs = slices.Clone(st.Locs)
	c.Items = slices.Clone(st.Items)
	return &c
}

// closersFail reports whether finishing the fold here (crash closers
// included) fails; the store's read then reports the error.
func (st *logState) closersFail() bool {
	f := resumeFold("", st.Fold.clone())
	_, err := f.finish()
	return err != nil
}

// eventRawMax bounds len(surfaceEvent(e).Raw): the keys, seq, time and
// markers around the raw values take well under 256 bytes.
func eventRawMax(e *Event) int64 {
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
	decoded *decodedBudget
	fd      *fold
	loc     recLoc // the record being folded
}

// budget returns the parser's decoded-bytes budget for this read.
func (p *logParser) budget() *decodedBudget {
	if p.decoded == nil {
		p.decoded = &decodedBudget{limit: p.limit}
	}
	return p.decoded
}

// fold returns the parser's fold, resumed from p.st on first use.
func (p *logParser) fold() *fold {
	if p.fd == nil {
		p.fd = resumeFold(p.id, p.st.Fold)
		p.fd.onNode = func(e *Event, si int, shadowed []int64) {
			if len(p.st.Items) == len(p.st.Locs) {
				p.st.Items = slices.Replace(p.st.Items, si, si+len(shadowed), newNodeItem(e))
			}
			p.st.Locs = slices.Replace(p.st.Locs, si, si+len(shadowed), p.loc)
		}
	}
	return p.fd
}

// apply folds e, stored at loc. It returns errSlow once the fold has
// failed or needs the full load.
func (p *logParser) apply(e *Event, loc recLoc) error {
	p.loc = loc
	p.fold().stored(e)
	p.st.Fold = p.fd.foldState
	if p.fd.err() != nil {
		return errSlow
	}
	return nil
}

// frameCache keeps the last decoded frame while records are read in
// file order.
type frameCache struct {
	off  int64
	torn bool
	text []byte
	// win, once set, reads the records (surface_window.go).
	win *fileWindow
}

// readRecord re-reads the single event stored at loc (a surface event is
// never a packed row). fc, when not nil, caches the last decoded frame.
func (p *logParser) readRecord(loc recLoc, fc *frameCache) (*Event, error) {
	var line []byte
	if fc != nil && fc.win == nil {
		fc.win = &fileWindow{f: p.f}
	}
	if p.enc == Raw {
		var l []byte
		var err error
		if fc != nil {
			l, err = fc.win.line(loc.Off, limitOr(p.limit))
		} else {
			l, err = readLineAt(p.f, loc.Off)
		}
		if err != nil {
			return nil, err
		}
		line = l
	} else {
		var text []byte
		if fc != nil && fc.text != nil && fc.off == loc.Off && fc.torn == loc.Torn {
			text = fc.text
		} else {
			var frame []byte
			var err error
			if fc != nil {
				frame, err = fc.win.frame(loc.Off, limitOr(p.limit))
			} else {
				frame, err = readFrameAtLimit(p.f, loc.Off, limitOr(p.limit))
			}
			if err != nil && !(loc.Torn && errors.Is(err, io.ErrUnexpectedEOF)) {
				return nil, err
			}
			if loc.Torn {
				if text, err = decodeTornFrame(frame, limitOr(p.limit)); err != nil {
					return nil, err
				}
			} else if text, err = decodeFrameLimit(frame, limitOr(p.limit)); err != nil {
				return nil, err
			}
			if fc != nil {
				fc.off, fc.torn, fc.text = loc.Off, loc.Torn, text
			}
		}
		if loc.Inner > int64(len(text)) {
			return nil, errSlow
		}
		text = text[loc.Inner:]
		if i := bytes.IndexByte(text, '\n'); i >= 0 {
			text = text[:i]
		}
		line = text
	}
	evs, err := DecodeRecord(line)
	if err != nil || len(evs) != 1 {
		return nil, errSlow
	}
	return &evs[0], nil
}

// readLineAt reads the line starting at off (without its "\n").
func readLineAt(f *os.File, off int64) ([]byte, error) {
	buf := make([]byte, 0, 64<<10)
	for {
		n := max(cap(buf)-len(buf), 64<<10)
		chunk := make([]byte, n)
		m, err := f.ReadAt(chunk, off+int64(len(buf)))
		if i := bytes.IndexByte(chunk[:m], '\n'); i >= 0 {
			return append(buf, chunk[:i]...), nil
		}
		buf = append(buf, chunk[:m]...)
		if err != nil {
			return nil, err
		}
	}
}

// readFrameAt reads the complete zstd frame starting at off (at most the
// default read limit; see readFrameAtLimit). For a torn frame it returns
// the bytes up to EOF and io.ErrUnexpectedEOF.
func readFrameAt(f *os.File, off int64) ([]byte, error) {
	return readFrameAtLimit(f, off, DefaultReadLimit)
}

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

// feedText feeds every complete line of text to a line scanner and applies
// the resulting events. base is the logical offset of text; loc returns the
// record location of a line starting at text offset i. It returns the
// length of a final partial line.
func (p *logParser) feedText(sc *LineScanner, text []byte, loc func(i int) recLoc) (int, error) {
	pos := 0
	for pos < len(text) {
		i := bytes.IndexByte(text[pos:], '\n')
		if i < 0 {
			return len(text) - pos, nil
		}
		line := text[pos : pos+i]
		before := len(sc.events)
		if err := sc.Feed(line, 0); err != nil || sc.Bad() {
			return 0, errSlow
		}
		if r := sc.takeSkipped(); r.n > 0 {
			// assistant/chunk members: log-only, only counted.
			p.fold().skip(r.n, r.seq0+r.n-1, r.last)
			p.st.Fold = p.fd.foldState
		}
		l := loc(pos)
		for k := before; k < len(sc.events); k++ {
			if err := p.apply(&sc.events[k], l); err != nil {
				return 0, err
			}
		}
		sc.events = sc.events[:0]
		pos += i + 1
	}
	return 0, nil
}

// parseRaw continues a raw transcript from st.Offset to size. A final
// line without "\n" is left for the next parse (a torn tail for now).
func (p *logParser) parseRaw(size int64) error {
	st := p.st
	sc := &LineScanner{NextSeq: st.Fold.Count, SkipRows: true}
	bp := getReadBuf()
	defer putReadBuf(bp)
	buf := *bp
	carry := 0
	off := st.Offset
	// A line longer than the read chunk grows the buffer up to the
	// limit: only within a slot of the decode memory budget, so that the
	// pass's workers (one per core) do not each hold one at once.
	var sl *slot
	defer func() { sl.keep() }()
	for off+int64(carry) < size {
		if carry == len(buf) {
			if int64(carry) > limitOr(p.limit) {
				return limitf(limitOr(p.limit), "a line holds more bytes than the read limit")
			}
			if sl == nil {
				sl = bufGateFor(limitOr(p.limit)).takeSlot()
			}
			buf = growBuf(buf, limitOr(p.limit)+1)
			*bp = buf
		}
		n := int(min(int64(len(buf)-carry), size-off-int64(carry)))
		m, err := p.f.ReadAt(buf[carry:carry+n], off+int64(carry))
		data := buf[:carry+m]
		base := off
		partial, ferr := p.feedText(sc, data, func(i int) recLoc { return recLoc{Off: base + int64(i)} })
		if ferr != nil {
			return ferr
		}
		consumed := len(data) - partial
		off += int64(consumed)
		st.Offset = off
		carry = copy(buf, data[consumed:])
		if m < n {
			if err != nil && !errors.Is(err, io.EOF) {
				return err
			}
			break
		}
	}
	return nil
}

// parseZstd continues a zstd transcript from st.Offset (a frame boundary)
// to size, reading it in chunks and decoding frame by frame into recycled
// buffers. Complete frames are committed to p.st; a torn final frame is
// returned (a copy of its bytes) for a provisional parse.
func (p *logParser) parseZstd(size int64) (torn []byte, err error) {
	st := p.st
	sc := &LineScanner{NextSeq: st.Fold.Count, Strict: true, SkipRows: true}
	bp := getReadBuf()
	defer putReadBuf(bp)
	tp := textBufs.Get().(*[]byte)
	defer putTextBuf(tp)
	buf := *bp
	limit := limitOr(p.limit)
	carry := 0 // bytes of an incomplete frame at buf[:carry], from st.Offset
	// A frame whose compressed bytes pass the read chunk grows the buffer
	// up to the limit: only with every slot of the decode memory budget,
	// which that frame's decode (and the rest of this parse) then uses.
	var held *slot
	defer func() { held.keep() }()
	for st.Offset+int64(carry) < size {
		if carry == len(buf) {
			if int64(carry) > limit {
				return nil, limitf(limit, "a zstd frame decodes to more bytes than the read limit")
			}
			if held == nil {
				held = bufGateFor(limit).takeSlots(decodeSlots)
			}
			buf = append(buf, make([]byte, len(buf))...)
			*bp = buf
		}
		n := int(min(int64(len(buf)-carry), size-st.Offset-int64(carry)))
		m, rerr := p.f.ReadAt(buf[carry:carry+n], st.Offset+int64(carry))
		data := buf[:carry+m]
		pos := 0
		for pos < len(data) {
			end, complete, ferr := frameEndBase(data, pos, st.Offset-int64(pos))
			if ferr != nil {
				return nil, errSlow
			}
			if !complete {
				break
			}
			text, sl, err := decodeFrameInto(data[pos:end], *tp, limit, p.budget(), held != nil)
			if errors.Is(err, ErrReadLimit) {
				return nil, err
			}
			if err != nil || len(text) == 0 || text[len(text)-1] != '\n' {
				sl.reuse()
				return nil, errSlow
			}
			frameOff := st.Offset
			_, err = p.feedText(sc, text, func(i int) recLoc { return recLoc{Off: frameOff, Inner: int64(i)} })
			// The fold keeps nothing of the text (it copies what it
			// keeps), so a buffer from the memory budget goes back for
			// reuse; only a small one is kept for the next frame.
			if sl != nil {
				sl.reuse()
			} else {
				*tp = text[:0]
			}
			if err != nil {
				return nil, err
			}
			st.Offset += int64(end - pos)
			pos = end
		}
		carry = copy(buf, data[pos:])
		if m < n {
			if rerr != nil && !errors.Is(rerr, io.EOF) {
				return nil, rerr
			}
			break
		}
	}
	if carry > 0 {
		return append([]byte(nil), buf[:carry]...), nil
	}
	return nil, nil
}

// parseTorn provisionally feeds the lines a torn final frame yields
// (non-strict, like ScanZstd) into p.st, which must be a clone.
func (p *logParser) parseTorn(frame []byte) error {
	lo, _ := frameContentBounds(frame)
	if err := p.budget().admit(lo); err != nil {
		return err
	}
	text, err := decodeTornFrame(frame, limitOr(p.limit))
	if err != nil {
		return err
	}
	if err := p.budget().spend(len(text)); err != nil {
		return err
	}
	sc := &LineScanner{NextSeq: p.st.Fold.Count, SkipRows: true}
	pos := 0
	for pos < len(text) {
		i := bytes.IndexByte(text[pos:], '\n')
		if i < 0 {
			break
		}
		if err := sc.Feed(text[pos:pos+i], 0); err != nil {
			return errSlow
		}
		// After a bad line the rest is a torn tail, unless a later
		// turn/end makes it corruption (Feed reports that).
		if !sc.Bad() {
			if r := sc.takeSkipped(); r.n > 0 {
				p.fold().skip(r.n, r.seq0+r.n-1, r.last)
				p.st.Fold = p.fd.foldState
			}
			for k := range sc.events {
				if err := p.apply(&sc.events[k], recLoc{Off: p.st.Offset, Inner: int64(pos), Torn: true}); err != nil {
					return err
				}
			}
		}
		sc.events = sc.events[:0]
		pos += i + 1
	}
	return nil
}
