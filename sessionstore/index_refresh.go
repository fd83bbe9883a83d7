package sessionstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dsh-lsp/dsh-lsp/internal/beneath"
	"github.com/dsh-lsp/dsh-lsp/internal/binenc"
	"github.com/dsh-lsp/dsh-lsp/internal/gcgoal"
	"github.com/dsh-lsp/dsh-lsp/internal/parallel"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/transcript"
)

// projectScan remembers a project directory's session directories (the
// entries' strings where they have entries: segEntry).
type projectScan struct {
	mtime int64
	segs  []string
	// bare lists the segs that had no entry when a change scan last went
	// through them all (bareKnown): the ones it stats again on every
	// poll, since a transcript may appear in them without the project's
	// listing changing.
	bare      []string
	bareKnown bool
}

const (
	// dirTrustAge is how old a project directory's mtime must be before an
	// unchanged mtime is trusted to mean an unchanged listing (mtime
	// granularity and racing writers).
	dirTrustAge = 2 * time.Second
	// A quick scan stats only the transcripts modified within hotWindow
	// (live sessions); the others wait for the full scan every
	// fullScanEvery, or for Refresh.
	hotWindow     = 10 * time.Minute
	fullScanEvery = 30 * time.Second
)

// scan stats the store: project directories (re-listed when new, named by
// cs, or their mtime changed) and the transcripts of their session
// directories. A quick scan (full false) stats only those of re-listed
// projects, of hot sessions and of the sessions cs names. Every directory
// is watched before it is read, so nothing written after goes unnoticed.
// It returns the directories whose transcripts differ from their entries
// (or have none) and the entries gone (statBatch).
func (ix *Indexed) scan(ctx context.Context, now time.Time, full bool, cs changeSet) (scanResult, error) {
	ix.wholeScans.Add(1)
	full = full || cs.all
	if full {
		ix.fullScans.Add(1)
	}
	ix.watchRoot(cs.all)
	projects, found, err := ix.listRoot()
	if err != nil || !found {
		return scanResult{gone: ix.entriesNotListed(nil)}, err
	}
	b := &statBatch{ix: ix, dirs: make([]sessionDir, 0, min(scanBatchSize, len(ix.entryMap())+1))}
	seen := make(map[string]projectScan, len(projects))
	for _, proj := range projects {
		if err := ctx.Err(); err != nil {
			return scanResult{}, err
		}
		ps, relisted, ok := ix.listProject(proj, now, cs, true)
		if !ok {
			continue
		}
		// Entries this scan removes may leave bare directories: the next
		// change scan goes through the project's segs again.
		ps.bare, ps.bareKnown = nil, false
		seen[proj] = ps
		if err := b.addProject(ctx, proj, ps.segs, relisted, full, now, cs); err != nil {
			return scanResult{}, err
		}
	}
	// A quick scan stats the hot sessions after the others, the newest
	// pollHotMax of them: the rotation of polls covers the rest.
	for _, h := range newestHot(b.hots) {
		if err := b.add(ctx, ix.toStat(h.proj, h.seg, cs)); err != nil {
			return scanResult{}, err
		}
	}
	if err := b.flush(ctx); err != nil {
		return scanResult{}, err
	}
	ix.setProjects(seen)
	b.found.gone = append(b.found.gone, ix.entriesNotListed(seen)...)
	return b.found, nil
}

// segEntry returns the entry of the session directory segs[i] of
// project proj (nil without one). When the project was just listed
// again, segs[i] becomes the entry's own string, not os.ReadDir's copy
// (5 MB at 100,000 sessions after a restart, whose entries' strings lie
// in the cache).
func (ix *Indexed) segEntry(proj string, segs []string, i int, relisted bool) *entry {
	e := ix.entryMap()[dirKey{proj, segs[i]}]
	if e != nil && relisted {
		segs[i] = e.Seg
	}
	return e
}

// statBatch is a scan's session directories to stat, stat'd scanBatchSize
// at a time: only those that differ from their entries are kept (found),
// so a scan of 100,000 sessions holds a few thousand, not all of them.
type statBatch struct {
	ix    *Indexed
	dirs  []sessionDir
	found scanResult
	// bare are the directories found without a transcript, kept by a
	// change scan (found.partial) for markBare.
	bare []sessionDir
	// hots are a quick scan's hot sessions (addProject), key its buffer.
	hots []hotDir
	key  []byte
}

// addProject adds project proj's directories segs a scan stats: all in a
// full scan or a relisted project, else the new ones and those cs names;
// a quick scan's hot ones go to b.hots.
func (b *statBatch) addProject(ctx context.Context, proj string, segs []string, relisted, full bool, now time.Time, cs changeSet) error {
	ix := b.ix
	for i, seg := range segs {
		old := ix.segEntry(proj, segs, i, relisted)
		b.key = appendKey(b.key[:0], proj, seg) // looked up without a copy
		if old != nil && !full && !relisted && !cs.sessions[string(b.key)] {
			if old.hot(now) {
				b.hots = append(b.hots, hotDir{proj, seg, hotRank(old)})
			}
			continue
		}
		if err := b.add(ctx, ix.toStat(proj, seg, cs)); err != nil {
			return err
		}
	}
	return nil
}

// scanBatchSize is how many session directories a scan stats at a time.
const scanBatchSize = 4096

// add queues d, stating the batch when it holds scanBatchSize. (Not when
// it is at its capacity: a first scan's starts at 1, and stating one
// directory at a time is serial.)
func (b *statBatch) add(ctx context.Context, d sessionDir) error {
	b.dirs = append(b.dirs, d)
	if len(b.dirs) < scanBatchSize {
		return nil
	}
	return b.flush(ctx)
}

// flush stats the queued directories and keeps those without a
// transcript (bare) and, of them, those whose entry goes (gone), and
// those that differ from their entries (dirs).
func (b *statBatch) flush(ctx context.Context) error {
	ix := b.ix
	ix.dirStats.Add(int64(len(b.dirs)))
	ix.statBatches.Add(1)
	forEachStat(ctx, len(b.dirs), func(k int) { ix.statTranscripts(&b.dirs[k]) })
	if err := ctx.Err(); err != nil {
		return err
	}
	for i := range b.dirs {
		d := &b.dirs[i]
		old := ix.entryMap()[d.dirKey()]
		if !d.hasRaw && !d.hasZstd && ix.watchAtParse {
			// No parse to watch it: watched now, then stat'd again for a
			// transcript made before the watch; polled each time if not.
			ix.watchDir(filepath.Join(ix.root, d.proj, d.seg), d.key(), false, false)
			ix.statTranscripts(d)
			ix.noteHot(d.key())
		}
		if !d.hasRaw && !d.hasZstd {
			if b.found.partial {
				b.bare = append(b.bare, *d)
			}
			if old != nil {
				b.found.gone = append(b.found.gone, sessionDir{proj: d.proj, seg: d.seg})
			}
		} else if _, change := ix.compare(old, d); change != changeNone {
			b.found.dirs = append(b.found.dirs, *d)
		}
	}
	b.dirs = b.dirs[:0]
	return nil
}

// entriesNotListed returns the session directories of the entries whose
// project or directory is not in seen (a project's segs are sorted: they
// come from os.ReadDir).
func (ix *Indexed) entriesNotListed(seen map[string]projectScan) []sessionDir {
	var gone []sessionDir
	for k := range ix.entryMap() {
		ps, ok := seen[k.proj]
		if _, listed := slices.BinarySearch(ps.segs, k.seg); !ok || !listed {
			gone = append(gone, sessionDir{proj: k.proj, seg: k.seg})
		}
	}
	return gone
}

// listRoot returns the root's project directories. found is false when
// the root does not exist: an empty store.
func (ix *Indexed) listRoot() (projects []string, found bool, err error) {
	// The mtime is taken before the listing: a change between the two
	// leaves it older than the listing, which a restart then distrusts.
	if fi, err := os.Stat(ix.root); err == nil {
		ix.rootMtime = fi.ModTime().UnixNano()
	}
	projects, err = subdirs(ix.root)
	if errors.Is(err, fs.ErrNotExist) {
		ix.setProjects(map[string]projectScan{})
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("sessionstore: listing root %s: %w", ix.root, err)
	}
	return projects, true, nil
}

// setProjects records the projects a scan listed, and the store's shape
// (the root's and the projects' mtimes), which the cache persists with
// the entries once the scan's changes are all applied. Callers hold
// refreshMu.
func (ix *Indexed) setProjects(projects map[string]projectScan) {
	ix.projects = projects
	// An mtime younger than dirTrustAge may not have moved for an entry
	// added in the same clock tick after the listing: no shape then, and a
	// restart on it waits for its first refresh.
	now := time.Now().UnixNano()
	fresh := func(mtime int64) bool { return now-mtime < int64(dirTrustAge) }
	ix.scannedShape = storeShape{}
	if fresh(ix.rootMtime) {
		return
	}
	shape := storeShape{root: ix.rootMtime, projects: make(map[string]int64, len(projects))}
	for p, ps := range projects {
		if fresh(ps.mtime) {
			return
		}
		shape.projects[p] = ps.mtime
	}
	ix.scannedShape = shape
}

// subdirs returns the names of dir's subdirectories.
func subdirs(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// listProject returns a project directory's session directories: as last
// listed when it is known, not named by cs, and (when check) its mtime is
// unchanged and old enough to trust; else listed again, watched first
// (relisted). ok is false when the directory cannot be read.
func (ix *Indexed) listProject(proj string, now time.Time, cs changeSet, check bool) (ps projectScan, relisted, ok bool) {
	forced := cs.all || cs.projects[proj]
	ps, known := ix.projects[proj]
	pdir := filepath.Join(ix.root, proj)
	if known && !forced && (!check || dirTrusted(pdir, ps.mtime, now)) {
		return ps, false, true
	}
	ix.watchDir(pdir, proj, true, forced)
	fi, err := os.Stat(pdir)
	if err != nil || !fi.IsDir() {
		return projectScan{}, false, false
	}
	segs, err := subdirs(pdir)
	if err != nil {
		return projectScan{}, false, false
	}
	return projectScan{mtime: fi.ModTime().UnixNano(), segs: segs}, true, true
}

// dirTrusted reports whether the directory at path, listed when its mtime
// was mtime, still has that listing by its mtime: unchanged, and at least
// dirTrustAge old at now.
func dirTrusted(path string, mtime int64, now time.Time) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir() && fi.ModTime().UnixNano() == mtime && now.Sub(fi.ModTime()) >= dirTrustAge
}

// toStat watches a session directory (forced when cs names it; not yet
// when watchAtParse; only one of watchOnly) and returns it to be stat'd.
func (ix *Indexed) toStat(proj, seg string, cs changeSet) sessionDir {
	switch key := proj + "/" + seg; {
	case ix.watchAtParse:
	case ix.watchOnly != nil && !ix.watchOnly[key]:
		ix.markUnwatched(key, false, true)
	default:
		ix.watchDir(filepath.Join(ix.root, proj, seg), key, false, cs.all || cs.sessions[key])
	}
	return sessionDir{proj: proj, seg: seg}
}

// inBackground marks the context of the background poll (pollLoop).
type inBackground struct{}

// background returns ctx marked as the background poll's.
func background(ctx context.Context) context.Context {
	return context.WithValue(ctx, inBackground{}, true)
}

// yieldEvery is how many sessions the background poll stats between two
// yields of its core.
const yieldEvery = 64

// forEachStat calls fn(i) for every i < n, fn being a session's system
// calls. When a caller waits for them (the first refresh, a query's
// revalidation) thousands of them overlap on a few goroutines; the
// background poll runs them on one goroutine that yields every yieldEvery
// sessions, so that a request never waits for a core behind it (on two
// cores, its parallel bursts every pollEvery were the warm completion's
// p99 tail at 100,000 sessions).
func forEachStat(ctx context.Context, n int, fn func(i int)) {
	if ctx.Value(inBackground{}) == nil {
		parallel.Split(n, min(4, n/256), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				fn(i)
			}
		})
		return
	}
	for i := range n {
		fn(i)
		if i%yieldEvery == yieldEvery-1 {
			runtime.Gosched()
		}
	}
}

// transcriptPaths returns the paths of the raw and zstd transcripts of
// the listed session directory seg of project proj (names os.ReadDir
// gave): filepath.Join's, in one allocation (the raw name is a prefix of
// the zstd one), where a poll builds them for thousands of sessions a
// second.
func (ix *Indexed) transcriptPaths(proj, seg string) (raw, zstd string) {
	const sep = string(filepath.Separator)
	zstd = ix.rootPrefix + proj + sep + seg + sep + Zstd.FileName()
	return zstd[:len(zstd)-len(Zstd.FileName())+len(Raw.FileName())], zstd
}

// dirPrefix is dir cleaned and ending in a separator.
func dirPrefix(dir string) string {
	p := filepath.Clean(dir)
	if !strings.HasSuffix(p, string(filepath.Separator)) {
		p += string(filepath.Separator)
	}
	return p
}

// statTranscripts lstats the transcripts of d.
func (ix *Indexed) statTranscripts(d *sessionDir) {
	raw, zstd := ix.transcriptPaths(d.proj, d.seg)
	d.raw, d.hasRaw = lstatSig(raw)
	d.zstd, d.hasZstd = lstatSig(zstd)
}

// scanChanges is the scan of a notified change set in watch mode: it
// re-lists only the notified, polled or new directories and stats only the
// notified and new sessions; the watches vouch for every other entry. Its
// result is partial, so its cost follows the change, not the store (when
// the root is gone, it is the empty whole store).
func (ix *Indexed) scanChanges(ctx context.Context, cs changeSet) (scanResult, error) {
	projects := slices.Collect(maps.Keys(ix.projects))
	if cs.root {
		ix.watchRoot(false)
		var found bool
		var err error
		if projects, found, err = ix.listRoot(); err != nil || !found {
			return scanResult{}, err
		}
	}
	todo, gone, err := ix.relistChanged(ctx, projects, cs)
	if err != nil {
		return scanResult{}, err
	}
	b := &statBatch{ix: ix, dirs: todo, found: scanResult{gone: gone, partial: true}}
	if err := b.flush(ctx); err != nil {
		return scanResult{}, err
	}
	ix.markBare(b.bare)
	return b.found, nil
}

// relistChanged lists the projects for scanChanges and remembers their
// listings. It returns the session directories to stat (new, or
// notified) and those gone with their listing or their project.
func (ix *Indexed) relistChanged(ctx context.Context, projects []string, cs changeSet) (todo, gone []sessionDir, err error) {
	now := time.Now()
	seen := make(map[string]projectScan, len(projects))
	var key []byte
	for _, proj := range projects {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		ps, relisted, ok := ix.listProject(proj, now, cs, cs.polled[proj])
		if !ok {
			continue
		}
		if !relisted && ps.bareKnown && !cs.all {
			// The listing is unchanged: only the segs without an entry
			// are stat'd (notified sessions follow), not every session
			// of the project looked up (at 100,000 sessions, most of an
			// idle server's CPU).
			todo, ps.bare = ix.statBare(proj, ps.bare, cs, todo)
			seen[proj] = ps
			continue
		}
		var before map[string]bool
		if relisted {
			before = segSet(ix.projects[proj].segs)
			gone = append(gone, goneSegs(proj, ix.projects[proj].segs, segSet(ps.segs))...)
		}
		ps.bare, ps.bareKnown = nil, true
		for i, seg := range ps.segs {
			// Looked up without building the key.
			key = appendKey(key[:0], proj, seg)
			bare := ix.segEntry(proj, ps.segs, i, relisted) == nil
			if bare {
				ps.bare = append(ps.bare, seg)
			}
			if bare || cs.sessions[string(key)] || (relisted && !before[seg]) {
				todo = append(todo, ix.toStat(proj, seg, cs))
			}
		}
		seen[proj] = ps
	}
	todo = append(todo, ix.notifiedListed(seen, cs, todo)...)
	for proj, ps := range ix.projects {
		if _, ok := seen[proj]; !ok {
			gone = append(gone, goneSegs(proj, ps.segs, nil)...)
		}
	}
	ix.setProjects(seen)
	return todo, gone, nil
}

// statBare appends to todo the segs of bare (of project proj) still
// without an entry, and returns them as the new bare list.
func (ix *Indexed) statBare(proj string, bare []string, cs changeSet, todo []sessionDir) ([]sessionDir, []string) {
	still := bare[:0:0]
	for _, seg := range bare {
		if ix.entryMap()[dirKey{proj, seg}] == nil {
			still = append(still, seg)
			todo = append(todo, ix.toStat(proj, seg, cs))
		}
	}
	return todo, still
}

// notifiedListed returns the sessions cs names that are listed in seen
// and not already in todo: those of projects whose segs relistChanged did
// not go through.
func (ix *Indexed) notifiedListed(seen map[string]projectScan, cs changeSet, todo []sessionDir) []sessionDir {
	if len(cs.sessions) == 0 {
		return nil
	}
	queued := make(map[string]bool, len(todo))
	for i := range todo {
		queued[todo[i].key()] = true
	}
	var more []sessionDir
	for key := range cs.sessions {
		proj, seg, ok := strings.Cut(key, "/")
		if ok && !queued[key] && slices.Contains(seen[proj].segs, seg) {
			more = append(more, ix.toStat(proj, seg, cs))
		}
	}
	return more
}

// markBare records the session directories of a change scan found without
// a transcript as bare in their projects' listings: later polls stat
// them again (an entry of one was just removed, so the scan of its
// project would otherwise skip it).
func (ix *Indexed) markBare(dirs []sessionDir) {
	for _, d := range dirs {
		ps, ok := ix.projects[d.proj]
		if ok && ps.bareKnown && !slices.Contains(ps.bare, d.seg) {
			ps.bare = append(slices.Clip(ps.bare), d.seg)
			ix.projects[d.proj] = ps
		}
	}
}

func segSet(segs []string) map[string]bool {
	set := make(map[string]bool, len(segs))
	for _, seg := range segs {
		set[seg] = true
	}
	return set
}

// goneSegs returns the session directories of project proj listed in was
// and not in is.
func goneSegs(proj string, was []string, is map[string]bool) []sessionDir {
	var gone []sessionDir
	for _, seg := range was {
		if !is[seg] {
			gone = append(gone, sessionDir{proj: proj, seg: seg})
		}
	}
	return gone
}

// watchRoot (re)adds the root's watch before it is listed; when that fails
// the whole store is polled.
func (ix *Indexed) watchRoot(force bool) {
	if ix.watcher == nil {
		return
	}
	ok, _ := ix.watcher.watch(ix.watcher.root, force)
	ix.fresh.mu.Lock()
	ix.fresh.pollAll = !ok
	ix.fresh.mu.Unlock()
}

// refreshMode says what a refresh scans besides the pending change set
// (what notifications reported), which every mode takes.
type refreshMode int

const (
	// modeQuick: root, project directories by mtime, hot sessions (and
	// a full scan every fullScanEvery).
	modeQuick refreshMode = iota
	// modeFull: every transcript is stat'd.
	modeFull
	// modeChanges: only the change set (scanChanges).
	modeChanges
	// modePoll: also what is not watched (pollSet).
	modePoll
)

// indexJob is one transcript to parse (parseOnce): the session directory
// less the signature of the transcript not read, since a first pass holds
// a job per session (80 bytes each), and the entry it replaces (old, nil
// for none), whose parse it continues when the file only grew.
type indexJob struct {
	proj, seg       string
	old             *entry
	sig             fileSig
	enc             Encoding
	hasRaw, hasZstd bool
	// watchFirst: the session directory was watched (by a first pass, as
	// it took the job) before the parse opens it.
	watchFirst bool
}

// newJob is the job of parsing d's transcript of encoding enc over old.
func newJob(d sessionDir, old *entry, enc Encoding) indexJob {
	sig, _ := d.sig(enc)
	return indexJob{proj: d.proj, seg: d.seg, old: old, sig: sig, enc: enc, hasRaw: d.hasRaw, hasZstd: d.hasZstd}
}

// refresh brings the index up to date: a scan by mode, then a parse
// of the new, grown, replaced or truncated transcripts. A modeChanges or
// modePoll refresh that another one made unnecessary while it waited for
// the lock does nothing (this is how concurrent revalidations coalesce).
func (ix *Indexed) refresh(ctx context.Context, initial bool, mode refreshMode) error {
	ix.refreshMu.Lock()
	defer ix.refreshMu.Unlock()
	if mode == modePoll && !ix.pollDue(pollFresh) {
		mode = modeChanges
	}
	if mode == modeChanges && !ix.changesPending() {
		return nil
	}
	cs, seq := ix.takeChanges()
	ix.watchAtParse = initial && !ix.fresh.fromCache && ix.watcher != nil
	if initial {
		ix.watchOnly = ix.restartWatches()
	}
	defer func() { ix.watchAtParse, ix.watchOnly = false, nil }()
	start := time.Now()
	full := mode == modeFull || initial || cs.all
	sc, full, err := ix.scanFor(ctx, mode, &cs, start, full)
	if err == nil {
		err = ix.apply(ctx, initial, full, start, sc)
	}
	ix.changesDone(cs, seq, err == nil, mode == modePoll || full, start)
	if err == nil && full {
		ix.preferRecentWatches()
	}
	return err
}

// scanResult is what a scan found: session directories with a transcript
// (at least those that differ from their entries) and the entries gone;
// partial when it did not check every directory.
type scanResult struct {
	dirs, gone []sessionDir
	partial    bool
}

// scanFor runs the scan mode asks for over cs (a poll adds pollSet to it);
// full says whether it stat'd every transcript. A poll of a partly watched
// store scans only the change set, the watches vouch for the rest; a store
// polled as a whole has nothing to vouch for it: its poll is a quick scan.
func (ix *Indexed) scanFor(ctx context.Context, mode refreshMode, cs *changeSet, start time.Time, full bool) (scanResult, bool, error) {
	if mode == modePoll {
		if !full && !ix.pollsAll() {
			mode = modeChanges
		}
		cs.merge(ix.pollSet(ctx, start))
	}
	if mode == modeChanges && !cs.all {
		sc, err := ix.scanChanges(ctx, *cs)
		return sc, full, err
	}
	full = full || start.Sub(ix.lastFull) >= fullScanEvery
	sc, err := ix.scan(ctx, start, full, *cs)
	return sc, full, err
}

// apply brings the entries to the scanned session directories: it drops the
// sessions gone, parses what changed and rebuilds the listing.
func (ix *Indexed) apply(ctx context.Context, initial, full bool, start time.Time, sc scanResult) error {
	p := ix.plan(sc)
	scanned := !sc.partial
	ix.mu.Lock()
	for _, k := range p.removed {
		delete(ix.entryMap(), dirKeyOf(k))
	}
	for _, e := range p.flagOnly {
		ix.putEntry(e, start)
	}
	changed := len(p.jobs) > 0 || len(p.removed) > 0 || len(p.flagOnly) > 0
	// The parses' entries are listed after them (a first pass publishes
	// as it goes); what changed without a parse is listed now.
	if (len(p.removed) > 0 || len(p.flagOnly) > 0) && (initial || len(p.jobs) == 0) {
		ix.rebuildListing()
	}
	ix.dirty = ix.dirty || changed
	if len(p.jobs) == 0 {
		ix.scanDone(scanned, true, full, start)
	}
	ix.mu.Unlock()
	ix.forgetUnwatched(sc.gone)
	if len(p.jobs) == 0 {
		return nil
	}
	done := ix.parseAll(ctx, p.jobs, initial)
	ix.mu.Lock()
	if !initial {
		ix.relistParsed(p) // a first pass's last publish listed its entries
	}
	ix.dirty = true
	// A first pass without a cache read every transcript after its scan;
	// since each read, the watches it set up record the changes of the
	// watched sessions, and the polls and full scans that follow cover the
	// others as after any scan: at its end the entries are as new as a scan
	// then would make them. Dated from its scan's start, a pass longer than
	// fullScanEvery (100,000 sessions on a loaded machine) ran a second
	// whole-store scan the moment it ended, as the first answers came. A
	// restart's pass re-reads only what changed: the rest is as of its scan.
	if initial && !ix.fresh.fromCache {
		start = time.Now()
	}
	ix.scanDone(scanned, done == len(p.jobs), full, start)
	ix.mu.Unlock()
	return ctx.Err()
}

// relistParsed publishes what a refresh's parses (and removals) changed.
// A live session's write changes its entry, seldom the listing: the entry
// is swapped in place then (relistInPlace), else the listing rebuilt.
// Callers hold ix.mu.
func (ix *Indexed) relistParsed(p refreshPlan) {
	if len(p.removed) > 0 || len(p.flagOnly) > 0 || !ix.relistInPlace(ix.swaps(p.jobs)) {
		ix.rebuildListing()
	}
}

// swaps returns, for the jobs parsed, each job's old entry and the entry
// that replaced it; nil when a job added a session.
func (ix *Indexed) swaps(jobs []indexJob) map[*entry]*entry {
	swap := make(map[*entry]*entry, len(jobs))
	for _, j := range jobs {
		e := ix.entryMap()[dirKey{j.proj, j.seg}]
		if j.old == nil || e == nil {
			return nil
		}
		if e != j.old {
			swap[j.old] = e
		}
	}
	return swap
}

// refreshPlan is what a scan changes: the transcripts to parse, the
// entries whose other-encoding flags alone changed, the keys gone.
type refreshPlan struct {
	jobs     []indexJob
	flagOnly []*entry
	removed  []string
}

// plan compares the scanned session directories with the entries (only
// the refresher writes ix.entries, under refreshMu: read without ix.mu).
func (ix *Indexed) plan(sc scanResult) refreshPlan {
	var p refreshPlan
	for _, d := range sc.dirs {
		old := ix.entryMap()[d.dirKey()]
		enc, change := ix.compare(old, &d)
		switch change {
		case changeFlags:
			view, err := old.view()
			if err != nil && old.State.present() {
				// The cache's copy of the state is unreadable: parse again.
				p.jobs = append(p.jobs, newJob(d, nil, enc))
				continue
			}
			ne := *old
			ne.HasRaw, ne.HasZstd = d.hasRaw, d.hasZstd
			ne.derive(view)
			p.flagOnly = append(p.flagOnly, &ne)
		case changeTranscript:
			p.jobs = append(p.jobs, newJob(d, old, enc))
		}
	}
	for _, d := range sc.gone {
		if ix.entryMap()[d.dirKey()] != nil {
			p.removed = append(p.removed, d.key())
		}
	}
	// Newest first: the sessions completion shows first are indexed first
	// and, in a first pass without a cache (watchAtParse), watched first:
	// the cap's watches go to the sessions dsh writes to, and the move of
	// watches after the pass (preferRecentWatches), each moved one stat'd
	// again, has next to nothing to move (it moved 17,833 of 24,067 at
	// 100,000 sessions when the scan watched in directory order). Ties go
	// in key order, as there (a touched or restored store is all ties).
	slices.SortFunc(p.jobs, func(a, b indexJob) int {
		return cmp.Or(cmp.Compare(b.sig.MtimeNs, a.sig.MtimeNs), strings.Compare(a.proj, b.proj), strings.Compare(a.seg, b.seg))
	})
	return p
}

// A dirChange is how a stat'd session directory differs from its entry.
type dirChange int

const (
	changeNone dirChange = iota
	// changeFlags: only which encodings' transcripts exist.
	changeFlags
	// changeTranscript: no entry, or a new encoding or signature: parse.
	changeTranscript
)

// compare returns the encoding d is read by and how d differs from old
// (nil: no entry).
func (ix *Indexed) compare(old *entry, d *sessionDir) (Encoding, dirChange) {
	enc := ix.layout.transcript(d)
	sig, _ := d.sig(enc)
	switch {
	case old == nil || old.Enc != enc || old.Sig != sig:
		return enc, changeTranscript
	case old.HasRaw != d.hasRaw || old.HasZstd != d.hasZstd:
		return enc, changeFlags
	}
	return enc, changeNone
}

// putEntry publishes e. Callers hold refreshMu and ix.mu.
func (ix *Indexed) putEntry(e *entry, now time.Time) {
	ix.entryMap()[e.dirKey()] = e
	if e.hot(now) {
		ix.noteHot(e.key())
	}
}

// scanDone records a scan that started at start, checked every directory
// (scanned) or not, and whose changes are all in the entries (applied) or
// not: only then does it count as a scan, and does the scanned shape
// vouch for the entries. Callers hold ix.mu.
func (ix *Indexed) scanDone(scanned, applied, full bool, start time.Time) {
	ix.shape = storeShape{}
	if applied {
		ix.shape = ix.scannedShape
	}
	if !scanned || !applied {
		return
	}
	ix.lastScan = start
	if full {
		ix.lastFull = start
	}
}

// parseAll parses the jobs in order on GOMAXPROCS workers and publishes
// the entries in batches; it returns how many were parsed (fewer when ctx
// or the index closes).
func (ix *Indexed) parseAll(ctx context.Context, jobs []indexJob, initial bool) int {
	progress := func(done int) {
		if initial && ix.opts.Progress != nil {
			ix.opts.Progress(done, len(jobs))
		}
	}
	progress(0)
	if len(jobs) >= cmp.Or(ix.opts.spillJobs, spillJobs) {
		ix.spilling.Store(true)
		defer ix.spilling.Store(false)
		// A large pass allocates gigabytes of short-lived records.
		defer gcgoal.Bulk()()
	}
	dir := beneath.OpenRoot(ix.root)
	defer dir.Close() // after the workers: results is drained below
	results := make(chan *entry, 64)
	var next atomic.Int64
	// A first pass watches each session as its parse starts, in the
	// jobs' order (newest first): taking a job and watching it is one
	// step, or a worker could watch a later job before another watched
	// the one it took, and the cap's last watch go to the older one.
	var take sync.Mutex
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for {
				take.Lock()
				i := int(next.Add(1) - 1)
				if i >= len(jobs) || ctx.Err() != nil || ix.isClosed() {
					take.Unlock()
					return
				}
				j := jobs[i]
				if j.watchFirst = ix.watchAtParse; j.watchFirst {
					ix.watchDir(filepath.Join(ix.root, j.proj, j.seg), j.proj+"/"+j.seg, false, false)
				}
				take.Unlock()
				results <- ix.parseOnce(dir, j)
			}
		})
	}
	go func() { wg.Wait(); close(results) }()
	pub := publisher{ix: ix, initial: initial, start: time.Now(), last: time.Now()}
	done := 0
	lastProgress := time.Now()
	for e := range results {
		pub.batch = append(pub.batch, e)
		done++
		if pub.due() {
			pub.publish()
			progress(done)
			lastProgress = time.Now()
		} else if ix.opts.Snapshot && time.Since(lastProgress) >= progressEvery {
			progress(done)
			lastProgress = time.Now()
		}
	}
	if len(pub.batch) > 0 || !initial {
		pub.publish()
		progress(done)
	}
	return done
}

// publisher adds parsed entries to the index in batches, so queries see
// progress during the first pass.
type publisher struct {
	ix      *Indexed
	initial bool
	batch   []*entry
	// start is when the pass began, last when it last published.
	start, last time.Time
	// rebuild is what the last publish's listing (merge or rebuild) cost.
	rebuild time.Duration
	// ids are the listed ids, for merging a batch into the listing.
	ids listedIDs
}

// due reports whether the batch should be published now. Each publish of
// the first pass merges the batch into the whole listing (addToListing),
// a cost linear in what is listed: publishing every progressEvery made the
// pass quadratic (at 100,000 sessions, 200 merges took 5 % of its CPU). So
// publishes are spaced by an eighth of the pass so far (and by 8 times the
// last one's cost): about 35 in a pass of 20 s, each listing at most an
// eighth of the pass behind (a sixteenth cost twice the merging, 1.7 % of
// the pass). A server reports its progress as it publishes: what
// $/progress counts, a query lists.
//
// A snapshot (the CLI) answers once, after its first pass: publishing
// before then would only sort listings no one reads (a tenth of its CPU at
// 100,000 sessions), so it publishes once, at the end, and reports its
// progress every progressEvery meanwhile.
func (p *publisher) due() bool {
	since := time.Since(p.last)
	gap := max(8*p.rebuild, time.Since(p.start)/8)
	return p.initial && !p.ix.opts.Snapshot && (len(p.batch) >= 256 || since > progressEvery) && since >= gap
}

// progressEvery is how often the first pass publishes (a server) or
// reports its progress (a snapshot) at most.
const progressEvery = 100 * time.Millisecond

func (p *publisher) publish() {
	ix := p.ix
	ix.mu.Lock()
	now := time.Now()
	for _, e := range p.batch {
		ix.putEntry(e, now)
	}
	if p.initial {
		t := time.Now()
		if !ix.addToListing(p.batch, &p.ids) {
			ix.rebuildListing()
		}
		p.rebuild = time.Since(t)
	}
	ix.mu.Unlock()
	p.batch = p.batch[:0]
	p.last = time.Now()
}

// parseOnce (re)builds the entry of one session directory. The refresher
// and an on-demand read asking for the same transcript version share one
// parse; an on-demand parse is not published, so the last few finished
// ones are kept for the refresher (or the next read) to reuse. d is the
// store root a pass holds open (nil: none).
func (ix *Indexed) parseOnce(d *beneath.Root, j indexJob) *entry {
	key := parseKey{dir: j.proj + "/" + j.seg, enc: j.enc, sig: j.sig}
	ix.parsesMu.Lock()
	call, shared := ix.parses[key]
	if !shared {
		if len(ix.parses) >= 64 {
			maps.DeleteFunc(ix.parses, func(_ parseKey, c *parseCall) bool { return isDone(c.done) })
		}
		call = &parseCall{done: make(chan struct{})}
		ix.parses[key] = call
	}
	ix.parsesMu.Unlock()
	if shared && j.watchFirst {
		// That parse may have opened the transcript before the watch.
		var c changeSet
		c.addSession(key.dir)
		ix.noteChange(c)
	}
	if !shared {
		call.e = ix.parseDir(d, j)
		ix.spill(call.e)
		close(call.done)
	}
	<-call.done
	return call.e
}

type parseKey struct {
	dir string
	enc Encoding
	sig fileSig
}

// parseCall is one parse, in flight until done is closed.
type parseCall struct {
	done chan struct{}
	e    *entry
}

func (ix *Indexed) parseDir(d *beneath.Root, j indexJob) *entry {
	if e, ok := ix.keepSameBytes(d, j); ok {
		ix.sameBytes.Add(1)
		return e
	}
	ix.parsed.Add(1)
	e := &entry{Proj: j.proj, Seg: j.seg, HasRaw: j.hasRaw, HasZstd: j.hasZstd, Enc: j.enc, Sig: j.sig}
	if j.enc == Zstd && !j.hasZstd || j.enc != Zstd && !j.hasRaw {
		// No such transcript: the entry answers that it cannot be read.
		e.derive(nil)
		return e
	}
	path := e.path(ix.root)
	sig, old := j.sig, j.old
	if old != nil && old.Enc == j.enc && old.State.present() && old.Listed && old.Sig.Dev == sig.Dev &&
		old.Sig.Ino == sig.Ino && sig.Size > old.Sig.Size {
		if view, ok := ix.parseAppended(d, e, old, path); ok {
			ix.grown.Add(1)
			e.derive(view)
			return e
		}
	}
	ix.parseFromStart(d, e, path)
	return e
}

// keepSameBytes returns j.old with the transcript's new signature when its
// bytes are the ones j.old indexed (their CRC-32C is j.old.Sum): a touched
// or copied store is read once, not parsed (at 100,000 small sessions a
// second of CPU against twenty). A torn, failed or grown one is parsed.
func (ix *Indexed) keepSameBytes(d *beneath.Root, j indexJob) (*entry, bool) {
	old := j.old
	if old == nil || !old.mayKeep(j.enc, j.hasRaw, j.hasZstd, j.sig.Size) {
		return nil, false
	}
	sig, ok := ix.sameBytesAs(d, old)
	if !ok {
		return nil, false
	}
	e := *old
	e.Sig, e.readByListedID = sig, false
	return &e, true
}

// mayKeep reports whether e may describe a transcript of encoding enc and
// size (and a directory of those flags) if its bytes are e's.
func (e *entry) mayKeep(enc Encoding, hasRaw, hasZstd bool, size int64) bool {
	return e.Clean && e.Whole && e.Listed && e.State.present() && e.Enc == enc && e.HasRaw == hasRaw && e.HasZstd == hasZstd && e.Sig.Size == size
}

// sameBytesAs reports whether old's transcript holds the bytes old's parse
// committed, whole (old.mayKeep held), and returns its signature.
func (ix *Indexed) sameBytesAs(d *beneath.Root, old *entry) (fileSig, bool) {
	f, fi, err := beneath.Open(d, ix.root, old.path(ix.root))
	if err != nil {
		return fileSig{}, false
	}
	defer f.Close()
	sig := sigOf(fi)
	if sig.Size != old.Sig.Size {
		return fileSig{}, false
	}
	sum, err := transcript.SumOf(f, sig.Size)
	return sig, err == nil && sum == old.Sum
}

// parseAppended continues old's parse over the appended bytes. It reports
// false when the file is no longer the one old describes, or when the fold
// now needs the message ids it did not keep (then the log is parsed again).
func (ix *Indexed) parseAppended(d *beneath.Root, e, old *entry, path string) (*logState, bool) {
	b, err := old.State.bytes()
	if err != nil {
		return nil, false
	}
	committed, err := decodeLogState(b)
	if err != nil {
		return nil, false
	}
	f, sig, ok, err := openState(d, ix.root, path, old.Sig, tailOf(b))
	if err != nil || !ok {
		return nil, false
	}
	defer f.Close()
	e.Listed, e.ListedID, e.ListedCWD, e.ListedCreatedAt, e.ListedRaw = true, old.ListedID, old.ListedCWD, old.ListedCreatedAt, old.ListedRaw
	e.IdentityOK, e.ReadID, e.HeaderLine, e.HeaderFromListed, e.Sig = old.IdentityOK, old.ReadID, old.HeaderLine, old.HeaderFromListed, sig
	p := &logParser{enc: e.Enc, id: old.ReadID, f: f, st: committed, limit: ix.limit}
	view, err := p.parse(sig.Size)
	if err != nil {
		ix.setReadErr(e, err)
		return nil, true
	}
	if view.Fold.NeedIDs {
		return nil, false
	}
	e.setState(p.st, view)
	return view, true
}

// setReadErr records on e the error its read gives.
func (ix *Indexed) setReadErr(e *entry, err error) {
	e.State, e.Whole, e.Sum = savedState{}, false, 0
	e.setFaults(faults{ReadErr: transcript.SaveError(err), ReadErrLimit: ix.limit})
	if re := e.fault().ReadErr; re.Kind == KindIO && !re.Limit {
		// Not a fact about these bytes: parse again at the next scan.
		e.Sig.Size = -1
	}
}

// parseFromStart parses a whole transcript with a read's checks; its
// header gives the listing facts (read again as listing reads it when the
// parse refused it).
func (ix *Indexed) parseFromStart(d *beneath.Root, e *entry, path string) {
	var view *logState
	defer func() { e.derive(view) }()
	f, fi, err := beneath.Open(d, ix.root, path)
	if err != nil {
		ix.setReadErr(e, unreadable(err))
		return
	}
	defer f.Close()
	e.Sig = sigOf(fi)
	var p *logParser
	for _, keepIDs := range []bool{false, true} {
		p = &logParser{enc: e.Enc, f: f, st: &logState{Fold: transcript.FoldState{KeepIDs: keepIDs}}, limit: ix.limit}
		if view, err = p.parse(e.Sig.Size); err != nil || !view.Fold.NeedIDs {
			break
		}
	}
	if identity := ix.listFrom(e, path, f, p.header); err == nil {
		err = identity
	}
	if err == nil {
		err = p.header.Validate()
	}
	if err != nil {
		view = nil
		ix.setReadErr(e, err)
		return
	}
	e.ReadID = p.header.ID
	if e.ReadID == e.ListedID {
		e.ReadID = e.ListedID // one copy
	}
	e.setHeaderLine(p.headerLine)
	e.setState(p.st, view)
}

// listFrom sets e's listing facts from h, the header a read of f parsed,
// or, when the read got none, from a header-only read of f. It returns
// the header's identity check (nil without a header).
func (ix *Indexed) listFrom(e *entry, path string, f io.ReaderAt, h *transcript.Header) (identity error) {
	var err error
	if h == nil {
		h, err = transcript.ReadHeader(f, e.Enc.framing())
	}
	switch {
	case errors.Is(err, transcript.ErrNoHeaderYet):
		e.NoHeaderYet = true
	case err == nil:
		e.Listed = true
		r := h.Reference()
		e.ListedID, e.ListedCWD, e.ListedCreatedAt, e.ListedRaw = inRaw(r.Raw, r.ID), ix.sharedCWD(r.CWD), r.CreatedAt, r.Raw
		identity = ix.layout.checkIdentity(h, path, e.Enc)
		e.IdentityOK = identity == nil
	}
	return identity
}

// inRaw returns s as a string sharing raw's bytes when they hold it (raw,
// a listing header, is never modified): a session's id lies in its
// header's JSON, and a first pass over 100,000 sessions kept 5 MB of
// copies.
func inRaw(raw []byte, s string) string {
	if i := strings.Index(binenc.Alias(raw), s); s != "" && i >= 0 {
		return binenc.Alias(raw[i : i+len(s)])
	}
	return s
}

// maxSharedCWDs bounds sharedCWD's table (a store of that many working
// directories gets copies past it).
const maxSharedCWDs = 1 << 16

// sharedCWD returns the one string the index keeps for cwd (nil: none):
// the sessions of a working directory share it, where a first pass over
// 100,000 sessions in 2,000 directories kept a copy each (a cache load
// shares them the same way).
func (ix *Indexed) sharedCWD(cwd *string) *string {
	if cwd == nil {
		return nil
	}
	ix.cwdsMu.Lock()
	defer ix.cwdsMu.Unlock()
	if c, ok := ix.cwds[*cwd]; ok {
		return c
	}
	if ix.cwds == nil || len(ix.cwds) >= maxSharedCWDs {
		ix.cwds = map[string]*string{}
	}
	ix.cwds[*cwd] = cwd
	return cwd
}
