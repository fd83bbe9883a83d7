package sessionstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/dsh-lsp/dsh-lsp/reference"
)

// catalogCache holds the Indexed's current reference.Catalog, shared
// read-only by every query until the listing is rebuilt.
type catalogCache struct {
	// build makes concurrent queries after a change build one snapshot.
	build sync.Mutex
	snap  atomic.Pointer[catalogSnap]
}

// catalogSnap is a catalog and the index generation it was built from.
type catalogSnap struct {
	gen uint64
	cat *reference.Catalog
}

var _ reference.CatalogSource = (*Indexed)(nil)

// Catalog implements reference.CatalogSource: the listing and every listed
// session's title result as one immutable snapshot, rebuilt only after the
// listing changed, so a completion query neither copies the listing nor
// looks up 10,000 titles. During the first indexing pass it returns an
// error wrapping reference.ErrCatalogUnavailable.
func (ix *Indexed) Catalog(ctx context.Context) (*reference.Catalog, error) {
	if err := ix.query(ctx); err != nil {
		return nil, err
	}
	return ix.catalogNow(ctx)
}

// catalogNow returns the catalog of the index as it is, building it when
// the listing changed since the last one.
func (ix *Indexed) catalogNow(ctx context.Context) (*reference.Catalog, error) {
	if cat, err := ix.currentCatalog(); cat != nil || err != nil {
		return cat, err
	}
	ix.catalog.build.Lock()
	defer ix.catalog.build.Unlock()
	if cat, err := ix.currentCatalog(); cat != nil || err != nil {
		return cat, err
	}
	snap, err := ix.buildCatalog(ctx)
	if err != nil {
		return nil, err
	}
	if old := ix.catalog.snap.Load(); old != nil {
		// A live session changes one title at a time: derive the search
		// index from the last one's.
		snap.cat.Follows(old.cat)
	}
	ix.catalog.snap.Store(snap)
	return snap.cat, nil
}

// currentCatalog returns the cached catalog when it is of the current
// generation, else nil. During the first pass it returns the error that
// makes reference.ListCandidates fall back to ListSessions and ReadTitles.
func (ix *Indexed) currentCatalog() (*reference.Catalog, error) {
	ix.mu.RLock()
	complete, gen := ix.complete, ix.gen
	ix.mu.RUnlock()
	if !complete {
		return nil, fmt.Errorf("index of %s: first indexing pass still running: %w", ix.root, reference.ErrCatalogUnavailable)
	}
	if s := ix.catalog.snap.Load(); s != nil && s.gen == gen {
		return s.cat, nil
	}
	return nil, nil
}

// buildCatalog takes the listing and the titles ReadTitles would answer
// for it, with the generation they belong to.
func (ix *Indexed) buildCatalog(ctx context.Context) (*catalogSnap, error) {
	ix.mu.RLock()
	gen := ix.gen
	// The listing slice is replaced, never modified, by rebuildListing.
	headers := ix.listing
	ids := make([]string, len(headers))
	for i := range headers {
		ids[i] = headers[i].ID
	}
	titles, unindexed := ix.indexedTitles(ids)
	ix.mu.RUnlock()
	if err := ix.titlesOnDemand(ctx, titles, unindexed); err != nil {
		return nil, err
	}
	return &catalogSnap{gen: gen, cat: &reference.Catalog{Headers: headers, Titles: titles}}, nil
}

// warmCatalog rebuilds the catalog after a background refresh, when
// queries use catalogs, so the next query does not pay for it.
func (ix *Indexed) warmCatalog() {
	if ix.catalog.snap.Load() != nil {
		ix.prepareCatalog()
	}
}

// prepareCatalog builds the catalog of a complete index and its search
// data (reference.Catalog.Prepare: lowered strings, trigram index) ahead
// of queries, without revalidating. Run in the background once a loaded
// cache or the first pass has made the index complete, it spares the
// first queries after a restart building the catalog (about 0.15 s at
// 100,000 sessions) and scanning every session while its trigram index
// builds (about 0.3-0.6 s more). A one-shot reader (Snapshot) skips it:
// its one query would only compete with it for the CPU.
func (ix *Indexed) prepareCatalog() {
	if ix.opts.Snapshot || ix.isClosed() {
		return
	}
	cat, err := ix.catalogNow(context.Background())
	if err == nil {
		err = cat.Prepare()
	}
	if err != nil && !errors.Is(err, reference.ErrCatalogUnavailable) {
		ix.logf("sessionstore: session catalog of %s: %v", ix.root, err)
	}
}
