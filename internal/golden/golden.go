// Package golden loads the shared golden cases (testdata/golden/<group>.json,
// produced by the real dsh TypeScript implementation) and turns their
// "session fields" into a reference.Source for tests.
//
// Sessions given as event shorthands are expanded into current-format
// events exactly as dsh stores them (the shapes of
// testdata/golden/jsonl-root/**/session.jsonl, written by real dsh from
// jsonl-root.write-input.json) and served by memstore.Memory, which
// writes them into a real store and reads them through the index.
// A case with jsonlRoot reads that real on-disk store through the index
// (storetest.OpenSynced).
//
// The harness is exercised end to end by reference/golden_test.go (every
// candidates, prepare, prestep and retain case through the core service)
// and sessionstore/golden_jsonl_test.go; this package's own tests check the
// expansion against logs written by real dsh.
//
// Cancellation ("preAborted": true): the harness does not abort anything
// itself; Env.PreAborted reports the flag and Env.Context returns an
// already-cancelled context for such cases, which the caller passes to the
// operation under test.
package golden

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/dsh-lsp/dsh-lsp/internal/golden/goldenfile"
	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/memstore"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/storetest"
)

// Case is one golden case (see goldenfile.Case).
type Case = goldenfile.Case

// RepoRoot returns the repository root: the nearest directory at or above
// the working directory that holds go.mod.
func RepoRoot(t testing.TB) string {
	t.Helper()
	return goldenfile.RepoRoot(t)
}

// Dir returns the absolute path of testdata/golden.
func Dir(t testing.TB) string {
	t.Helper()
	return goldenfile.Dir(t)
}

// Load reads testdata/golden/<group>.json (see goldenfile.Load).
func Load(t testing.TB, group string) []Case {
	t.Helper()
	return goldenfile.Load(t, group)
}

// Env is the environment a case's session fields describe.
type Env struct {
	// Source serves the case's sessions (the target included).
	Source reference.Source
	// Target is the agent preparing the message.
	Target reference.Target
	// TargetCreatedAt is the target's createdAt (0 when absent).
	TargetCreatedAt int64
	// Config is the raw "config" object, nil when absent.
	Config json.RawMessage
	// PreAborted is the case's "preAborted" flag.
	PreAborted bool
	// Memory is the source of a case's sessions (nil for a jsonlRoot case).
	Memory *memstore.Memory
	// Store is the disk store of a jsonlRoot case (nil otherwise).
	Store *sessionstore.Indexed
}

// Context returns context.Background(), or an already-cancelled context
// when the case is preAborted.
func (e *Env) Context() context.Context {
	if !e.PreAborted {
		return context.Background()
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// Session is one entry of a case's "sessions".
type Session struct {
	ID        string            `json:"id"`
	CWD       *string           `json:"cwd,omitempty"`
	CreatedAt int64             `json:"createdAt"`
	Events    []json.RawMessage `json:"events"`
}

type sessionFields struct {
	Config json.RawMessage `json:"config"`
	Target struct {
		ID        *string `json:"id"`
		CWD       *string `json:"cwd"`
		CreatedAt int64   `json:"createdAt"`
	} `json:"target"`
	Sessions      []Session                  `json:"sessions"`
	Surfaces      map[string]json.RawMessage `json:"surfaces"`
	ReadFailures  map[string]string          `json:"readFailures"`
	TitleFailures []string                   `json:"titleFailures"`
	JSONLRoot     string                     `json:"jsonlRoot"`
	Compression   string                     `json:"compression"`
	PreAborted    bool                       `json:"preAborted"`
}

// NewSource builds the Env of a case input's session fields: config,
// target {id, cwd?, createdAt?}, sessions [{id, cwd?, createdAt?, events}],
// surfaces (id → raw readSurface snapshot), readFailures (id → message:
// ReadSurface fails with an error whose Error() is exactly that message),
// titleFailures (ids whose title read is rejected), or jsonlRoot (+
// compression) naming a real store under testdata/golden. The target is
// listed as a session of its own (no events), so self-exclusion is
// exercised.
func NewSource(t testing.TB, input json.RawMessage) *Env {
	t.Helper()
	var f sessionFields
	if err := json.Unmarshal(input, &f); err != nil {
		t.Fatalf("golden: parsing session fields: %v", err)
	}
	env := &Env{
		Target:          reference.Target{SessionID: f.Target.ID, CWD: f.Target.CWD},
		TargetCreatedAt: f.Target.CreatedAt,
		Config:          f.Config,
		PreAborted:      f.PreAborted,
	}
	if f.JSONLRoot != "" {
		enc := sessionstore.Raw
		if f.Compression == "zstd" {
			enc = sessionstore.Zstd
		}
		st, err := storetest.OpenSynced(filepath.Join(Dir(t), filepath.FromSlash(f.JSONLRoot)), enc)
		if err != nil {
			t.Fatalf("golden: %v", err)
		}
		env.Source, env.Store = st, st
		return env
	}
	m := memstore.New(t)
	listed := map[string]bool{}
	for _, s := range f.Sessions {
		log, err := BuildLog(s)
		if err != nil {
			t.Fatalf("golden: session %q: %v", s.ID, err)
		}
		if err := m.Add(log); err != nil {
			t.Fatalf("golden: session %q: %v", s.ID, err)
		}
		listed[s.ID] = true
	}
	if f.Target.ID != nil && !listed[*f.Target.ID] {
		log, err := BuildLog(Session{ID: *f.Target.ID, CWD: f.Target.CWD, CreatedAt: f.Target.CreatedAt})
		if err != nil {
			t.Fatalf("golden: target: %v", err)
		}
		if err := m.Add(log); err != nil {
			t.Fatalf("golden: target: %v", err)
		}
	}
	for id, snap := range f.Surfaces {
		if err := m.SetSurface(id, snap); err != nil {
			t.Fatalf("golden: surfaces[%q]: %v", id, err)
		}
	}
	for id, msg := range f.ReadFailures {
		m.FailRead(id, errors.New(msg))
	}
	for _, id := range f.TitleFailures {
		m.FailTitle(id, fmt.Errorf("title read of %q rejected (golden titleFailures)", id))
	}
	env.Source, env.Memory = m, m
	return env
}
