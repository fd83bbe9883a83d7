package sessionstore

import (
	"bytes"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"slices"

	"github.com/dsh-lsp/dsh-lsp/internal/rawjson"
)

// This file holds the per-transcript state of the index: what a full read
// of the log would conclude so far (next seq, the folded surface, the
// latest title event), kept so that a grown file is parsed only from where
// the last parse stopped. It mirrors LoadLog's checks event by event for
// logs in the current format; anything unusual (legacy record shapes, a
// bad line, a validation failure, a torn header) makes the entry "slow":
// its title is then read with the store's own full read, so the index
// never answers differently from a full re-read.

// errSlow marks a log the incremental path does not decide; the store's
// full read answers for it.
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
	NextSeq int64
	// Nodes is the folded surface; Locs and Kinds (parallel to Nodes) are
	// where each node's record is stored and its type ('u' user/message,
	// 'a' assistant/message, 't' tool/result): ReadSurface decodes only
	// those records, and the replace rule of §5.1 compares tool results.
	Nodes []int64
	Locs  []recLoc
	Kinds []byte
	// OpenTurn is true when the last turn/start has no turn/end yet (a
	// full read then appends crash closers).
	OpenTurn bool
	// TurnStart is where the record of the last turn/start is stored
	// (meaningful while OpenTurn): ReadSurface re-reads the open turn from
	// there to compute the crash closers.
	TurnStart recLoc
	// Pending are the ids of the open step's tool calls without a result,
	// in closerState's order: a full read closes each one, and fails on
	// one with an empty id (then the entry is left to the full read).
	Pending []string
	// Title is the latest session/title event (nil when none).
	Title *Event
}

func (st *logState) clone() *logState {
	c := *st
	c.Nodes = append([]int64(nil), st.Nodes...)
	c.Locs = append([]recLoc(nil), st.Locs...)
	c.Kinds = append([]byte(nil), st.Kinds...)
	c.Pending = append([]string(nil), st.Pending...)
	if st.Title != nil {
		t := *st.Title
		c.Title = &t
	}
	return &c
}

func kindOf(typ string) byte {
	switch typ {
	case "user/message":
		return 'u'
	case "assistant/message":
		return 'a'
	}
	return 't'
}

// logParser feeds new bytes of one transcript into a logState.
type logParser struct {
	path string
	enc  Encoding
	id   string
	f    *os.File
	st   *logState
}

// apply runs LoadLog's per-event checks and one fold step for e, stored at
// loc. It returns errSlow for anything the full read must decide.
func (p *logParser) apply(e *Event, loc recLoc) error {
	// Legacy shapes are upgraded by the full read (with cross-event
	// state); a current-format event comes out of the upgrade unchanged.
	if needsUpgradeCheck(e) {
		up := []Event{*e}
		if err := upgradeLegacy(p.id, up); err != nil || up[0].Type != e.Type || !bytes.Equal(up[0].Data, e.Data) {
			return errSlow
		}
	}
	if !knownEventTypes[e.Type] && !e.Ignorable {
		return errSlow
	}
	if checkMessage(e) != nil || checkEnvelope(e) != nil {
		return errSlow
	}
	if e.Type == "request/header" && checkRequestHeader(e) != nil {
		return errSlow
	}
	if err := p.fold(e, loc); err != nil {
		return err
	}
	switch e.Type {
	case "turn/start":
		p.st.OpenTurn, p.st.TurnStart = true, loc
	case "turn/end":
		p.st.OpenTurn = false
	}
	p.st.trackCalls(e)
	if e.Type == "session/title" {
		t := Event{Type: e.Type, Seq: e.Seq, Time: e.Time, Data: append([]byte(nil), e.Data...)}
		p.st.Title = &t
	}
	return nil
}

// trackCalls keeps st.Pending as closerState.feed keeps its calls.
func (st *logState) trackCalls(e *Event) {
	switch e.Type {
	case "turn/start", "turn/end", "step/end":
		st.Pending = nil
	case "assistant/message":
		d, _ := e.obj()
		m, _ := parseObject(d["message"])
		blocks, _ := array(m["content"])
		for _, b := range blocks {
			bo, _ := parseObject(b)
			if t, _ := str(bo["type"]); t == "tool-call" {
				id, _ := str(bo["id"])
				if !slices.Contains(st.Pending, id) {
					st.Pending = append(st.Pending, id)
				}
			}
		}
	case "tool/result":
		d, _ := e.obj()
		m, _ := parseObject(d["message"])
		src, _ := parseObject(m["source"])
		id, _ := str(src["callId"])
		if i := slices.Index(st.Pending, id); i >= 0 {
			st.Pending = slices.Delete(st.Pending, i, i+1)
		}
	}
}

// closersFail reports whether the crash closers a full read appends would
// fail its checks (a pending tool call without an id).
func (st *logState) closersFail() bool {
	return st.OpenTurn && slices.Contains(st.Pending, "")
}

// fold is one step of foldSurface (fold.go) over the saved surface.
func (p *logParser) fold(e *Event, loc recLoc) error {
	st := p.st
	if !isSurfaceType(e.Type) {
		if e.SurfaceOp != nil || e.SourceEventSeqs != nil {
			return errSlow
		}
		return nil
	}
	var seqs []int64
	if e.SourceEventSeqs != nil {
		var ok bool
		seqs, ok = parseSeqList(e.SourceEventSeqs)
		if !ok || len(seqs) == 0 && e.Type != "assistant/message" {
			return errSlow
		}
		seen := make(map[int64]bool, len(seqs))
		for _, s := range seqs {
			if s >= e.Seq || seen[s] {
				return errSlow
			}
			seen[s] = true
		}
	}
	if e.SurfaceOp == nil {
		return errSlow
	}
	if string(compact(e.SurfaceOp)) == `"append"` {
		st.Nodes = append(st.Nodes, e.Seq)
		st.Locs = append(st.Locs, loc)
		st.Kinds = append(st.Kinds, kindOf(e.Type))
		return nil
	}
	op, ok := parseObject(e.SurfaceOp)
	opName, _ := str(op["op"])
	start, okS := nonNegSafeInt(op["start"])
	end, okE := nonNegSafeInt(op["end"])
	if !ok || !hasExactKeys(op, "op", "start", "end") || opName != "replace" || !okS || !okE {
		return errSlow
	}
	si, ei := indexOf(st.Nodes, start), indexOf(st.Nodes, end)
	if si < 0 || ei < 0 || si > ei {
		return errSlow
	}
	cited := make(map[int64]bool, len(seqs))
	for _, s := range seqs {
		cited[s] = true
	}
	for _, s := range st.Nodes[si : ei+1] {
		if !cited[s] {
			return errSlow
		}
	}
	if e.Type == "tool/result" {
		if si != ei || st.Kinds[si] != 't' {
			return errSlow
		}
		old, err := p.readRecord(st.Locs[si], nil)
		if err != nil || !sameExceptResultContent(old.Data, e.Data) {
			return errSlow
		}
	}
	st.Nodes = append(st.Nodes[:si+1], st.Nodes[ei+1:]...)
	st.Locs = append(st.Locs[:si+1], st.Locs[ei+1:]...)
	st.Kinds = append(st.Kinds[:si+1], st.Kinds[ei+1:]...)
	st.Nodes[si], st.Locs[si], st.Kinds[si] = e.Seq, loc, kindOf(e.Type)
	return nil
}

// frameCache keeps the last decoded frame while records are read in
// file order.
type frameCache struct {
	off  int64
	torn bool
	text []byte
}

// readRecord re-reads the single event stored at loc (a surface event is
// never a packed row). fc, when not nil, caches the last decoded frame.
func (p *logParser) readRecord(loc recLoc, fc *frameCache) (*Event, error) {
	var line []byte
	if p.enc == Raw {
		l, err := readLineAt(p.f, loc.Off)
		if err != nil {
			return nil, err
		}
		line = l
	} else {
		var text []byte
		if fc != nil && fc.text != nil && fc.off == loc.Off && fc.torn == loc.Torn {
			text = fc.text
		} else {
			frame, err := readFrameAt(p.f, loc.Off)
			if err != nil && !(loc.Torn && errors.Is(err, io.ErrUnexpectedEOF)) {
				return nil, err
			}
			if loc.Torn {
				text = decodePartialFrame(frame)
			} else if text, err = decodeFrame(frame); err != nil {
				return nil, err
			}
			if fc != nil {
				*fc = frameCache{off: loc.Off, torn: loc.Torn, text: text}
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

// readFrameAt reads the complete zstd frame starting at off. For a torn
// frame it returns the bytes up to EOF and io.ErrUnexpectedEOF.
func readFrameAt(f *os.File, off int64) ([]byte, error) {
	buf := make([]byte, 64<<10)
	n := 0
	for {
		m, err := f.ReadAt(buf[n:], off+int64(n))
		n += m
		end, complete, ferr := frameEndBase(buf[:n], 0, off)
		if ferr != nil {
			return nil, ferr
		}
		if complete {
			return buf[:end], nil
		}
		if err == io.EOF {
			return buf[:n], io.ErrUnexpectedEOF
		}
		if err != nil {
			return nil, err
		}
		if n == len(buf) {
			buf = append(buf, make([]byte, len(buf))...)
		}
	}
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
		if feedRow(sc, line) {
			// assistant/chunk members: log-only, nothing to apply.
			pos += i + 1
			continue
		}
		before := len(sc.events)
		if err := sc.Feed(line, 0); err != nil || sc.Bad() {
			return 0, errSlow
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
	sc := &LineScanner{NextSeq: st.NextSeq}
	buf := make([]byte, 4<<20)
	carry := 0
	off := st.Offset
	for off+int64(carry) < size {
		if carry == len(buf) {
			buf = append(buf, make([]byte, len(buf))...)
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
		st.Offset, st.NextSeq = off, sc.NextSeq
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
// to size. Complete frames are committed to p.st; a torn final frame is
// returned (its bytes) for a provisional parse.
func (p *logParser) parseZstd(size int64) (torn []byte, err error) {
	st := p.st
	sc := &LineScanner{NextSeq: st.NextSeq, Strict: true}
	for st.Offset < size {
		frame, err := readFrameAt(p.f, st.Offset)
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return frame, nil
		}
		if err != nil {
			return nil, errSlow
		}
		text, err := decodeFrame(frame)
		if err != nil || len(text) == 0 || text[len(text)-1] != '\n' {
			return nil, errSlow
		}
		frameOff := st.Offset
		if _, err := p.feedText(sc, text, func(i int) recLoc { return recLoc{Off: frameOff, Inner: int64(i)} }); err != nil {
			return nil, err
		}
		st.NextSeq = sc.NextSeq
		st.Offset += int64(len(frame))
	}
	return nil, nil
}

// parseTorn provisionally feeds the lines a torn final frame yields
// (non-strict, like ScanZstd) into p.st, which must be a clone.
func (p *logParser) parseTorn(frame []byte) error {
	text := decodePartialFrame(frame)
	sc := &LineScanner{NextSeq: p.st.NextSeq}
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
			for k := range sc.events {
				if err := p.apply(&sc.events[k], recLoc{Off: p.st.Offset, Inner: int64(pos), Torn: true}); err != nil {
					return err
				}
			}
			p.st.NextSeq = sc.NextSeq
		}
		sc.events = sc.events[:0]
		pos += i + 1
	}
	return nil
}

// Top-level data keys the legacy upgrade looks at (legacy.go).
const (
	keyContent uint16 = 1 << iota
	keySource
	keyID
	keyRole
	keyMessage
	keyProvenance
	keyCallID
	keyIsError
)

var legacyKeyBits = map[string]uint16{
	"content": keyContent, "source": keySource, "id": keyID, "role": keyRole, "message": keyMessage,
	"provenance": keyProvenance, "callId": keyCallID, "isError": keyIsError,
}

// needsUpgradeCheck reports whether the legacy upgrade could change or
// reject e, so that apply must run it. Current-format messages (the bulk
// of a log) are recognised from their top-level data keys alone, which
// is much cheaper than the upgrade's full parse.
func needsUpgradeCheck(e *Event) bool {
	switch e.Type {
	case "user/message", "assistant/message", "tool/result":
	case "request/header-delta", "mode/set", "request/header", "turn/start", "turn/end", "steering/message":
		return true
	default:
		return false
	}
	m, ok := topKeys(e.Data)
	if !ok {
		return true
	}
	has := func(bits uint16) bool { return m&bits == bits }
	switch e.Type {
	case "user/message":
		return has(keyContent|keySource) && m&(keyID|keyRole|keyMessage) == 0
	case "assistant/message":
		return has(keyContent|keyProvenance) && m&keyMessage == 0
	default:
		return has(keyCallID|keyContent|keyIsError) && m&keyMessage == 0
	}
}

// topKeys returns the legacyKeyBits of an object's top-level keys; ok is
// false for anything but a plain object (escaped keys included), in which
// case callers fall back to the full check.
func topKeys(b []byte) (mask uint16, ok bool) {
	plain := true
	err := rawjson.Members(b, func(key, _ []byte) {
		k := key[1 : len(key)-1]
		if bytes.IndexByte(k, '\\') >= 0 {
			plain = false
			return
		}
		mask |= legacyKeyBits[string(k)]
	})
	if err != nil || !plain {
		return 0, false
	}
	return mask, true
}
