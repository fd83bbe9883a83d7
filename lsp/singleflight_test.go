package lsp

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dsh-lsp/dsh-lsp/reference"
)

// gatedSource answers ReadSurface with a fresh surface per read, each read
// held until gate yields a value (or the read's request is cancelled).
type gatedSource struct {
	reference.Source
	reads   atomic.Int32
	entered chan struct{}
	gate    chan struct{}
}

func (g *gatedSource) ReadSurface(ctx context.Context, id string) (*reference.Surface, error) {
	g.reads.Add(1)
	g.entered <- struct{}{}
	select {
	case <-g.gate:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return &reference.Surface{Header: reference.SessionHeader{ID: id}}, nil
}

// waitEntered waits for a read to start.
func (g *gatedSource) waitEntered(t *testing.T) {
	t.Helper()
	select {
	case <-g.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("timed out waiting for a read to start")
	}
}

// waitFor polls cond (a condition, not a fixed sleep) for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// waiters returns how many requests joined the read of id in flight.
func waiters(s *Server, env *environment, id string) int {
	s.surfaces.mu.Lock()
	defer s.surfaces.mu.Unlock()
	if r := s.surfaces.reading[surfaceKey{root: env.root, id: id}]; r != nil {
		return r.waiters
	}
	return -1
}

type readResult struct {
	surf *reference.Surface
	err  error
}

// TestReadSurfaceSingleFlight: requests for a session whose read has not
// started yet share that read; a request that arrives after a read started
// does not take its (possibly stale) answer but reads again; a read whose
// own request is cancelled hands its waiters on to a read of their own;
// reads of different sessions run side by side.
func TestReadSurfaceSingleFlight(t *testing.T) {
	newServer := func() (*Server, *environment, *gatedSource) {
		g := &gatedSource{entered: make(chan struct{}, 8), gate: make(chan struct{})}
		// The root does not exist: nothing is cached, so every answer
		// comes from the flight itself.
		return &Server{readSlots: make(chan struct{}, 2)}, &environment{root: t.TempDir() + "/none", source: g}, g
	}
	read := func(s *Server, env *environment, ctx context.Context, id string) chan readResult {
		out := make(chan readResult, 1)
		go func() {
			surf, err := s.readSurface(ctx, env, id)
			out <- readResult{surf, err}
		}()
		return out
	}

	t.Run("shared before the read starts", func(t *testing.T) {
		s, env, g := newServer()
		s.readSlots <- struct{}{} // both slots busy: the lead waits for one
		s.readSlots <- struct{}{}
		lead := read(s, env, context.Background(), "a")
		waitFor(t, "the lead to register", func() bool { return waiters(s, env, "a") == 0 })
		var followers []chan readResult
		for i := 0; i < 3; i++ {
			followers = append(followers, read(s, env, context.Background(), "a"))
		}
		waitFor(t, "three waiters", func() bool { return waiters(s, env, "a") == 3 })
		<-s.readSlots
		g.waitEntered(t)
		close(g.gate)
		want := <-lead
		if want.err != nil {
			t.Fatal(want.err)
		}
		for _, f := range followers {
			if got := <-f; got.err != nil || got.surf != want.surf {
				t.Errorf("follower: %p, %v; want the lead's surface %p", got.surf, got.err, want.surf)
			}
		}
		if n := g.reads.Load(); n != 1 {
			t.Errorf("%d reads, want 1", n)
		}
	})

	t.Run("not shared once the read started", func(t *testing.T) {
		s, env, g := newServer()
		first := read(s, env, context.Background(), "a")
		g.waitEntered(t) // the read runs: a change from now on may be missed
		late := read(s, env, context.Background(), "a")
		waitFor(t, "the late request to wait", func() bool { return waiters(s, env, "a") == 1 })
		g.gate <- struct{}{}
		a := <-first
		g.waitEntered(t) // the late request reads again
		g.gate <- struct{}{}
		b := <-late
		if a.err != nil || b.err != nil || a.surf == b.surf {
			t.Errorf("late request: %p, %v; first %p, %v: want a read of its own", b.surf, b.err, a.surf, a.err)
		}
		if n := g.reads.Load(); n != 2 {
			t.Errorf("%d reads, want 2", n)
		}
	})

	t.Run("lead cancelled", func(t *testing.T) {
		s, env, g := newServer()
		s.readSlots <- struct{}{}
		s.readSlots <- struct{}{}
		ctx, cancel := context.WithCancel(context.Background())
		lead := read(s, env, ctx, "a")
		waitFor(t, "the lead to register", func() bool { return waiters(s, env, "a") == 0 })
		follower := read(s, env, context.Background(), "a")
		waitFor(t, "the follower to wait", func() bool { return waiters(s, env, "a") == 1 })
		cancel()
		if r := <-lead; !errors.Is(r.err, context.Canceled) {
			t.Fatalf("cancelled lead: %v", r.err)
		}
		<-s.readSlots
		g.waitEntered(t) // the follower now reads
		close(g.gate)
		if r := <-follower; r.err != nil || r.surf == nil {
			t.Errorf("follower of a cancelled read: %v", r.err)
		}
	})

	t.Run("different sessions side by side", func(t *testing.T) {
		s, env, g := newServer()
		var results []chan readResult
		for _, id := range []string{"a", "b"} {
			results = append(results, read(s, env, context.Background(), id))
		}
		g.waitEntered(t) // both read at once
		g.waitEntered(t)
		close(g.gate)
		for _, r := range results {
			if got := <-r; got.err != nil {
				t.Error(got.err)
			}
		}
	})
}
