// Package freshtest writes to a session store the way dsh does (new
// sessions, appended turns with new titles, turns left open, truncated,
// replaced and deleted logs) and reads the expected answers back with a
// full re-read, for the freshness tests of the index (sessionstore) and of
// the server binary (cmd/dsh-lsp).
package freshtest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dsh-lsp/dsh-lsp/bench/workload"
	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/storetest"
)

// Turns per generated session: batch i is turn i+1 (no compactions);
// workload titles a session at turn 2 and again at turn 25.
const Turns = 26

// Session is one generated session and how much of it is written.
type Session struct {
	Spec    workload.SessionSpec
	Header  []byte
	Batches [][]byte
	Path    string
	// Written is how many batches are on disk; Torn says the last turn
	// was left open (part of a batch written), so the session is not
	// appended to again.
	Written int
	Torn    bool
}

// Store is a generated store under Root in one encoding.
type Store struct {
	Root     string
	Comp     workload.Compression
	Sessions []*Session
	spare    []workload.SessionSpec
}

// New writes n sessions under root: even ones closed after 24 turns (the
// title of turn 2; turn 25 retitles them), odd ones after one turn (no
// title yet). It keeps spare specs for the sessions steps create.
func New(root string, comp workload.Compression, n int, seed int64) (*Store, error) {
	specs := workload.Specs(workload.Options{Sessions: n + 16, CWDs: 3, Turns: Turns, Multibyte: 0.2, NoCWD: 0.2, Seed: seed})
	s := &Store{Root: root, Comp: comp, spare: specs[n:]}
	for i, sp := range specs[:n] {
		keep := 1
		if i%2 == 0 {
			keep = 24
		}
		if _, err := s.add(sp, keep); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (s *Store) add(sp workload.SessionSpec, keep int) (*Session, error) {
	h, b := workload.Batches(sp)
	if len(b) < Turns {
		return nil, fmt.Errorf("freshtest: session %s has %d batches, want %d", sp.ID, len(b), Turns)
	}
	g := &Session{Spec: sp, Header: h, Batches: b, Path: workload.PathOf(s.Root, sp, s.Comp), Written: keep}
	if err := os.MkdirAll(filepath.Dir(g.Path), 0o755); err != nil {
		return nil, err
	}
	data := workload.EncodeBatch(s.Comp, h)
	for _, bb := range b[:keep] {
		data = append(data, workload.EncodeBatch(s.Comp, bb)...)
	}
	if err := os.WriteFile(g.Path, data, 0o644); err != nil {
		return nil, err
	}
	s.Sessions = append(s.Sessions, g)
	return g, nil
}

func (s *Store) appendTo(g *Session, data []byte) error {
	f, err := os.OpenFile(g.Path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// AppendTurn appends g's next turn as one flush (one zstd frame).
func (s *Store) AppendTurn(g *Session) error {
	if g.Torn || g.Written >= len(g.Batches) {
		return fmt.Errorf("freshtest: session %s cannot take another turn", g.Spec.ID)
	}
	if err := s.appendTo(g, workload.EncodeBatch(s.Comp, g.Batches[g.Written])); err != nil {
		return err
	}
	g.Written++
	return nil
}

// pick returns the first live session (not torn, still on disk) whose
// written batch count satisfies ok.
func (s *Store) pick(ok func(g *Session) bool) (*Session, error) {
	for _, g := range s.Sessions {
		if g.Torn || g.Written < 0 || !ok(g) {
			continue
		}
		return g, nil
	}
	return nil, fmt.Errorf("freshtest: no session left for this step")
}

// Pick returns the first live session (not torn, still on disk) that ok
// accepts, or nil.
func (s *Store) Pick(ok func(g *Session) bool) *Session {
	g, _ := s.pick(ok)
	return g
}

// NextID is the id of the session the next "new session" step (or
// AddSession) creates.
func (s *Store) NextID() string {
	if len(s.spare) == 0 {
		return ""
	}
	return s.spare[0].ID
}

// AddSession writes a new session of three turns (titled at turn 2).
func (s *Store) AddSession() error {
	if len(s.spare) == 0 {
		return fmt.Errorf("freshtest: no spare session spec")
	}
	sp := s.spare[0]
	s.spare = s.spare[1:]
	_, err := s.add(sp, 3)
	return err
}

// Step is one change dsh makes to the store.
type Step struct {
	Name string
	Do   func(s *Store) error
}

// Steps are the changes dsh and a user make to a store while the server
// runs, in an order each can follow the previous ones in.
func Steps() []Step {
	return []Step{
		{"new session", (*Store).AddSession},
		{"new title on resume", func(s *Store) error {
			// A closed session (24 turns) is resumed: turn 25 retitles it.
			g, err := s.pick(func(g *Session) bool { return g.Written == 24 })
			if err != nil {
				return err
			}
			return s.AppendTurn(g)
		}},
		{"new title inside a still-open turn", func(s *Store) error {
			// Turn 2 is written up to its session/title event: the turn is
			// still open (no turn/end yet), as while dsh is answering.
			g, err := s.pick(func(g *Session) bool { return g.Written == 1 })
			if err != nil {
				return err
			}
			b := g.Batches[1]
			i := bytes.Index(b, []byte(`"type":"session/title"`))
			if i < 0 {
				return fmt.Errorf("freshtest: turn 2 of %s has no title", g.Spec.ID)
			}
			end := i + bytes.IndexByte(b[i:], '\n') + 1
			if err := s.appendTo(g, workload.EncodeBatch(s.Comp, b[:end])); err != nil {
				return err
			}
			g.Torn = true
			return nil
		}},
		{"append without a new title", func(s *Store) error {
			g, err := s.pick(func(g *Session) bool { return g.Written >= 2 && g.Written < len(g.Batches) })
			if err != nil {
				return err
			}
			return s.AppendTurn(g)
		}},
		{"truncated log", func(s *Store) error {
			// Cut back to the first turn: the title (turn 2) goes.
			g, err := s.pick(func(g *Session) bool { return g.Written >= 3 })
			if err != nil {
				return err
			}
			size := len(workload.EncodeBatch(s.Comp, g.Header)) + len(workload.EncodeBatch(s.Comp, g.Batches[0]))
			if err := os.Truncate(g.Path, int64(size)); err != nil {
				return err
			}
			g.Written = 1
			return nil
		}},
		{"replaced log", func(s *Store) error {
			// A new file renamed over the log (another inode), same
			// session: the first two turns only.
			g, err := s.pick(func(g *Session) bool { return g.Written >= 4 })
			if err != nil {
				return err
			}
			data := workload.EncodeBatch(s.Comp, g.Header)
			for _, bb := range g.Batches[:2] {
				data = append(data, workload.EncodeBatch(s.Comp, bb)...)
			}
			tmp := g.Path + ".tmp"
			if err := os.WriteFile(tmp, data, 0o644); err != nil {
				return err
			}
			if err := os.Rename(tmp, g.Path); err != nil {
				return err
			}
			g.Written = 2
			return nil
		}},
		{"deleted session", func(s *Store) error {
			g, err := s.pick(func(g *Session) bool { return true })
			if err != nil {
				return err
			}
			g.Written = -1
			return os.RemoveAll(filepath.Dir(g.Path))
		}},
	}
}

// View is a store's answers in one comparable text: every candidate
// (listing order, label, cwd, creation time) and the title result of every
// listed session.
func View(ctx context.Context, src reference.Source) (string, error) {
	svc, err := reference.NewService(src, reference.DefaultConfig())
	if err != nil {
		return "", err
	}
	cands, err := svc.ListCandidates(ctx, reference.Target{}, "", 1<<40)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	ids := make([]string, len(cands))
	for i, c := range cands {
		ids[i] = c.SessionID
		cwd := "-"
		if c.CWD != nil {
			cwd = *c.CWD
		}
		fmt.Fprintf(&b, "%s\t%q\t%s\t%d\n", c.SessionID, c.Label, cwd, c.CreatedAt)
	}
	titles, err := src.ReadTitles(ctx, ids)
	if err != nil {
		return "", err
	}
	for _, r := range titles {
		t := "<none>"
		if r.Title != nil {
			t = fmt.Sprintf("%q", *r.Title)
		}
		if r.Err != nil {
			t += " err=" + r.Err.Error()
		}
		fmt.Fprintf(&b, "title %s %s\n", r.SessionID, t)
	}
	return b.String(), nil
}

// Expected is View of a fresh in-memory index of the store at root.
func Expected(ctx context.Context, root string) (string, error) {
	st, err := storetest.OpenSynced(root, 0)
	if err != nil {
		return "", err
	}
	defer st.Close()
	return View(ctx, st)
}

// Candidates is the full re-read's candidate list (all sessions, no
// target), for comparing with a server's dsh/candidates.
func Candidates(ctx context.Context, root string) ([]reference.Candidate, error) {
	st, err := storetest.OpenSynced(root, 0)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	svc, err := reference.NewService(st, reference.DefaultConfig())
	if err != nil {
		return nil, err
	}
	return svc.ListCandidates(ctx, reference.Target{}, "", 1<<40)
}
