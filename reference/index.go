package reference

import "context"

// Index is what a session source that indexes the store in the background
// (sessionstore.Indexed) offers beyond Source: waiting for its first pass,
// a partial snapshot while that pass runs, and a Catalog once it is done.
// Front ends hold a source as an Index when it is one (the LSP server
// decides once, when it opens a store) instead of probing for each
// ability separately.
type Index interface {
	CatalogSource
	// Complete reports whether the first indexing pass has finished: from
	// then on ListSessions and ReadTitles answer for the whole store.
	Complete() bool
	// Wait blocks until the first pass has finished (nil) or ctx is done
	// (ctx's error).
	Wait(ctx context.Context) error
	// Partial returns what is indexed so far, without reading any log: the
	// listing (newest first; a session whose title needs a full read is
	// left out), the title of each listed session, and whether the first
	// pass had finished when the snapshot was taken (then the caller should
	// use the source itself).
	Partial() (listing []SessionHeader, titles map[string]TitleResult, complete bool)
}

// ChangeTracker is a source that tracks the store's changes
// (sessionstore.Indexed): a front end caches what it derived from the
// listing per generation and re-publishes what it showed unasked when the
// generation moves. A source that is none is answered with time-to-live
// caches instead.
type ChangeTracker interface {
	// Fresh revalidates the source as a query would and returns the
	// generation of the listing it answers from: equal generations mean
	// equal ListSessions and ReadTitles answers.
	Fresh(ctx context.Context) (uint64, error)
	// Changed returns a channel closed at the next generation.
	Changed() <-chan struct{}
}
