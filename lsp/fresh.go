package lsp

import (
	"time"
)

// rediagnoseOnChange re-publishes the diagnostics of every open document
// whenever env's store changes (a session created or deleted makes
// unknown-session disappear or appear without the user typing), while
// env is the current environment.
func (s *Server) rediagnoseOnChange(env *environment) {
	f := env.source
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		ch := f.Changed()
		for {
			select {
			case <-s.ctx.Done():
				return
			case <-env.retired:
				return
			case <-ch:
			}
			ch = f.Changed()
			s.mu.Lock()
			current := s.env == env
			s.mu.Unlock()
			if !current {
				return
			}
			s.rediagnoseAfter(storeChangeDelay)
		}
	}()
}

// storeChangeDelay is the debounce of the diagnostics re-published after
// a store change: short, since no typing is to be waited out (the index
// already groups a write burst into one change).
const storeChangeDelay = 10 * time.Millisecond
