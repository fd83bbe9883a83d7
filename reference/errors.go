package reference

import "errors"

// Code is a stable dsh session-reference error code.
type Code string

// The dsh session-reference error codes (conformance §0).
const (
	CodeInvalidConfig    Code = "SESSION_REFERENCE_INVALID_CONFIG"
	CodeInvalidReference Code = "SESSION_REFERENCE_INVALID_REFERENCE"
	CodeSelfReference    Code = "SESSION_REFERENCE_SELF_REFERENCE"
	CodeTooMany          Code = "SESSION_REFERENCE_TOO_MANY"
	CodeReadFailed       Code = "SESSION_REFERENCE_READ_FAILED"
	CodeBudgetExceeded   Code = "SESSION_REFERENCE_BUDGET_EXCEEDED"
	CodeCancelled        Code = "SESSION_REFERENCE_CANCELLED"
)

// Error is a SessionReferenceError: a failure with a dsh code and the exact
// dsh message.
type Error struct {
	Code    Code
	Message string
	// Err is the underlying cause, if any (for example a store read error).
	Err error
}

// Error returns the exact dsh message (without the code).
func (e *Error) Error() string { return e.Message }

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// newError returns an *Error. Messages are exact dsh text, so callers build
// them literally rather than through a format string.
func newError(code Code, message string, cause error) *Error {
	return &Error{Code: code, Message: message, Err: cause}
}

// CodeOf returns the dsh code carried by err, or "" when err is not (and
// does not wrap) an *Error.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}
