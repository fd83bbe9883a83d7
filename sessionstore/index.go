package sessionstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dsh-lsp/dsh-lsp/reference"
)

// IndexOptions configures OpenIndexed.
type IndexOptions struct {
	// Encoding pins the store encoding like OpenEncoding; 0 detects it
	// like Open.
	Encoding Encoding
	// CacheDir is the directory the index is persisted in. "" means
	// DefaultCacheDir(); NoCache keeps the index in memory only. The
	// directory must not be inside the store root (persistence is then
	// disabled).
	CacheDir string
	// RefreshInterval is how stale a query may find the index before it
	// starts a background quick scan (a stat scan of the store, parsing
	// only what changed) when part of the store is polled rather than
	// watched; in watch mode that safety scan runs at most every
	// watchSafetyScan. Answers never wait for it: notifications and the
	// revalidation before each answer keep them fresh (see fresh.go).
	// 0 means DefaultRefreshInterval; a negative value refreshes
	// synchronously (a full stat scan) before every query.
	RefreshInterval time.Duration
	// NoWatch turns file-system notifications off: the index then polls
	// (a bounded stat scan in the background and before answers), like
	// on a file system without notifications. One-shot readers (the
	// CLI), which revalidate once at open, set it.
	NoWatch bool
	// Snapshot makes the index answer from the store as its first
	// refresh (at open) found it, revalidating nothing later: for
	// one-shot readers (the CLI), whose answer is due right after the
	// open. It implies NoWatch.
	Snapshot bool
	// Lazy skips the scan of the store: nothing is indexed until a read
	// by id (ReadSurface, ReadTitles) indexes that one session, and the
	// listing stays empty. For one-shot reads of a few sessions (the
	// CLI's prepare); it implies Snapshot and no cache.
	Lazy bool
	// watchLimit, when positive, caps the directories watched (tests of
	// the fallback for an exhausted inotify watch limit).
	watchLimit int
	// ReadLimit bounds the memory one read may use (Options.ReadLimit);
	// 0 means the default. A session over it fails with an error matching
	// ErrReadLimit.
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

// DefaultCacheDir returns $XDG_CACHE_HOME/dsh-lsp (os.UserCacheDir).
func DefaultCacheDir() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "dsh-lsp"), nil
}

// Indexed is a reference.Source that answers ListSessions and ReadTitles
// from an in-memory index of session metadata (header, latest title, and
// the incremental parse state of each transcript), persisted outside the
// store and refreshed incrementally: new sessions are parsed, grown files
// only from where the last parse stopped (raw: the last complete line;
// zstd: the last complete frame), replaced or truncated files again from
// the start. ReadSurface reads the log through the store.
//
// Answers equal the store's full re-read (Store.ListSessions and
// Store.ReadTitles) at the time of the last refresh; logs the incremental
// path does not decide (legacy shapes, bad lines, validation failures) are
// read by the store itself.
type Indexed struct {
	store     *Store
	root      string
	opts      IndexOptions
	interval  time.Duration
	cachePath string

	mu      sync.RWMutex
	entries map[string]*entry
	listing []reference.SessionHeader
	bySeg   map[string][]*entry
	// byTitleID maps the id of each indexed log that a full read of that
	// id would load to its entry (the fast path of ReadTitles).
	byTitleID map[string]*entry
	complete  bool
	lastScan  time.Time
	lastFull  time.Time
	dirty     bool
	// gen counts listing rebuilds: a catalog of an older gen is stale.
	gen uint64

	catalog catalogCache

	inflightMu sync.Mutex
	inflight   map[inflightKey]*inflightCall
	recent     map[inflightKey]*entry

	refreshMu   sync.Mutex
	refreshing  sync.Mutex // held by the background refresher
	projects    map[string]projectScan
	lastPersist time.Time

	ready  chan struct{}
	closed chan struct{}
	bg     sync.WaitGroup
	// bgMu orders bg.Add after the closed check against Close's bg.Wait.
	bgMu sync.Mutex

	// fresh tracks changes (notifications, polls); watcher is nil when
	// nothing is watched (poll mode). changed is closed and replaced at
	// every listing generation (Changed).
	fresh   freshness
	watcher *storeWatcher
	changed chan struct{}

	// parsed counts transcripts (re)indexed, grown those continued from
	// their saved offset (tests and benchmarks).
	parsed, grown atomic.Int64
	// fastSurfaces counts ReadSurface answers built from the index.
	fastSurfaces atomic.Int64
}

var _ reference.Source = (*Indexed)(nil)

// OpenIndexed opens root (like Open) behind an index. It loads the
// persisted index when there is a valid one (Complete is then true at
// once) and starts the first refresh in the background (Wait returns when
// it has finished). Without a cache, queries answer from what is indexed
// so far until Complete reports true.
func OpenIndexed(root string, opts IndexOptions) (*Indexed, error) {
	st, err := OpenWith(root, Options{Encoding: opts.Encoding, ReadLimit: opts.ReadLimit})
	if err != nil {
		return nil, err
	}
	x := &Indexed{
		store:    st,
		root:     root,
		opts:     opts,
		interval: opts.RefreshInterval,
		entries:  map[string]*entry{},
		bySeg:    map[string][]*entry{},
		projects: map[string]projectScan{},
		ready:    make(chan struct{}),
		closed:   make(chan struct{}),
		changed:  make(chan struct{}),
	}
	x.fresh.verified = make(chan struct{})
	if x.interval == 0 {
		x.interval = DefaultRefreshInterval
	}
	if opts.Lazy {
		x.opts.CacheDir, opts.Snapshot, x.opts.Snapshot = NoCache, true, true
	}
	x.cachePath = x.resolveCachePath()
	if x.cachePath != "" {
		err := x.loadCache()
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			x.logf("sessionstore: ignoring index cache %s: %v", x.cachePath, err)
		}
		// A valid cache covers the whole store as of the last run, but
		// the store may have changed since: it is complete at once, yet
		// answers wait (revalidate) until the first refresh has
		// stat-checked every entry and re-parsed what changed.
		x.complete = err == nil
		x.fresh.fromCache = err == nil
	}
	if opts.Snapshot {
		opts.NoWatch = true
		x.opts.NoWatch = true
	}
	if !opts.NoWatch {
		x.watcher = newStoreWatcher(x)
	}
	x.fresh.pollAll = x.watcher == nil
	if x.watcher != nil {
		x.bg.Add(1)
		go func() {
			defer x.bg.Done()
			x.watcher.run()
		}()
	}
	if opts.Lazy {
		x.complete = true
		close(x.ready)
		close(x.fresh.verified)
		return x, nil
	}
	x.bg.Add(1)
	go func() {
		defer x.bg.Done()
		defer close(x.ready)
		if err := x.refresh(context.Background(), true, true); err != nil {
			x.logf("sessionstore: indexing %s: %v", root, err)
		}
		x.mu.Lock()
		x.complete = true
		x.mu.Unlock()
		close(x.fresh.verified)
		x.persist(true)
	}()
	if !opts.NoWatch {
		// Poll what has no watch (everything, when notifications are
		// unavailable) in the background; one-shot readers do not.
		x.bg.Add(1)
		go func() {
			defer x.bg.Done()
			x.pollLoop()
		}()
	}
	return x, nil
}

// Store returns the underlying store reader.
func (x *Indexed) Store() *Store { return x.store }

// Root returns the store root.
func (x *Indexed) Root() string { return x.root }

// CachePath returns the index cache file, "" when the index is memory
// only.
func (x *Indexed) CachePath() string { return x.cachePath }

// Complete reports whether the index covers the whole store: a valid cache
// was loaded, or the first indexing pass has finished. Before that,
// ListSessions and ReadTitles answer from what is indexed so far.
func (x *Indexed) Complete() bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.complete
}

// Wait blocks until the first indexing pass has finished or ctx is done.
func (x *Indexed) Wait(ctx context.Context) error {
	select {
	case <-x.ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Refresh brings the index up to date synchronously (after the first
// indexing pass, which it waits for).
func (x *Indexed) Refresh(ctx context.Context) error {
	if err := x.Wait(ctx); err != nil {
		return err
	}
	err := x.refresh(ctx, false, true)
	x.persist(false)
	return err
}

// Close stops background work and persists the index.
func (x *Indexed) Close() error {
	select {
	case <-x.closed:
		return nil
	default:
	}
	x.bgMu.Lock()
	close(x.closed)
	x.bgMu.Unlock()
	if x.watcher != nil {
		// Ends watcher.run.
		x.watcher.close()
	}
	x.fresh.mu.Lock()
	if x.fresh.timer != nil {
		x.fresh.timer.Stop()
	}
	x.fresh.mu.Unlock()
	x.bg.Wait()
	x.persist(true)
	return nil
}

// maybeRefresh keeps the index fresh before a query: synchronously (a
// full stat scan) when the interval is negative; else it revalidates
// (fresh.go: what notifications reported, what polls cover) and, when the
// last scan is older than the safety interval, starts a background quick
// scan. During the first indexing pass (Complete false) it does nothing:
// answers are partial then anyway.
func (x *Indexed) maybeRefresh(ctx context.Context) error {
	x.mu.RLock()
	complete, lastScan := x.complete, x.lastScan
	x.mu.RUnlock()
	if !complete {
		return nil
	}
	if x.interval < 0 {
		return x.Refresh(ctx)
	}
	if err := x.revalidate(ctx); err != nil {
		return err
	}
	interval := x.interval
	if x.watcher != nil && interval < watchSafetyScan {
		interval = watchSafetyScan
	}
	if time.Since(lastScan) <= interval || !x.refreshing.TryLock() {
		return nil
	}
	if !x.startBackground(func() {
		defer x.refreshing.Unlock()
		if err := x.refresh(context.Background(), false, false); err != nil {
			x.logf("sessionstore: refreshing index of %s: %v", x.root, err)
		}
		x.persist(false)
		x.warmCatalog()
	}) {
		x.refreshing.Unlock()
	}
	return nil
}

// ListSessions implements reference.Source from the index.
func (x *Indexed) ListSessions(ctx context.Context) ([]reference.SessionHeader, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := x.maybeRefresh(ctx); err != nil {
		return nil, err
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	return append([]reference.SessionHeader(nil), x.listing...), nil
}

// ReadTitles implements reference.Source from the index.
func (x *Indexed) ReadTitles(ctx context.Context, ids []string) ([]reference.TitleResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := x.maybeRefresh(ctx); err != nil {
		return nil, err
	}
	seen := make(map[string]bool, len(ids))
	out := make([]reference.TitleResult, 0, len(ids))
	var unindexed []int
	x.mu.RLock()
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		r := reference.TitleResult{SessionID: id}
		if e := x.titleEntry(id); e != nil {
			r.Title, r.Err = e.titleAnswer(id, x.root)
		} else {
			unindexed = append(unindexed, len(out))
		}
		out = append(out, r)
	}
	x.mu.RUnlock()
	for _, k := range unindexed {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out[k].Title, out[k].Err = x.titleOnDemand(out[k].SessionID)
	}
	return out, nil
}

// titleOnDemand answers the title of a session the index has no single
// entry for (not scanned yet, or not found, or a duplicate).
func (x *Indexed) titleOnDemand(id string) (*string, error) {
	e, err := x.indexOnDemand(id)
	if err != nil {
		return nil, err
	}
	return e.titleAnswer(id, x.root)
}

// Partial returns, taken together under one lock, the sessions indexed so
// far (in ListSessions order: newest first) and the title result of each,
// keyed by id, without reading any log (a listed session without a single
// entry, a duplicate id, is left out). complete is Complete() at that
// moment (then the listing is the whole store's as of the last refresh).
// Meant for answering during the first indexing pass; it does not refresh.
func (x *Indexed) Partial() (listing []reference.SessionHeader, titles map[string]reference.TitleResult, complete bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	listing = make([]reference.SessionHeader, 0, len(x.listing))
	titles = make(map[string]reference.TitleResult, len(x.listing))
	for _, h := range x.listing {
		e := x.titleEntry(h.ID)
		if e == nil {
			continue
		}
		r := reference.TitleResult{SessionID: h.ID}
		r.Title, r.Err = e.titleAnswer(h.ID, x.root)
		listing = append(listing, h)
		titles[h.ID] = r
	}
	return listing, titles, x.complete
}

// titleEntry returns the entry a full read of id would load (the store's
// find: every project directory holding <encodeSegment(id)>/), or nil when
// that is not exactly one indexed transcript. Callers hold x.mu.
func (x *Indexed) titleEntry(id string) *entry {
	if e := x.byTitleID[id]; e != nil {
		return e
	}
	seg, err := EncodeSegment(id)
	if err != nil {
		return nil
	}
	return x.findEntry(x.bySeg[seg])
}

// findEntry applies the store's find rules to the directories named by
// one segment.
func (x *Indexed) findEntry(group []*entry) *entry {
	var match *entry
	n := 0
	for _, e := range group {
		enc, _ := transcriptFor(x.store.enc, e.HasRaw, e.HasZstd)
		if enc == 0 {
			continue
		}
		n++
		if enc == e.Enc {
			match = e
		}
	}
	if n != 1 {
		return nil
	}
	return match
}

// rebuildListing recomputes the listing (Store.Discover's rules: root
// encoding, readable header, identity, first of duplicate ids in
// enumeration order) and the by-segment map. Callers hold x.mu.
func (x *Indexed) rebuildListing() {
	all := make([]*entry, 0, len(x.entries))
	for _, e := range x.entries {
		all = append(all, e)
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].Proj != all[j].Proj {
			return all[i].Proj < all[j].Proj
		}
		return all[i].Seg < all[j].Seg
	})
	bySeg := make(map[string][]*entry, len(all))
	listing := make([]reference.SessionHeader, 0, len(all))
	seen := make(map[string]bool, len(all))
	for _, e := range all {
		bySeg[e.Seg] = append(bySeg[e.Seg], e)
		if enc, _ := transcriptFor(x.store.enc, e.HasRaw, e.HasZstd); e.Enc != enc || enc == 0 || !e.Listed || !e.IdentityOK || seen[e.RefID] {
			continue
		}
		seen[e.RefID] = true
		listing = append(listing, e.ref)
	}
	SortHeaders(listing)
	byTitleID := make(map[string]*entry, len(bySeg))
	for _, group := range bySeg {
		if e := x.findEntry(group); e != nil && e.state != nil && e.TitleID != "" {
			byTitleID[e.TitleID] = e
		}
	}
	x.listing, x.bySeg, x.byTitleID = listing, bySeg, byTitleID
	x.gen++
	if x.changed != nil {
		close(x.changed)
	}
	x.changed = make(chan struct{})
}

func (x *Indexed) logf(format string, args ...any) {
	if x.opts.Logf != nil {
		x.opts.Logf(format, args...)
	}
}

// Stats describes the index (for logs and benchmarks).
type Stats struct {
	Sessions, Listed, Slow int
	// Parsed counts transcripts (re)indexed since open, Grown those
	// parsed only from their saved offset.
	Parsed, Grown int64
	// FastSurfaces counts ReadSurface answers built from the index
	// (the others were read by the store).
	FastSurfaces int64
	Complete     bool
	LastScan     time.Time
}

// Skipped reports, in path order, the transcripts the index does not read
// because the session directory's other transcript is read, or because
// they are in the other encoding than a pinned one (transcriptFor).
func (x *Indexed) Skipped() []error {
	x.mu.RLock()
	var out []error
	for _, e := range x.entries {
		if read, skipped := transcriptFor(x.store.enc, e.HasRaw, e.HasZstd); skipped != 0 {
			out = append(out, skippedTranscript(filepath.Join(x.root, e.Proj, e.Seg), read, skipped))
		}
	}
	x.mu.RUnlock()
	slices.SortFunc(out, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return out
}

// Stats returns counters of the index.
func (x *Indexed) Stats() Stats {
	x.mu.RLock()
	defer x.mu.RUnlock()
	s := Stats{Sessions: len(x.entries), Listed: len(x.listing), Complete: x.complete, LastScan: x.lastScan,
		Parsed: x.parsed.Load(), Grown: x.grown.Load(), FastSurfaces: x.fastSurfaces.Load()}
	for _, e := range x.entries {
		if e.state == nil {
			s.Slow++
		}
	}
	return s
}

// String names the index and its store root, for logs.
func (x *Indexed) String() string {
	return fmt.Sprintf("sessionstore.Indexed(%s)", x.root)
}
