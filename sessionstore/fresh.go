package sessionstore

import (
	"cmp"
	"context"
	"maps"
	"math"
	"slices"
	"sync"
	"time"
)

const (
	// changeDebounce groups one write burst's notifications.
	changeDebounce = 10 * time.Millisecond
	// pollEvery is the background poll period.
	pollEvery = 200 * time.Millisecond
	// pollFresh is the oldest last poll an answer accepts without a
	// background poller (and a poll that waited for another skips).
	pollFresh = 100 * time.Millisecond
	// pollStale is the oldest last poll an answer accepts beside the
	// poller (older only when it lags): under the 300 ms bound.
	pollStale = 250 * time.Millisecond
	// watchSafetyScan is how often watch-mode queries scan anyway.
	watchSafetyScan = fullScanEvery
)

// pollChunk bounds the cold unwatched sessions a poll stats; tests set it.
// 2,048 covers, in each poll, every unwatched session of a store up to
// 2,048 directories past the watch cap.
var pollChunk = 2048

// pollHotMax bounds the hot sessions a poll stats out of turn (pollHot;
// a quick scan's newestHot); tests set it. A live store has a few, those
// dsh writes; a store just touched or copied as a whole had 76,000, and
// every query waited 1.7 s for their stats. Past it the rest wait for the
// rotation, which covers every unwatched session in turn.
var pollHotMax = 512

// changeSet is what changed since a refresh took the previous set: all
// (rescan everything), the root's listing, project directories' listings,
// session directories ("proj/seg") to stat again, and polled: unwatched
// projects to re-list only when their mtime changed.
type changeSet struct {
	all      bool
	root     bool
	projects map[string]bool
	sessions map[string]bool
	polled   map[string]bool
}

// setKey sets (*m)[k] to v, making the map first.
func setKey[V any](m *map[string]V, k string, v V) {
	if *m == nil {
		*m = map[string]V{}
	}
	(*m)[k] = v
}

// addKey adds k to the set *m, which may be nil.
func addKey(m *map[string]bool, k string) { setKey(m, k, true) }

func (c *changeSet) addProject(p string) { addKey(&c.projects, p) }

func (c *changeSet) addSession(key string) { addKey(&c.sessions, key) }

func (c *changeSet) merge(o changeSet) {
	c.all = c.all || o.all
	c.root = c.root || o.root
	for k := range o.projects {
		addKey(&c.projects, k)
	}
	for k := range o.sessions {
		addKey(&c.sessions, k)
	}
	for k := range o.polled {
		addKey(&c.polled, k)
	}
}

// freshness is the Indexed's change tracking: answers reflect every write
// made 300 ms before them. Notifications (storeWatcher) mark what changed,
// for a debounced background refresh (kick) or, when still pending, the
// answer's own (revalidate). What has no watch (NoWatch, no inotify, a
// network file system, the cap) is polled (pollLoop). An index loaded from
// the cache answers once its first refresh checked every entry (verified).
type freshness struct {
	mu      sync.Mutex
	pending changeSet
	// seq counts notices; done is the seq the last refresh covered.
	seq, done uint64
	timer     *time.Timer
	kicking   bool
	// pollAll: nothing is watched; else the session directories
	// ("proj/seg") and projects without a watch are polled.
	pollAll           bool
	unwatched         map[string]bool
	unwatchedProjects map[string]bool
	// newlyWatched: projects that just got a watch, listed by the next
	// poll once more (a change before the watch was added is not
	// notified).
	newlyWatched map[string]bool
	lastPoll     time.Time
	// pollOrder is the rotation of cold polls, sorted: the unwatched
	// sessions' keys (nil when to be rebuilt) or, when nothing is watched,
	// every entry's (of listing generation pollOrderGen). pollCursor is
	// where the rotation resumes.
	pollOrder    []string
	pollOrderGen uint64
	pollCursor   string
	// pollHot are the unwatched sessions every poll stats: new ones, those
	// without an entry, and those hot when last seen.
	pollHot   map[string]bool
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

// kick runs one background refresher until no notice is pending.
func (ix *Indexed) kick() {
	f := &ix.fresh
	f.mu.Lock()
	f.timer = nil
	running := f.kicking
	f.kicking = true
	f.mu.Unlock()
	if running {
		return
	}
	// A closed index starts nothing, and none may run any more: kicking
	// then stays set.
	ix.startBackground(func() {
		for more := true; more; {
			if err := ix.refresh(context.Background(), false, modeChanges); err != nil {
				ix.logf("sessionstore: refreshing index of %s: %v", ix.root, err)
			}
			f.mu.Lock()
			more = f.seq != f.done && !ix.isClosed()
			f.kicking = more
			f.mu.Unlock()
		}
		ix.persist(false)
		ix.warmCatalog()
	})
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

func (ix *Indexed) isClosed() bool { return isDone(ix.closed) }

// isDone reports whether ch is closed.
func isDone(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// takeChanges hands the pending changes and their seq to a refresh.
func (ix *Indexed) takeChanges() (changeSet, uint64) {
	f := &ix.fresh
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.pending
	f.pending = changeSet{}
	return c, f.seq
}

// changesDone records a finished refresh; a failed one's stay pending.
func (ix *Indexed) changesDone(c changeSet, seq uint64, ok, polled bool, at time.Time) {
	f := &ix.fresh
	f.mu.Lock()
	defer f.mu.Unlock()
	if !ok {
		f.pending.merge(c)
		return
	}
	f.done = max(f.done, seq)
	if polled {
		f.lastPoll = at
	}
}

// changesPending reports notices no finished refresh covers.
func (ix *Indexed) changesPending() bool {
	ix.fresh.mu.Lock()
	defer ix.fresh.mu.Unlock()
	return ix.fresh.seq != ix.fresh.done
}

// pollDue reports whether something is polled and the last poll is older
// than age.
func (ix *Indexed) pollDue(age time.Duration) bool {
	f := &ix.fresh
	f.mu.Lock()
	defer f.mu.Unlock()
	polled := f.pollAll || len(f.unwatched) > 0 || len(f.unwatchedProjects) > 0 || len(f.newlyWatched) > 0
	return polled && time.Since(f.lastPoll) >= age
}

// pollsAll reports whether nothing is watched (the whole store is polled).
func (ix *Indexed) pollsAll() bool {
	ix.fresh.mu.Lock()
	defer ix.fresh.mu.Unlock()
	return ix.fresh.pollAll
}

// pollSet is what a poll stats: the unwatched projects, the unwatched
// sessions hot at now or not indexed, and those of the next pollChunk cold
// ones from the cursor (in poll mode, of every session: the quick scan
// stats the hot ones) whose transcripts no longer match their entries. The
// caller holds refreshMu, which guards ix.entries.
func (ix *Indexed) pollSet(ctx context.Context, now time.Time) changeSet {
	c, cold := ix.pollKeys(now)
	for _, k := range ix.changedOf(ctx, cold) {
		c.addSession(k)
	}
	return c
}

// pollKeys is pollSet's change set before the cold sessions, and the next
// pollChunk cold session keys from the cursor.
func (ix *Indexed) pollKeys(now time.Time) (c changeSet, cold []string) {
	f := &ix.fresh
	f.mu.Lock()
	defer f.mu.Unlock()
	for p := range f.newlyWatched {
		addKey(&c.polled, p)
	}
	f.newlyWatched = nil
	for p := range f.unwatchedProjects {
		if f.pollAll {
			c.addProject(p)
		} else {
			addKey(&c.polled, p)
		}
	}
	var keys []string
	if f.pollAll {
		if f.pollOrder == nil || f.pollOrderGen != ix.gen {
			f.pollOrder, f.pollOrderGen = make([]string, len(ix.all)), ix.gen
			for i, e := range ix.all {
				f.pollOrder[i] = e.Proj + "/" + e.Seg
			}
		}
		keys = f.pollOrder
	} else {
		// The hot few, not every unwatched session: at 100,000 sessions
		// most are unwatched and each poll would otherwise look them all up.
		// pollHot holds at most pollHotMax (addHot).
		for k := range f.pollHot {
			if e := ix.entryMap()[dirKeyOf(k)]; e == nil || e.hot(now) {
				c.addSession(k)
			} else {
				delete(f.pollHot, k)
			}
		}
		if len(f.pollHot) == 0 {
			// A map keeps its size when emptied: after a restart it
			// held every unwatched session (2.4 MB at 100,000).
			f.pollHot = nil
		}
		if f.pollOrder == nil {
			f.pollOrder = slices.Sorted(maps.Keys(f.unwatched))
		}
		keys = f.pollOrder
	}
	i := 0
	if len(keys) > pollChunk {
		i, _ = slices.BinarySearch(keys, f.pollCursor)
		f.pollCursor = keys[(i+pollChunk)%len(keys)]
	}
	for n := range min(pollChunk, len(keys)) {
		cold = append(cold, keys[(i+n)%len(keys)])
	}
	return c, cold
}

// addHot adds key to pollHot; when it holds pollHotMax already, key takes
// the place of another: the set holds sessions seen changing, the last
// one always among them.
func (f *freshness) addHot(key string) {
	if len(f.pollHot) >= pollHotMax && !f.pollHot[key] {
		for k := range f.pollHot {
			delete(f.pollHot, k)
			break
		}
	}
	addKey(&f.pollHot, key)
}

// hotDir is a hot session directory a quick scan may stat, ranked by
// hotRank.
type hotDir struct {
	proj, seg string
	rank      int64
}

// hotRank ranks hot entries: one with an unfinished header or read first,
// then by mtime, the newest first.
func hotRank(e *entry) int64 {
	if e.Sig.Size < 0 || e.NoHeaderYet {
		return math.MaxInt64
	}
	return e.Sig.MtimeNs
}

// newestHot returns hots, or, past pollHotMax of them, the pollHotMax of
// highest rank.
func newestHot(hots []hotDir) []hotDir {
	if len(hots) > pollHotMax {
		slices.SortFunc(hots, func(a, b hotDir) int { return cmp.Compare(b.rank, a.rank) })
		hots = hots[:pollHotMax]
	}
	return hots
}

// changedOf returns the keys among cold whose session directories no
// longer hold what their entries recorded (plan's rule), on two
// lstats per session. Only those go through the change scan, whose cost
// per session is several times that, so a poll covers pollChunk cold
// sessions in a few milliseconds.
func (ix *Indexed) changedOf(ctx context.Context, cold []string) []string {
	ix.coldChecks.Add(int64(len(cold)))
	entries := make([]*entry, len(cold))
	for i, k := range cold {
		entries[i] = ix.entryMap()[dirKeyOf(k)]
	}
	changed := make([]bool, len(cold))
	forEachStat(ctx, len(cold), func(i int) {
		changed[i] = entries[i] == nil || ix.entryChanged(entries[i], 0)
	})
	var out []string
	for i, k := range cold {
		if changed[i] {
			out = append(out, k)
		}
	}
	return out
}

// entryChanged reports whether e's session directory no longer holds what
// e recorded (plan's rule), on two lstats. A transcript of at most
// readBytes whose signature alone changed is read: unchanged when its
// bytes are e's (sameBytesAs).
func (ix *Indexed) entryChanged(e *entry, readBytes int64) bool {
	d := sessionDir{proj: e.Proj, seg: e.Seg}
	ix.statTranscripts(&d)
	enc, change := ix.compare(e, &d)
	if sig, _ := d.sig(enc); change == changeTranscript && sig.Size <= readBytes && e.mayKeep(enc, d.hasRaw, d.hasZstd, sig.Size) {
		_, same := ix.sameBytesAs(nil, e)
		return !same
	}
	return change != changeNone
}

// markProjectWatched records that project just got a watch: no longer
// polled, but listed once more by the next poll.
func (ix *Indexed) markProjectWatched(project string) {
	f := &ix.fresh
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.unwatchedProjects, project)
	addKey(&f.newlyWatched, project)
}

// markUnwatched records whether key (a project or "proj/seg") lacks a
// watch, so polls cover it. Callers hold refreshMu (entryMap), or are a
// first pass's parses (watchAtParse).
func (ix *Indexed) markUnwatched(key string, project, unwatched bool) {
	f := &ix.fresh
	f.mu.Lock()
	defer f.mu.Unlock()
	if project {
		if unwatched {
			addKey(&f.unwatchedProjects, key)
		} else {
			delete(f.unwatchedProjects, key)
		}
		return
	}
	was := f.unwatched[key]
	if unwatched != was && !f.pollAll {
		f.pollOrder = nil
	}
	if unwatched {
		if !was {
			addKey(&f.unwatched, key)
			// Checked by the next poll, not only in its turn, when it
			// has no entry yet or is hot (the rule pollKeys applies: an
			// idle one it would drop, after a restart every unwatched
			// session). One unwatched before was just stat'd by the
			// scan marking it. A first pass's parse marks its session just
			// before it reads it, and the entry's publish notes it hot if
			// it is (putEntry; at 100,000 sessions, 76,000 stat'd again by
			// the first poll otherwise): no entry to look up (watchAtParse).
			if ix.watchAtParse {
				return
			}
			if e := ix.entryMap()[dirKeyOf(key)]; e == nil || e.hot(time.Now()) {
				f.addHot(key)
			}
		}
	} else {
		delete(f.unwatched, key)
		delete(f.pollHot, key)
	}
}

// noteHot makes polls stat the session key every time while it is hot
// (when it is unwatched).
func (ix *Indexed) noteHot(key string) {
	f := &ix.fresh
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.unwatched[key] {
		f.addHot(key)
	}
}

// forgetUnwatched drops the marks of directories that no longer exist:
// the session directories a scan found gone (with an entry or without
// one) and the projects the last scan did not list. Callers hold
// refreshMu.
func (ix *Indexed) forgetUnwatched(gone []sessionDir) {
	f := &ix.fresh
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, d := range gone {
		k := d.key()
		if f.unwatched[k] && !f.pollAll {
			f.pollOrder = nil
		}
		delete(f.unwatched, k)
		delete(f.pollHot, k)
	}
	for p := range f.unwatchedProjects {
		if _, ok := ix.projects[p]; !ok {
			delete(f.unwatchedProjects, p)
		}
	}
}

// revalidate makes the index fit to answer from: it waits for the check
// of a loaded cache, then polls or refreshes what notifications reported.
// Concurrent callers share one refresh (refresh re-checks the need
// under its lock); ctx bounds only the caller's wait.
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
	stale := pollStale
	if ix.opts.NoWatch {
		stale = pollFresh
	}
	mode := modeChanges
	if ix.pollDue(stale) {
		mode = modePoll
	} else if !ix.changesPending() {
		return nil
	}
	done := make(chan error, 1)
	if !ix.startBackground(func() { done <- ix.refresh(context.Background(), false, mode) }) {
		return nil
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// pollLoop polls while part of the store is unwatched, so that
// diagnostics converge without queries; every fullScanEvery it runs a full
// scan instead, the safety net that also moves the watches
// (preferRecentWatches).
func (ix *Indexed) pollLoop() {
	t := time.NewTicker(pollEvery)
	defer t.Stop()
	for {
		select {
		case <-ix.closed:
			return
		case <-t.C:
		}
		ix.pollTicks.Add(1)
		// A loaded cache is complete at once, but its first refresh (a
		// full scan) has not run yet: a full scan decided now would be a
		// second one right after it (a second of stats and 100 MB of
		// garbage at 100,000 sessions, as the user starts typing).
		if !ix.Complete() || ix.unverified() || !ix.pollDue(pollEvery/2) {
			continue
		}
		// The full scan takes the background refresher's slot, so that a
		// query's safety scan (maybeRefresh) does not run it twice.
		mode := modePoll
		if ix.fullScanDue() && ix.refreshing.TryLock() {
			mode = modeFull
		}
		if err := ix.refresh(background(context.Background()), false, mode); err != nil {
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

// Fresh revalidates the index like a query does and returns the
// generation of the listing it would answer from: equal generations mean
// equal ListSessions and ReadTitles answers.
func (ix *Indexed) Fresh(ctx context.Context) (uint64, error) {
	if err := ix.maybeRefresh(ctx); err != nil {
		return 0, err
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.gen, nil
}

// Changed returns a channel closed at the next generation (a change of
// the listing or of a title).
func (ix *Indexed) Changed() <-chan struct{} {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.changed
}
