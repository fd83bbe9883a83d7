package sessionstore

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/transcript"
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
	h, err := transcript.ParseHeader(log[:i])
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
func (m *Memory) Load(ctx context.Context, id string) (*transcript.Log, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.RLock()
	data, ok := m.logs[id]
	m.mu.RUnlock()
	if !ok {
		return nil, notFound(id)
	}
	scan, err := transcript.ScanRaw(data)
	if err != nil {
		return nil, attach(err, id, "")
	}
	log, err := transcript.LoadLog(scan, id)
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
func (m *Memory) ReadTitle(ctx context.Context, id string) (*transcript.Title, error) {
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
func readTitles(ctx context.Context, ids []string, read func(context.Context, string) (*transcript.Title, error)) ([]reference.TitleResult, error) {
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
		Session:            transcript.Compact(v.Session),
		Header:             reference.SessionHeader{ID: h.ID, CWD: h.CWD, CreatedAt: h.CreatedAt, Raw: transcript.Compact(v.Session)},
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
		s.Events = append(s.Events, reference.SurfaceEvent{Type: ev.Type, Seq: ev.Seq, Data: transcript.Compact(ev.Data), Raw: transcript.Compact(e)})
	}
	if s.Events == nil {
		s.Events = []reference.SurfaceEvent{}
	}
	return s, nil
}

// The whole-buffer pipeline Memory reads its logs with (and the tests' full
// load, oracle_test.go): scan, then fold keeping every event.
