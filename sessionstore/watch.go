package sessionstore

import (
	"cmp"
	"errors"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/dsh-lsp/dsh-lsp/internal/beneath"
	"github.com/dsh-lsp/dsh-lsp/internal/watchbudget"
	"github.com/fsnotify/fsnotify"
)

// storeWatcher turns notifications on the store root, its project and its
// session directories into change sets. fsnotify is not recursive: the
// scans watch each directory before reading it (a first pass without a
// cache, each session directory before its parse opens the transcript and
// reads it to the size it then has), so no later write goes unnoticed. A
// watch creates, writes and locks nothing.
type storeWatcher struct {
	ix    *Indexed
	w     *fsnotify.Watcher
	root  string // clean; event names start with it
	limit int    // the most directories watched (at least 1: the root)

	mu      sync.Mutex
	watched map[string]bool
	// full: out of watches; the rest is polled until a directory goes.
	full bool
}

// newStoreWatcher watches root, or returns nil when notifications are not
// available there (the index then polls).
func newStoreWatcher(ix *Indexed) *storeWatcher {
	root := filepath.Clean(ix.root)
	if !watchbudget.Reliable(root) {
		ix.logf("sessionstore: %s is on a file system without reliable change notifications; polling it", root)
		return nil
	}
	w, err := fsnotify.NewBufferedWatcher(1024)
	if err != nil {
		ix.logf("sessionstore: no file-system notifications (%v); polling %s", err, root)
		return nil
	}
	if err := w.Add(root); err != nil {
		w.Close()
		// A missing root is polled: it may appear later, and watching its
		// parent would watch outside the store.
		ix.logf("sessionstore: cannot watch %s (%v); polling it", root, err)
		return nil
	}
	limit := cmp.Or(ix.opts.watchLimit, maxWatches())
	return &storeWatcher{ix: ix, w: w, root: root, limit: limit, watched: map[string]bool{root: true}}
}

// maxWatches is the cap on the directories one index watches (a variable
// for tests).
var maxWatches = watchbudget.Max

// run delivers notifications until the watcher is closed.
func (sw *storeWatcher) run() {
	for {
		select {
		case ev, ok := <-sw.w.Events:
			if !ok {
				return
			}
			if c, ok := sw.changeOf(ev); ok {
				sw.ix.noteChange(c)
			}
		case err, ok := <-sw.w.Errors:
			if !ok {
				return
			}
			// An overflowed queue lost notifications: rescan everything.
			if !errors.Is(err, fsnotify.ErrEventOverflow) {
				sw.ix.logf("sessionstore: watching %s: %v", sw.root, err)
			}
			sw.ix.noteChange(changeSet{all: true})
		}
	}
}

// changeOf maps a notification to what must be re-read: the listings of
// the directories it names an entry of, and the session directory it is
// in or names.
func (sw *storeWatcher) changeOf(ev fsnotify.Event) (changeSet, bool) {
	var c changeSet
	rel, in := beneath.Rel(sw.root, ev.Name)
	if !in {
		return c, false
	}
	gone := ev.Op&(fsnotify.Remove|fsnotify.Rename) != 0
	if rel == "." {
		if gone {
			sw.forget(sw.root)
		}
		return changeSet{all: true}, true
	}
	parts := strings.Split(rel, string(filepath.Separator))
	switch len(parts) {
	case 1:
		c.root = true
		c.addProject(parts[0])
	case 2:
		c.addProject(parts[0])
		c.addSession(parts[0] + "/" + parts[1])
	case 3:
		if parts[2] != Raw.FileName() && parts[2] != Zstd.FileName() {
			return c, false
		}
		c.addSession(parts[0] + "/" + parts[1])
	default:
		return c, false
	}
	if gone && len(parts) < 3 {
		// The watch went with the directory; a new one of that name needs
		// its own.
		sw.forget(ev.Name)
	}
	return c, true
}

// watch watches dir, again when force (it may have been replaced), and
// reports whether dir is watched; err is why adding its watch failed (nil
// when it was not tried: the watches are at their cap).
func (sw *storeWatcher) watch(dir string, force bool) (ok bool, err error) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	had := sw.watched[dir]
	if had && !force {
		return true, nil
	}
	if !had && (sw.full || len(sw.watched) >= sw.limit) {
		if !sw.full {
			sw.ix.logf("sessionstore: watching at most %d directories of %s (a share of the user's inotify watches); polling the others, from %s on", sw.limit, sw.root, dir)
		}
		sw.full = true
		return false, nil
	}
	if err := sw.w.Add(dir); err != nil {
		delete(sw.watched, dir)
		if watchbudget.Exhausted(err) && !sw.full {
			sw.ix.logf("sessionstore: file-system watch limit reached at %s (%v); polling the directories not watched", dir, err)
			sw.full = true
		}
		return false, err
	}
	sw.watched[dir] = true
	return true, nil
}

// forget drops dir and the directories under it (their watches went too).
func (sw *storeWatcher) forget(dir string) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	prefix := dir + string(filepath.Separator)
	for d := range sw.watched {
		if d == dir || strings.HasPrefix(d, prefix) {
			delete(sw.watched, d)
			sw.w.Remove(d) // may already be gone; nothing to do then
		}
	}
	sw.full = false
}

func (sw *storeWatcher) close() { sw.w.Close() }

// watchDir watches a directory the scan is about to read, or marks key
// (a project or "proj/seg") for polls.
func (ix *Indexed) watchDir(dir, key string, project, force bool) {
	sw := ix.watcher
	if sw == nil {
		return
	}
	// A directory gone already is not polled (the scan will not find it
	// either). Past the cap the watch is not tried, and one that went
	// since the scan listed it is polled until a scan of its project
	// finds it gone: an lstat to tell the two apart was one system call
	// per session beyond the cap, 90,000 in a first pass over 100,000
	// sessions.
	ok, err := sw.watch(dir, force)
	if err != nil {
		ok = errors.Is(err, fs.ErrNotExist)
	}
	ix.markUnwatched(key, project, !ok)
}

// preferRecentWatches, when the cap left sessions unwatched, moves the
// session watches to the project directories first (where dsh creates new
// sessions; a project without a watch is stat'd on every poll), then to
// the newest sessions, those dsh writes to: each takes the watch of the
// oldest watched session not among them, and is stat'd (a project listed)
// once more for a write before its watch. Called with refreshMu held,
// after a full scan.
func (ix *Indexed) preferRecentWatches() {
	sw := ix.watcher
	if sw == nil {
		return
	}
	ix.fresh.mu.Lock()
	polled := len(ix.fresh.unwatched)
	projects := slices.Sorted(maps.Keys(ix.fresh.unwatchedProjects))
	ix.fresh.mu.Unlock()
	if polled == 0 {
		return
	}
	watched := sw.watchedSessions()
	// The session watches that stay sessions'.
	keep := max(len(watched)-len(projects), 0)
	mtime := func(k string) int64 {
		if e := ix.entryMap()[dirKeyOf(k)]; e != nil {
			return e.Sig.MtimeNs
		}
		return 0 // a session directory without a transcript: idle
	}
	var need []string
	var key []byte
	for _, w := range newestEntries(ix.entryMap(), keep) {
		key = appendKey(key[:0], w.key.proj, w.key.seg)
		if watched[string(key)] {
			delete(watched, string(key)) // keeps its watch
		} else {
			need = append(need, string(key))
		}
	}
	spare := slices.SortedFunc(maps.Keys(watched), func(a, b string) int { return cmp.Compare(mtime(a), mtime(b)) })
	var gained changeSet
	for _, p := range projects[:min(len(projects), len(spare))] {
		// The session is polled from now on; the project is listed by the
		// next poll once more.
		ix.markUnwatched(spare[0], false, true)
		if sw.swap(filepath.Join(sw.root, filepath.FromSlash(spare[0])), filepath.Join(sw.root, p)) {
			ix.markProjectWatched(p)
		}
		spare = spare[1:]
	}
	for i, k := range need[:min(len(need), len(spare))] {
		// Polled before its watch goes, so no write goes unseen.
		ix.markUnwatched(spare[i], false, true)
		if sw.swap(filepath.Join(sw.root, filepath.FromSlash(spare[i])), filepath.Join(sw.root, filepath.FromSlash(k))) {
			ix.markUnwatched(k, false, false)
			gained.addSession(k)
		}
	}
	if len(gained.sessions) > 0 {
		ix.noteChange(gained)
	}
}

// restartWatches returns, for a restart's first refresh over more sessions
// than the cap watches, the keys of the newest cached sessions it leaves
// room for beside the root and the projects: the scan watches those and
// polls the others, where it watched in directory order and the move after
// it (preferRecentWatches) stat'd and watched again each one it moved
// (18,000 at 100,000 sessions). nil: watch as listed.
func (ix *Indexed) restartWatches() map[string]bool {
	sw, entries := ix.watcher, ix.entryMap()
	if sw == nil || !ix.fresh.fromCache {
		return nil
	}
	projects := map[string]bool{}
	for k := range entries {
		projects[k.proj] = true
	}
	n := sw.limit - 1 - len(projects)
	if n >= len(entries) {
		return nil
	}
	keep := make(map[string]bool, max(n, 0))
	for _, w := range newestEntries(entries, n) {
		keep[w.key.proj+"/"+w.key.seg] = true
	}
	return keep
}

// written is an entry's key and its transcript's mtime.
type written struct {
	key   dirKey
	mtime int64
}

// newestEntries returns the n entries with the newest transcripts, newest
// first (ties in key order), each mtime read once. Only those are sorted,
// bounded by the n-th newest mtime: a store of 100,000 sessions selects
// here after every full scan, and a sorted copy of every entry took 4 MB.
func newestEntries(entries map[dirKey]*entry, n int) []written {
	mtimes := make([]int64, 0, len(entries))
	for _, e := range entries {
		mtimes = append(mtimes, e.Sig.MtimeNs)
	}
	n = min(n, len(mtimes))
	if n <= 0 {
		return nil
	}
	slices.Sort(mtimes)
	bound := mtimes[len(mtimes)-n]
	top := make([]written, 0, n)
	for k, e := range entries {
		if e.Sig.MtimeNs >= bound {
			top = append(top, written{k, e.Sig.MtimeNs})
		}
	}
	slices.SortFunc(top, func(a, b written) int {
		return cmp.Or(cmp.Compare(b.mtime, a.mtime), strings.Compare(a.key.proj, b.key.proj), strings.Compare(a.key.seg, b.key.seg))
	})
	return top[:n]
}

// watchedSessions returns the keys of the watched session directories
// (every watched directory lies below the root).
func (sw *storeWatcher) watchedSessions() map[string]bool {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	keys := map[string]bool{}
	for dir := range sw.watched {
		if rel, err := filepath.Rel(sw.root, dir); err == nil && strings.Count(rel, string(filepath.Separator)) == 1 {
			keys[filepath.ToSlash(rel)] = true
		}
	}
	return keys
}

// swap moves a watch from old to dir; it reports whether dir is watched.
func (sw *storeWatcher) swap(old, dir string) bool {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if sw.watched[old] {
		delete(sw.watched, old)
		sw.w.Remove(old) // may already be gone; nothing to do then
	}
	if err := sw.w.Add(dir); err != nil {
		return false
	}
	sw.watched[dir] = true
	return true
}
