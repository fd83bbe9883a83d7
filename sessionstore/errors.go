package sessionstore

import (
	"errors"
	"fmt"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
)

// Kind is the dsh error class of a store failure (session-query's error
// codes, spec §4 "Error mapping").
type Kind int

// The error classes a read can fail with.
const (
	// KindIO is a backend I/O failure (SESSION_QUERY_PERSISTENCE_FAILED).
	KindIO Kind = iota + 1
	// KindNotFound means the id is not listed (SESSION_QUERY_SESSION_NOT_FOUND).
	KindNotFound
	// KindCorrupt is a validation failure of a stored log
	// (SESSION_QUERY_CORRUPT_SESSION): bad header, seq gap before a turn/end,
	// malformed record, invalid surface op, malformed legacy record, ...
	KindCorrupt
	// KindUnsupported is a log dsh refuses to read without calling it
	// corrupt: a foreign format version or an unknown non-ignorable event
	// type (SessionFormatUnsupportedError).
	KindUnsupported
)

// String returns the error class name (not found, corrupt, unsupported, I/O).
func (k Kind) String() string {
	switch k {
	case KindIO:
		return "I/O error"
	case KindNotFound:
		return "not found"
	case KindCorrupt:
		return "corrupt session"
	case KindUnsupported:
		return "unsupported session format"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Sentinel errors matched by errors.Is against an *Error of that kind.
var (
	ErrNotFound    = errors.New("session not found")
	ErrCorrupt     = errors.New("corrupt session")
	ErrUnsupported = errors.New("unsupported session format")
	ErrIO          = errors.New("session store I/O error")
	// ErrReadLimit is the cause of a read refused because the session
	// would hold more decoded bytes than the store's read limit
	// (Options.ReadLimit, IndexOptions.ReadLimit): a zstd frame (complete
	// or torn), a raw line, a header over 1 MiB, or a whole-log load. The
	// error's Kind is KindIO (dsh's SESSION_QUERY_PERSISTENCE_FAILED).
	ErrReadLimit = errors.New("read limit exceeded")
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

// logError is a failure found while decoding or validating a log, before
// the session id / path are attached.
type logError struct {
	kind Kind
	msg  string
	err  error
	// backend marks corruption found by the backend read (§3) rather than
	// by validation (§4).
	backend bool
}

func (e *logError) Error() string {
	if e.err != nil {
		return e.msg + ": " + e.err.Error()
	}
	return e.msg
}

func (e *logError) Unwrap() error { return e.err }

func corruptf(format string, args ...any) *logError {
	return &logError{kind: KindCorrupt, msg: fmt.Sprintf(format, args...)}
}

// limitf is a read refused by the read limit: what says what would have
// exceeded it.
func limitf(limit int64, format string, args ...any) *logError {
	return &logError{kind: KindIO, backend: true, err: ErrReadLimit,
		msg: fmt.Sprintf(format, args...) + " (the read limit is " + sizeString(limit) + "; raise it with --max-read-mb, " + readLimitEnv + " or IndexOptions.ReadLimit)"}
}

// sizeString writes n bytes as MiB when whole, else as bytes.
func sizeString(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

func unsupportedf(format string, args ...any) *logError {
	return &logError{kind: KindUnsupported, msg: fmt.Sprintf(format, args...)}
}

// attach turns a log-level error into a session *Error.
func attach(err error, id, path string) error {
	if err == nil {
		return nil
	}
	var se *Error
	if errors.As(err, &se) {
		return err
	}
	var le *logError
	if errors.As(err, &le) {
		return &Error{Kind: le.kind, SessionID: id, Path: path, Msg: le.msg, Err: le.err, Backend: le.backend}
	}
	return &Error{Kind: KindIO, SessionID: id, Path: path, Msg: "read failed", Err: err}
}
