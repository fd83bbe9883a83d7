package sessionstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/dsh-lsp/dsh-lsp/internal/hugepage"
	"github.com/dsh-lsp/dsh-lsp/internal/parallel"
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
	// entries[i] is the entry the title of session i came from, nil for
	// a title read on demand.
	entries []*entry
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
	return ix.catalogNow(ctx)
}

// catalogNow returns the catalog of the index as it is, building it when
// the listing changed since the last one. The catalog of a loaded cache's
// listing is given the cache's search index (reference.Catalog.
// SearchIndex: taken when it was made from the same sessions and titles).
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
	if ix.unverified() {
		// Taken before the first refresh checked the loaded cache: what
		// it serves is verified (restart.go).
		snap.cat.Verify = ix.verifyServed(snap.entries)
	}
	if snap.gen == ix.cachedGen {
		// Given once: the catalog of this listing is built once.
		snap.cat.SearchIndex, ix.cachedSearchIndex = ix.cachedSearchIndex, nil
	}
	if old := ix.catalog.snap.Load(); old != nil && snap.cat.SearchIndex == nil {
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
// for it, with the generation they belong to. The listing's ids are
// distinct; the listing a cache persisted names the entries that answer
// their own ids, so its catalog needs no id lookup (byid.go).
func (ix *Indexed) buildCatalog(ctx context.Context) (*catalogSnap, error) {
	ix.mu.RLock()
	gen := ix.gen
	// The listing slices are replaced, never modified, by setListing.
	headers, listed, lookup := ix.listing, ix.listed, ix.byID
	loaded := gen == ix.cachedGen
	var titles []reference.TitleResult
	var entries []*entry
	var unindexed []int
	if prev, note := ix.catalog.snap.Load(), ix.swappedAt; prev != nil && note.gen == gen && note.from == prev.gen {
		// Published in place since the last catalog: its titles, but
		// those of the entries swapped (and those read on demand).
		titles, entries = slices.Clone(prev.cat.Titles), slices.Clone(prev.entries)
		for i, e := range entries {
			if e == nil {
				unindexed = append(unindexed, i)
				titles[i] = reference.TitleResult{SessionID: headers[i].ID}
			} else if n := note.swap[e]; n != nil {
				titles[i], entries[i] = n.titleResult(headers[i].ID, ix.root), n
			}
		}
	} else {
		entries = make([]*entry, len(headers))
		if loaded {
			// What a restart's first answer waits for (setListing).
			titles = hugepage.Make[reference.TitleResult](len(headers))
		} else {
			titles = make([]reference.TitleResult, len(headers))
		}
		parallel.Parts(len(headers), parallelEntries, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				id := headers[i].ID
				e := listed[i]
				if !loaded || !e.readByListedID {
					e = ix.titleEntry(id)
				}
				titles[i] = reference.TitleResult{SessionID: id}
				if e != nil {
					titles[i], entries[i] = e.titleResult(id, ix.root), e
				}
			}
		})
		for i, e := range entries {
			if e == nil {
				unindexed = append(unindexed, i)
			}
		}
	}
	ix.mu.RUnlock()
	if err := ix.titlesOnDemand(ctx, titles, unindexed); err != nil {
		return nil, err
	}
	lists := func(id string) bool { return lookup.listed(ix, id) != nil }
	return &catalogSnap{gen: gen, cat: &reference.Catalog{Headers: headers, Titles: titles, Lists: lists}, entries: entries}, nil
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
// builds (0.3-0.7 s more). After a restart the cache's search index
// replaces that build when the sessions and titles are still the same; a
// search index the cache did not hold is then written. A one-shot reader
// (Snapshot) skips it all: its one query would only compete with it for
// the CPU.
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
	if err == nil {
		ix.noteSearchIndex(cat)
	}
}

// noteSearchIndex records whether the cache holds cat's search index, once
// cat is prepared: taken from the cache, it does; built instead (the
// first pass persists before it is built; a persisted one may no longer
// fit), the cache is marked for writing, since without it every restart
// builds it again (0.6 s of CPU at 100,000 sessions).
func (ix *Indexed) noteSearchIndex(cat *reference.Catalog) {
	if cat.SearchIndexGiven() {
		if err := cat.SearchIndexErr(); err != nil {
			// Normal when the store changed since the cache was written.
			ix.logf("sessionstore: index of %s: persisted %v; rebuilt it", ix.root, err)
		}
	}
	if !cat.HasSearchIndex() {
		return
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	s := ix.catalog.snap.Load()
	if s == nil || s.cat != cat {
		return
	}
	if cat.SearchIndexGiven() && cat.SearchIndexErr() == nil {
		ix.searchPersistedGen = s.gen
	}
	if s.gen == ix.gen && ix.searchPersistedGen != ix.gen {
		ix.dirty = true
	}
}

// searchIndexToPersist returns the encoded trigram index of the catalog
// of listing generation gen (reference.Catalog.MarshalSearchIndex), the
// listing the cache writer persists, or nil when there is none (fewer
// than 2,048 sessions, not built yet, or the catalog is of another
// listing). The catalog of the loaded listing takes the bytes back after
// a restart.
func (ix *Indexed) searchIndexToPersist(gen uint64) []byte {
	s := ix.catalog.snap.Load()
	if s == nil || s.gen != gen {
		return nil
	}
	data := s.cat.MarshalSearchIndex()
	if data != nil {
		ix.mu.Lock()
		ix.searchPersistedGen = gen
		ix.mu.Unlock()
	}
	return data
}
