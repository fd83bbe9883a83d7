package lsp

import (
	"container/list"
	"context"
	"sync"
)

// The server's one memo of answers derived from reading sessions: session
// surfaces, rendered hovers and completion-item documentation, prepared
// texts. Every key names the versions of the sessions the answer was
// derived from (the index's Source.Version, taken before the read), so an
// entry is simply never asked for again once a session changes; the memo
// evicts by size and recency. Requests for a key being computed share that
// computation (as gopls's cache/future.go).

// memoKind says what a memo entry holds.
type memoKind uint8

const (
	memoSurface memoKind = iota + 1 // *reference.Surface of one session
	memoHover                       // hover text of one mention
	memoResolve                     // documentation of one completion item
	memoPrepare                     // *reference.PreparedText of one text
)

// memoKey identifies one memoized answer.
type memoKey struct {
	kind memoKind
	root string // the store
	id   string // the session, "" for a prepare
	// version is the session's Source.Version; for a prepare, a digest of
	// every cited session's id and version.
	version string
	// detail is what else the answer depends on (request fields and
	// settings), encoded by the caller.
	detail string
}

// maxMemoBytes bounds the memory the memo keeps (estimated by the
// callers: a surface's events' JSON plus per-event overhead, a text's
// length).
const maxMemoBytes = 64 << 20

// memo maps keys to computations, in flight or done. Done entries are kept
// in least-recently-used order within maxBytes (the server's: maxMemoBytes).
type memo struct {
	mu       sync.Mutex
	entries  map[memoKey]*future
	lru      list.List // of *future, done and kept; front: most recently used
	bytes    int64
	maxBytes int64
}

// future is one computation of a key. Its result fields are set before
// done is closed and never change afterwards.
type future struct {
	key   memoKey
	done  chan struct{}
	value any
	size  int64
	err   error
	// abandoned: the computation stopped because its own request was
	// cancelled, which says nothing about the answer: joiners compute
	// again.
	abandoned bool
	// kept is the future's element in memo.lru while it is kept.
	kept *list.Element
}

// noKeep is the size a computation returns for a value that may answer the
// requests waiting for it but must not be kept (an answer about a session
// that could not be read).
const noKeep = -1

// memoize returns the value memoized under key, or computes it with
// compute, which returns the value, its estimated size in bytes (noKeep:
// do not keep it) and an error (never kept). A request that finds key being
// computed waits for that computation (cancellably) and shares its
// outcome, unless the computation was abandoned by its own cancelled
// request: then one of the waiters computes it again.
func memoize[T any](ctx context.Context, m *memo, key memoKey, compute func(context.Context) (T, int64, error)) (T, error) {
	var zero T
	for {
		f, leader := m.join(key)
		if leader {
			v, size, err := compute(ctx)
			m.finish(f, v, size, err, err != nil && ctx.Err() != nil)
			return v, err
		}
		select {
		case <-f.done:
		case <-ctx.Done():
			return zero, ctx.Err()
		}
		switch {
		case f.abandoned:
			continue
		case f.err != nil:
			return zero, f.err
		}
		return f.value.(T), nil
	}
}

// join returns the future of key, registering a new one when there is
// none; leader reports that the caller must compute it and call finish.
func (m *memo) join(key memoKey) (f *future, leader bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if f := m.entries[key]; f != nil {
		if f.kept != nil {
			m.lru.MoveToFront(f.kept)
		}
		return f, false
	}
	if m.entries == nil {
		m.entries = make(map[memoKey]*future)
	}
	f = &future{key: key, done: make(chan struct{})}
	m.entries[key] = f
	return f, true
}

// finish publishes the outcome of f's computation, keeps it when it may be
// kept (evicting the least recently used entries beyond maxBytes) and
// wakes the requests waiting for it.
func (m *memo) finish(f *future, v any, size int64, err error, abandoned bool) {
	m.mu.Lock()
	f.value, f.size, f.err, f.abandoned = v, size, err, abandoned
	keep := err == nil && size >= 0 && size <= m.maxBytes/2
	if !keep {
		m.forgetLocked(f)
	} else {
		f.kept = m.lru.PushFront(f)
		m.bytes += size
		for m.bytes > m.maxBytes {
			m.forgetLocked(m.lru.Back().Value.(*future))
		}
	}
	m.mu.Unlock()
	close(f.done)
}

// forgetLocked removes f from the memo (callers hold m.mu).
func (m *memo) forgetLocked(f *future) {
	if m.entries[f.key] == f {
		delete(m.entries, f.key)
	}
	if f.kept != nil {
		m.lru.Remove(f.kept)
		m.bytes -= f.size
		f.kept = nil
	}
}
