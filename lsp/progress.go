package lsp

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/dsh-lsp/dsh-lsp/lsp/protocol"
)

var progressTokens atomic.Int64

// startIndexing loads the store listing and titles once in the background
// (warming the store's caches before the first completion), reporting
// window/workDoneProgress when the client supports it.
func (s *Server) startIndexing() {
	s.mu.Lock()
	env := s.env
	withProgress := s.caps.workDoneProgress
	s.mu.Unlock()
	if env == nil {
		return
	}
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
		}
		start := time.Now()
		msg := ""
		headers, err := env.source.ListSessions(ctx)
		if err == nil {
			ids := make([]string, len(headers))
			for i, h := range headers {
				ids[i] = h.ID
			}
			_, err = env.source.ReadTitles(ctx, ids)
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
