package sessionstore

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dsh-lsp/dsh-lsp/internal/gcgoal"
	"github.com/dsh-lsp/dsh-lsp/internal/hugepage"
	"github.com/dsh-lsp/dsh-lsp/internal/parallel"
	"github.com/dsh-lsp/dsh-lsp/reference"
)

// IndexOptions configures OpenIndexed.
type IndexOptions struct {
	// Encoding pins the store encoding (dsh's compression setting): only
	// that suffix is read. 0 reads each session directory by its own
	// suffix (transcriptFor).
	Encoding Encoding
	// CacheDir is the directory the index is persisted in, never inside
	// the store root. "" means $XDG_CACHE_HOME/dsh-lsp; NoCache keeps the
	// index in memory only.
	CacheDir string
	// RefreshInterval is how stale a query may find the index before it
	// starts a background quick scan when part of the store is polled
	// (in watch mode, at most every watchSafetyScan). Answers never wait
	// for it (fresh.go). 0 means DefaultRefreshInterval; a negative value
	// refreshes synchronously (a full stat scan) before every query.
	RefreshInterval time.Duration
	// NoWatch turns file-system notifications off: the index then polls.
	NoWatch bool
	// Snapshot makes the index answer from the store as its first refresh
	// found it, revalidating nothing later (one-shot readers: the CLI).
	// It implies NoWatch.
	Snapshot bool
	// Lazy skips the scan of the store: only a read by id indexes its
	// session, and the listing stays empty (the CLI's prepare). It implies
	// Snapshot and NoCache.
	Lazy bool
	// watchLimit, when set, caps the directories watched (tests).
	watchLimit int
	// spillJobs, when set, replaces spillJobs (tests).
	spillJobs int
	// spillBatch, when set, replaces spillBatch (tests).
	spillBatch int
	// firstRefreshGate, when set, holds the first refresh until it is
	// closed (tests).
	firstRefreshGate chan struct{}
	// persistGate, when set, holds each write of the cache file until it
	// is closed (tests).
	persistGate chan struct{}
	// ReadLimit bounds the memory one read may use: the decoded bytes of
	// one zstd frame or raw line held at once, and the bytes of the surface
	// events one ReadSurface keeps. A session over it fails with an error
	// matching ErrReadLimit. 0 means $DSH_LSP_READ_LIMIT_MB MiB when set,
	// else DefaultReadLimit; less than 16 MiB is raised to 16 MiB.
	ReadLimit int64
	// Progress, when set, is called during the first indexing pass with
	// the number of transcripts parsed so far and the number to parse.
	Progress func(done, total int)
	// Logf, when set, receives warnings (cache unreadable or unwritable).
	Logf func(format string, args ...any)
}

// NoCache as IndexOptions.CacheDir keeps the index in memory only.
const NoCache = "-"

// DefaultRefreshInterval is the default IndexOptions.RefreshInterval.
const DefaultRefreshInterval = time.Second

// Indexed is the reference.Source over a store: it answers from an
// in-memory index of session metadata (header, title, and the incremental
// parse state of each transcript), persisted outside the store and
// refreshed incrementally: grown files are parsed only from where the last
// parse stopped, replaced or truncated ones again from the start.
// ReadSurface re-reads only the surface records the parse located. Answers
// equal a full re-read of the store at the last refresh (oracle_test.go).
type Indexed struct {
	layout    layout
	root      string
	limit     int64 // the read limit in bytes
	opts      IndexOptions
	cachePath string

	mu sync.RWMutex
	// entries maps each session directory's key (proj/seg) to its entry;
	// use entryMap: after a cache load the map is built on first use
	// (byid.go), off the path of a restart's first answer.
	entries     map[dirKey]*entry
	entriesOnce sync.Once
	entriesFrom []*entry
	// all holds the entries in key order, listed the listed ones in
	// listing order (the listing's entries): both as rebuildListing last
	// computed them, and persisted so a restart need not sort.
	all, listed []*entry
	listing     []reference.SessionHeader
	// byID finds entries by id; built from all on first use, which a
	// restart's first answer does not need (byid.go).
	byID *idLookup
	// swappedAt is the last listing published in place (relistInPlace):
	// its generation, the one before it and the entries swapped, from
	// which a catalog of the one before derives (buildCatalog).
	swappedAt swapNote
	complete  bool
	lastScan  time.Time
	lastFull  time.Time
	dirty     bool
	// gen counts listing rebuilds: a catalog of an older gen is stale.
	gen uint64
	// searchPersistedGen is the gen whose catalog search index the cache
	// file holds (taken from it, or written to it), 0 for none.
	searchPersistedGen uint64

	catalog catalogCache
	// early is whether catalog queries may answer before the first
	// refresh after a cache load (restart.go): decided once, closed when
	// a served session turns out changed.
	early struct {
		once sync.Once
		ok   atomic.Bool
	}

	parsesMu sync.Mutex
	parses   map[parseKey]*parseCall
	// rootPrefix is the clean root and a separator (transcriptPaths).
	rootPrefix string
	// cwds holds one string per cwd the parses met (sharedCWD).
	cwdsMu sync.Mutex
	cwds   map[string]*string

	refreshMu  sync.Mutex
	refreshing sync.Mutex // held by the background refresher
	projects   map[string]projectScan
	rootMtime  int64 // at the last listing of the root (refreshMu)
	// watchAtParse: this refresh, a watched store's first pass without a
	// cache, watches each session directory as its parse starts, not as
	// its scan lists it (refreshMu).
	watchAtParse bool
	// watchOnly: the sessions a restart's first refresh watches (nil:
	// all, as the cap allows; refreshMu).
	watchOnly map[string]bool
	// scannedShape is the store's directory mtimes at the last scan
	// (refreshMu); shape is that of the last refresh whose changes are all
	// in the entries (ix.mu), persisted with them; cachedShape is the
	// loaded cache's.
	scannedShape, shape, cachedShape storeShape
	// cachedSearchIndex is the loaded cache's catalog trigram index, for
	// the catalog of cachedGen, the loaded listing.
	cachedSearchIndex []byte
	cachedGen         uint64
	// cachedStates is the loaded cache's state section, closed with the
	// index.
	cachedStates *stateSection
	// states holds the parse states of large passes (spill.go) while
	// spilling is set.
	states   stateSpill
	spilling atomic.Bool
	// abandoned: closed before the first refresh checked a loaded cache,
	// which is then not written back.
	abandoned   bool
	lastPersist time.Time

	ready  chan struct{}
	closed chan struct{}
	// cancelFirst stops the first refresh of a loaded cache.
	cancelFirst context.CancelFunc
	bg          sync.WaitGroup
	// bgMu orders bg.Add after the closed check against Close's bg.Wait.
	bgMu sync.Mutex

	// fresh tracks changes; watcher is nil when nothing is watched.
	// changed is closed and replaced at every generation (Changed).
	fresh   freshness
	watcher *storeWatcher
	changed chan struct{}

	parsed, grown, sameBytes, surfaces, wholeScans, fullScans, dirStats, statBatches, coldChecks, listings, pollTicks atomic.Int64 // counters
}

var _ reference.Source = (*Indexed)(nil)

// OpenIndexed opens the store at root behind an index. It loads the
// persisted index when there is a valid one (Complete is then true at
// once) and starts the first refresh in the background (Wait returns when
// it has finished).
func OpenIndexed(root string, opts IndexOptions) (*Indexed, error) {
	l, err := newLayout(root, opts.Encoding)
	if err != nil {
		return nil, err
	}
	ix := &Indexed{
		layout:     l,
		root:       root,
		rootPrefix: dirPrefix(root),
		limit:      effectiveReadLimit(opts.ReadLimit),
		opts:       opts,
		entries:    map[dirKey]*entry{},
		parses:     map[parseKey]*parseCall{},
		byID:       &idLookup{},
		projects:   map[string]projectScan{},
		ready:      make(chan struct{}),
		closed:     make(chan struct{}),
		changed:    make(chan struct{}),
	}
	ix.fresh.verified = make(chan struct{})
	if opts.Lazy {
		ix.opts.CacheDir, ix.opts.Snapshot = NoCache, true
	}
	ix.opts.NoWatch = ix.opts.NoWatch || ix.opts.Snapshot
	ix.cachePath = ix.resolveCachePath()
	loaded := func() {}
	if ix.cachePath != "" {
		// Decoding the whole persisted index, and preparing its catalog
		// (below), is bulk work too: it allocates what the index keeps,
		// and a collection meanwhile would find nearly all of it live
		// and delay a restart's first answer.
		loaded = gcgoal.Bulk()
		err := ix.loadCache()
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			ix.logf("sessionstore: ignoring index cache %s: %v", ix.cachePath, err)
		}
		// Complete at once, yet answers wait (revalidate) until the first
		// refresh has stat-checked every entry: the store may have changed.
		ix.complete = err == nil
		ix.fresh.fromCache = err == nil
	}
	if !ix.opts.NoWatch {
		ix.watcher = newStoreWatcher(ix) // nil when notifications are unavailable
	}
	if ix.watcher != nil {
		ix.bg.Go(ix.watcher.run)
	}
	ix.fresh.pollAll = ix.watcher == nil
	if opts.Lazy || !ix.complete {
		loaded()
	}
	if opts.Lazy {
		ix.complete = true
		close(ix.ready)
		close(ix.fresh.verified)
		return ix, nil
	}
	var prepared chan struct{}
	if ix.complete {
		// The loaded listing's catalog, which completion answers from
		// before the first refresh has checked it.
		prepared = make(chan struct{})
		ix.bg.Go(func() {
			defer close(prepared)
			defer loaded()
			ix.prepareCatalog()
		})
	}
	ix.startFirstRefresh(prepared)
	if !ix.opts.NoWatch {
		// Poll what has no watch in the background.
		ix.bg.Go(ix.pollLoop)
	}
	return ix, nil
}

// startFirstRefresh runs the first refresh in the background: the first
// pass, or the check of a loaded cache. Close stops the check of a loaded
// cache (a one-shot CLI run answers before it ends, and the cache is then
// not written back), not a first pass without one.
//
// After a cache load it starts once after is closed: when the loaded
// listing's catalog is prepared (about 0.2 s at 100,000 sessions), so that
// its stats do not compete with a restart's first completion answer for
// the CPU (20-30 ms of about 300 at 100,000 sessions on two cores).
func (ix *Indexed) startFirstRefresh(after <-chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	if ix.fresh.fromCache {
		ix.cancelFirst = cancel
	}
	// A pass without a cache is bulk work from its scan (at 100,000
	// sessions, listing and stat'ing the directories at the serving
	// target took 53 collections before the first parse) to its catalog,
	// not only its parses. A server's may let the heap grow more; a
	// snapshot's (the CLI, which exits at its end) keeps the lower peak.
	bulkDone := func() {}
	if !ix.fresh.fromCache && ix.opts.Snapshot {
		bulkDone = gcgoal.Bulk()
	} else if !ix.fresh.fromCache {
		bulkDone = gcgoal.BulkUpTo(gcgoal.FirstPassHeapGoal)
	}
	ix.bg.Go(func() {
		var once sync.Once
		ready := func() { once.Do(func() { close(ix.ready) }) }
		defer ready()
		defer cancel()
		defer bulkDone()
		for _, gate := range []<-chan struct{}{after, ix.opts.firstRefreshGate} {
			if gate != nil {
				select {
				case <-gate:
				case <-ctx.Done():
				}
			}
		}
		if err := ix.refresh(ctx, true, modeFull); err != nil {
			if ctx.Err() != nil {
				ix.mu.Lock()
				ix.abandoned = true
				ix.mu.Unlock()
				close(ix.fresh.verified)
				return
			}
			ix.logf("sessionstore: indexing %s: %v", ix.root, err)
		}
		ix.mu.Lock()
		ix.complete = true
		ix.mu.Unlock()
		close(ix.fresh.verified)
		// The catalog and its search index first, so that the cache
		// written next holds it.
		ix.prepareCatalog()
		bulkDone()
		// What waits for the pass (a complete answer, the end of a
		// server's progress) does not wait for the cache file; Close
		// does.
		ready()
		ix.persist(true)
	})
}

// Root returns the store root.
func (ix *Indexed) Root() string { return ix.root }

// Complete reports whether the index covers the whole store: a valid cache
// was loaded, or the first indexing pass has finished. Before that,
// queries answer from what is indexed so far.
func (ix *Indexed) Complete() bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.complete
}

// Wait blocks until the first indexing pass has finished or ctx is done.
func (ix *Indexed) Wait(ctx context.Context) error {
	select {
	case <-ix.ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Refresh brings the index up to date synchronously (after the first
// indexing pass, which it waits for).
func (ix *Indexed) Refresh(ctx context.Context) error {
	if err := ix.Wait(ctx); err != nil {
		return err
	}
	err := ix.refresh(ctx, false, modeFull)
	ix.persist(false)
	return err
}

// Close stops background work and persists the index.
func (ix *Indexed) Close() error {
	ix.bgMu.Lock()
	if ix.isClosed() {
		ix.bgMu.Unlock()
		return nil
	}
	close(ix.closed)
	ix.bgMu.Unlock()
	if ix.cancelFirst != nil {
		ix.cancelFirst()
	}
	if ix.watcher != nil {
		ix.watcher.close()
	}
	ix.fresh.mu.Lock()
	if ix.fresh.timer != nil {
		ix.fresh.timer.Stop()
	}
	ix.fresh.mu.Unlock()
	ix.bg.Wait()
	ix.persist(true)
	ix.cachedStates.close()
	ix.states.close()
	return nil
}

// maybeRefresh keeps the index fresh before a query: synchronously when
// the interval is negative; else it revalidates (fresh.go) and, when the
// last scan is older than the safety interval, starts a background quick
// scan. During the first indexing pass it does nothing: answers are
// partial then anyway.
func (ix *Indexed) maybeRefresh(ctx context.Context) error {
	ix.mu.RLock()
	complete, lastScan := ix.complete, ix.lastScan
	ix.mu.RUnlock()
	if !complete {
		return nil
	}
	interval := cmp.Or(ix.opts.RefreshInterval, DefaultRefreshInterval)
	if interval < 0 {
		return ix.Refresh(ctx)
	}
	if err := ix.revalidate(ctx); err != nil {
		return err
	}
	if ix.watcher != nil && interval < watchSafetyScan {
		interval = watchSafetyScan
	}
	if time.Since(lastScan) <= interval || !ix.refreshing.TryLock() {
		return nil
	}
	if !ix.startBackground(func() {
		defer ix.refreshing.Unlock()
		if err := ix.refresh(context.Background(), false, modeQuick); err != nil {
			ix.logf("sessionstore: refreshing index of %s: %v", ix.root, err)
		}
		ix.persist(false)
		ix.warmCatalog()
	}) {
		ix.refreshing.Unlock()
	}
	return nil
}

// query readies the index for a query: ctx's error, else maybeRefresh's.
func (ix *Indexed) query(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return ix.maybeRefresh(ctx)
}

// ListSessions implements reference.Source from the index.
func (ix *Indexed) ListSessions(ctx context.Context) ([]reference.SessionHeader, error) {
	if err := ix.query(ctx); err != nil {
		return nil, err
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return append([]reference.SessionHeader(nil), ix.listing...), nil
}

// ReadTitles implements reference.Source from the index.
func (ix *Indexed) ReadTitles(ctx context.Context, ids []string) ([]reference.TitleResult, error) {
	if err := ix.query(ctx); err != nil {
		return nil, err
	}
	ix.mu.RLock()
	out, unindexed := ix.indexedTitles(ids)
	ix.mu.RUnlock()
	if err := ix.titlesOnDemand(ctx, out, unindexed); err != nil {
		return nil, err
	}
	return out, nil
}

// indexedTitles returns the title result of each id once, in order of
// first occurrence, and the positions of those without a single indexed
// entry (left to titlesOnDemand). Callers hold ix.mu.
func (ix *Indexed) indexedTitles(ids []string) (out []reference.TitleResult, unindexed []int) {
	seen := make(map[string]bool, len(ids))
	out = make([]reference.TitleResult, 0, len(ids))
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		if e := ix.titleEntry(id); e != nil {
			out = append(out, e.titleResult(id, ix.root))
		} else {
			unindexed = append(unindexed, len(out))
			out = append(out, reference.TitleResult{SessionID: id})
		}
	}
	return out, unindexed
}

// titlesOnDemand answers the titles at the unindexed positions of out by a
// read by id each.
func (ix *Indexed) titlesOnDemand(ctx context.Context, out []reference.TitleResult, unindexed []int) error {
	for _, k := range unindexed {
		if err := ctx.Err(); err != nil {
			return err
		}
		if e, err := ix.indexOnDemand(out[k].SessionID); err != nil {
			out[k].Err = err
		} else {
			out[k] = e.titleResult(out[k].SessionID, ix.root)
		}
	}
	return nil
}

// Partial returns, under one lock and without reading any log or
// refreshing, the sessions indexed so far (in ListSessions order) that
// have a single entry, each one's title result, and Complete() at that
// moment. Meant for answering during the first indexing pass.
func (ix *Indexed) Partial() (listing []reference.SessionHeader, titles map[string]reference.TitleResult, complete bool) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	listing = make([]reference.SessionHeader, 0, len(ix.listing))
	titles = make(map[string]reference.TitleResult, len(ix.listing))
	for _, h := range ix.listing {
		if e := ix.titleEntry(h.ID); e != nil {
			listing = append(listing, h)
			titles[h.ID] = e.titleResult(h.ID, ix.root)
		}
	}
	return listing, titles, ix.complete
}

// titleEntry returns the entry a read of id loads, or nil when that is not
// exactly one indexed transcript. Callers hold ix.mu.
func (ix *Indexed) titleEntry(id string) *entry { return ix.byID.find(ix, id) }

// findEntry is the entry the layout's find rule picks among group (the
// directories named by one segment), when it indexed the transcript read.
func (ix *Indexed) findEntry(group []*entry) *entry {
	n, m := named(ix.layout, group, func(e *entry) (bool, bool) { return e.HasRaw, e.HasZstd })
	if n != 1 || m[0].dir.Enc != m[0].enc {
		return nil
	}
	return m[0].dir
}

// rebuildListing recomputes the listing (the transcript the encoding rule
// reads, a readable header at its identity's path, the first of duplicate
// ids in enumeration order) and the lookup maps. Callers hold ix.mu.
func (ix *Indexed) rebuildListing() {
	ix.listings.Add(1)
	all := slices.SortedFunc(maps.Values(ix.entryMap()), compareKeys)
	listed := make([]*entry, 0, len(all))
	seen := make(map[string]bool, len(all))
	for _, e := range all {
		if !ix.listable(e) || seen[e.ListedID] {
			continue
		}
		seen[e.ListedID] = true
		listed = append(listed, e)
	}
	sortListing(listed, func(e *entry) (int64, string) { return e.ListedCreatedAt, e.ListedID })
	ix.setListing(all, listed, false)
}

// listedIDs maps each id the listing of generation gen lists to the
// entry that lists it: what addToListing checks a new entry's id against.
type listedIDs struct {
	gen  uint64
	byID map[string]*entry
}

// addToListing publishes added, entries new to ix.entries (none replacing
// one), by merging them into the listing published last instead of
// sorting every entry again: a server's first pass publishes every few
// hundred sessions, and at 100,000 sessions re-sorting the whole listing
// each time took a tenth of the pass's CPU. The result is rebuildListing's.
// It reports false, changing nothing, when that is not a merge: nothing
// is listed yet (a snapshot's one publish: rebuildListing sorts as much
// without the id map), the published listing is not of ix.entries less
// added (an added entry replaced one), or an added entry comes before, in
// key order, the entry listing its id (it would take its place). ids is
// kept across calls. Callers hold ix.mu.
func (ix *Indexed) addToListing(added []*entry, ids *listedIDs) bool {
	if len(ix.all) == 0 || len(ix.all)+len(added) != len(ix.entryMap()) {
		return false
	}
	if ids.byID == nil || ids.gen != ix.gen {
		ids.byID = make(map[string]*entry, len(ix.listed)+len(added))
		for _, e := range ix.listed {
			ids.byID[e.ListedID] = e
		}
	}
	added = slices.SortedFunc(slices.Values(added), compareKeys)
	var fresh []*entry
	for _, e := range added {
		if !ix.listable(e) {
			continue
		}
		if o := ids.byID[e.ListedID]; o != nil {
			if compareKeys(e, o) < 0 {
				ids.byID = nil // o was listed: e takes its place
				return false
			}
			continue // o, first in key order, lists it
		}
		ids.byID[e.ListedID] = e
		fresh = append(fresh, e)
	}
	sortListing(fresh, func(e *entry) (int64, string) { return e.ListedCreatedAt, e.ListedID })
	compare, release := reference.LocaleComparer()
	defer release()
	listed := mergeSorted(ix.listed, fresh, func(a, b *entry) int {
		if a.ListedCreatedAt != b.ListedCreatedAt {
			return cmp.Compare(b.ListedCreatedAt, a.ListedCreatedAt)
		}
		return cmp.Or(compare(a.ListedID, b.ListedID), compareKeys(a, b))
	})
	ix.listings.Add(1)
	ix.setListing(mergeSorted(ix.all, added, compareKeys), listed, false)
	ids.gen = ix.gen
	return true
}

// mergeSorted merges a and b, both sorted by compare, into a new slice (a
// before b on ties).
func mergeSorted[T any](a, b []T, compare func(x, y T) int) []T {
	out := make([]T, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if compare(b[0], a[0]) < 0 {
			out, b = append(out, b[0]), b[1:]
		} else {
			out, a = append(out, a[0]), a[1:]
		}
	}
	return append(append(out, a...), b...)
}

// relistInPlace publishes the entries of swap (each replacing its old
// one, in the same directory) when that leaves the listing as it was: the
// same sessions listed with the same headers in the same order, each id
// read from the same directory. Then only the entries are swapped, in
// copies of the listing's entry slices and of its id lookup: at 100,000
// sessions a live session's every write re-sorted all the entries twice
// and rebuilt the lookup, about 0.35 s of CPU. It reports false, changing
// nothing, otherwise (rebuildListing then). Callers hold ix.mu.
func (ix *Indexed) relistInPlace(swap map[*entry]*entry) bool {
	if swap == nil {
		return false
	}
	if len(swap) == 0 {
		return true // nothing was replaced
	}
	for old, e := range swap {
		if !sameListing(ix, old, e) {
			return false
		}
	}
	all := slices.Clone(ix.all)
	for old, e := range swap {
		i, found := slices.BinarySearchFunc(all, old, compareKeys)
		if !found || all[i] != old {
			return false // not in the listing published
		}
		all[i] = e
	}
	listed := slices.Clone(ix.listed)
	for i, old := range listed {
		if e := swap[old]; e != nil {
			listed[i] = e
		}
	}
	ix.all, ix.listed = all, listed
	ix.byID = ix.byID.swapped(all, swap)
	ix.published()
	ix.swappedAt = swapNote{from: ix.gen - 1, gen: ix.gen, swap: swap}
	return true
}

// swapNote is a listing published in place: generation gen is generation
// from with the entries of swap (old to new) replaced.
type swapNote struct {
	from, gen uint64
	swap      map[*entry]*entry
}

// sameListing reports whether e, replacing old in its directory, leaves
// the listing and the lookups by id as they were: the same key, listing
// header, read id, encoding, flags and readability.
func sameListing(ix *Indexed, old, e *entry) bool {
	return old.Proj == e.Proj && old.Seg == e.Seg &&
		ix.listable(old) == ix.listable(e) && old.ListedID == e.ListedID &&
		old.ListedCreatedAt == e.ListedCreatedAt && (old.ListedCWD == nil) == (e.ListedCWD == nil) &&
		(old.ListedCWD == nil || *old.ListedCWD == *e.ListedCWD) && bytes.Equal(old.ListedRaw, e.ListedRaw) &&
		old.ReadID == e.ReadID && old.Enc == e.Enc && old.HasRaw == e.HasRaw && old.HasZstd == e.HasZstd &&
		old.State.present() == e.State.present()
}

// listable reports whether e may be listed: the transcript the encoding
// rule reads was indexed and has a readable header at its identity's path.
// The first listable entry of an id in key order is listed.
func (ix *Indexed) listable(e *entry) bool {
	enc, _ := transcriptFor(ix.layout.enc, e.HasRaw, e.HasZstd)
	return e.Enc == enc && enc != 0 && e.Listed && e.IdentityOK
}

// setListing publishes the listing of the entries listed (in listing
// order) and the lookup maps built from all (every entry, in key order).
// A cache load calls it with both orders as persisted, and loading set:
// the listing's array is then in huge pages, since a restart's first
// answer waits for it (package hugepage); later listings are not, so that
// the advice stays on a few arrays made at once. Callers hold ix.mu.
func (ix *Indexed) setListing(all, listed []*entry, loading bool) {
	var listing []reference.SessionHeader
	if loading {
		listing = hugepage.Make[reference.SessionHeader](len(listed))
	} else {
		listing = make([]reference.SessionHeader, len(listed))
	}
	parallel.Parts(len(listed), parallelEntries, func(lo, hi int) {
		for i, e := range listed[lo:hi] {
			listing[lo+i] = reference.SessionHeader{ID: e.ListedID, CWD: e.ListedCWD, CreatedAt: e.ListedCreatedAt, Raw: e.ListedRaw}
		}
	})
	ix.all, ix.listed = all, listed
	ix.listing, ix.byID = listing, &idLookup{all: all}
	ix.swappedAt = swapNote{} // nothing derives across a rebuilt listing
	ix.published()
}

// parallelEntries is the fewest entries a loop over every entry gives each
// processor (package parallel).
const parallelEntries = 8192

// published starts the generation of a listing just published. Callers
// hold ix.mu.
func (ix *Indexed) published() {
	ix.gen++
	if ix.changed != nil {
		close(ix.changed)
	}
	ix.changed = make(chan struct{})
}

func (ix *Indexed) logf(format string, args ...any) {
	if ix.opts.Logf != nil {
		ix.opts.Logf(format, args...)
	}
}

// Stats describes the index (for logs and benchmarks).
type Stats struct {
	// Listed counts the sessions listed, Unreadable the session
	// directories a read fails on.
	Listed, Unreadable int
	// Parsed counts transcripts (re)indexed since open, Grown those
	// parsed only from their saved offset, Surfaces ReadSurface answers.
	Parsed, Grown, Surfaces int64
	// SameBytes counts transcripts whose signature changed (a touch, a
	// copy) but whose bytes were those indexed: kept, not parsed.
	SameBytes int64
}

// Skipped reports, in path order, the transcripts the encoding rule does
// not read (transcriptFor).
func (ix *Indexed) Skipped() []error {
	ix.mu.RLock()
	var out []error
	for _, e := range ix.entryMap() {
		if read, skipped := transcriptFor(ix.layout.enc, e.HasRaw, e.HasZstd); skipped != 0 {
			out = append(out, skippedTranscript(filepath.Join(ix.root, e.Proj, e.Seg), read, skipped))
		}
	}
	ix.mu.RUnlock()
	slices.SortFunc(out, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return out
}

// Stats returns counters of the index.
func (ix *Indexed) Stats() Stats {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	s := Stats{Listed: len(ix.listing), Parsed: ix.parsed.Load(), Grown: ix.grown.Load(), Surfaces: ix.surfaces.Load(), SameBytes: ix.sameBytes.Load()}
	for _, e := range ix.entryMap() {
		if !e.State.present() {
			s.Unreadable++
		}
	}
	return s
}

// String names the index and its store root, for logs.
func (ix *Indexed) String() string {
	return fmt.Sprintf("sessionstore.Indexed(%s)", ix.root)
}

// sortListing sorts xs in listSessions order (spec §9): createdAt
// descending, ties by id in localeCompare order; the sort is stable, so
// ids that collate equal keep their input (enumeration) order. key gives
// the createdAt and id of each.
func sortListing[T any](xs []T, key func(T) (createdAt int64, id string)) {
	compare, release := reference.LocaleComparer()
	defer release()
	sort.SliceStable(xs, func(i, j int) bool {
		ac, aid := key(xs[i])
		bc, bid := key(xs[j])
		if ac != bc {
			return ac > bc
		}
		return compare(aid, bid) < 0
	})
}
