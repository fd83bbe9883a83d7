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

// ErrNotFound matches, by errors.Is, an *Error of KindNotFound.
var ErrNotFound = errors.New("session not found")

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
}

// Error returns the message, which says which session failed and why.
func (e *Error) Error() string {
	s := "session " + jsjson.Quote(e.SessionID)
	if e.Kind == KindNotFound {
		return s + " not found"
	}
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

// Is makes errors.Is(err, ErrNotFound) match by kind.
func (e *Error) Is(target error) bool { return target == ErrNotFound && e.Kind == KindNotFound }

func notFound(id string) *Error { return &Error{Kind: KindNotFound, SessionID: id} }

// unreadable is the error of a transcript that cannot be opened or read.
func unreadable(err error) error {
	return &transcript.Error{Kind: KindIO, Msg: "cannot read transcript", Err: err}
}

// attach turns a log-level error into a session *Error.
func attach(err error, id, path string) error {
	var se *Error
	if err == nil || errors.As(err, &se) {
		return err
	}
	var le *transcript.Error
	if errors.As(err, &le) {
		return &Error{Kind: le.Kind, SessionID: id, Path: path, Msg: le.Msg, Err: le.Err}
	}
	return &Error{Kind: KindIO, SessionID: id, Path: path, Msg: "read failed", Err: err}
}
