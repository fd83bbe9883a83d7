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

// current returns the source and service to answer listing queries with:
// while the index's first pass runs its listing is partial, so the store
// underneath answers (complete and correct; listing reads headers only);
// afterwards the index does.
func (env *environment) current() (reference.Source, *reference.Service) {
	if w, ok := env.source.(indexWaiter); ok && !w.Complete() && env.plain != nil {
		return env.plainSource, env.plain
	}
	return env.source, env.service
}

// waitIndexed waits until env's index (if any) has finished its first
// pass, or ctx is done.
func waitIndexed(ctx context.Context, env *environment) error {
	if w, ok := env.source.(indexWaiter); ok && !w.Complete() {
		return w.Wait(ctx)
	}
	return nil
}

// startIndexing waits in the background for the store's first indexing
// pass (or, for a plain store, loads the listing and titles once to warm
// it), reporting window/workDoneProgress when the client supports it.
func (s *Server) startIndexing() {
	s.mu.Lock()
	env := s.env
	withProgress := s.caps.workDoneProgress
	s.mu.Unlock()
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
			err = w.Wait(ctx)
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
