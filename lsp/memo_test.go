package lsp

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dsh-lsp/dsh-lsp/reference"
)

// gatedCompute is a memo computation that counts its runs and holds each
// until release yields (or its request is cancelled).
type gatedCompute struct {
	runs    atomic.Int32
	entered chan struct{}
	release chan struct{}
	size    int64
	err     error
}

func newGatedCompute() *gatedCompute {
	return &gatedCompute{entered: make(chan struct{}, 64), release: make(chan struct{})}
}

func (g *gatedCompute) compute(ctx context.Context) (*int32, int64, error) {
	n := g.runs.Add(1)
	g.entered <- struct{}{}
	select {
	case <-g.release:
	case <-ctx.Done():
		return nil, 0, ctx.Err()
	}
	return &n, g.size, g.err
}

func (g *gatedCompute) waitEntered(t *testing.T) {
	t.Helper()
	select {
	case <-g.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("timed out waiting for a computation to start")
	}
}

type memoResult struct {
	v   *int32
	err error
}

func memoizeAsync(ctx context.Context, m *memo, key memoKey, g *gatedCompute) chan memoResult {
	out := make(chan memoResult, 1)
	go func() {
		v, err := memoize(ctx, m, key, g.compute)
		out <- memoResult{v, err}
	}()
	return out
}

// TestMemoJoinersShareOneComputation: requests for a key being computed
// wait for that computation and get its value; later requests get the
// kept value without computing.
func TestMemoJoinersShareOneComputation(t *testing.T) {
	m := &memo{maxBytes: 1 << 20}
	g := newGatedCompute()
	key := memoKey{kind: memoSurface, id: "a", version: "1"}
	lead := memoizeAsync(context.Background(), m, key, g)
	g.waitEntered(t)
	var joiners []chan memoResult
	for range 3 {
		joiners = append(joiners, memoizeAsync(context.Background(), m, key, g))
	}
	time.Sleep(10 * time.Millisecond) // let them join (they never compute)
	close(g.release)
	want := <-lead
	for _, j := range joiners {
		if got := <-j; got.err != nil || got.v != want.v {
			t.Errorf("joiner: %p, %v; want the leader's %p", got.v, got.err, want.v)
		}
	}
	if again, err := memoize(context.Background(), m, key, g.compute); err != nil || again != want.v {
		t.Errorf("after the computation: %p, %v; want the kept %p", again, err, want.v)
	}
	if n := g.runs.Load(); n != 1 {
		t.Errorf("%d computations, want 1", n)
	}
}

// TestMemoCancelledLeaderDoesNotFailJoiners: when the request computing a
// key is cancelled, a request waiting for it computes the key itself.
func TestMemoCancelledLeaderDoesNotFailJoiners(t *testing.T) {
	m := &memo{maxBytes: 1 << 20}
	g := newGatedCompute()
	key := memoKey{kind: memoSurface, id: "a", version: "1"}
	ctx, cancel := context.WithCancel(context.Background())
	lead := memoizeAsync(ctx, m, key, g)
	g.waitEntered(t)
	joiner := memoizeAsync(context.Background(), m, key, g)
	time.Sleep(10 * time.Millisecond)
	cancel()
	if r := <-lead; !errors.Is(r.err, context.Canceled) {
		t.Fatalf("cancelled leader: %v", r.err)
	}
	g.waitEntered(t) // the joiner computes
	close(g.release)
	if r := <-joiner; r.err != nil || r.v == nil || *r.v != 2 {
		t.Fatalf("joiner of a cancelled computation: %v, %v; want the second computation's value", r.v, r.err)
	}
}

// TestMemoKeepsOnlyWhatMayBeKept: an error, a value the computation marks
// noKeep and a value larger than half the memo are not kept: the next
// request computes again.
func TestMemoKeepsOnlyWhatMayBeKept(t *testing.T) {
	for _, tc := range []struct {
		name string
		size int64
		err  error
	}{
		{"error", 10, errors.New("cannot read")},
		{"noKeep", noKeep, nil},
		{"over half the memo", 600, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &memo{maxBytes: 1000}
			g := newGatedCompute()
			g.size, g.err = tc.size, tc.err
			key := memoKey{kind: memoHover, id: "a", version: "1"}
			close(g.release)
			lead := memoizeAsync(context.Background(), m, key, g)
			joiner := memoizeAsync(context.Background(), m, key, g)
			for _, r := range []memoResult{<-lead, <-joiner} {
				if !errors.Is(r.err, tc.err) {
					t.Fatalf("%v, %v: want %v", r.v, r.err, tc.err)
				}
			}
			before := g.runs.Load()
			if _, err := memoize(context.Background(), m, key, g.compute); !errors.Is(err, tc.err) {
				t.Fatal(err)
			}
			if n := g.runs.Load(); n != before+1 {
				t.Errorf("%d computations after the first, want 1 (the outcome was not kept)", n-before)
			}
			if m.bytes != 0 || m.lru.Len() != 0 {
				t.Errorf("memo holds %d bytes in %d entries, want none", m.bytes, m.lru.Len())
			}
		})
	}
}

// TestMemoEvictsLeastRecentlyUsed: past maxBytes, the entries used
// longest ago go first.
func TestMemoEvictsLeastRecentlyUsed(t *testing.T) {
	m := &memo{maxBytes: 300}
	var runs atomic.Int32
	get := func(id string) {
		memoize(context.Background(), m, memoKey{kind: memoHover, id: id}, func(context.Context) (string, int64, error) {
			runs.Add(1)
			return id, 100, nil
		})
	}
	get("a")
	get("b")
	get("c")
	get("a") // a is now the most recently used: b goes first
	get("d")
	runs.Store(0)
	for _, id := range []string{"a", "c", "d"} {
		get(id)
	}
	if n := runs.Load(); n != 0 {
		t.Errorf("%d of a, c, d computed again, want 0 (kept)", n)
	}
	get("b")
	if n := runs.Load(); n != 1 {
		t.Errorf("b computed %d times, want 1 (evicted)", n)
	}
	if m.bytes > 300 {
		t.Errorf("memo holds %d bytes, over its 300", m.bytes)
	}
}

// versionedSource is an in-memory Source for readSurface: every read
// returns a fresh surface; Version returns the version set for the id
// (none: ok false).
type versionedSource struct {
	Source
	mu       sync.Mutex
	versions map[string]string
	reads    atomic.Int32
}

func (v *versionedSource) Version(_ context.Context, id string) (string, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	ver, ok := v.versions[id]
	return ver, ok
}

func (v *versionedSource) ReadSurface(_ context.Context, id string) (*reference.Surface, error) {
	n := v.reads.Add(1)
	return &reference.Surface{Header: reference.SessionHeader{ID: fmt.Sprint(id, n)}}, nil
}

// TestReadSurfaceOncePerVersion: a session is read once per version; a new
// version is read again, and a session without a version on every request.
func TestReadSurfaceOncePerVersion(t *testing.T) {
	src := &versionedSource{versions: map[string]string{"a": "1"}}
	s := &Server{reads: newLimiter(1), memo: memo{maxBytes: 1 << 20}}
	env := &environment{root: "/store", source: src}
	read := func(id string) *reference.Surface {
		t.Helper()
		surf, err := s.readSurface(context.Background(), env, id, "test")
		if err != nil {
			t.Fatal(err)
		}
		return surf
	}
	first := read("a")
	if again := read("a"); again != first || src.reads.Load() != 1 {
		t.Fatalf("unchanged session: %d reads, want 1", src.reads.Load())
	}
	src.mu.Lock()
	src.versions["a"] = "2"
	src.mu.Unlock()
	if changed := read("a"); changed == first || src.reads.Load() != 2 {
		t.Fatalf("new version: %d reads, want 2", src.reads.Load())
	}
	read("b")
	read("b")
	if n := src.reads.Load(); n != 4 {
		t.Fatalf("session without a version: %d reads in all, want 4 (read each time)", n)
	}
}
