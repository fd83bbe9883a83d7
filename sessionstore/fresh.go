package sessionstore

import (
	"context"
	"sort"
	"sync"
	"time"
)

// Freshness of the index.
//
// An answer must reflect what dsh wrote before it (every answer from
// 300 ms after a write). The index learns of writes in two ways:
//
//   - Watch mode (the default): file-system notifications (storeWatcher)
//     on the store root, every project directory and every session
//     directory mark what changed (a changeSet). A debounced background
//     refresh re-reads just that, and an answer that finds changes not
//     refreshed yet refreshes them first (synchronously, coalesced: one
//     refresh serves every waiting query).
//   - Poll mode, where notifications are unavailable (IndexOptions.NoWatch,
//     no inotify instance left, a network file system) or for the
//     directories whose watch could not be added (watch limit reached).
//     A background poller stats, every pollEvery, what has no watch:
//     when part of the store is watched, only the unwatched project
//     directories (re-listed), the unwatched sessions written in the last
//     hotWindow and a rotating slice of the others (pollSet); when nothing
//     is watched, a bounded quick scan of the store besides. Its last
//     poll is thus normally younger than pollEvery plus one poll, and an
//     answer does not wait for a poll while it is younger than pollStale;
//     when the poller lags (a loaded machine) or there is none, the answer
//     polls first (only the unwatched set, when part of the store is
//     watched). Every fullScanEvery the poller rescans the whole store
//     instead (then moving the watches to the newest sessions).
//
// An index loaded from the persisted cache answers only once its first
// refresh has stat-checked every cached entry (and re-parsed what
// changed), so a restart never answers from entries made stale while the
// server was not running.

const (
	// changeDebounce groups the notifications of one write burst into
	// one refresh.
	changeDebounce = 10 * time.Millisecond
	// pollEvery is the background stat-scan period of poll mode.
	pollEvery = 200 * time.Millisecond
	// pollFresh is how old the last poll may be when an answer is
	// served in poll mode without a background poller; older, the
	// answer polls first. A poll that waited for another one to finish
	// is skipped when that one is younger.
	pollFresh = 100 * time.Millisecond
	// pollStale is how old the last poll may be when an answer is
	// served while the background poller runs: it polls every
	// pollEvery, so its last poll is older only when it lags. Under the
	// 300 ms freshness bound, so a finished poll covers every write made
	// 300 ms before the answer.
	pollStale = 250 * time.Millisecond
	// watchSafetyScan is how often, in watch mode, queries start a
	// background quick scan anyway (a notification missed by the
	// kernel's queue is also reported as an overflow, which rescans).
	watchSafetyScan = fullScanEvery
)

// pollChunk bounds how many cold unwatched sessions one poll stats
// (besides the hot ones): the others wait for later polls. (A variable
// for tests.)
var pollChunk = 512

// changeSet is what notifications said changed since a refresh took the
// previous set: all (rescan everything), the root's listing, project
// directories' listings, and session directories ("proj/seg") whose
// transcripts must be stat'd again. A poll adds polled: unwatched project
// directories to re-list only when their mtime says their listing may
// have changed.
type changeSet struct {
	all      bool
	root     bool
	projects map[string]bool
	sessions map[string]bool
	polled   map[string]bool
}

func (c *changeSet) addProject(p string) {
	if c.projects == nil {
		c.projects = map[string]bool{}
	}
	c.projects[p] = true
}

func (c *changeSet) addPolled(p string) {
	if c.polled == nil {
		c.polled = map[string]bool{}
	}
	c.polled[p] = true
}

func (c *changeSet) addSession(key string) {
	if c.sessions == nil {
		c.sessions = map[string]bool{}
	}
	c.sessions[key] = true
}

func (c *changeSet) merge(o changeSet) {
	c.all = c.all || o.all
	c.root = c.root || o.root
	for p := range o.projects {
		c.addProject(p)
	}
	for k := range o.sessions {
		c.addSession(k)
	}
	for p := range o.polled {
		c.addPolled(p)
	}
}

// freshness is the Indexed's change tracking (see the package comment
// above).
type freshness struct {
	mu      sync.Mutex
	pending changeSet
	// seq counts notices; done is the seq the last finished refresh
	// covered (it took pending at that seq).
	seq, done uint64
	timer     *time.Timer
	kicking   bool
	// pollAll: nothing is watched (poll mode). unwatched lists the
	// session directories ("proj/seg") and projects whose watch could
	// not be added; they are polled.
	pollAll           bool
	unwatched         map[string]bool
	unwatchedProjects map[string]bool
	lastPoll          time.Time
	// pollCursor is where the rotating slice of cold unwatched sessions
	// resumes.
	pollCursor string
	// fromCache: the index was loaded from the persisted cache; answers
	// wait for verified (closed when the first refresh has checked it).
	fromCache bool
	verified  chan struct{}
}

// noteChange records a notification and schedules the debounced refresh.
func (ix *Indexed) noteChange(c changeSet) {
	f := &ix.fresh
	f.mu.Lock()
	f.pending.merge(c)
	f.seq++
	if f.timer == nil {
		f.timer = time.AfterFunc(changeDebounce, ix.kick)
	}
	f.mu.Unlock()
}

// kick runs refreshes in the background until no notice is pending (one
// runner at a time).
func (ix *Indexed) kick() {
	f := &ix.fresh
	f.mu.Lock()
	f.timer = nil
	if f.kicking {
		f.mu.Unlock()
		return
	}
	f.kicking = true
	f.mu.Unlock()
	if !ix.startBackground(func() {
		for {
			if err := ix.refreshWith(context.Background(), false, modeChanges); err != nil {
				ix.logf("sessionstore: refreshing index of %s: %v", ix.root, err)
			}
			f.mu.Lock()
			if f.seq == f.done || ix.isClosed() {
				f.kicking = false
				f.mu.Unlock()
				break
			}
			f.mu.Unlock()
		}
		ix.persist(false)
		ix.warmCatalog()
	}) {
		f.mu.Lock()
		f.kicking = false
		f.mu.Unlock()
	}
}

// startBackground runs fn in a goroutine Close waits for, unless the
// index is closed (then it reports false).
func (ix *Indexed) startBackground(fn func()) bool {
	ix.bgMu.Lock()
	defer ix.bgMu.Unlock()
	if ix.isClosed() {
		return false
	}
	ix.bg.Add(1)
	go func() {
		defer ix.bg.Done()
		fn()
	}()
	return true
}

func (ix *Indexed) isClosed() bool {
	select {
	case <-ix.closed:
		return true
	default:
		return false
	}
}

// takeChanges removes the pending change set for a refresh that is about
// to run, and returns it with the seq it covers.
func (ix *Indexed) takeChanges() (changeSet, uint64) {
	f := &ix.fresh
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.pending
	f.pending = changeSet{}
	return c, f.seq
}

// changesDone records that a refresh covering seq finished; on failure
// the taken set goes back to pending.
func (ix *Indexed) changesDone(c changeSet, seq uint64, ok, polled bool, at time.Time) {
	f := &ix.fresh
	f.mu.Lock()
	defer f.mu.Unlock()
	if !ok {
		f.pending.merge(c)
		return
	}
	if seq > f.done {
		f.done = seq
	}
	if polled {
		f.lastPoll = at
	}
}

// changesPending reports whether notices arrived that no finished
// refresh covers.
func (ix *Indexed) changesPending() bool {
	f := &ix.fresh
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.seq != f.done
}

// pollDue reports whether some part of the store is polled and the last
// poll is older than age.
func (ix *Indexed) pollDue(age time.Duration) bool {
	f := &ix.fresh
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.pollAll && len(f.unwatched) == 0 && len(f.unwatchedProjects) == 0 {
		return false
	}
	return time.Since(f.lastPoll) >= age
}

// pollsAll reports whether nothing is watched (the whole store is polled).
func (ix *Indexed) pollsAll() bool {
	f := &ix.fresh
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pollAll
}

// pollSet is what a poll stats: unwatched projects (re-listed; when part
// of the store is watched, only if their mtime changed), the
// unwatched sessions that are hot at now (or have no indexed transcript
// yet) and the next pollChunk cold ones (in key order, resuming at the
// cursor). In poll mode (pollAll) the quick scan stats the hot sessions,
// and the cold sessions of the whole index rotate. The caller holds
// refreshMu (ix.entries is only written under it).
func (ix *Indexed) pollSet(now time.Time) changeSet {
	f := &ix.fresh
	f.mu.Lock()
	defer f.mu.Unlock()
	var c changeSet
	for p := range f.unwatchedProjects {
		if f.pollAll {
			c.addProject(p)
		} else {
			c.addPolled(p)
		}
	}
	var keys []string
	if f.pollAll {
		keys = make([]string, 0, len(ix.entries))
		for k := range ix.entries {
			keys = append(keys, k)
		}
	} else {
		keys = make([]string, 0, len(f.unwatched))
		for k := range f.unwatched {
			if e := ix.entries[k]; e == nil || e.hot(now) {
				c.addSession(k)
			} else {
				keys = append(keys, k)
			}
		}
	}
	if len(keys) <= pollChunk {
		for _, k := range keys {
			c.addSession(k)
		}
		return c
	}
	sort.Strings(keys)
	i := sort.SearchStrings(keys, f.pollCursor)
	for n := 0; n < pollChunk; n++ {
		c.addSession(keys[(i+n)%len(keys)])
	}
	f.pollCursor = keys[(i+pollChunk)%len(keys)]
	return c
}

// markUnwatched records that dir (a project name or a "proj/seg" key)
// has no watch, so polls cover it; watched clears the mark.
func (ix *Indexed) markUnwatched(key string, project, unwatched bool) {
	f := &ix.fresh
	f.mu.Lock()
	defer f.mu.Unlock()
	m := &f.unwatched
	if project {
		m = &f.unwatchedProjects
	}
	if !unwatched {
		delete(*m, key)
		return
	}
	if *m == nil {
		*m = map[string]bool{}
	}
	(*m)[key] = true
}

// forgetUnwatched drops the marks of session directories and projects
// that no longer exist.
func (ix *Indexed) forgetUnwatched(removed []string, projects map[string]projectScan) {
	f := &ix.fresh
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, k := range removed {
		delete(f.unwatched, k)
	}
	for p := range f.unwatchedProjects {
		if _, ok := projects[p]; !ok {
			delete(f.unwatchedProjects, p)
		}
	}
}

// revalidate makes the index fit to answer from: it waits for the check
// of a loaded cache, refreshes what notifications reported changed, and
// polls what is not watched when the last poll is too old (older than
// the background poller lets it become, when there is one). Concurrent
// callers share one refresh (refreshWith re-checks the need under the
// refresh lock). The caller's ctx bounds only its wait: the refresh itself
// runs to completion for the callers behind it.
func (ix *Indexed) revalidate(ctx context.Context) error {
	f := &ix.fresh
	if f.fromCache {
		select {
		case <-f.verified:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if ix.opts.Snapshot {
		return nil
	}
	stale := pollFresh
	if !ix.opts.NoWatch {
		// The background poller (pollLoop) keeps the last poll young.
		stale = pollStale
	}
	var mode refreshMode
	switch {
	case ix.pollDue(stale):
		mode = modePoll
	case ix.changesPending():
		mode = modeChanges
	default:
		return nil
	}
	done := make(chan error, 1)
	if !ix.startBackground(func() { done <- ix.refreshWith(context.Background(), false, mode) }) {
		return nil
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// pollLoop polls in the background while part of the store is unwatched,
// so that the index (and what a client is shown unasked, like
// diagnostics) converges without queries and answers need not poll.
// Every fullScanEvery its poll is a full scan instead: the safety net for
// what a poll of the unwatched set cannot see, and the point where the
// watches move to the newest sessions (preferRecentWatches).
func (ix *Indexed) pollLoop() {
	t := time.NewTicker(pollEvery)
	defer t.Stop()
	for {
		select {
		case <-ix.closed:
			return
		case <-t.C:
		}
		if !ix.Complete() || !ix.pollDue(pollEvery/2) {
			continue
		}
		// The full scan takes the background refresher's slot, so that a
		// query's safety scan (maybeRefresh) does not run it twice.
		mode := modePoll
		if ix.fullScanDue() && ix.refreshing.TryLock() {
			mode = modeFull
		}
		if err := ix.refreshWith(context.Background(), false, mode); err != nil {
			ix.logf("sessionstore: polling %s: %v", ix.root, err)
		}
		if mode == modeFull {
			ix.refreshing.Unlock()
		}
		ix.persist(false)
		ix.warmCatalog()
	}
}

// fullScanDue reports whether the last full scan is fullScanEvery old.
func (ix *Indexed) fullScanDue() bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return time.Since(ix.lastFull) >= fullScanEvery
}

// Fresh revalidates the index like a query does (see the freshness notes
// above) and returns the generation of the listing it would answer from:
// equal generations mean equal ListSessions and ReadTitles answers, so a
// caller may cache what it derived from them per generation.
func (ix *Indexed) Fresh(ctx context.Context) (uint64, error) {
	if err := ix.maybeRefresh(ctx); err != nil {
		return 0, err
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.gen, nil
}

// Changed returns a channel closed at the next change of the listing or
// of a title (the next generation): a server re-publishes what it showed
// unasked (diagnostics) when it closes.
func (ix *Indexed) Changed() <-chan struct{} {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.changed
}
