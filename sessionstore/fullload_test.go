package sessionstore

import (
	"bytes"
	"context"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
	"github.com/dsh-lsp/dsh-lsp/reference"
)

// readTitles reads the title of each id once (first occurrence wins), in
// order.
func readTitles(ctx context.Context, ids []string, read func(context.Context, string) (*Title, error)) ([]reference.TitleResult, error) {
	seen := make(map[string]bool, len(ids))
	var out []reference.TitleResult
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if seen[id] {
			continue
		}
		seen[id] = true
		r := reference.TitleResult{SessionID: id}
		t, err := read(ctx, id)
		if err != nil {
			r.Err = err
		} else if t != nil {
			title := t.Text()
			r.Title = &title
		}
		out = append(out, r)
	}
	return out, nil
}

// The whole-buffer pipeline of the tests' full load (oracle_test.go):
// scan, then fold keeping every event.

// ScannedLog is the result of scanning one transcript (spec §3): the
// header and the contiguous event prefix, before the legacy upgrade and
// validation.
type ScannedLog struct {
	Header     *Header
	HeaderLine []byte
	// Events is the valid contiguous prefix (packed rows expanded).
	Events []Event
	// Offset is the file offset after the last consumed good data: after
	// the last good line (raw) or after the last complete frame (zstd).
	// An incremental reader can resume scanning there.
	Offset int64
	// TornBytes is the number of logical bytes dropped as a torn tail
	// (bad line onwards or a final line without "\n").
	TornBytes int64
	// Frames is the number of complete zstd frames (0 for raw).
	Frames int
}

// feedLines feeds every complete line of text (starting at logical offset
// base) and returns the length of the final partial line.
func (s *LineScanner) feedLines(text []byte, base int64) (partial int, err error) {
	return s.feedLinesThen(text, base, nil)
}

// feedLinesThen is feedLines calling each (when not nil) after every line
// fed, so a streaming caller consumes the events line by line.
func (s *LineScanner) feedLinesThen(text []byte, base int64, each func()) (partial int, err error) {
	for len(text) > 0 {
		i := bytes.IndexByte(text, '\n')
		if i < 0 {
			return len(text), nil
		}
		if err := s.Feed(text[:i], base+int64(i)+1); err != nil {
			return 0, err
		}
		if each != nil {
			each()
		}
		base += int64(i) + 1
		text = text[i+1:]
	}
	return 0, nil
}

// ScanRaw scans a raw JSONL transcript (spec §3.1).
func ScanRaw(data []byte) (*ScannedLog, error) {
	i := bytes.IndexByte(data, '\n')
	if i < 0 {
		return nil, backendf("empty or header-less session log")
	}
	h, err := parseHeaderLine(data[:i])
	if err != nil {
		return nil, err
	}
	s := &LineScanner{GoodEnd: int64(i) + 1}
	if _, err := s.feedLines(data[i+1:], int64(i)+1); err != nil {
		return nil, markBackend(err)
	}
	return &ScannedLog{Header: h, HeaderLine: data[:i], Events: s.events, Offset: s.GoodEnd,
		TornBytes: int64(len(data)) - s.GoodEnd}, nil
}

// LoadLog turns a scanned log into a Log: id check, legacy upgrade (§2.9),
// message shape checks, unknown-type refusal, crash closers, whole-log
// validation and the surface fold (§4 steps 2–6). wantID is the id the log
// was looked up by.
func LoadLog(scan *ScannedLog, wantID string) (*Log, error) {
	h := scan.Header
	if h.ID != wantID {
		return nil, corruptf("header id %s does not match the requested id", jsjson.Quote(h.ID))
	}
	if err := h.Validate(); err != nil {
		return nil, err
	}
	// The keep-every-event policy of the fold: the events are at hand, so
	// the legacy upgrade's cross-event question is answered from them.
	events := scan.Events
	f := newFold(h.ID)
	f.earlier = func(seq int64) string { return messageID(&events[seq]) }
	var reps []Replacement
	f.onNode = func(e *Event, _ int, shadowed []int64) {
		if shadowed != nil {
			start, end, _ := parseReplaceOp(e.SurfaceOp)
			reps = append(reps, Replacement{Seq: e.Seq, Start: start, End: end, Shadowed: shadowed})
		}
	}
	for i := range events {
		f.stored(&events[i])
	}
	stored := len(events)
	closers, err := f.finish()
	if err != nil {
		return nil, err
	}
	events = append(events, closers...)
	for i := range events {
		events[i].dropCache()
	}
	return &Log{Header: h, Events: events, Stored: stored, TornBytes: scan.TornBytes, Frames: scan.Frames,
		Surface: f.Nodes, Replacements: reps}, nil
}
