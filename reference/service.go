package reference

import "context"

// Target is the agent preparing a message: its own session (excluded from
// candidates, rejected as a self-reference) and its cwd (same-cwd ranking).
type Target struct {
	SessionID *string `json:"sessionId,omitempty"`
	CWD       *string `json:"cwd,omitempty"`
}

// isSelf reports whether id is the target's own session.
func (t Target) isSelf(id string) bool { return t.SessionID != nil && *t.SessionID == id }

// Service is the session-reference service over a Source: candidate
// discovery and preparation of referenced sessions, as dsh's
// session-reference service does. It is safe for concurrent use.
type Service struct {
	source Source
	config Config
	// lowered memoizes lowerJS of the ids, cwds and titles that candidate
	// queries filter, so a new query does not lowercase them all again.
	lowered *lowerMemo
}

// NewService validates cfg and returns a service reading from src.
func NewService(src Source, cfg Config) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Service{source: src, config: cfg, lowered: &lowerMemo{}}, nil
}

// Config returns the service's configuration.
func (s *Service) Config() Config { return s.config }

// errCancelled is dsh's CANCELLED error; cause is the context error.
func errCancelled(cause error) *Error {
	return newError(CodeCancelled, "session reference preparation was cancelled", cause)
}

// await runs f in its own goroutine and returns its result, or ctx's error
// as soon as ctx is done while f is still running: a cancelled request never
// waits for a slow store. f must honour ctx so the goroutine ends soon after.
func await[T any](ctx context.Context, f func() (T, error)) (T, error) {
	type result struct {
		value T
		err   error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.value, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}
