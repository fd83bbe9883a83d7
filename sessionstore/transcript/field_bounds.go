package transcript

import (
	"errors"
	"fmt"
)

// Size bounds on the session fields the index keeps, persists in its
// cache and sends in every listing (titles, header ids and cwds). dsh
// itself bounds none of them on read: it normalises titles on write (one
// line, a UTF-8 byte cap far below these), and real cwds are paths the
// kernel accepts. A field over its bound is hostile or corrupt; keeping it
// whole would let a few KB of zstd (a 100 MiB title compresses to 10 KB)
// scale the index, the cache file and every completion response, and
// cutting it would break the answers that must equal dsh's (the
// dsh/candidates label and mention, the query match on titles). So the
// session fails instead, with its own error matching ErrFieldLimit: a
// title over the bound fails the title read (the session is listed under
// its id, as dsh lists a session whose title read is rejected); a header
// over a bound is not listed and is reported like any malformed header.
const (
	// MaxTitleBytes bounds a title (its UTF-8 bytes).
	MaxTitleBytes = 4 << 10
	// maxTitleEventBytes bounds the JSON data of a session/title event
	// the fold keeps (the title, its messageSeqs and source).
	maxTitleEventBytes = 64 << 10
	// MaxCWDBytes bounds a header cwd: PATH_MAX, the longest path a
	// working directory can have on Linux.
	MaxCWDBytes = 4 << 10
	// MaxHeaderLineBytes bounds a whole header line (id, cwd, parent and
	// preset ids, unknown keys), which the index keeps and persists. A
	// session id is one path component once escaped (at most 255 bytes on
	// common file systems), so only a hostile header comes near it.
	MaxHeaderLineBytes = 16 << 10
)

// ErrFieldLimit is the cause of a session (or its title) refused because
// a field is larger than its bound (MaxTitleBytes, MaxCWDBytes,
// MaxHeaderLineBytes). The error's Kind is KindUnsupported: the log may be
// well-formed, dsh-lsp does not serve it.
var ErrFieldLimit = errors.New("session field over its size bound")

// fieldLimitf is a field refused by its bound.
func fieldLimitf(format string, args ...any) *Error {
	return &Error{Kind: KindUnsupported, Err: ErrFieldLimit, Msg: fmt.Sprintf(format, args...)}
}

// titleTooLarge is the error of a session/title event whose data or title
// is n bytes, over bound.
func titleTooLarge(seq int64, what string, n, bound int) *Error {
	return fieldLimitf("event %d: the session/title %s is %d bytes, more than dsh-lsp's bound of %d bytes", seq, what, n, bound)
}
