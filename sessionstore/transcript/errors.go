package transcript

import (
	"errors"
	"fmt"
)

// Kind is the dsh error class of a store failure (spec §4 "Error mapping").
type Kind int

// The error classes a read can fail with.
const (
	// KindIO is a backend I/O failure (SESSION_QUERY_PERSISTENCE_FAILED).
	KindIO Kind = iota + 1
	// KindNotFound means the id is not listed (SESSION_QUERY_SESSION_NOT_FOUND).
	KindNotFound
	// KindCorrupt is a validation failure of a stored log
	// (SESSION_QUERY_CORRUPT_SESSION).
	KindCorrupt
	// KindUnsupported is a log dsh refuses without calling it corrupt
	// (SessionFormatUnsupportedError).
	KindUnsupported
)

// String returns the error class name (not found, corrupt, unsupported, I/O).
func (k Kind) String() string {
	if k >= KindIO && k <= KindUnsupported {
		return [...]string{"I/O error", "not found", "corrupt session", "unsupported session format"}[k-KindIO]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// ErrReadLimit is the cause (Kind KindIO) of a read refused by the read
// limit: a frame, a line, a header over 1 MiB, or a read's decoded total.
var ErrReadLimit = errors.New("read limit exceeded")

// ReadLimitEnv names the environment variable setting the default read
// limit in MiB.
const ReadLimitEnv = "DSH_LSP_READ_LIMIT_MB"

// Error is a failure found while reading, decoding or validating a
// transcript; package sessionstore attaches the session id and path.
type Error struct {
	Kind Kind
	// Msg says what failed and where (an event's seq, a file offset).
	Msg string
	// Err is the underlying cause, if any.
	Err error
	// Backend marks corruption found by the backend read (§3), which dsh
	// reports as a persistence failure.
	Backend bool
}

// Error returns the message and its cause.
func (e *Error) Error() string {
	if e.Err != nil {
		return e.Msg + ": " + e.Err.Error()
	}
	return e.Msg
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Corruptf is a validation failure of the log (KindCorrupt).
func Corruptf(format string, args ...any) *Error {
	return &Error{Kind: KindCorrupt, Msg: fmt.Sprintf(format, args...)}
}

// Limitf is a read refused by the read limit.
func Limitf(limit int64, format string, args ...any) *Error {
	return &Error{Kind: KindIO, Backend: true, Err: ErrReadLimit,
		Msg: fmt.Sprintf(format, args...) + " (the read limit is " + sizeString(limit) + "; raise it with --max-read-mb, " + ReadLimitEnv + " or IndexOptions.ReadLimit)"}
}

// sizeString writes n bytes as MiB when whole, else as bytes.
func sizeString(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// unsupportedf is a log dsh refuses without calling it corrupt.
func unsupportedf(format string, args ...any) *Error {
	return &Error{Kind: KindUnsupported, Msg: fmt.Sprintf(format, args...)}
}

// SavedError is a read's error as data, which the index persists.
type SavedError struct {
	Kind    Kind
	Msg     string
	Backend bool
	// Limit marks a read-limit failure (the cause is ErrReadLimit).
	Limit bool
}

// SaveError keeps err as data (nil: the zero SavedError).
func SaveError(err error) SavedError {
	if err == nil {
		return SavedError{}
	}
	var le *Error
	if errors.As(err, &le) {
		s := SavedError{Kind: le.Kind, Msg: le.Msg, Backend: le.Backend, Limit: errors.Is(le.Err, ErrReadLimit)}
		if le.Err != nil && !s.Limit {
			s.Msg += ": " + le.Err.Error()
		}
		return s
	}
	return SavedError{Kind: KindIO, Msg: "cannot read transcript: " + err.Error()}
}

// Err returns the kept error, nil for the zero SavedError.
func (s SavedError) Err() error {
	if s.Kind == 0 {
		return nil
	}
	le := &Error{Kind: s.Kind, Msg: s.Msg, Backend: s.Backend}
	if s.Limit {
		le.Err = ErrReadLimit
	}
	return le
}

// backendf is a corruption found by the backend read.
func backendf(format string, args ...any) *Error {
	return &Error{Kind: KindCorrupt, Msg: fmt.Sprintf(format, args...), Backend: true}
}

// markBackend marks a log error as found by the backend read.
func markBackend(err error) error {
	var le *Error
	if errors.As(err, &le) {
		c := *le
		c.Backend = true
		return &c
	}
	return err
}
