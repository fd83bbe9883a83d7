package sessionstore

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"sync/atomic"
)

// The streamed read (title_stream.go) runs on two goroutines: a reader
// reads the transcript, decompresses zstd frames and decodes every record
// (decodeRecord: the JSON validation, about half the work), and the
// caller's goroutine runs the scanner's checks and the fold over the
// decoded records in file order. The fold's answer is the one the
// one-goroutine read gives: the reader's work is a pure function of the
// file's bytes, handed over in order, and every decision (which error
// wins, when to stop) is still taken by the folding side exactly as
// before. The reader stays at most aheadBytes of decoded text ahead (more
// only for a single frame or line that is larger by itself), so the
// read-limit bounds on memory hold.

// aheadBytes bounds the decoded bytes the reader holds ahead of the fold.
const aheadBytes = 4 << 20

// credit counts the bytes the reader holds ahead of the fold.
type credit struct {
	mu     sync.Mutex
	cond   *sync.Cond
	used   int64
	closed bool
}

func newCredit() *credit {
	c := &credit{}
	c.cond = sync.NewCond(&c.mu)
	return c
}

// acquire takes n bytes once they fit under aheadBytes, or once nothing but
// the caller's own held bytes is outstanding. It returns false when the
// read was abandoned.
func (c *credit) acquire(n, held int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for !c.closed && c.used-held > 0 && c.used+n > aheadBytes {
		c.cond.Wait()
	}
	if c.closed {
		return false
	}
	c.used += n
	return true
}

func (c *credit) release(n int64) {
	c.mu.Lock()
	c.used -= n
	c.mu.Unlock()
	c.cond.Broadcast()
}

func (c *credit) close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.cond.Broadcast()
}

// decodedLine is decodeRecord's answer for one complete line; end is the
// offset just after the line's "\n" in the text it came from.
type decodedLine struct {
	evs []Event
	row rowSummary
	err error
	end int64
}

// decodeLines decodes every complete line of text as LineScanner.Feed
// would (packed rows counted, not expanded, when skipRows).
func decodeLines(text []byte, skipRows bool) []decodedLine {
	out := make([]decodedLine, 0, bytes.Count(text, []byte{'\n'}))
	pos := 0
	for {
		i := bytes.IndexByte(text[pos:], '\n')
		if i < 0 {
			return out
		}
		evs, row, err := decodeRecord(text[pos:pos+i], !skipRows)
		pos += i + 1
		out = append(out, decodedLine{evs: evs, row: row, err: err, end: int64(pos)})
	}
}

// feedDecoded feeds decoded lines (of text at logical offset base) to the
// scanner, handing the events to f after each line, as feedDrain does.
func feedDecoded(sc *LineScanner, f *fold, lines []decodedLine, base int64) error {
	for i := range lines {
		l := &lines[i]
		if err := sc.feedDecoded(l.evs, l.row, l.err, base+l.end); err != nil {
			return err
		}
		drain(sc, f)
	}
	return nil
}

// reader runs produce on its own goroutine; items are handed over on a
// channel and stop abandons the read and waits for the goroutine to end
// (the caller then closes the file).
type reader[T any] struct {
	items  chan T
	done   chan struct{}
	exited chan struct{}
	cr     *credit
}

func startReader[T any](produce func(r *reader[T])) *reader[T] {
	r := &reader[T]{items: make(chan T, 16), done: make(chan struct{}), exited: make(chan struct{}), cr: newCredit()}
	go func() {
		defer close(r.exited)
		defer close(r.items)
		produce(r)
	}()
	return r
}

// send hands v over; false when the read was abandoned.
func (r *reader[T]) send(v T) bool {
	select {
	case r.items <- v:
		return true
	case <-r.done:
		return false
	}
}

func (r *reader[T]) stop() {
	close(r.done)
	r.cr.close()
	<-r.exited
}

// rawChunk is the complete lines of one read of a raw transcript.
type rawChunk struct {
	text  []byte
	base  int64 // logical offset of text[0]
	lines []decodedLine
	read  int64 // bytes read from the file so far
	eof   bool
	err   error // a read, limit or cancellation error: the read ends
	held  int64 // credit to release once folded
}

// streamRaw is ScanRaw over a file read in chunks, feeding f. It returns
// the header and the number of bytes read (the file size at EOF).
// A line longer than limit fails the read (ErrReadLimit).
func streamRaw(ctx context.Context, file *os.File, f *fold, limit int64) (*Header, int64, error) {
	sc := &LineScanner{SkipRows: true}
	r := startReader(func(r *reader[rawChunk]) { readRawAhead(ctx, file, limit, sc.SkipRows, r) })
	defer r.stop()
	var h *Header
	var read int64
	for c := range r.items {
		read = c.read
		if c.err != nil {
			return nil, read, c.err
		}
		lines := c.lines
		if h == nil {
			i := bytes.IndexByte(c.text, '\n')
			if i < 0 {
				if c.eof {
					return nil, read, backendf("empty or header-less session log")
				}
				r.cr.release(c.held)
				continue
			}
			hv, err := parseHeaderLine(c.text[:i])
			if err != nil {
				return nil, read, err
			}
			h = hv
			sc.GoodEnd = c.base + int64(i) + 1
			lines = lines[1:]
		}
		if err := feedDecoded(sc, f, lines, c.base); err != nil {
			return nil, read, markBackend(err)
		}
		r.cr.release(c.held)
		if c.eof {
			return h, read, nil
		}
	}
	return nil, read, errors.New("sessionstore: the transcript reader stopped early") // not reached
}

// readRawAhead is streamRaw's reader: it reads file in streamBuf chunks
// (grown, up to limit+1, for a longer line) and hands over the complete
// lines of each read, decoded. A chunk's buffer is never reused: the
// decoded events alias it.
func readRawAhead(ctx context.Context, file *os.File, limit int64, skipRows bool, r *reader[rawChunk]) {
	var size int64 = -1 // the file's size when the read started; -1: unknown
	if fi, err := file.Stat(); err == nil && fi.Mode().IsRegular() {
		size = fi.Size()
	}
	first := chunkSize(size, 0, 0)
	if !r.cr.acquire(int64(first), 0) {
		return
	}
	buf := make([]byte, first)
	held := int64(first)
	n := 0         // bytes in buf
	var read int64 // bytes read from the file
	var base int64 // logical offset of buf[0]
	for {
		if n == len(buf) {
			if int64(n) > limit {
				r.send(rawChunk{read: read, err: limitf(limit, "a line holds more bytes than the read limit"), held: held})
				return
			}
			size := grownSize(len(buf), limit+1)
			if !r.cr.acquire(size, held) {
				return
			}
			nb := growBuf(buf, limit+1)
			r.cr.release(held)
			buf, held = nb, size
		}
		m, err := file.Read(buf[n:])
		n += m
		read += int64(m)
		eof := false
		if errors.Is(err, io.EOF) {
			eof = true
		} else if err != nil {
			r.send(rawChunk{read: read, err: err, held: held})
			return
		}
		if err := ctx.Err(); err != nil {
			r.send(rawChunk{read: read, err: err, held: held})
			return
		}
		data := buf[:n]
		complete := bytes.LastIndexByte(data, '\n') + 1
		if complete == 0 && !eof {
			continue // one partial line so far: read on (growing at need)
		}
		c := rawChunk{text: data[:complete], base: base, lines: decodeLines(data[:complete], skipRows), read: read, eof: eof, held: held}
		if eof {
			c.text = data // the header check looks for a line in all of it
			r.send(c)
			return
		}
		// The partial line moves to a new buffer; this one goes with the
		// chunk.
		tail := data[complete:]
		next := chunkSize(size, read, len(tail))
		if !r.cr.acquire(int64(next), held) {
			return
		}
		nb := make([]byte, next)
		n = copy(nb, tail)
		base += int64(complete)
		if !r.send(c) {
			return
		}
		buf, held = nb, int64(next)
	}
}

// streamSlack is room for bytes appended to a log while it is read.
const streamSlack = 4 << 10

// chunkSize is the length of the next read buffer of a raw transcript of
// size bytes (-1: unknown) of which read are read, tail of them not yet
// handed over: streamBuf, or just what the rest of the file needs (plus
// slack for appends) when that is less, so that a small log does not cost
// a zeroed 1 MiB buffer (BenchmarkReadSmallLogs). A log that grows past
// the buffer is still read whole: a full buffer grows.
func chunkSize(size, read int64, tail int) int {
	if size < 0 {
		return max(streamBuf, tail)
	}
	want := int64(tail) + max(size-read, 0) + streamSlack
	return int(max(int64(tail), min(streamBuf, want)))
}

// grownSize is the length growBuf gives a buffer of n bytes under ceil.
func grownSize(n int, ceil int64) int64 {
	m := int64(n) * 2
	if m > ceil-ceil/4 {
		m = ceil
	}
	return max(m, int64(n))
}

// zstdFrame is one frame of a zstd transcript, decompressed and its
// records decoded ahead.
type zstdFrame struct {
	n      int   // the frame's length in the file
	err    error // reading the frame (io.ErrUnexpectedEOF: a torn final frame), or cancellation
	text   []byte
	decErr error
	lines  []decodedLine
	held   int64
}

// streamZstd is ScanZstd over a file read frame by frame, feeding f.
// Each frame may decode to at most limit bytes (ErrReadLimit).
func streamZstd(ctx context.Context, file *os.File, f *fold, limit int64) (*Header, int64, error) {
	var (
		off     int64
		frames  int
		h       *Header
		pending error // ScanZstd's first decode-stage error; a later framing error wins over it
		logical int64
		failed  atomic.Bool // pending is set: the reader stops decoding
	)
	sc := &LineScanner{Strict: true, SkipRows: true}
	r := startReader(func(r *reader[zstdFrame]) { readZstdAhead(ctx, file, limit, sc.SkipRows, &failed, r) })
	defer r.stop()
	for fr := range r.items {
		if errors.Is(fr.err, io.ErrUnexpectedEOF) || (fr.err == nil && fr.n == 0) {
			// A torn final frame (possibly empty: EOF at a boundary).
			end := off + int64(fr.n)
			if pending != nil {
				return nil, end, pending
			}
			if frames == 0 {
				return nil, end, backendf("empty or header-less Zstandard session log")
			}
			if fr.n > 0 {
				if fr.decErr != nil {
					return nil, end, fr.decErr
				}
				sc.Strict = false
				if err := feedDecoded(sc, f, fr.lines, logical); err != nil {
					return nil, end, markBackend(err)
				}
			}
			return h, end, nil
		}
		if fr.err != nil {
			return nil, off, fr.err
		}
		off += int64(fr.n)
		frames++
		if pending != nil {
			r.cr.release(fr.held)
			continue // only the framing of the rest can still matter
		}
		text, err := fr.text, fr.decErr
		switch {
		case err != nil:
			pending = err
		case frames == 1:
			if len(text) == 0 || bytes.IndexByte(text, '\n') != len(text)-1 {
				pending = backendf("first zstd frame is not exactly one header line")
			} else if h, err = parseHeaderLine(text[:len(text)-1]); err != nil {
				pending = err
			}
			logical = int64(len(text))
			sc.GoodEnd = logical
		case len(text) == 0 || text[len(text)-1] != '\n':
			pending = backendf("complete frame %d contains a torn JSONL record", frames)
		default:
			if err := feedDecoded(sc, f, fr.lines, logical); err != nil {
				pending = markBackend(err)
			}
			logical += int64(len(text))
		}
		if pending != nil {
			failed.Store(true)
		}
		r.cr.release(fr.held)
	}
	return nil, off, errors.New("sessionstore: the transcript reader stopped early") // not reached
}

// readZstdAhead is streamZstd's reader: frames in order through one
// window, each decompressed (the first as the header frame) and its lines
// decoded, until the torn or missing final frame or an error. Once the
// fold has failed (failed) frames are only delimited, as the
// one-goroutine read did.
func readZstdAhead(ctx context.Context, file *os.File, limit int64, skipRows bool, failed *atomic.Bool, r *reader[zstdFrame]) {
	win := &fileWindow{f: file}
	var off int64
	frames := 0
	budget := &decodedBudget{limit: limit}
	for {
		if err := ctx.Err(); err != nil {
			r.send(zstdFrame{err: err})
			return
		}
		frame, err := win.frame(off, limit)
		fr := zstdFrame{n: len(frame), err: err}
		torn := errors.Is(err, io.ErrUnexpectedEOF) || (err == nil && len(frame) == 0)
		if err != nil && !torn {
			r.send(fr)
			return
		}
		if !torn {
			off += int64(len(frame))
			frames++
		}
		// A torn first frame is refused without decoding it.
		if len(frame) > 0 && !failed.Load() && !(torn && frames == 0) {
			// Hold credit for the most the frame can decode to. A frame
			// larger than aheadBytes waits until the fold has caught up,
			// and then sees whether the fold failed: like the
			// one-goroutine read, it is not decoded after a failure.
			_, hi := frameContentBounds(frame)
			held := min(hi, limitOr(limit)+overshoot)
			if frames == 1 && !torn {
				held = min(held, 1<<20)
			}
			if !r.cr.acquire(held, 0) {
				return
			}
			if failed.Load() {
				r.cr.release(held)
				if !r.send(fr) || torn {
					return
				}
				continue
			}
			fr.held = held
			// Event frames draw from the read's decoded-bytes budget
			// (the header frame has its own 1 MiB bound).
			if lo, _ := frameContentBounds(frame); torn || frames > 1 {
				fr.decErr = budget.admit(lo)
			}
			switch {
			case fr.decErr != nil:
			case torn:
				fr.text, fr.decErr = decodeTornFrame(frame, limit)
			case frames == 1:
				fr.text, fr.decErr = decodeHeaderFrame(frame)
			default:
				fr.text, fr.decErr = decodeFrameLimit(frame, limit)
			}
			if fr.decErr == nil && (torn || frames > 1) {
				fr.decErr = budget.spend(len(fr.text))
			}
			if fr.decErr == nil && (torn || frames > 1) {
				fr.lines = decodeLines(fr.text, skipRows)
			}
		}
		if !r.send(fr) || torn {
			return
		}
	}
}
