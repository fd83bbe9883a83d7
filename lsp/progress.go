package lsp

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.lsp.dev/protocol"
)

var progressTokens atomic.Int64

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
		token := ""
		if withProgress {
			token = s.createProgress(s.ctx)
		}
		if token != "" {
			s.beginProgress(token, env.root)
			defer s.progress.Store(nil)
		}
		msg := s.indexOnce(s.ctx, env)
		if token != "" {
			s.progressNotify(token, &protocol.WorkDoneProgressEnd{Kind: "end", Message: &msg})
		}
	}()
}

// createProgress asks the client for a progress token; "" when it
// refuses or does not answer within 5 s.
func (s *Server) createProgress(ctx context.Context) string {
	token := fmt.Sprintf("dsh-lsp/index/%d", progressTokens.Add(1))
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err := s.conn.Call(cctx, "window/workDoneProgress/create", protocol.WorkDoneProgressCreateParams{Token: protocol.String(token)}, nil)
	if err != nil {
		s.logger.Debug("workDoneProgress/create refused", "error", err)
		return ""
	}
	return token
}

// beginProgress sends the begin value for indexing root and installs the
// reporter the index's passes call.
func (s *Server) beginProgress(token, root string) {
	no, msg := false, "indexing dsh sessions in "+root
	s.progressNotify(token, &protocol.WorkDoneProgressBegin{Kind: "begin", Title: "dsh-lsp", Cancellable: &no, Message: &msg})
	report := s.progressReporter(token)
	s.progress.Store(&report)
}

// progressReporter returns a reporter of done/total sessions that sends at
// most one report per 200 ms, and always the last one.
func (s *Server) progressReporter(token string) func(done, total int) {
	var mu sync.Mutex
	last := time.Time{}
	return func(done, total int) {
		mu.Lock()
		defer mu.Unlock()
		if time.Since(last) < 200*time.Millisecond && done < total {
			return
		}
		last = time.Now()
		pct := uint32(0)
		if total > 0 {
			pct = uint32(done * 100 / total)
		}
		msg := fmt.Sprintf("%d/%d sessions", done, total)
		s.progressNotify(token, &protocol.WorkDoneProgressReport{Kind: "report", Message: &msg, Percentage: &pct})
	}
}

// indexOnce waits for env's first indexing pass (a plain store: lists it
// and reads every title once), logs the outcome and returns it as the
// progress end message.
func (s *Server) indexOnce(ctx context.Context, env *environment) string {
	start := time.Now()
	err := env.source.Wait(ctx)
	if err == nil {
		// Unknown-session checks were off while the listing was
		// partial: check open documents against the whole.
		s.rediagnoseAll()
	}
	headers, lerr := env.source.ListSessions(ctx)
	if err == nil {
		err = lerr
	}
	if err != nil {
		s.logger.Warn("indexing the session store failed", "root", env.root, "error", err)
		return "indexing failed: " + err.Error()
	}
	s.logger.Info("session store indexed", "root", env.root, "sessions", len(headers), "elapsed", time.Since(start))
	return fmt.Sprintf("%d sessions indexed", len(headers))
}

// progressNotify sends one $/progress value (begin, report or end).
func (s *Server) progressNotify(token string, value any) {
	v, err := protocol.Marshal(value)
	if err != nil {
		s.logger.Debug("progress value not encoded", "error", err)
		return
	}
	s.notify("$/progress", &protocol.ProgressParams{Token: protocol.String(token), Value: v})
}
