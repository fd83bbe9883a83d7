package lsp

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dsh-lsp/dsh-lsp/lsp/protocol"
	"github.com/dsh-lsp/dsh-lsp/reference"
)

var progressTokens atomic.Int64

// indexWaiter is a source that indexes in the background
// (sessionstore.Indexed).
type indexWaiter interface {
	Wait(ctx context.Context) error
	Complete() bool
}

// partialIndexer is an indexWaiter that can show what it has indexed so
// far without reading logs (sessionstore.Indexed.Partial).
type partialIndexer interface {
	indexWaiter
	Partial() (listing []reference.SessionHeader, titles map[string]reference.TitleResult, complete bool)
}

// indexing reports whether env's source is still in its first indexing
// pass (its listing is partial).
func (env *environment) indexing() bool {
	w, ok := env.source.(indexWaiter)
	return ok && !w.Complete()
}

// current returns the service to answer listing queries with and whether
// its answer is partial: while the index's first pass runs, a service over
// a snapshot of what is indexed so far (listing and titles from memory:
// no log is read, so completion answers at once); afterwards the index's
// own service.
func (env *environment) current() (svc *reference.Service, partial bool) {
	svc, partial, _ = env.currentListing()
	return svc, partial
}

// currentListing is current, also returning how many sessions a partial
// answer lists.
func (env *environment) currentListing() (svc *reference.Service, partial bool, listed int) {
	p, ok := env.source.(partialIndexer)
	if !ok || p.Complete() {
		return env.service, false, 0
	}
	listing, titles, complete := p.Partial()
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

// waitIndexed waits until env's index (if any) has finished its first
// pass, or ctx is done.
func waitIndexed(ctx context.Context, env *environment) error {
	if w, ok := env.source.(indexWaiter); ok && !w.Complete() {
		return w.Wait(ctx)
	}
	return nil
}

// currentAfterGrace is current, but while the partial index lists no
// session yet it waits (polling every poll, at most grace, cancellably)
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

// Catalog refuses (reference.ErrCatalogUnavailable), so that queries use
// this snapshot's ListSessions and ReadTitles rather than the catalog of
// the index it embeds, which may have completed since the snapshot.
func (p *partialSource) Catalog(context.Context) (*reference.Catalog, error) {
	return nil, reference.ErrCatalogUnavailable
}

// rediagnoseWhenIndexed reschedules the diagnostics of every open
// document when env's first indexing pass finishes (unknown-session is not
// reported before: see knownSessions). Nothing to do for a complete source.
func (s *Server) rediagnoseWhenIndexed(env *environment) {
	w, ok := env.source.(indexWaiter)
	if !ok || w.Complete() {
		return
	}
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		if w.Wait(s.ctx) == nil {
			s.rediagnoseAll()
		}
	}()
}

// startIndexing waits in the background for the store's first indexing
// pass (or, for a plain store, loads the listing and titles once to warm
// it), reporting window/workDoneProgress when the client supports it.
func (s *Server) startIndexing() {
	s.mu.Lock()
	env := s.env
	withProgress := s.caps.workDoneProgress
	s.mu.Unlock()
	s.rediagnoseOnChange(env)
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		ctx := s.ctx
		token := ""
		if withProgress {
			token = fmt.Sprintf("dsh-lsp/index/%d", progressTokens.Add(1))
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			_, err := s.conn.Call(cctx, "window/workDoneProgress/create", protocol.WorkDoneProgressCreateParams{Token: token}, nil)
			cancel()
			if err != nil {
				s.logger.Debug("workDoneProgress/create refused", "error", err)
				token = ""
			}
		}
		if token != "" {
			s.notify("$/progress", protocol.ProgressParams{Token: token, Value: protocol.WorkDoneProgressBegin{
				Kind: "begin", Title: "dsh-lsp", Message: "indexing dsh sessions in " + env.root}})
			var mu sync.Mutex
			last := time.Time{}
			report := func(done, total int) {
				mu.Lock()
				defer mu.Unlock()
				if time.Since(last) < 200*time.Millisecond && done < total {
					return
				}
				last = time.Now()
				pct := 0
				if total > 0 {
					pct = done * 100 / total
				}
				s.notify("$/progress", protocol.ProgressParams{Token: token, Value: protocol.WorkDoneProgressReport{
					Kind: "report", Message: fmt.Sprintf("%d/%d sessions", done, total), Percentage: &pct}})
			}
			s.progress.Store(&report)
			defer s.progress.Store(nil)
		}
		start := time.Now()
		var err error
		if w, ok := env.source.(indexWaiter); ok {
			if err = w.Wait(ctx); err == nil {
				// Unknown-session checks were off while the listing
				// was partial: check open documents against the whole.
				s.rediagnoseAll()
			}
		}
		msg := ""
		headers, lerr := env.source.ListSessions(ctx)
		if err == nil {
			err = lerr
		}
		if err == nil {
			if _, ok := env.source.(indexWaiter); !ok {
				ids := make([]string, len(headers))
				for i, h := range headers {
					ids[i] = h.ID
				}
				_, err = env.source.ReadTitles(ctx, ids)
			}
			msg = fmt.Sprintf("%d sessions indexed", len(headers))
		}
		if err != nil {
			msg = "indexing failed: " + err.Error()
			s.logger.Warn("indexing the session store failed", "root", env.root, "error", err)
		} else {
			s.logger.Info("session store indexed", "root", env.root, "sessions", len(headers), "elapsed", time.Since(start))
		}
		if token != "" {
			s.notify("$/progress", protocol.ProgressParams{Token: token, Value: protocol.WorkDoneProgressEnd{Kind: "end", Message: msg}})
		}
	}()
}
