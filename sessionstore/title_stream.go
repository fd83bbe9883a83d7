package sessionstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"os"

	"github.com/dsh-lsp/dsh-lsp/reference"
)

// This file reads a session's title by streaming its transcript: line by
// line (raw) or frame by frame (zstd), through the same scanner and the
// same per-event checks as Store.Load + Log.Title, but keeping only what
// the answer needs (the latest session/title event, the surface fold's
// node seqs, the open turn's pending calls) instead of the whole log. A
// title read of a multi-GB log then costs memory in proportion to its
// longest line or frame, not to the log.
//
// LoadLog runs its checks in passes over the whole log (upgrade, message
// shapes, unknown types, envelopes, fold), so the error it reports is the
// first error of the earliest failing pass. titleFold keeps the first
// error of each pass seen so far and stops running a pass once an earlier
// pass has failed, which gives the same answer event by event.

// Passes of LoadLog, in the order their errors win.
const (
	passUpgrade = iota
	passMessage
	passUnknown
	passEnvelope
	passFold
	passNone
)

// errNeedLoad: the streamed read cannot decide (a legacy replacing
// tool/result inherits the message id of an arbitrary earlier event); the
// full Load answers instead.
var errNeedLoad = errors.New("sessionstore: title read needs the full load")

// titleFold is LoadLog's validation and Log.Title's fold over a stream of
// scanned events.
type titleFold struct {
	id       string
	failPass int
	failErr  error
	needLoad bool

	count          int64 // events seen (== next seq)
	lastSeq, lastT int64
	closer         closerState
	nodes          []int64
	resultKeys     map[int64]resultKey // tool/result surface nodes
	title          *Event
	// surface holds the surface nodes' events when a surface is read.
	surface map[int64]reference.SurfaceEvent
}

// resultKey identifies a tool/result's data up to its result content
// (see sameExceptResultContent); ok is false when the data does not parse.
type resultKey struct {
	sum [sha256.Size]byte
	ok  bool
}

func newTitleFold(id string) *titleFold {
	return &titleFold{id: id, failPass: passNone, resultKeys: map[int64]resultKey{}}
}

func (t *titleFold) fail(pass int, err error) {
	if pass < t.failPass {
		t.failPass, t.failErr = pass, err
	}
}

// stored processes one stored (scanned) event, as LoadLog's passes 1–5
// would for it. e's data may alias a read buffer: nothing of it is kept.
func (t *titleFold) stored(e *Event) {
	t.count++
	t.lastSeq, t.lastT = e.Seq, e.Time
	if t.failPass <= passUpgrade || t.needLoad {
		return
	}
	earlierID := func(seq int64) string {
		if seq < e.Seq {
			t.needLoad = true
		}
		return ""
	}
	if err := upgradeEvent(t.id, e, earlierID); err != nil {
		t.fail(passUpgrade, err)
		return
	}
	if t.needLoad {
		return
	}
	if t.failPass > passMessage {
		if err := checkMessage(e); err != nil {
			t.fail(passMessage, err)
		}
	}
	if t.failPass > passUnknown && !knownEventTypes[e.Type] && !e.Ignorable {
		t.fail(passUnknown, unsupportedf("event %d has unknown type %s (written by a newer harness?)", e.Seq, jsQuote(e.Type)))
	}
	if t.failPass > passEnvelope {
		if err := checkEnvelope(e); err != nil {
			t.fail(passEnvelope, err)
		} else if e.Type == "request/header" {
			if err := checkRequestHeader(e); err != nil {
				t.fail(passEnvelope, err)
			}
		}
	}
	t.closer.feed(e)
	t.foldAndTitle(e)
}

// foldAndTitle runs the surface fold for e (while nothing has failed) and
// remembers the latest title event.
func (t *titleFold) foldAndTitle(e *Event) {
	if t.failPass > passFold {
		if err := t.fold(e); err != nil {
			t.fail(passFold, err)
		}
	}
	if e.Type == "session/title" {
		t.title = &Event{Type: e.Type, Seq: e.Seq, Time: e.Time, Data: append(json.RawMessage(nil), e.Data...)}
	}
}

// finish appends the crash closers (pass 4 checks them, pass 5 folds them)
// and returns LoadLog's error, if any.
func (t *titleFold) finish() error {
	if t.needLoad {
		return errNeedLoad
	}
	if t.failPass <= passUpgrade {
		return t.failErr
	}
	if t.count > 0 {
		for _, c := range t.closer.closers(t.lastSeq, t.lastT) {
			c := c
			if t.failPass > passEnvelope {
				if err := checkMessage(&c); err != nil {
					t.fail(passEnvelope, err)
				}
			}
			t.foldAndTitle(&c)
			t.lastSeq = c.Seq // capturedThroughSeq counts the closers
		}
	}
	return t.failErr
}

// latest is Log.Title over the loaded log.
func (t *titleFold) latest() (*Title, error) {
	if t.title == nil {
		return nil, nil
	}
	return (&Log{Events: []Event{*t.title}}).Title()
}

// fold is one step of foldSurface (fold.go); tool/result nodes keep a
// digest of their data instead of the data.
func (t *titleFold) fold(e *Event) error {
	if !isSurfaceType(e.Type) {
		if e.SurfaceOp != nil || e.SourceEventSeqs != nil {
			return corruptf("event %d: log-only %s carries a surface marker", e.Seq, e.Type)
		}
		return nil
	}
	var seqs []int64
	if e.SourceEventSeqs != nil {
		var ok bool
		seqs, ok = parseSeqList(e.SourceEventSeqs)
		if !ok {
			return corruptf("event %d: sourceEventSeqs is not an array of non-negative safe integers", e.Seq)
		}
		if len(seqs) == 0 && e.Type != "assistant/message" {
			return corruptf("event %d: empty sourceEventSeqs", e.Seq)
		}
		seen := map[int64]bool{}
		for _, s := range seqs {
			if s >= e.Seq {
				return corruptf("event %d: sourceEventSeqs cites seq %d, not earlier", e.Seq, s)
			}
			if seen[s] {
				return corruptf("event %d: sourceEventSeqs repeats seq %d", e.Seq, s)
			}
			seen[s] = true
		}
	}
	if e.SurfaceOp == nil {
		return corruptf("event %d: %s has no surfaceOp", e.Seq, e.Type)
	}
	if string(compact(e.SurfaceOp)) == `"append"` {
		t.nodes = append(t.nodes, e.Seq)
		t.keep(e)
		return nil
	}
	op, ok := parseObject(e.SurfaceOp)
	opName, _ := str(op["op"])
	start, okS := nonNegSafeInt(op["start"])
	end, okE := nonNegSafeInt(op["end"])
	if !ok || !hasExactKeys(op, "op", "start", "end") || opName != "replace" || !okS || !okE {
		return corruptf("event %d: invalid surfaceOp %s", e.Seq, string(compact(e.SurfaceOp)))
	}
	si, ei := indexOf(t.nodes, start), indexOf(t.nodes, end)
	if si < 0 || ei < 0 || si > ei {
		return corruptf("event %d: replace {start:%d,end:%d} does not name a surface span", e.Seq, start, end)
	}
	shadowed := t.nodes[si : ei+1]
	cited := map[int64]bool{}
	for _, s := range seqs {
		cited[s] = true
	}
	for _, s := range shadowed {
		if !cited[s] {
			return corruptf("event %d: replace shadows seq %d without citing it in sourceEventSeqs", e.Seq, s)
		}
	}
	if e.Type == "tool/result" {
		old, isResult := t.resultKeys[shadowed[0]]
		if len(shadowed) != 1 || !isResult {
			return corruptf("event %d: a replacing tool/result must shadow exactly one tool/result", e.Seq)
		}
		if k := keyOfResult(e.Data); !old.ok || !k.ok || old.sum != k.sum {
			return corruptf("event %d: a replacing tool/result may only change the result content", e.Seq)
		}
	}
	for _, s := range shadowed {
		delete(t.resultKeys, s)
		delete(t.surface, s)
	}
	t.nodes = append(t.nodes[:si], append([]int64{e.Seq}, t.nodes[ei+1:]...)...)
	t.keep(e)
	return nil
}

// keep records a new surface node: a tool/result's comparison key, and
// the event itself when the surface is wanted (a fresh copy: e's data may
// alias a read buffer).
func (t *titleFold) keep(e *Event) {
	if e.Type == "tool/result" {
		t.resultKeys[e.Seq] = keyOfResult(e.Data)
	}
	if t.surface != nil {
		raw := e.appendJSON(nil)
		data := append(json.RawMessage(nil), e.Data...)
		if i := bytes.Index(raw, []byte(`,"data":`)); i >= 0 && bytes.HasPrefix(raw[i+8:], e.Data) {
			data = raw[i+8 : i+8+len(e.Data) : i+8+len(e.Data)]
		}
		t.surface[e.Seq] = reference.SurfaceEvent{Type: e.Type, Seq: e.Seq, Data: data, Raw: raw}
	}
}

// keyOfResult digests a tool/result's data with message.content[0].content
// blanked, such that two keys are equal exactly when
// sameExceptResultContent holds: encoding/json's encoding of the decoded
// value is canonical (sorted keys, shortest float form) except for -0,
// which reflect.DeepEqual equates with 0 and is therefore normalised.
func keyOfResult(data json.RawMessage) resultKey {
	var v any
	if json.Unmarshal(data, &v) != nil {
		return resultKey{}
	}
	d, _ := v.(map[string]any)
	m, _ := d["message"].(map[string]any)
	c, _ := m["content"].([]any)
	if len(c) == 1 {
		if blk, ok := c[0].(map[string]any); ok {
			blk["content"] = nil
		}
	}
	b, err := json.Marshal(normaliseZero(v))
	if err != nil {
		return resultKey{}
	}
	return resultKey{sum: sha256.Sum256(b), ok: true}
}

func normaliseZero(v any) any {
	switch x := v.(type) {
	case float64:
		if x == 0 {
			return float64(0)
		}
	case []any:
		for i := range x {
			x[i] = normaliseZero(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = normaliseZero(x[k])
		}
	}
	return v
}

// streamBuf is the initial read buffer of a streamed raw read.
const streamBuf = 1 << 20

// readTitleStream reads id's title from path the way Load + Title does,
// streaming. It returns errNeedLoad when only the full load can decide.
func (s *Store) readTitleStream(ctx context.Context, id, path string, enc Encoding) (*Title, error) {
	tf, _, err := s.stream(ctx, id, path, enc, false)
	if err != nil {
		return nil, err
	}
	t, err := tf.latest()
	return t, attach(err, id, "")
}

// readSurfaceStream is Load + Log.SurfaceSnapshot, streaming: only the
// surface events are kept (memory in proportion to the surface, not the
// log). It returns errNeedLoad when only the full load can decide.
func (s *Store) readSurfaceStream(ctx context.Context, id, path string, enc Encoding) (*reference.Surface, error) {
	tf, h, err := s.stream(ctx, id, path, enc, true)
	if err != nil {
		return nil, err
	}
	out := &reference.Surface{Session: h.Object(), Header: h.Reference(), Events: make([]reference.SurfaceEvent, 0, len(tf.nodes))}
	if tf.count > 0 {
		last := tf.lastSeq
		out.CapturedThroughSeq = &last
	}
	for _, seq := range tf.nodes {
		out.Events = append(out.Events, tf.surface[seq])
	}
	return out, nil
}

// stream runs streamOnce, again while the file changes under the read
// (as readStable).
func (s *Store) stream(ctx context.Context, id, path string, enc Encoding, surface bool) (tf *titleFold, h *Header, err error) {
	for attempt := 0; attempt < 4; attempt++ {
		var stable bool
		tf, h, stable, err = s.streamOnce(ctx, id, path, enc, surface)
		if stable || err == errNeedLoad || ctx.Err() != nil {
			break
		}
	}
	return tf, h, err
}

func ioErr(id, path string, err error) error {
	return &Error{Kind: KindIO, SessionID: id, Path: path, Msg: "cannot read transcript", Err: err}
}

// streamOnce is one streamed read with Load's checks; stable reports that
// the file did not change while it was read.
func (s *Store) streamOnce(ctx context.Context, id, path string, enc Encoding, surface bool) (*titleFold, *Header, bool, error) {
	f, err := openRegular(path)
	if err != nil {
		return nil, nil, true, ioErr(id, path, err)
	}
	defer f.Close()
	st1, err1 := f.Stat()
	var (
		h    *Header
		tf   = newTitleFold(id)
		read int64
	)
	if surface {
		tf.surface = map[int64]reference.SurfaceEvent{}
	}
	if enc == Zstd {
		h, read, err = streamZstd(ctx, f, tf)
	} else {
		h, read, err = streamRaw(ctx, f, tf)
	}
	if err != nil && !isLogError(err) {
		if ctx.Err() != nil {
			return nil, nil, true, ctx.Err()
		}
		return nil, nil, true, ioErr(id, path, err)
	}
	st2, err2 := os.Stat(path)
	stable := err1 == nil && err2 == nil && os.SameFile(st1, st2) && st1.Size() == st2.Size() &&
		st1.ModTime().Equal(st2.ModTime()) && read == st2.Size()
	if err != nil { // a scan error
		return nil, nil, stable, attach(err, id, path)
	}
	if err := s.checkIdentity(h, path, enc); err != nil {
		return nil, nil, stable, attach(err, id, path)
	}
	if h.ID != id {
		return nil, nil, stable, attach(corruptf("header id %s does not match the requested id", jsQuote(h.ID)), id, path)
	}
	if err := h.Validate(); err != nil {
		return nil, nil, stable, attach(err, id, path)
	}
	if err := tf.finish(); err != nil {
		if err == errNeedLoad {
			return nil, nil, stable, err
		}
		return nil, nil, stable, attach(err, id, path)
	}
	return tf, h, stable, nil
}

func isLogError(err error) bool {
	var le *logError
	return errors.As(err, &le)
}

// drain hands the scanner's accepted events to the fold and forgets them.
func drain(sc *LineScanner, tf *titleFold) {
	for i := range sc.events {
		tf.stored(&sc.events[i])
	}
	clear(sc.events)
	sc.events = sc.events[:0]
}

// streamRaw is ScanRaw over a file read in chunks, feeding tf. It returns
// the header and the number of bytes read (the file size at EOF).
func streamRaw(ctx context.Context, f *os.File, tf *titleFold) (*Header, int64, error) {
	buf := make([]byte, streamBuf)
	n := 0         // bytes in buf
	var read int64 // bytes read from f
	var h *Header
	sc := &LineScanner{}
	var base int64 // logical offset of buf[0]
	eof := false
	for {
		if n == len(buf) {
			buf = append(buf, make([]byte, len(buf))...)
		}
		m, err := f.Read(buf[n:])
		n += m
		read += int64(m)
		if errors.Is(err, io.EOF) {
			eof = true
		} else if err != nil {
			return nil, read, err
		}
		if err := ctx.Err(); err != nil {
			return nil, read, err
		}
		data := buf[:n]
		pos := 0
		if h == nil {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				if eof {
					return nil, read, backendf("empty or header-less session log")
				}
				continue
			}
			hv, err := parseHeaderLine(data[:i])
			if err != nil {
				return nil, read, err
			}
			h = hv
			pos = i + 1
			sc.GoodEnd = int64(pos)
		}
		for pos < len(data) {
			i := bytes.IndexByte(data[pos:], '\n')
			if i < 0 {
				break
			}
			if err := sc.Feed(data[pos:pos+i], base+int64(pos+i)+1); err != nil {
				return nil, read, markBackend(err)
			}
			drain(sc, tf)
			pos += i + 1
		}
		if eof {
			return h, read, nil
		}
		n = copy(buf, data[pos:])
		base += int64(pos)
	}
}

// streamZstd is ScanZstd over a file read frame by frame, feeding tf.
func streamZstd(ctx context.Context, f *os.File, tf *titleFold) (*Header, int64, error) {
	var (
		off     int64
		frames  int
		h       *Header
		pending error // ScanZstd's first decode-stage error; a later framing error wins over it
		logical int64
	)
	sc := &LineScanner{Strict: true}
	for {
		if err := ctx.Err(); err != nil {
			return nil, off, err
		}
		frame, err := readFrameAt(f, off)
		if errors.Is(err, io.ErrUnexpectedEOF) || (err == nil && len(frame) == 0) {
			// A torn final frame (possibly empty: EOF at a boundary).
			end := off + int64(len(frame))
			if pending != nil {
				return nil, end, pending
			}
			if frames == 0 {
				return nil, end, backendf("empty or header-less Zstandard session log")
			}
			if len(frame) > 0 {
				text := decodePartialFrame(frame)
				sc.Strict = false
				if _, err := feedDrain(sc, tf, text, logical); err != nil {
					return nil, end, markBackend(err)
				}
			}
			return h, end, nil
		}
		if err != nil {
			return nil, off, err
		}
		off += int64(len(frame))
		frames++
		if pending != nil {
			continue // only the framing of the rest can still matter
		}
		text, err := DecodeFrame(frame)
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
			if _, err := feedDrain(sc, tf, text, logical); err != nil {
				pending = markBackend(err)
			}
			logical += int64(len(text))
		}
	}
}

// feedDrain is LineScanner.feedLines, handing events to tf line by line.
func feedDrain(sc *LineScanner, tf *titleFold, text []byte, base int64) (int, error) {
	for len(text) > 0 {
		i := bytes.IndexByte(text, '\n')
		if i < 0 {
			return len(text), nil
		}
		if err := sc.Feed(text[:i], base+int64(i)+1); err != nil {
			return 0, err
		}
		drain(sc, tf)
		base += int64(i) + 1
		text = text[i+1:]
	}
	return 0, nil
}
