package sessionstore

import (
	"errors"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/transcript"
)

// Kind is the dsh error class of a store failure (transcript.Kind).
type Kind = transcript.Kind

// The error classes a read can fail with (transcript.Kind).
const (
	KindIO          = transcript.KindIO
	KindNotFound    = transcript.KindNotFound
	KindCorrupt     = transcript.KindCorrupt
	KindUnsupported = transcript.KindUnsupported
)

// ErrReadLimit is the cause of a read refused by the read limit
// (transcript.ErrReadLimit).
var ErrReadLimit = transcript.ErrReadLimit

// Sentinel errors matched by errors.Is against an *Error of that kind.
var (
	ErrNotFound    = errors.New("session not found")
	ErrCorrupt     = errors.New("corrupt session")
	ErrUnsupported = errors.New("unsupported session format")
	ErrIO          = errors.New("session store I/O error")
)

// Error is a failure to list or read one session. Its message says what
// failed and where; for KindNotFound it is exactly dsh's
// `session "<id>" not found`.
type Error struct {
	Kind      Kind
	SessionID string
	// Path is the file involved, "" when none (in-memory source, not found).
	Path string
	// Msg describes the failure without the session/path prefix.
	Msg string
	// Err is the underlying cause, if any.
	Err error
	// Backend is set for corruption detected while decoding the file
	// (§3: torn frames, bad records before a turn/end, header-less logs),
	// which dsh reports as a persistence failure.
	Backend bool
}

// Error returns the message, which says which session failed and why.
func (e *Error) Error() string {
	if e.Kind == KindNotFound {
		return "session " + jsjson.Quote(e.SessionID) + " not found"
	}
	s := "session " + jsjson.Quote(e.SessionID)
	if e.Path != "" {
		s += " (" + e.Path + ")"
	}
	s += ": " + e.Kind.String() + ": " + e.Msg
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrNotFound) (and the other sentinels) match by
// kind.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrNotFound:
		return e.Kind == KindNotFound
	case ErrCorrupt:
		return e.Kind == KindCorrupt
	case ErrUnsupported:
		return e.Kind == KindUnsupported
	case ErrIO:
		return e.Kind == KindIO
	}
	return false
}

// Code returns the dsh session-query error code for e.
func (e *Error) Code() string {
	switch {
	case e.Kind == KindNotFound:
		return "SESSION_QUERY_SESSION_NOT_FOUND"
	case e.Kind == KindCorrupt && !e.Backend:
		return "SESSION_QUERY_CORRUPT_SESSION"
	}
	return "SESSION_QUERY_PERSISTENCE_FAILED"
}

func notFound(id string) *Error { return &Error{Kind: KindNotFound, SessionID: id} }

// attach turns a log-level error into a session *Error.
func attach(err error, id, path string) error {
	if err == nil {
		return nil
	}
	var se *Error
	if errors.As(err, &se) {
		return err
	}
	var le *transcript.Error
	if errors.As(err, &le) {
		return &Error{Kind: le.Kind, SessionID: id, Path: path, Msg: le.Msg, Err: le.Err, Backend: le.Backend}
	}
	return &Error{Kind: KindIO, SessionID: id, Path: path, Msg: "read failed", Err: err}
}
