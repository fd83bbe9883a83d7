package lsp

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"go.lsp.dev/jsonrpc2"

	"github.com/dsh-lsp/dsh-lsp/reference"
)

// Back-pressure for the requests that read whole sessions: every session
// read (of prepare, hover and completionItem/resolve) runs under one
// concurrency limit, queued in arrival order and cancellable while queued
// ($/cancelRequest answers -32800 at once), and what is derived from a
// read is memoized per session version (memo.go), so an unchanged session
// is read once. Completion, diagnostics and code actions never wait here:
// they answer from the index, so they stay fast while reads queue.

// maxQueued bounds the requests waiting for a slot: a client flooding the
// server with hovers gets a clear error instead of a goroutine per request.
const maxQueued = 1024

// limiter is a counting semaphore with a bounded FIFO queue.
type limiter struct {
	slots  chan struct{}
	mu     sync.Mutex
	queued int
}

// readConcurrency is the number of read slots for a MaxConcurrentReads
// option: n, or when n <= 0 one less than GOMAXPROCS, at least 1, so a
// core stays free for completion and the read loop.
func readConcurrency(n int) int {
	if n <= 0 {
		n = max(1, runtime.GOMAXPROCS(0)-1)
	}
	return n
}

// newLimiter returns a limiter of n slots.
func newLimiter(n int) *limiter {
	return &limiter{slots: make(chan struct{}, n)}
}

// acquire waits for a slot. It fails with ctx's error when the request is
// cancelled while queued, and with a RequestFailed error when maxQueued
// requests already wait. Waiters are served in arrival order (a channel
// queues its blocked senders FIFO).
func (l *limiter) acquire(ctx context.Context, method string) (func(), error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	select {
	case l.slots <- struct{}{}:
		return l.release, nil
	default:
	}
	l.mu.Lock()
	if l.queued >= maxQueued {
		l.mu.Unlock()
		return nil, jsonrpc2.NewError(codeRequestFailed, fmt.Sprintf("%s: dsh-lsp is busy: %d session reads are already queued; try again", method, maxQueued))
	}
	l.queued++
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		l.queued--
		l.mu.Unlock()
	}()
	select {
	case l.slots <- struct{}{}:
		return l.release, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (l *limiter) release() { <-l.slots }

// surfaceSize estimates the memory a surface holds.
func surfaceSize(s *reference.Surface) int64 {
	n := int64(len(s.Session)) + 256
	for _, ev := range s.Events {
		n += int64(len(ev.Raw)) + 96
	}
	return n
}

// readSurface is env.source.ReadSurface under the read limit, memoized per
// session version: requests for the same version of a session share one
// read, and a session whose version cannot be named (changed moments ago,
// unreadable) is read afresh by every request. method names the request in
// the error of a full queue.
func (s *Server) readSurface(ctx context.Context, env *environment, id, method string) (*reference.Surface, error) {
	read := func(ctx context.Context) (*reference.Surface, int64, error) {
		done, err := s.reads.acquire(ctx, method)
		if err != nil {
			return nil, 0, err
		}
		defer done()
		surf, err := env.source.ReadSurface(ctx, id)
		if err != nil {
			return nil, 0, err
		}
		return surf, surfaceSize(surf), nil
	}
	v, ok := env.source.Version(ctx, id)
	if !ok {
		surf, _, err := read(ctx)
		return surf, err
	}
	return memoize(ctx, &s.memo, memoKey{kind: memoSurface, root: env.root, id: id, version: v}, read)
}

// memoizedSurfaces is env's source with ReadSurface through the server's
// read limit and memo (for prepare, whose reference.Service reads only
// surfaces).
type memoizedSurfaces struct {
	reference.Source
	s   *Server
	env *environment
}

func (m memoizedSurfaces) ReadSurface(ctx context.Context, id string) (*reference.Surface, error) {
	return m.s.readSurface(ctx, m.env, id, "dsh.prepare")
}
