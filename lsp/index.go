package lsp

import (
	"context"
	"time"

	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
)

// The store's index, as the server uses it: while the first indexing pass
// runs, listing queries are answered from a partial snapshot
// (partialSource), unknown-session is not reported, and open documents are
// rediagnosed when the pass ends.

// Source is what the server reads a session store through: an index that
// tracks the store's changes (sessionstore.Indexed; tests wrap one).
type Source interface {
	reference.Index
	reference.ChangeTracker
	// Version returns the version of the transcript a read of session id
	// loads now, after revalidating like a query; ok is false when no
	// answer about the session may be kept (sessionstore.Indexed.Version).
	// Answers derived from a read are memoized under it.
	Version(ctx context.Context, id string) (v string, ok bool)
	// SurfaceSummary sizes a session's surface from the index alone, so a
	// hover needs no read; ok is false when the index cannot answer
	// exactly that way (sessionstore.Indexed.SurfaceSummary).
	SurfaceSummary(ctx context.Context, id string) (*reference.SurfaceSummary, bool)
}

// The default source.
var _ Source = (*sessionstore.Indexed)(nil)

// indexing reports whether env's source is still in its first indexing
// pass (its listing is partial).
func (env *environment) indexing() bool {
	return !env.source.Complete()
}

// currentListing returns the service to answer listing queries with,
// whether its answer is partial and how many sessions a partial answer
// lists: while the index's first pass runs, a service over a snapshot of
// what is indexed so far (listing and titles from memory: no log is read,
// so completion answers at once); afterwards the index's own service.
func (env *environment) currentListing() (svc *reference.Service, partial bool, listed int) {
	if !env.indexing() {
		return env.service, false, 0
	}
	listing, titles, complete := env.source.Partial()
	if complete {
		return env.service, false, 0
	}
	snap := &partialSource{Source: env.source, listing: listing, titles: titles}
	svc, err := reference.NewService(snap, env.config)
	if err != nil { // env.config was validated when env was built
		return env.service, false, 0
	}
	return svc, true, len(listing)
}

// waitIndexed waits until env's index has finished its first pass, or ctx
// is done.
func waitIndexed(ctx context.Context, env *environment) error {
	return env.source.Wait(ctx)
}

// currentAfterGrace is currentListing, but while the partial index lists
// no session yet it waits (polling every poll, at most grace, cancellably)
// for the first pass to end or to publish some sessions.
func (env *environment) currentAfterGrace(ctx context.Context, grace, poll time.Duration) (*reference.Service, bool, error) {
	deadline := time.Now().Add(grace)
	for {
		svc, partial, n := env.currentListing()
		if !partial || n > 0 || !time.Now().Before(deadline) {
			return svc, partial, nil
		}
		select {
		case <-ctx.Done():
			return nil, false, ctx.Err()
		case <-time.After(poll):
		}
	}
}

// rediagnoseWhenIndexed reschedules the diagnostics of every open
// document when env's first indexing pass finishes (unknown-session is not
// reported before: see knownSessions). Nothing to do once it has finished.
func (s *Server) rediagnoseWhenIndexed(env *environment) {
	if !env.indexing() {
		return
	}
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		if env.source.Wait(s.ctx) == nil {
			s.rediagnoseAll()
		}
	}()
}

// partialSource answers ListSessions and ReadTitles from a snapshot of a
// partial index; ReadSurface goes to the index.
type partialSource struct {
	reference.Source
	listing []reference.SessionHeader
	titles  map[string]reference.TitleResult
}

// ListSessions returns the snapshot's listing (newest first).
func (p *partialSource) ListSessions(ctx context.Context) ([]reference.SessionHeader, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return p.listing, nil
}

// ReadTitles returns the snapshot's titles; an id it does not list (not
// indexed yet) has no title.
func (p *partialSource) ReadTitles(ctx context.Context, ids []string) ([]reference.TitleResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	seen := make(map[string]bool, len(ids))
	out := make([]reference.TitleResult, 0, len(ids))
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		r, ok := p.titles[id]
		if !ok {
			r = reference.TitleResult{SessionID: id}
		}
		out = append(out, r)
	}
	return out, nil
}
