package sessionstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"slices"
	"sync"

	"github.com/dsh-lsp/dsh-lsp/internal/beneath"
	"github.com/dsh-lsp/dsh-lsp/internal/binenc"
	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/transcript"
)

// logState is the incremental parse state of one transcript: the fold's
// state after the records read so far, and where each surface record is
// stored, so that a grown file is read only from where the last read
// stopped. The records come from a transcript.Cursor (dsh's scan rules).
type logState struct {
	// Offset is where parsing resumes: after the last complete line (raw)
	// or frame (zstd). TailCRC is the CRC-32 of the (up to) 64 bytes
	// before it, to detect a file rewritten in place.
	Offset  int64
	TailCRC uint32
	// Sum is the CRC-32C of the bytes before Offset (transcript.Position):
	// a transcript whose signature changed but whose bytes did not (a
	// touch, a copy, a restore) keeps its entry (keepSameBytes).
	Sum uint32
	// Lines and Frames count the event lines and the complete frames
	// before Offset, for error messages.
	Lines  int
	Frames int
	// Fold is the fold's state after the records before Offset (in a
	// view, also those of a torn final frame).
	Fold transcript.FoldState
	// Locs (parallel to Fold.Nodes) are where each surface record is
	// stored: ReadSurface decodes only those records.
	Locs []transcript.Loc
	// Items (parallel to Locs) are what each surface node projects to,
	// sized, for SurfaceSummary. A state persisted without them has none.
	Items []nodeItem
}

// nodeItem is one surface node's reference.SurfaceItem, packed, and an
// upper bound of the size of its event's encoding. A size past 32 bits is
// stored as math.MaxUint32: never summarised.
type nodeItem struct {
	Kind       reference.SurfaceItemKind
	Checkpoint bool
	TextLen    uint32
	QuotedLen  uint32
	RawMax     uint32
}

func packUint32(n int64) uint32 { return uint32(min(max(n, 0), math.MaxUint32)) }

// newNodeItem is e's nodeItem. RawMax bounds len(surfaceEvent(e).Raw):
// the keys, seq, time and markers around the raw values take well under
// 256 bytes.
func newNodeItem(e *transcript.Event) nodeItem {
	it := reference.SurfaceItemOf(e.Type, e.Data, e.Tape())
	rawMax := int64(len(e.Type)+len(e.Data)+len(e.SurfaceOp)+len(e.SourceEventSeqs)) + 256
	return nodeItem{Kind: it.Kind, Checkpoint: it.Checkpoint, TextLen: packUint32(int64(it.TextLen)),
		QuotedLen: packUint32(int64(it.QuotedLen)), RawMax: packUint32(rawMax)}
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

// logParser folds the records of one transcript into a logState, from
// where the state's last parse stopped.
type logParser struct {
	enc   Encoding
	id    string
	f     io.ReaderAt
	st    *logState
	limit int64
	// header is the header read by a parse from offset 0.
	header     *transcript.Header
	headerLine []byte
	fd         *transcript.Fold
	rec        transcript.Record // the record being folded, read in place (Cursor.Read)
}

// cursor returns a cursor over the transcript's first size bytes.
func (p *logParser) cursor(size int64) *transcript.Cursor {
	return transcript.NewCursor(p.f, size, p.enc.framing(), transcript.Options{Limit: p.limit, Memory: transcript.MemoryFor(p.limit)})
}

// fold returns the parser's fold, resumed from p.st on first use.
func (p *logParser) fold() *transcript.Fold {
	if p.fd == nil {
		p.fd = transcript.ResumeFold(p.id, p.st.Fold)
		p.fd.OnNode = func(e *transcript.Event, si int, shadowed []int64) {
			if p.st.Locs == nil { // sized once rather than grown from one
				p.st.Locs, p.st.Items = make([]transcript.Loc, 0, transcript.FirstSurfaceCap), make([]nodeItem, 0, transcript.FirstSurfaceCap)
			}
			if len(p.st.Items) == len(p.st.Locs) {
				p.st.Items = slices.Replace(p.st.Items, si, si+len(shadowed), newNodeItem(e))
			}
			p.st.Locs = slices.Replace(p.st.Locs, si, si+len(shadowed), p.rec.Located())
		}
	}
	return p.fd
}

// parse continues p.st from its offset to size and returns the state to
// answer from. A torn final zstd frame is folded only into that view (a
// copy): p.st stays where the next parse resumes.
func (p *logParser) parse(size int64) (view *logState, err error) {
	cur := p.cursor(size)
	defer cur.Close()
	cur.Resume(transcript.Position{Offset: p.st.Offset, Lines: p.st.Lines, Frames: p.st.Frames, NextSeq: p.st.Fold.Count, Sum: p.st.Sum})
	committed := p.st
	for {
		err := cur.Read(&p.rec)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if p.rec.Loc.Torn && p.st == committed {
			p.st = committed.clone()
			p.fd = nil
		}
		p.apply()
	}
	pos := cur.Position()
	committed.Offset, committed.Lines, committed.Frames, committed.Sum = pos.Offset, pos.Lines, pos.Frames, pos.Sum
	if committed.TailCRC, err = cur.TailCRC(); err != nil {
		return nil, err
	}
	view = p.st
	if cur.TornFrame() && view == committed {
		view = committed.clone()
	}
	view.Offset, view.TailCRC, view.Lines, view.Frames, view.Sum = committed.Offset, committed.TailCRC, committed.Lines, committed.Frames, committed.Sum
	p.st = committed
	return view, nil
}

// apply folds the record read, p.rec.
func (p *logParser) apply() {
	rec := &p.rec
	if rec.Header != nil {
		p.header, p.headerLine, p.id = rec.Header, rec.HeaderLine, rec.Header.ID
		return
	}
	fd := p.fold()
	if rec.Skipped.N > 0 {
		fd.Skip(rec.Skipped.N, rec.Skipped.Seq0+rec.Skipped.N-1, rec.Skipped.Last)
	}
	for i := range rec.Events {
		fd.Stored(&rec.Events[i])
	}
	p.st.Fold = fd.FoldState
}

// stateTail is where a saved parse stopped and the CRC of the bytes
// before it: what tells whether the transcript is still the one parsed.
type stateTail struct {
	Offset  int64
	TailCRC uint32
	Sum     uint32
}

// encode returns st's encoding (decodeLogState reads it back): the tail
// first, at fixed width, so that tailOf reads it without decoding the rest.
func (st *logState) encode() []byte {
	scratch := encodeScratch.Get().(*[]byte)
	b := st.appendEncoding((*scratch)[:0])
	out := bytes.Clone(b)
	if cap(b) <= maxEncodeScratch {
		*scratch = b[:0]
	}
	encodeScratch.Put(scratch)
	return out
}

// encodeScratch holds the buffers states are encoded into before they
// are copied at their size: grown in place, every state cost about twice
// its size in allocations (80 MB of a first pass at 100,000 sessions).
var encodeScratch = sync.Pool{New: func() any { return new([]byte) }}

// maxEncodeScratch is the largest encoding buffer kept for reuse.
const maxEncodeScratch = 1 << 20

// appendEncoding appends st's encoding to b.
func (st *logState) appendEncoding(b []byte) []byte {
	b = binary.LittleEndian.AppendUint64(b, uint64(st.Offset))
	b = binary.LittleEndian.AppendUint32(b, st.TailCRC)
	b = binary.LittleEndian.AppendUint32(b, st.Sum)
	b = binenc.AppendInt(binenc.AppendInt(b, int64(st.Lines)), int64(st.Frames))
	b = st.Fold.AppendBinary(b)
	b = binenc.AppendBool(b, st.Locs != nil)
	b = binenc.AppendUint(b, uint64(len(st.Locs)))
	prev := int64(0)
	for _, l := range st.Locs {
		b = binenc.AppendInt(b, l.Off-prev) // records are located in file order
		prev = l.Off
		b = binary.LittleEndian.AppendUint32(binenc.AppendBool(binenc.AppendInt(b, l.Inner), l.Torn), l.CRC)
	}
	b = binenc.AppendBool(b, st.Items != nil)
	b = binenc.AppendUint(b, uint64(len(st.Items)))
	for _, it := range st.Items {
		b = binenc.AppendBool(binenc.AppendUint(b, uint64(it.Kind)), it.Checkpoint)
		b = binenc.AppendUint(binenc.AppendUint(binenc.AppendUint(b, uint64(it.TextLen)), uint64(it.QuotedLen)), uint64(it.RawMax))
	}
	return b
}

// errStateEncoding is the error of bytes that are not a state's encoding.
var errStateEncoding = errors.New("index state does not decode")

// stateTailBytes is the tail's size at the start of an encoded state.
const stateTailBytes = 16

// tailOf reads the tail of an encoded state.
func tailOf(b []byte) stateTail {
	if len(b) < stateTailBytes {
		return stateTail{Offset: -1}
	}
	return stateTail{Offset: int64(binary.LittleEndian.Uint64(b)), TailCRC: binary.LittleEndian.Uint32(b[8:]), Sum: binary.LittleEndian.Uint32(b[12:])}
}

// decodeLogState reads what encode wrote into a new state.
func decodeLogState(b []byte) (*logState, error) {
	t := tailOf(b)
	if t.Offset < 0 {
		return nil, errStateEncoding
	}
	r := binenc.NewReader(b[stateTailBytes:])
	st := &logState{Offset: t.Offset, TailCRC: t.TailCRC, Sum: t.Sum, Lines: int(r.Int()), Frames: int(r.Int())}
	st.Fold = transcript.ReadFoldState(r)
	if hasLocs, n := r.Bool(), r.Count(7); hasLocs {
		st.Locs = make([]transcript.Loc, n)
		prev := int64(0)
		for i := range st.Locs {
			prev += r.Int()
			st.Locs[i] = transcript.Loc{Off: prev, Inner: r.Int(), Torn: r.Bool()}
			if crc := r.Fixed(4); crc != nil {
				st.Locs[i].CRC = binary.LittleEndian.Uint32(crc)
			}
		}
	}
	if hasItems, n := r.Bool(), r.Count(5); hasItems {
		st.Items = make([]nodeItem, n)
		for i := range st.Items {
			st.Items[i] = nodeItem{Kind: reference.SurfaceItemKind(r.Uint32()), Checkpoint: r.Bool(), TextLen: r.Uint32(), QuotedLen: r.Uint32(), RawMax: r.Uint32()}
		}
	}
	if r.Err() != nil || r.Len() != 0 {
		return nil, errStateEncoding
	}
	return st, nil
}

// openState opens a transcript for resuming or reading a saved parse
// state: ok is false unless it is still the file sig describes (device and
// inode), at least st.Offset long, with the same tail CRC.
func openState(d *beneath.Root, root, path string, sig fileSig, st stateTail) (f beneath.File, cur fileSig, ok bool, err error) {
	f, fi, err := beneath.Open(d, root, path)
	if err != nil {
		return nil, fileSig{}, false, err
	}
	cur = sigOf(fi)
	ok = cur.Dev == sig.Dev && cur.Ino == sig.Ino && cur.Size >= st.Offset
	if ok {
		crc, crcErr := transcript.TailCRC(f, st.Offset)
		ok = crcErr == nil && crc == st.TailCRC
	}
	if !ok {
		f.Close()
		return nil, cur, false, nil
	}
	return f, cur, true, nil
}
