package sessionstore

import "github.com/dsh-lsp/dsh-lsp/sessionstore/transcript"

// Size bounds on the session fields the index keeps, persists and lists
// (the reasons are in transcript's field_bounds.go, which enforces them).
const (
	// MaxTitleBytes bounds a title (its UTF-8 bytes).
	MaxTitleBytes = transcript.MaxTitleBytes
	// MaxCWDBytes bounds a header cwd.
	MaxCWDBytes = transcript.MaxCWDBytes
	// MaxHeaderLineBytes bounds a whole header line.
	MaxHeaderLineBytes = transcript.MaxHeaderLineBytes
)

// ErrFieldLimit is the cause of a session (or its title) refused because
// a field is larger than its bound.
var ErrFieldLimit = transcript.ErrFieldLimit
