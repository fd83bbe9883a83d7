package transcript

import (
	"errors"
	"fmt"
)

// Size bounds on the fields the index keeps, persists and lists. dsh bounds
// none on read, but a field over them is hostile (a 100 MiB title is 10 KB
// of zstd) and cutting it would break the answers that must equal dsh's,
// so the session (or its title) fails with ErrFieldLimit instead.
const (
	// MaxTitleBytes bounds a title (its UTF-8 bytes).
	MaxTitleBytes = 4 << 10
	// maxTitleEventBytes bounds the data of the title event the fold keeps.
	maxTitleEventBytes = 64 << 10
	// MaxCWDBytes bounds a header cwd: Linux's PATH_MAX.
	MaxCWDBytes = 4 << 10
	// MaxHeaderLineBytes bounds a whole header line, far above any real
	// one (an id is one path component).
	MaxHeaderLineBytes = 16 << 10
)

// ErrFieldLimit is the cause (Kind KindUnsupported) of a session or title
// refused because a field is over its bound.
var ErrFieldLimit = errors.New("session field over its size bound")

// fieldLimitf is a field refused by its bound.
func fieldLimitf(format string, args ...any) *Error {
	return &Error{Kind: KindUnsupported, Err: ErrFieldLimit, Msg: fmt.Sprintf(format, args...)}
}

// titleTooLarge is the error of a title event's data or title over bound.
func titleTooLarge(seq int64, what string, n, bound int) *Error {
	return fieldLimitf("event %d: the session/title %s is %d bytes, more than dsh-lsp's bound of %d bytes", seq, what, n, bound)
}
