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
		ctx := s.ctx
		token := ""
		if withProgress {
			token = fmt.Sprintf("dsh-lsp/index/%d", progressTokens.Add(1))
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			_, err := s.conn.Call(cctx, "window/workDoneProgress/create", protocol.WorkDoneProgressCreateParams{Token: protocol.String(token)}, nil)
			cancel()
			if err != nil {
				s.logger.Debug("workDoneProgress/create refused", "error", err)
				token = ""
			}
		}
		if token != "" {
			no, msg := false, "indexing dsh sessions in "+env.root
			s.progressNotify(token, &protocol.WorkDoneProgressBegin{Kind: "begin", Title: "dsh-lsp", Cancellable: &no, Message: &msg})
			var mu sync.Mutex
			last := time.Time{}
			report := func(done, total int) {
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
			s.progress.Store(&report)
			defer s.progress.Store(nil)
		}
		start := time.Now()
		var err error
		if err = env.source.Wait(ctx); err == nil {
			// Unknown-session checks were off while the listing was
			// partial: check open documents against the whole.
			s.rediagnoseAll()
		}
		msg := ""
		headers, lerr := env.source.ListSessions(ctx)
		if err == nil {
			err = lerr
		}
		if err == nil {
			msg = fmt.Sprintf("%d sessions indexed", len(headers))
		}
		if err != nil {
			msg = "indexing failed: " + err.Error()
			s.logger.Warn("indexing the session store failed", "root", env.root, "error", err)
		} else {
			s.logger.Info("session store indexed", "root", env.root, "sessions", len(headers), "elapsed", time.Since(start))
		}
		if token != "" {
			end := &protocol.WorkDoneProgressEnd{Kind: "end"}
			if msg != "" {
				end.Message = &msg
			}
			s.progressNotify(token, end)
		}
	}()
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
