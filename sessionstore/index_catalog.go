package sessionstore

import (
	"context"
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
	early := ix.servedFirst()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !early {
		if err := ix.query(ctx); err != nil {
			return nil, err
		}
	}
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
	if early {
		snap.cat.Verify = ix.verifyServed
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
	if ix.catalog.snap.Load() == nil {
		return
	}
	if cat, err := ix.Catalog(context.Background()); err == nil {
		if err := cat.Prepare(); err != nil {
			ix.logf("sessionstore: session catalog of %s: %v", ix.root, err)
		}
	}
}
