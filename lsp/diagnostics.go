package lsp

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/dsh-lsp/dsh-lsp/diagnostics"
	"github.com/dsh-lsp/dsh-lsp/lsp/wire"
	"github.com/dsh-lsp/dsh-lsp/reference"
)

// diagnosticsScheduler debounces diagnostics per document.
type diagnosticsScheduler struct {
	mu      sync.Mutex
	timers  map[string]*time.Timer
	stopped bool
}

// schedule runs f after delay, replacing a pending run for uri.
func (d *diagnosticsScheduler) schedule(uri string, delay time.Duration, wg *sync.WaitGroup, f func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopped {
		return
	}
	if d.timers == nil {
		d.timers = make(map[string]*time.Timer)
	}
	if t, ok := d.timers[uri]; ok && t.Stop() {
		wg.Done() // the replaced run will never happen
	}
	wg.Add(1)
	var t *time.Timer
	t = time.AfterFunc(delay, func() {
		defer wg.Done()
		d.mu.Lock()
		if d.timers[uri] == t {
			delete(d.timers, uri)
		}
		stopped := d.stopped
		d.mu.Unlock()
		if !stopped {
			f()
		}
	})
	d.timers[uri] = t
}

// cancel drops a pending run for uri.
func (d *diagnosticsScheduler) cancel(uri string, wg *sync.WaitGroup) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if t, ok := d.timers[uri]; ok {
		delete(d.timers, uri)
		if t.Stop() {
			wg.Done()
		}
	}
}

// stopAll stops scheduling and drops pending runs.
func (d *diagnosticsScheduler) stopAll(wg *sync.WaitGroup) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stopped = true
	for uri, t := range d.timers {
		delete(d.timers, uri)
		if t.Stop() {
			wg.Done()
		}
	}
}

// scheduleDiagnostics computes and publishes uri's diagnostics after the
// debounce delay.
func (s *Server) scheduleDiagnostics(uri string) {
	s.diag.schedule(uri, s.opts.DiagnosticsDelay, &s.bg, func() { s.publishDiagnostics(uri) })
}

// rediagnoseAll reschedules every open document (settings changed).
func (s *Server) rediagnoseAll() {
	s.rediagnoseAfter(s.opts.DiagnosticsDelay)
}

// rediagnoseAfter reschedules every open document after delay.
func (s *Server) rediagnoseAfter(delay time.Duration) {
	s.mu.Lock()
	uris := make([]string, 0, len(s.docs))
	for u := range s.docs {
		uris = append(uris, u)
	}
	s.mu.Unlock()
	for _, u := range uris {
		s.diag.schedule(u, delay, &s.bg, func() { s.publishDiagnostics(u) })
	}
}

// publishDiagnostics computes and sends the diagnostics of uri now.
func (s *Server) publishDiagnostics(uri string) {
	snap, ok := s.snapshot(uri)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
	defer cancel()
	diags := diagnostics.ToLSP(s.findings(ctx, snap), snap.mapper)
	// Do not publish for an outdated version: a newer run is scheduled.
	if !s.isCurrent(uri, snap) {
		return
	}
	v := snap.version
	s.notify("textDocument/publishDiagnostics", wire.PublishDiagnosticsParams{URI: uri, Version: &v, Diagnostics: diags})
}

// findings checks a snapshot's text.
func (s *Server) findings(ctx context.Context, snap docSnapshot) []diagnostics.Finding {
	env := diagnostics.Env{Target: snap.target, MaxReferences: snap.config.MaxReferences}
	if known, err := s.knownSessions(ctx, snap.env); err == nil {
		env.Known = known
	} else {
		s.logger.Warn("listing sessions for diagnostics failed", "error", err)
	}
	return diagnostics.Check(snap.mapper.Content, env)
}

// knownSessions reports which session ids the store lists, from the
// index's catalog (one revalidation; the catalog answers from the index's
// own lookup of its listing); nil (no unknown-session check) while the
// store is first indexed.
func (s *Server) knownSessions(ctx context.Context, env *environment) (func(id string) bool, error) {
	if env.indexing() {
		// The listing is partial: a session not indexed yet is not
		// unknown. Checked when the first pass ends (rediagnoseAll).
		return nil, nil
	}
	cat, err := env.source.Catalog(ctx)
	switch {
	case errors.Is(err, reference.ErrCatalogUnavailable):
		// No snapshot now (a source may refuse one): list instead.
		headers, err := env.source.ListSessions(ctx)
		if err != nil {
			return nil, err
		}
		return diagnostics.KnownIDs(headers), nil
	case err != nil:
		return nil, err
	}
	return cat.Known, nil
}

// titleOf reads one session's latest title (nil when none or unreadable).
func titleOf(ctx context.Context, src reference.Source, id string) *string {
	res, err := src.ReadTitles(ctx, []string{id})
	if err != nil || len(res) == 0 || res[0].Err != nil {
		return nil
	}
	return res[0].Title
}
