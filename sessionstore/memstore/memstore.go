package memstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/storetest"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/transcript"
)

// Memory is a reference.Source over sessions added as log texts.
// Configure it before sharing it; it is then safe for concurrent reads.
type Memory struct {
	root  string
	index *sessionstore.Indexed

	mu            sync.RWMutex
	ids           map[string]bool
	surfaces      map[string]*reference.Surface
	readFailures  map[string]error
	titleFailures map[string]error
}

var _ reference.Source = (*Memory)(nil)

// New returns an empty source whose store lives in t's temporary
// directory; the index is closed when t ends.
func New(t testing.TB) *Memory {
	t.Helper()
	root := t.TempDir()
	ix, err := storetest.OpenSynced(root, sessionstore.Raw)
	if err != nil {
		t.Fatalf("memstore: %v", err)
	}
	t.Cleanup(func() { ix.Close() })
	return &Memory{
		root:          root,
		index:         ix,
		ids:           map[string]bool{},
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
		return errors.New("memstore: session has no complete header line")
	}
	h, err := transcript.ParseHeader(log[:i])
	if err != nil {
		return fmt.Errorf("memstore: session header: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ids[h.ID] {
		return fmt.Errorf("memstore: duplicate session id %s", jsjson.Quote(h.ID))
	}
	path, err := sessionstore.SessionPath(m.root, h.CWD, h.ID, sessionstore.Raw)
	if err != nil {
		return fmt.Errorf("memstore: session %s: %w", jsjson.Quote(h.ID), err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("memstore: %w", err)
	}
	if err := os.WriteFile(path, log, 0o600); err != nil {
		return fmt.Errorf("memstore: %w", err)
	}
	m.ids[h.ID] = true
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
	return m.index.ListSessions(ctx)
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
	s, err := m.index.ReadSurface(ctx, id)
	return s, withoutPath(err)
}

// ReadTitles implements reference.Source.
func (m *Memory) ReadTitles(ctx context.Context, ids []string) ([]reference.TitleResult, error) {
	out, err := m.index.ReadTitles(ctx, ids)
	if err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	for i := range out {
		if fail, failed := m.titleFailures[out[i].SessionID]; failed {
			out[i].Title, out[i].Err = nil, fail
		}
		out[i].Err = withoutPath(out[i].Err)
	}
	return out, nil
}

// withoutPath drops the file path from a session error.
func withoutPath(err error) error {
	var se *sessionstore.Error
	if !errors.As(err, &se) || se.Path == "" {
		return err
	}
	c := *se
	c.Path = ""
	return &c
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
		return nil, fmt.Errorf("memstore: parsing surface snapshot: %w", err)
	}
	var h struct {
		ID        string  `json:"id"`
		CWD       *string `json:"cwd"`
		CreatedAt int64   `json:"createdAt"`
	}
	if err := json.Unmarshal(v.Session, &h); err != nil {
		return nil, fmt.Errorf("memstore: parsing surface snapshot session: %w", err)
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
			return nil, fmt.Errorf("memstore: parsing surface snapshot event: %w", err)
		}
		s.Events = append(s.Events, reference.SurfaceEvent{Type: ev.Type, Seq: ev.Seq, Data: transcript.Compact(ev.Data), Raw: transcript.Compact(e)})
	}
	if s.Events == nil {
		s.Events = []reference.SurfaceEvent{}
	}
	return s, nil
}
