package sessionstore

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
	"github.com/dsh-lsp/dsh-lsp/reference"
)

// Memory is an in-memory reference.Source for tests. Each session is its
// logical JSONL text (what a raw session.jsonl would hold), read through
// exactly the disk store's pipeline: header parsing, ScanRaw (packed rows,
// torn tails), LoadLog (legacy upgrade, validation, crash closers, fold)
// and the title fold. Overrides inject failures and raw snapshots.
//
// Configure a Memory before sharing it; it is then safe for concurrent
// reads.
type Memory struct {
	mu            sync.RWMutex
	logs          map[string][]byte
	headers       []reference.SessionHeader
	surfaces      map[string]*reference.Surface
	readFailures  map[string]error
	titleFailures map[string]error
}

var _ reference.Source = (*Memory)(nil)

// NewMemory returns an empty in-memory source.
func NewMemory() *Memory {
	return &Memory{
		logs:          map[string][]byte{},
		surfaces:      map[string]*reference.Surface{},
		readFailures:  map[string]error{},
		titleFailures: map[string]error{},
	}
}

// Add adds a session given as logical JSONL text: the header line, then
// one storage record per line, each ending in "\n" (a final line without
// "\n" is a torn tail). The header must be header-shaped; a second session
// with the same id is an error.
func (m *Memory) Add(log []byte) error {
	i := bytes.IndexByte(log, '\n')
	if i < 0 {
		return fmt.Errorf("sessionstore: memory session has no complete header line")
	}
	h, err := ParseHeader(log[:i])
	if err != nil {
		return fmt.Errorf("sessionstore: memory session header: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, dup := m.logs[h.ID]; dup {
		return fmt.Errorf("sessionstore: duplicate memory session id %s", jsjson.Quote(h.ID))
	}
	m.logs[h.ID] = append([]byte(nil), log...)
	m.headers = append(m.headers, h.Reference())
	SortHeaders(m.headers)
	return nil
}

// SetSurface makes ReadSurface(id) return snapshot, a raw readSurface
// object {session, capturedThroughSeq, events}, instead of folding the log
// (the session need not be listed).
func (m *Memory) SetSurface(id string, snapshot json.RawMessage) error {
	s, err := ParseSurface(snapshot)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.surfaces[id] = s
	return nil
}

// FailRead makes ReadSurface(id) fail with err.
func (m *Memory) FailRead(id string, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.readFailures[id] = err
}

// FailTitle makes the title read of id fail with err.
func (m *Memory) FailTitle(id string, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.titleFailures[id] = err
}

// ListSessions implements reference.Source.
func (m *Memory) ListSessions(ctx context.Context) ([]reference.SessionHeader, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	return append([]reference.SessionHeader(nil), m.headers...), nil
}

// Load runs the store pipeline over id's log.
func (m *Memory) Load(ctx context.Context, id string) (*Log, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.RLock()
	data, ok := m.logs[id]
	m.mu.RUnlock()
	if !ok {
		return nil, notFound(id)
	}
	scan, err := ScanRaw(data)
	if err != nil {
		return nil, attach(err, id, "")
	}
	log, err := LoadLog(scan, id)
	return log, attach(err, id, "")
}

// ReadSurface implements reference.Source.
func (m *Memory) ReadSurface(ctx context.Context, id string) (*reference.Surface, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.RLock()
	fail, failed := m.readFailures[id]
	snap, override := m.surfaces[id]
	m.mu.RUnlock()
	if failed {
		return nil, fail
	}
	if override {
		return snap, nil
	}
	log, err := m.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	return log.SurfaceSnapshot(), nil
}

// ReadTitle loads id and folds its latest title (nil when none).
func (m *Memory) ReadTitle(ctx context.Context, id string) (*Title, error) {
	m.mu.RLock()
	fail, failed := m.titleFailures[id]
	m.mu.RUnlock()
	if failed {
		return nil, fail
	}
	log, err := m.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	t, err := log.Title()
	return t, attach(err, id, "")
}

// ReadTitles implements reference.Source.
func (m *Memory) ReadTitles(ctx context.Context, ids []string) ([]reference.TitleResult, error) {
	return readTitles(ctx, ids, m.ReadTitle)
}

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

// ParseSurface parses a raw readSurface object into a reference.Surface
// (the session header is taken leniently: id, createdAt and cwd only).
func ParseSurface(raw json.RawMessage) (*reference.Surface, error) {
	var v struct {
		Session            json.RawMessage   `json:"session"`
		CapturedThroughSeq *int64            `json:"capturedThroughSeq"`
		Events             []json.RawMessage `json:"events"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("sessionstore: parsing surface snapshot: %w", err)
	}
	var h struct {
		ID        string  `json:"id"`
		CWD       *string `json:"cwd"`
		CreatedAt int64   `json:"createdAt"`
	}
	if err := json.Unmarshal(v.Session, &h); err != nil {
		return nil, fmt.Errorf("sessionstore: parsing surface snapshot session: %w", err)
	}
	s := &reference.Surface{
		Session:            compact(v.Session),
		Header:             reference.SessionHeader{ID: h.ID, CWD: h.CWD, CreatedAt: h.CreatedAt, Raw: compact(v.Session)},
		CapturedThroughSeq: v.CapturedThroughSeq,
	}
	for _, e := range v.Events {
		var ev struct {
			Type string          `json:"type"`
			Seq  int64           `json:"seq"`
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(e, &ev); err != nil {
			return nil, fmt.Errorf("sessionstore: parsing surface snapshot event: %w", err)
		}
		s.Events = append(s.Events, reference.SurfaceEvent{Type: ev.Type, Seq: ev.Seq, Data: compact(ev.Data), Raw: compact(e)})
	}
	if s.Events == nil {
		s.Events = []reference.SurfaceEvent{}
	}
	return s, nil
}

// The whole-buffer pipeline Memory reads its logs with (and the tests' full
// load, oracle_test.go): scan, then fold keeping every event.

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
