package transcript

import (
	"bytes"
	"errors"
	"hash/crc32"
	"io"
	"sync"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
)

// NOTE: a transcript is read front to back through one recycled input
// buffer, grown only for a line or frame longer than a chunk. A zstd frame
// is decoded into a second recycled buffer. Position advances only past
// committed bytes: a good line (raw) or a complete frame whose lines were
// all good (zstd).

// Framing is how a transcript stores its records.
type Framing int

const (
	// Lines is a raw JSONL transcript (session.jsonl).
	Lines Framing = iota + 1
	// Frames is a transcript of zstd frames (session.jsonl.zstd).
	Frames
)

// Loc locates one record: Off is the file offset of the line (raw) or of
// its frame (zstd, Inner is then the line's offset in the plaintext); Torn
// marks a line of a torn final frame. CRC is the line's CRC-32, which ReadAt
// checks so that a log rewritten in place is noticed (Record.Located sets
// it).
type Loc struct {
	Off   int64
	Inner int64
	Torn  bool
	CRC   uint32
}

// Position is where a read stopped and the next one resumes.
type Position struct {
	// Offset is after the last committed record.
	Offset int64
	// Lines and Frames count the event lines and the complete frames
	// before Offset, for error messages.
	Lines  int
	Frames int
	// NextSeq is the seq the next event must carry.
	NextSeq int64
	// Sum is the CRC-32C of the bytes before Offset: what tells a
	// transcript whose metadata changed (touched, copied, restored) from
	// one whose bytes did (SumOf).
	Sum uint32
}

// Record is one good record the cursor read.
type Record struct {
	// Header is set, and nothing else, for the header (the first record
	// of a read from offset 0); HeaderLine is its text (the caller's).
	Header     *Header
	HeaderLine []byte
	// Events alias the cursor's buffers until the next call: one event,
	// or a packed row's members with Options.ExpandRows.
	Events []Event
	// Skipped counts the members of a packed row not expanded.
	Skipped RowSummary
	// Loc is where the record is stored, without its CRC (Located adds
	// it), Size its length without "\n".
	Loc  Loc
	Size int
	// line is the record's text, valid until the next call.
	line []byte
}

// Located returns where the record is stored with the CRC that ReadAt
// checks; call it before the cursor's next Next. The sum is taken on
// demand because a reader keeps the locations of few records (the
// surface's): summing every line cost 2 % of a first pass.
func (r *Record) Located() Loc {
	loc := r.Loc
	if len(r.Events) > 0 {
		loc.CRC = crc32.ChecksumIEEE(r.line)
	}
	return loc
}

// Options configures a Cursor.
type Options struct {
	// Limit is the most decoded bytes of one frame or line (0:
	// DefaultReadLimit).
	Limit int64
	// Memory is the budget large buffers are taken from (nil: none).
	Memory *Memory
	// Budget is the read's decoded-bytes budget (nil: a fresh one).
	Budget *DecodedBudget
	// ExpandRows expands packed rows into their events instead of
	// counting them.
	ExpandRows bool
}

// Cursor reads the records of one transcript in order (Next), from the
// start or a saved Position (Resume), and re-reads one record by its Loc
// (ReadAt). Close gives its buffers back. It is not safe for concurrent use.
type Cursor struct {
	in      input
	framing Framing
	limit   int64
	mem     *Memory
	budget  *DecodedBudget

	sc         lineScanner
	tape       *[]jsjson.Member // the recycled storage of sc's tape
	pos        Position         // committed
	wantHeader bool
	done       bool
	// pending is a zstd read's first decode-stage error, which a later
	// framing error wins over.
	pending error

	// The zstd frame whose lines are being handed out.
	text      []byte
	textAt    int
	textSlot  *slot
	textBuf   *[]byte
	frameOff  int64
	frameEnd  int64
	frameTorn bool
	tornRead  bool

	// Random access (ReadAt): its own input, and the last frame decoded.
	at     *input
	cached struct {
		off  int64
		torn bool
		text []byte
	}
}

// NewCursor returns a cursor over the first size bytes of r, read from
// the start (its first record is the header).
func NewCursor(r io.ReaderAt, size int64, framing Framing, o Options) *Cursor {
	c := &Cursor{in: input{r: r, size: size}, framing: framing, limit: o.Limit, mem: o.Memory, budget: o.Budget, wantHeader: true}
	if c.limit <= 0 {
		c.limit = DefaultReadLimit
	}
	if c.budget == nil {
		c.budget = &DecodedBudget{Limit: c.limit}
	}
	c.sc = lineScanner{skipRows: !o.ExpandRows, strict: framing == Frames}
	c.tape = tapes.Get().(*[]jsjson.Member)
	c.sc.env.tape.Entries = (*c.tape)[:0]
	c.in.eof = size <= 0
	return c
}

// tapes recycles the validating walk's tapes between cursors: a first
// pass over 100,000 small sessions grew a new one for each session.
var tapes = sync.Pool{New: func() any { return new([]jsjson.Member) }}

// NewCursorBytes returns a cursor over a transcript held in memory whose
// records stay valid (they alias data, or a frame's own decoded text).
func NewCursorBytes(data []byte, framing Framing, o Options) *Cursor {
	c := NewCursor(nil, int64(len(data)), framing, o)
	c.in.buf, c.in.end, c.in.eof = data, len(data), true
	c.sc.keep = true
	return c
}

// Resume continues the read of a new NewCursor after pos, a Position of
// an earlier read of the same (unchanged) bytes.
func (c *Cursor) Resume(pos Position) {
	c.pos = pos
	c.wantHeader = pos.Offset == 0
	c.in.off, c.in.start, c.in.end, c.in.sum = pos.Offset, 0, 0, pos.Sum
	c.in.eof = pos.Offset >= c.in.size
	c.sc.nextSeq, c.sc.lines = pos.NextSeq, pos.Lines
}

// Position returns where the committed records end.
func (c *Cursor) Position() Position { return c.pos }

// Close gives the cursor's buffers back. Its records' events fall back to
// their bytes (their envelope is cleared before its tape is reused).
func (c *Cursor) Close() {
	if c.tape != nil && cap(c.sc.env.tape.Entries) <= jsjson.MaxTape {
		*c.tape = c.sc.env.tape.Entries[:0]
		c.sc.env = envelope{dataAt: -1, seqsAt: -1}
		tapes.Put(c.tape)
	}
	c.tape = nil
	c.releaseText()
	if c.textBuf != nil {
		putTextBuf(c.textBuf)
		c.textBuf = nil
	}
	c.in.close()
	if c.at != nil {
		c.at.close()
	}
}

// Next returns the next good record, io.EOF after the last one (a torn
// tail is not an error), or the read's error: framing, corruption, the
// read limit, I/O.
func (c *Cursor) Next() (Record, error) {
	var rec Record
	err := c.Read(&rec)
	return rec, err
}

// Read is Next into *rec, which it overwrites: a record passed up by value
// through the cursor's layers was copied four times per line.
func (c *Cursor) Read(rec *Record) error {
	if c.framing == Frames {
		return c.nextInFrame(rec)
	}
	return c.nextLine(rec)
}

// nextLine is Next for raw lines. Lines after a bad one are still scanned
// (a later turn/end makes it corruption) but not returned.
func (c *Cursor) nextLine(rec *Record) error {
	for {
		line, off, err := c.in.line(func() error { return c.growForLine(&c.in) })
		if err == io.EOF {
			*rec = Record{}
			if c.wantHeader {
				return backendf("empty or header-less session log")
			}
			return io.EOF
		}
		if err != nil {
			*rec = Record{}
			return err
		}
		end := off + int64(len(line)) + 1
		if c.wantHeader {
			h, err := ParseHeaderLine(line)
			if err != nil {
				*rec = Record{}
				return err
			}
			c.wantHeader, c.pos.Offset, c.pos.Sum = false, end, c.in.sum
			*rec = Record{Header: h, HeaderLine: bytes.Clone(line)}
			return nil
		}
		ok, err := c.scan(line, Loc{Off: off}, rec)
		if err != nil || ok {
			if ok {
				c.pos.Offset, c.pos.Lines, c.pos.NextSeq, c.pos.Sum = end, c.sc.lines, c.sc.nextSeq, c.in.sum
			}
			return err
		}
	}
}

// scan feeds one line to the scanner: ok reports a good record, set in
// *rec, false a bad line (*rec is then cleared).
func (c *Cursor) scan(line []byte, loc Loc, rec *Record) (ok bool, err error) {
	c.sc.events = c.sc.events[:0]
	if err := c.sc.feed(line); err != nil {
		*rec = Record{}
		return false, markBackend(err)
	}
	if c.sc.bad {
		*rec = Record{}
		return false, nil
	}
	*rec = Record{Events: c.sc.events, Skipped: c.sc.takeSkipped(), Loc: loc, Size: len(line), line: line}
	return true, nil
}

// growForLine grows in's full buffer holding one incomplete line, up to
// the read limit, within one slot of the decode memory budget.
func (c *Cursor) growForLine(in *input) error {
	if int64(len(in.buf)) > c.limit {
		return Limitf(c.limit, "a line holds more bytes than the read limit")
	}
	if in.held == nil && c.mem != nil {
		in.held = c.mem.reserve(1)
	}
	in.setBuf(growBuf(in.buf, c.limit+1))
	return nil
}

// growForFrame grows in's full buffer holding one incomplete zstd frame,
// taking every slot of the decode memory budget, which the frame's decode
// then uses.
func (c *Cursor) growForFrame(in *input) error {
	n := len(in.buf)
	if int64(n) > c.limit {
		return Limitf(c.limit, "a zstd frame decodes to more bytes than the read limit")
	}
	if in.held == nil && c.mem != nil {
		in.held, in.heldAll = c.mem.reserve(decodeSlots), true
	}
	in.setBuf(append(in.buf, make([]byte, n)...))
	return nil
}

// nextInFrame is Next for zstd frames. After the first decode-stage error
// only the framing of the rest is read; a torn final frame's lines come
// last, with Loc.Torn, never committed.
func (c *Cursor) nextInFrame(rec *Record) error {
	for {
		if c.text != nil {
			if ok, err := c.frameLine(rec); ok || err != nil {
				return err
			}
			continue
		}
		if c.done {
			*rec = Record{}
			return io.EOF
		}
		frame, off, err := c.in.frame(func() error { return c.growForFrame(&c.in) })
		if err == io.EOF {
			if err := c.endOfFrames(); err != nil {
				*rec = Record{}
				return err
			}
			continue
		}
		if err != nil {
			*rec = Record{}
			return err
		}
		if c.pending != nil {
			continue
		}
		c.pos.Frames++
		if c.pos.Frames == 1 {
			header, err := c.headerFrame(frame)
			if err != nil {
				c.pending = err
				continue
			}
			c.wantHeader, c.pos.Offset, c.pos.Sum = false, off+int64(len(frame)), c.in.sum
			*rec = header
			return nil
		}
		c.pending = c.startFrame(frame, off)
	}
}

// headerFrame reads the header frame within ReadHeader's bound.
func (c *Cursor) headerFrame(frame []byte) (Record, error) {
	if len(frame) > maxHeaderBytes+1 {
		return Record{}, Corruptf("no header within the first %d bytes", maxHeaderBytes)
	}
	line, err := headerFrameLine(frame)
	if err != nil {
		return Record{}, err
	}
	h, err := ParseHeaderLine(line)
	if err != nil {
		return Record{}, err
	}
	return Record{Header: h, HeaderLine: line}, nil
}

// startFrame decodes the complete event frame at off; its lines come next.
func (c *Cursor) startFrame(frame []byte, off int64) error {
	var dst []byte
	if !c.sc.keep { // else every frame is decoded into a buffer of its own
		if c.textBuf == nil {
			c.textBuf = textBufs.Get().(*[]byte)
		}
		dst = *c.textBuf
	}
	text, sl, err := decodeFrame(c.mem, frame, dst, c.limit, c.budget, c.in.heldAll)
	if err != nil {
		return err
	}
	if len(text) == 0 || text[len(text)-1] != '\n' {
		sl.reuse()
		return backendf("complete frame %d contains a torn JSONL record", c.pos.Frames)
	}
	c.text, c.textAt, c.textSlot = text, 0, sl
	c.frameOff, c.frameEnd, c.frameTorn = off, off+int64(len(frame)), false
	return nil
}

// frameLine hands out the current frame's next line; ok is false once the
// frame is done (then committed, unless torn or failed).
func (c *Cursor) frameLine(rec *Record) (ok bool, err error) {
	rest := c.text[c.textAt:]
	i := bytes.IndexByte(rest, '\n')
	if i < 0 {
		c.releaseText()
		if !c.frameTorn && c.pending == nil {
			// Nothing was consumed since the frame: in.sum ends at it.
			c.pos.Offset, c.pos.Lines, c.pos.NextSeq, c.pos.Sum = c.frameEnd, c.sc.lines, c.sc.nextSeq, c.in.sum
		}
		return false, nil
	}
	inner := c.textAt
	c.textAt += i + 1
	ok, err = c.scan(rest[:i], Loc{Off: c.frameOff, Inner: int64(inner), Torn: c.frameTorn}, rec)
	if err != nil && !c.frameTorn {
		c.pending, err = err, nil
		c.releaseText()
	}
	return ok, err
}

// releaseText ends the current frame's text: a budget buffer goes back for
// reuse (the fold copies what it keeps), a small one serves the next frame.
func (c *Cursor) releaseText() {
	if c.text == nil {
		return
	}
	switch {
	case c.frameTorn || c.sc.keep:
	case c.textSlot != nil:
		c.textSlot.reuse()
	default:
		*c.textBuf = c.text[:0]
	}
	c.text, c.textSlot = nil, nil
}

// endOfFrames ends a zstd read: the pending error, a log without a header
// frame, or the torn final frame's whole blocks, scanned leniently.
func (c *Cursor) endOfFrames() error {
	switch {
	case c.pending != nil:
		return c.pending
	case c.pos.Frames == 0:
		return backendf("empty or header-less Zstandard session log")
	case c.in.start == c.in.end || c.tornRead:
		c.done = true
		return nil
	}
	c.tornRead = true
	torn := c.in.buf[c.in.start:c.in.end]
	lo, _ := frameContentBounds(torn)
	if err := c.budget.admit(lo); err != nil {
		return err
	}
	text, err := decodeTornFrame(c.mem, torn, c.limit, c.in.heldAll)
	if err != nil {
		return err
	}
	if err := c.budget.spend(len(text)); err != nil {
		return err
	}
	c.sc.strict = false
	c.text, c.textAt, c.frameOff, c.frameTorn = text, 0, c.pos.Offset, true
	return nil
}

// TornFrame reports whether the read met a torn final zstd frame.
func (c *Cursor) TornFrame() bool { return c.tornRead }

// ReadAt re-reads the single event stored at loc (never a packed row)
// through an input of its own, keeping the last decoded frame. The event
// aliases the cursor's buffers until the next call. A record that no
// longer matches its CRC fails with ErrRecordChanged.
func (c *Cursor) ReadAt(loc Loc) (*Event, error) {
	var line []byte
	if c.framing == Lines {
		l, err := c.lineAt(loc.Off)
		if err != nil {
			return nil, err
		}
		line = l
	} else {
		text, err := c.frameText(loc)
		if err != nil {
			return nil, err
		}
		if loc.Inner > int64(len(text)) {
			return nil, ErrRecordChanged
		}
		line = text[loc.Inner:]
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line = line[:i]
		}
	}
	if crc32.ChecksumIEEE(line) != loc.CRC {
		return nil, ErrRecordChanged
	}
	evs, err := decodeEvents(line)
	if err != nil || len(evs) != 1 {
		return nil, ErrRecordChanged
	}
	return &evs[0], nil
}

// surfaceWindowSize is the random-access input's buffer: surface records
// come in (nearly) file order, so one read serves the next ones too, and a
// sparse surface does not read whole 4 MiB chunks.
const surfaceWindowSize = 256 << 10

// seek positions the random-access input at off, keeping the bytes it
// holds when they cover off.
func (c *Cursor) seek(off int64) *input {
	in := c.at
	if in == nil {
		b := windowBufs.Get().(*[]byte)
		in = &input{r: c.in.r, size: c.in.size, buf: *b, pooled: b}
		c.at = in
	} else if off >= in.off && off <= in.off+int64(in.end) {
		in.start = int(off - in.off)
		return in
	}
	in.off, in.start, in.end, in.eof = off, 0, 0, off >= in.size
	return in
}

// lineAt returns the line starting at off (without its "\n"). A line
// without a "\n" before the end fails with io.ErrUnexpectedEOF, one
// longer than the read limit with a read-limit error.
func (c *Cursor) lineAt(off int64) ([]byte, error) {
	in := c.seek(off)
	line, _, err := in.line(func() error { return c.growForLine(in) })
	if err == io.EOF {
		return nil, io.ErrUnexpectedEOF
	}
	return line, err
}

// frameAt returns the complete zstd frame starting at off, or the bytes of
// a torn final frame with io.ErrUnexpectedEOF.
func (c *Cursor) frameAt(off int64) ([]byte, error) {
	in := c.seek(off)
	frame, _, err := in.frame(func() error { return c.growForFrame(in) })
	if err == io.EOF {
		return in.buf[in.start:in.end], io.ErrUnexpectedEOF
	}
	return frame, err
}

// frameText returns the plaintext of the frame holding loc, decoding it
// unless it is the last one decoded.
func (c *Cursor) frameText(loc Loc) ([]byte, error) {
	fc := &c.cached
	if fc.text != nil && fc.off == loc.Off && fc.torn == loc.Torn {
		return fc.text, nil
	}
	frame, err := c.frameAt(loc.Off)
	if err != nil && !(loc.Torn && errors.Is(err, io.ErrUnexpectedEOF)) {
		return nil, err
	}
	var text []byte
	if loc.Torn {
		text, err = decodeTornFrame(c.mem, frame, c.limit, c.at.heldAll)
	} else {
		var sl *slot
		text, sl, err = decodeFrame(c.mem, frame, nil, c.limit, nil, c.at.heldAll)
		sl.keep() // the text is kept (cached) past this call
	}
	if err != nil {
		return nil, err
	}
	fc.off, fc.torn, fc.text = loc.Off, loc.Torn, text
	return text, nil
}

// TailCRC is TailCRC of the cursor's reader at Position().Offset, from the
// bytes the cursor read when it still holds them (a first pass would read
// them again for every session).
func (c *Cursor) TailCRC() (uint32, error) {
	in, off := &c.in, c.pos.Offset
	if start := max(off-64, 0); in.buf != nil && start >= in.off && off <= in.off+int64(in.end) {
		return crc32.ChecksumIEEE(in.buf[start-in.off : off-in.off]), nil
	}
	return TailCRC(in.r, off)
}

// ErrRecordChanged is a record rewritten in place since an earlier read.
var ErrRecordChanged = &Error{Kind: KindIO, Backend: true,
	Msg: "the transcript changed in place while it was read (a record no longer matches the index)"}

// TailCRC returns the CRC-32 of the up to 64 bytes of r before off, which
// tells a file rewritten in place from one that only grew.
func TailCRC(r io.ReaderAt, off int64) (uint32, error) {
	start := max(off-64, 0)
	buf := make([]byte, off-start)
	if _, err := r.ReadAt(buf, start); err != nil && !(errors.Is(err, io.EOF) && len(buf) == 0) {
		return 0, err
	}
	return crc32.ChecksumIEEE(buf), nil
}

// castagnoli is the CRC-32C table of Position.Sum (hardware on amd64 and
// arm64: summing a transcript costs a small share of reading it).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// SumOf returns the CRC-32C of the first n bytes of r: Position.Sum of a
// read that committed n bytes, without parsing them. It fails when r is
// shorter.
func SumOf(r io.ReaderAt, n int64) (uint32, error) {
	b := readBufs.Get().(*[]byte)
	defer putReadBuf(b)
	var sum uint32
	for off := int64(0); off < n; {
		chunk := (*b)[:min(int64(len(*b)), n-off)]
		m, err := r.ReadAt(chunk, off)
		if m < len(chunk) {
			if err == nil || errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
		sum = crc32.Update(sum, castagnoli, chunk)
		off += int64(m)
	}
	return sum, nil
}

// readChunk is the recycled read buffer's size: the first index pass
// allocates per session about what it keeps, not what it reads.
const readChunk = 4 << 20

var readBufs = sync.Pool{New: func() any { b := make([]byte, readChunk); return &b }}

// windowBufs recycles the random-access windows: a content build reads
// the surfaces of every session, and a fresh window each was most of what
// it allocated (the events a read returns are copies: surfaceEvent).
var windowBufs = sync.Pool{New: func() any { b := make([]byte, surfaceWindowSize); return &b }}

// putReadBuf recycles b, a read buffer or a window, unless it grew (a long
// line or frame).
func putReadBuf(b *[]byte) {
	switch cap(*b) {
	case readChunk:
		*b = (*b)[:readChunk]
		readBufs.Put(b)
	case surfaceWindowSize:
		*b = (*b)[:surfaceWindowSize]
		windowBufs.Put(b)
	}
}

var textBufs = sync.Pool{New: func() any { b := make([]byte, 0, 256<<10); return &b }}

// putTextBuf recycles a decode buffer unless a huge frame grew it.
func putTextBuf(b *[]byte) {
	if cap(*b) <= readChunk {
		textBufs.Put(b)
	}
}

// input holds the bytes read but not consumed yet: buf[start:end], at
// file offset off+start.
type input struct {
	r          io.ReaderAt
	size       int64
	buf        []byte
	pooled     *[]byte // buf's recycled storage, nil when not from the pool
	off        int64   // file offset of buf[0]
	start, end int
	eof        bool // size reached or a short read
	// held is budget memory for a grown buffer; heldAll: every slot.
	held    *slot
	heldAll bool
	// sum is the CRC-32C of the file's bytes before buf[start]: line and
	// frame consume every byte once, in order.
	sum uint32
}

// setBuf replaces buf by a grown copy.
func (in *input) setBuf(b []byte) {
	in.buf = b
	if in.pooled != nil {
		*in.pooled = b
	}
}

// more slides the unconsumed bytes to the front of buf and reads after
// them; the caller grows a full buffer first.
func (in *input) more() error {
	if in.buf == nil {
		in.pooled = readBufs.Get().(*[]byte)
		in.buf = *in.pooled
	}
	if in.start > 0 {
		in.end = copy(in.buf, in.buf[in.start:in.end])
		in.off += int64(in.start)
		in.start = 0
	}
	want := int(min(int64(len(in.buf)-in.end), in.size-in.off-int64(in.end)))
	m, err := in.r.ReadAt(in.buf[in.end:in.end+want], in.off+int64(in.end))
	in.end += m
	if m < want {
		in.eof = true
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
	}
	if in.off+int64(in.end) >= in.size {
		in.eof = true
	}
	return nil
}

// full reports whether buf holds nothing but unconsumed bytes.
func (in *input) full() bool { return in.start == 0 && in.end == len(in.buf) && in.buf != nil }

// line returns the next complete line (without "\n") and its offset, or
// io.EOF; grow is called when one line fills the buffer.
func (in *input) line(grow func() error) ([]byte, int64, error) {
	for {
		if i := bytes.IndexByte(in.buf[in.start:in.end], '\n'); i >= 0 {
			line, off := in.buf[in.start:in.start+i], in.off+int64(in.start)
			in.sum = crc32.Update(in.sum, castagnoli, in.buf[in.start:in.start+i+1])
			in.start += i + 1
			return line, off, nil
		}
		if err := in.fill(grow); err != nil {
			return nil, 0, err
		}
	}
}

// frame returns the next complete zstd frame and its offset, or io.EOF
// (a torn final frame stays unconsumed); grow is called when one frame
// fills the buffer.
func (in *input) frame(grow func() error) ([]byte, int64, error) {
	for {
		if in.end > in.start {
			end, complete, err := frameEnd(in.buf[:in.end], in.start, in.off)
			if err != nil {
				return nil, 0, err
			}
			if complete {
				frame, off := in.buf[in.start:end], in.off+int64(in.start)
				in.sum = crc32.Update(in.sum, castagnoli, frame)
				in.start = end
				return frame, off, nil
			}
		}
		if err := in.fill(grow); err != nil {
			return nil, 0, err
		}
	}
}

// fill reads more, growing a full buffer first; io.EOF at the end.
func (in *input) fill(grow func() error) error {
	if in.eof {
		return io.EOF
	}
	if in.full() {
		if err := grow(); err != nil {
			return err
		}
	}
	return in.more()
}

// close recycles the read buffer and gives held memory back.
func (in *input) close() {
	if in.pooled != nil {
		putReadBuf(in.pooled)
		in.pooled, in.buf = nil, nil
	}
	in.held.keep()
	in.held = nil
}
