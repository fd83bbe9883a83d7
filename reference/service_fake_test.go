package reference

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
)

// fakeSession is one session of a fakeSource.
type fakeSession struct {
	id        string
	cwd       *string
	createdAt int64
	title     *string
	titleErr  error
	events    []SurfaceEvent
	readErr   error
}

// fakeSource is an in-memory Source. Sessions are listed in slice order.
// A blocking phase waits until its ctx is done and returns ctx's error,
// like a store stuck on slow I/O that honours cancellation.
type fakeSource struct {
	sessions []fakeSession

	blockList, blockTitles, blockReads bool
	// started is closed (once) when a blocking call starts waiting.
	started     chan struct{}
	startedOnce sync.Once

	mu          sync.Mutex
	titleCalls  [][]string
	surfaceRead map[string]int
}

func (f *fakeSource) block(ctx context.Context) error {
	f.startedOnce.Do(func() {
		if f.started != nil {
			close(f.started)
		}
	})
	<-ctx.Done()
	return ctx.Err()
}

func (f *fakeSource) ListSessions(ctx context.Context) ([]SessionHeader, error) {
	if f.blockList {
		return nil, f.block(ctx)
	}
	out := make([]SessionHeader, len(f.sessions))
	for i, s := range f.sessions {
		out[i] = SessionHeader{ID: s.id, CWD: s.cwd, CreatedAt: s.createdAt}
	}
	return out, nil
}

func (f *fakeSource) ReadTitles(ctx context.Context, ids []string) ([]TitleResult, error) {
	f.mu.Lock()
	f.titleCalls = append(f.titleCalls, append([]string(nil), ids...))
	f.mu.Unlock()
	if f.blockTitles {
		return nil, f.block(ctx)
	}
	var out []TitleResult
	for _, id := range ids {
		s := f.find(id)
		if s == nil {
			out = append(out, TitleResult{SessionID: id, Err: fmt.Errorf("session %q not found", id)})
			continue
		}
		out = append(out, TitleResult{SessionID: id, Title: s.title, Err: s.titleErr})
	}
	return out, nil
}

func (f *fakeSource) ReadSurface(ctx context.Context, id string) (*Surface, error) {
	f.mu.Lock()
	if f.surfaceRead == nil {
		f.surfaceRead = map[string]int{}
	}
	f.surfaceRead[id]++
	f.mu.Unlock()
	if f.blockReads {
		return nil, f.block(ctx)
	}
	s := f.find(id)
	if s == nil {
		return nil, fmt.Errorf("session %s not found", jsjson.Quote(id))
	}
	if s.readErr != nil {
		return nil, s.readErr
	}
	var last *int64
	if n := len(s.events); n > 0 {
		seq := s.events[n-1].Seq
		last = &seq
	}
	return &Surface{Header: SessionHeader{ID: s.id, CWD: s.cwd, CreatedAt: s.createdAt}, CapturedThroughSeq: last, Events: s.events}, nil
}

func (f *fakeSource) find(id string) *fakeSession {
	for i := range f.sessions {
		if f.sessions[i].id == id {
			return &f.sessions[i]
		}
	}
	return nil
}

func (f *fakeSource) reads() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.surfaceRead {
		n += c
	}
	return n
}

func ptr[T any](v T) *T { return &v }

var errDisk = errors.New("disk exploded")

func newTestService(t interface{ Fatal(...any) }, src Source, cfg Config) *Service {
	s, err := NewService(src, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
