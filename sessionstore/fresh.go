package sessionstore

import (
	"context"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dsh-lsp/dsh-lsp/sessionstore/transcript"
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
//     directories whose watch could not be added (watch limit reached):
//     a bounded stat scan (root, project directory mtimes, recently
//     modified sessions and a rotating slice of the others) runs in the
//     background every pollEvery and before an answer whose last poll is
//     older than pollFresh.
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
	// served in poll mode; older, the answer polls first.
	pollFresh = 100 * time.Millisecond
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
// transcripts must be stat'd again.
type changeSet struct {
	all      bool
	root     bool
	projects map[string]bool
	sessions map[string]bool
}

func (c *changeSet) addProject(p string) {
	if c.projects == nil {
		c.projects = map[string]bool{}
	}
	c.projects[p] = true
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
func (x *Indexed) noteChange(c changeSet) {
	f := &x.fresh
	f.mu.Lock()
	f.pending.merge(c)
	f.seq++
	if f.timer == nil {
		f.timer = time.AfterFunc(changeDebounce, x.kick)
	}
	f.mu.Unlock()
}

// kick runs refreshes in the background until no notice is pending (one
// runner at a time).
func (x *Indexed) kick() {
	f := &x.fresh
	f.mu.Lock()
	f.timer = nil
	if f.kicking {
		f.mu.Unlock()
		return
	}
	f.kicking = true
	f.mu.Unlock()
	if !x.startBackground(func() {
		for {
			if err := x.refreshWith(context.Background(), false, modeChanges); err != nil {
				x.logf("sessionstore: refreshing index of %s: %v", x.root, err)
			}
			f.mu.Lock()
			if f.seq == f.done || x.isClosed() {
				f.kicking = false
				f.mu.Unlock()
				break
			}
			f.mu.Unlock()
		}
		x.persist(false)
		x.warmCatalog()
	}) {
		f.mu.Lock()
		f.kicking = false
		f.mu.Unlock()
	}
}

// startBackground runs fn in a goroutine Close waits for, unless the
// index is closed (then it reports false).
func (x *Indexed) startBackground(fn func()) bool {
	x.bgMu.Lock()
	defer x.bgMu.Unlock()
	if x.isClosed() {
		return false
	}
	x.bg.Add(1)
	go func() {
		defer x.bg.Done()
		fn()
	}()
	return true
}

func (x *Indexed) isClosed() bool {
	select {
	case <-x.closed:
		return true
	default:
		return false
	}
}

// takeChanges removes the pending change set for a refresh that is about
// to run, and returns it with the seq it covers.
func (x *Indexed) takeChanges() (changeSet, uint64) {
	f := &x.fresh
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.pending
	f.pending = changeSet{}
	return c, f.seq
}

// changesDone records that a refresh covering seq finished; on failure
// the taken set goes back to pending.
func (x *Indexed) changesDone(c changeSet, seq uint64, ok, polled bool, at time.Time) {
	f := &x.fresh
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
func (x *Indexed) changesPending() bool {
	f := &x.fresh
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.seq != f.done
}

// pollDue reports whether some part of the store is polled and the last
// poll is older than age.
func (x *Indexed) pollDue(age time.Duration) bool {
	f := &x.fresh
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.pollAll && len(f.unwatched) == 0 && len(f.unwatchedProjects) == 0 {
		return false
	}
	return time.Since(f.lastPoll) >= age
}

// pollSet is what a poll stats besides the quick scan's hot sessions:
// unwatched projects (re-listed) and the next pollChunk unwatched
// sessions (in key order, resuming at the cursor). In poll mode the
// cold sessions of the whole index rotate.
func (x *Indexed) pollSet() changeSet {
	f := &x.fresh
	f.mu.Lock()
	defer f.mu.Unlock()
	var c changeSet
	for p := range f.unwatchedProjects {
		c.addProject(p)
	}
	var keys []string
	if f.pollAll {
		// x.entries is only written under refreshMu, which the caller
		// holds.
		keys = make([]string, 0, len(x.entries))
		for k := range x.entries {
			keys = append(keys, k)
		}
	} else {
		keys = make([]string, 0, len(f.unwatched))
		for k := range f.unwatched {
			keys = append(keys, k)
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
func (x *Indexed) markUnwatched(key string, project, unwatched bool) {
	f := &x.fresh
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
func (x *Indexed) forgetUnwatched(removed []string, projects map[string]projectScan) {
	f := &x.fresh
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
// polls what is not watched when the last poll is too old. Concurrent
// callers share one refresh (refreshWith re-checks the need under the
// refresh lock). The caller's ctx bounds only its wait: the refresh itself
// runs to completion for the callers behind it.
func (x *Indexed) revalidate(ctx context.Context) error {
	f := &x.fresh
	if f.fromCache {
		select {
		case <-f.verified:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if x.opts.Snapshot {
		return nil
	}
	var mode refreshMode
	switch {
	case x.pollDue(pollFresh):
		mode = modePoll
	case x.changesPending():
		mode = modeChanges
	default:
		return nil
	}
	done := make(chan error, 1)
	if !x.startBackground(func() { done <- x.refreshWith(context.Background(), false, mode) }) {
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
// diagnostics) converges without queries.
func (x *Indexed) pollLoop() {
	t := time.NewTicker(pollEvery)
	defer t.Stop()
	for {
		select {
		case <-x.closed:
			return
		case <-t.C:
		}
		if !x.Complete() || !x.pollDue(pollEvery/2) {
			continue
		}
		if err := x.refreshWith(context.Background(), false, modePoll); err != nil {
			x.logf("sessionstore: polling %s: %v", x.root, err)
		}
		x.persist(false)
		x.warmCatalog()
	}
}

// Fresh revalidates the index like a query does (see the freshness notes
// above) and returns the generation of the listing it would answer from:
// equal generations mean equal ListSessions and ReadTitles answers, so a
// caller may cache what it derived from them per generation.
func (x *Indexed) Fresh(ctx context.Context) (uint64, error) {
	if err := x.maybeRefresh(ctx); err != nil {
		return 0, err
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.gen, nil
}

// Changed returns a channel closed at the next change of the listing or
// of a title (the next generation): a server re-publishes what it showed
// unasked (diagnostics) when it closes.
func (x *Indexed) Changed() <-chan struct{} {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.changed
}

// deriveAll derives the entries loaded from the cache on every core: a
// restart, and every CLI run, pays for it before its first answer. An
// error remembered under another read limit is dropped, so the entry is
// parsed again. It reports whether a title had to be decoded that the
// cache could keep (a cache written before titles were persisted): the
// index should then be written again.
func deriveAll(entries []*entry, limit int64) (decoded bool) {
	workers := min(runtime.GOMAXPROCS(0), len(entries)/512+1)
	var n atomic.Int64
	var wg sync.WaitGroup
	per := (len(entries) + workers - 1) / workers
	for lo := 0; lo < len(entries); lo += per {
		part := entries[lo:min(lo+per, len(entries))]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, e := range part {
				if e == nil {
					continue
				}
				if e.ReadErr.Limit && e.ReadErrLimit != limit {
					e.ReadErr, e.ReadErrLimit, e.Sig.Size = transcript.SavedError{}, 0, -1
				}
				had := e.TitleDerived
				e.derive(e.State)
				if !had && e.TitleDerived {
					n.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	return n.Load() > 0
}
