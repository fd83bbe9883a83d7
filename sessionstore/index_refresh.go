package sessionstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/transcript"
)

// fileSig identifies one version of a file: a different device/inode
// means the file was replaced, a smaller size that it was truncated.
type fileSig struct {
	Dev, Ino uint64
	Size     int64
	MtimeNs  int64
}

func sigOf(fi fs.FileInfo) fileSig {
	s := fileSig{Size: fi.Size(), MtimeNs: fi.ModTime().UnixNano()}
	s.Dev, s.Ino = fileIdentity(fi)
	return s
}

// lstatSig reports whether path exists (Lstat, as discovery checks) and
// the signature of what it resolves to.
func lstatSig(path string) (fileSig, bool) {
	fi, err := os.Lstat(path)
	if err != nil {
		return fileSig{}, false
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		if t, err := os.Stat(path); err == nil {
			fi = t
		}
	}
	return sigOf(fi), true
}

// entry is the index record of one session directory. Exported fields are
// persisted in the cache; the rest is derived from them (derive).
type entry struct {
	Proj, Seg       string
	HasRaw, HasZstd bool
	// Enc is the encoding of the indexed transcript (the root's).
	Enc Encoding
	// Sig is the indexed transcript's signature at the last parse.
	Sig fileSig
	// NoHeaderYet: the header line/frame was not complete (not listed).
	NoHeaderYet bool
	// HeaderErr is why the header could not be read (not listed).
	HeaderErr string
	// ReadErr is the error a read of the transcript gives (a scan,
	// header or read-limit error; the fold's own is in State), found by
	// the last parse under the read limit ReadErrLimit: the index and its
	// persisted cache remember it, so neither a query nor a restart
	// decodes the file again until it changes.
	ReadErr      transcript.SavedError
	ReadErrLimit int64
	// Listed is true when the header was read (as listing reads it,
	// header only); Listed* are its listing form, IdentityOK whether it
	// lies at its own path.
	Listed          bool
	ListedID        string
	ListedCWD       *string
	ListedCreatedAt int64
	ListedRaw       []byte
	IdentityOK      bool
	// ReadID is the id of the header a whole parse validated ("" when the
	// parse failed before), HeaderLine that header's line: what a read by
	// id checks and answers with.
	ReadID     string
	HeaderLine []byte
	// State is the committed parse state, nil when ReadErr is set.
	State *logState
	// TitleText is the title derived from State when TitleDerived (not
	// from a torn frame's view, and without error): persisted so that
	// loading the cache does not decode the titles again.
	TitleText    *string
	TitleDerived bool

	// header is the listing form of the Listed* fields.
	header reference.SessionHeader
	// view is what reads answer from: State, plus the lines of a torn
	// final zstd frame, if any.
	view     *logState
	title    *string
	titleErr error
	// err is the read's error (ReadErr, else the fold's, crash closers
	// included), without the session id and path.
	err error
}

func (e *entry) path(root string) string {
	return filepath.Join(root, e.Proj, e.Seg, e.Enc.FileName())
}

// derive fills the derived fields from the persisted ones and view.
func (e *entry) derive(view *logState) {
	if e.Listed {
		e.header = reference.SessionHeader{ID: e.ListedID, CWD: e.ListedCWD, CreatedAt: e.ListedCreatedAt, Raw: e.ListedRaw}
	}
	e.view, e.title, e.titleErr, e.err = view, nil, nil, e.ReadErr.Err()
	if e.err == nil && view == nil {
		e.err = &transcript.Error{Kind: KindIO, Msg: "cannot read transcript", Err: fs.ErrNotExist}
	}
	if e.err == nil {
		// The fold's error, or the crash closers' (finished on a copy:
		// the log may still grow).
		_, e.err = transcript.ResumeFold(e.ReadID, view.Fold.Clone()).Finish()
	}
	if e.err != nil || view.Fold.Title == nil {
		e.TitleText, e.TitleDerived = nil, false
		return
	}
	if e.TitleDerived && view == e.State && (e.TitleText == nil || len(*e.TitleText) <= MaxTitleBytes) {
		// Derived from this very state before (and persisted): a
		// restart does not decode every title again.
		e.title = e.TitleText
		return
	}
	e.TitleText, e.TitleDerived = nil, false
	t, err := view.Fold.LatestTitle()
	if err != nil {
		e.titleErr = attach(err, e.ReadID, "")
		return
	}
	if t != nil {
		s := t.Text()
		e.title = &s
	}
	e.TitleText, e.TitleDerived = e.title, view == e.State
}

// answerErr is the error a read of id through e gives, nil when e answers.
func (e *entry) answerErr(id, root string) error {
	if e.err != nil {
		return attach(e.err, id, e.path(root))
	}
	if e.ReadID != id {
		return attach(transcript.Corruptf("header id %s does not match the requested id", jsjson.Quote(e.ReadID)), id, e.path(root))
	}
	return nil
}

// titleAnswer is what ReadTitles answers for id through e.
func (e *entry) titleAnswer(id, root string) (*string, error) {
	if err := e.answerErr(id, root); err != nil {
		return nil, err
	}
	return e.title, e.titleErr
}

// transient reports whether e's error may go away without the file
// changing (an I/O error, or a read-limit error under another limit).
func (e *entry) transient(limit int64) bool {
	if e.ReadErr.Limit {
		return e.ReadErrLimit != limit
	}
	return e.ReadErr.Kind == KindIO
}

// projectScan remembers a project directory's session directories.
type projectScan struct {
	mtime int64
	segs  []string
}

// dirTrustAge is how old a project directory's mtime must be before an
// unchanged mtime is trusted to mean an unchanged listing (mtime
// granularity and racing writers).
const dirTrustAge = 2 * time.Second

// hotWindow: a quick scan re-stats only transcripts modified within this
// window (live sessions); the others are re-stated by the periodic full
// scan (fullScanEvery) and by Refresh.
const (
	hotWindow     = 10 * time.Minute
	fullScanEvery = 30 * time.Second
)

// hot reports whether a quick scan must stat e's transcript.
func (e *entry) hot(now time.Time) bool {
	return e.Sig.Size < 0 || e.NoHeaderYet || now.UnixNano()-e.Sig.MtimeNs < int64(hotWindow)
}

// dirWith is e's session directory with sig as the signature of the
// transcript e indexes (e.Sig: the last known scan result).
func (e *entry) dirWith(sig fileSig) sessionDir {
	d := sessionDir{proj: e.Proj, seg: e.Seg, hasRaw: e.HasRaw, hasZstd: e.HasZstd}
	if e.Enc == Zstd {
		d.zstd = sig
	} else {
		d.raw = sig
	}
	return d
}

// scan stats the store: project directories (re-listed only when their
// mtime changed, or cs names them) and the transcripts of the session
// directories. A quick scan (full false) stats only the transcripts of new
// directories, changed project directories, hot (recently modified)
// sessions and the sessions cs names. Every directory read is watched
// first (watchDir).
func (ix *Indexed) scan(ctx context.Context, now time.Time, full bool, cs changeSet) ([]sessionDir, error) {
	ix.wholeScans.Add(1)
	full = full || cs.all
	ix.watchRoot(cs.all)
	projects, found, err := ix.listRoot()
	if err != nil || !found {
		return nil, err
	}
	keep := make([]sessionDir, 0, len(ix.entries))
	var todo []sessionDir
	seen := make(map[string]projectScan, len(projects))
	for _, proj := range projects {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ps, relisted, ok := ix.scanProject(proj, now, cs)
		if !ok {
			continue
		}
		seen[proj] = ps
		for _, seg := range ps.segs {
			key := proj + "/" + seg
			if !full && !relisted && !cs.sessions[key] {
				if old := ix.entries[key]; old != nil && !old.hot(now) {
					keep = append(keep, old.dirWith(old.Sig))
					continue
				}
			}
			todo = append(todo, ix.toStat(proj, seg, key, cs.all || cs.sessions[key]))
		}
	}
	ix.projects = seen
	return ix.statDirs(ctx, keep, todo)
}

// listRoot returns the root's project directories. found is false when
// the root does not exist: an empty store (the project scans are
// forgotten).
func (ix *Indexed) listRoot() (projects []string, found bool, err error) {
	projects, err = subdirs(ix.root)
	if errors.Is(err, fs.ErrNotExist) {
		ix.projects = map[string]projectScan{}
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("sessionstore: listing root %s: %w", ix.root, err)
	}
	return projects, true, nil
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

// scanProject returns a project directory's session directories for a
// scan: re-listed (and watched first) when it is new, cs names it, or its
// mtime is changed or too recent to trust; else as last scanned. ok is
// false when the directory cannot be read.
func (ix *Indexed) scanProject(proj string, now time.Time, cs changeSet) (ps projectScan, relisted, ok bool) {
	pdir := filepath.Join(ix.root, proj)
	fi, err := os.Stat(pdir)
	if err != nil {
		return projectScan{}, false, false
	}
	ps, known := ix.projects[proj]
	forced := cs.all || cs.projects[proj]
	if known && !forced && ps.mtime == fi.ModTime().UnixNano() && now.Sub(fi.ModTime()) >= dirTrustAge {
		return ps, false, true
	}
	ix.watchDir(pdir, proj, true, forced)
	segs, err := subdirs(pdir)
	if err != nil {
		return projectScan{}, false, false
	}
	return projectScan{mtime: fi.ModTime().UnixNano(), segs: segs}, true, true
}

// toStat watches a session directory (key is its "proj/seg") so that
// nothing written after its stat goes unnoticed, and returns it to be
// stat'd.
func (ix *Indexed) toStat(proj, seg, key string, force bool) sessionDir {
	ix.watchDir(filepath.Join(ix.root, proj, seg), key, false, force)
	return sessionDir{proj: proj, seg: seg}
}

// statDirs lstats the transcripts of the todo session directories
// (watched before, so nothing written after a stat goes unnoticed) and
// appends those with a transcript to keep. The stats run on a few
// goroutines: a full scan is thousands of system calls, which overlap.
func (ix *Indexed) statDirs(ctx context.Context, keep, todo []sessionDir) ([]sessionDir, error) {
	ix.dirStats.Add(int64(len(todo)))
	forEachParallel(len(todo), min(4, len(todo)/256), func(i int) {
		d := &todo[i]
		dir := filepath.Join(ix.root, d.proj, d.seg)
		d.raw, d.hasRaw = lstatSig(filepath.Join(dir, Raw.FileName()))
		d.zstd, d.hasZstd = lstatSig(filepath.Join(dir, Zstd.FileName()))
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, d := range todo {
		if d.hasRaw || d.hasZstd {
			keep = append(keep, d)
		}
	}
	return keep, nil
}

// forEachParallel calls fn(i) for every i < n, split into workers
// contiguous ranges on goroutines of their own (one worker: on the
// caller's).
func forEachParallel(n, workers int, fn func(i int)) {
	if workers <= 1 || n == 0 {
		for i := range n {
			fn(i)
		}
		return
	}
	var wg sync.WaitGroup
	per := (n + workers - 1) / workers
	for lo := 0; lo < n; lo += per {
		hi := min(lo+per, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				fn(i)
			}
		}()
	}
	wg.Wait()
}

// scanChanges is the scan of a notified change set in watch mode: it
// re-lists the root only when an entry of it changed, re-lists only the
// notified (and new) project directories and stats only the notified (and
// new) session directories; every other entry stands as indexed, which
// the watches vouch for. It returns only what it found changed (partial
// true): the stat'd session directories that hold a transcript, and the
// keys of the session directories gone, so that its cost follows the
// change, not the store. When the root is gone it returns the (empty)
// whole store.
func (ix *Indexed) scanChanges(ctx context.Context, cs changeSet) (dirs, gone []sessionDir, partial bool, err error) {
	var projects []string
	if cs.root {
		ix.watchRoot(false)
		var found bool
		if projects, found, err = ix.listRoot(); err != nil || !found {
			return nil, nil, false, err
		}
	} else {
		projects = slices.Collect(maps.Keys(ix.projects))
	}
	var todo []sessionDir
	seen := make(map[string]projectScan, len(projects))
	for _, proj := range projects {
		if err := ctx.Err(); err != nil {
			return nil, nil, false, err
		}
		ps, before, ok := ix.rescanProject(proj, cs)
		if !ok {
			continue
		}
		seen[proj] = ps
		if before != nil {
			gone = append(gone, goneSegs(proj, slices.Collect(maps.Keys(before)), ps.segs)...)
		}
		for _, seg := range ps.segs {
			key := proj + "/" + seg
			if old := ix.entries[key]; old != nil && !cs.sessions[key] && (before == nil || before[seg]) {
				continue
			}
			todo = append(todo, ix.toStat(proj, seg, key, cs.sessions[key]))
		}
	}
	for proj, ps := range ix.projects {
		if _, ok := seen[proj]; !ok {
			gone = append(gone, goneSegs(proj, ps.segs, nil)...)
		}
	}
	ix.projects = seen
	if dirs, err = ix.statDirs(ctx, nil, todo); err != nil {
		return nil, nil, false, err
	}
	for _, d := range todo {
		if !d.hasRaw && !d.hasZstd {
			gone = append(gone, d)
		}
	}
	return dirs, gone, true, nil
}

// goneSegs returns the session directories of project proj listed in was
// and not in is.
func goneSegs(proj string, was, is []string) []sessionDir {
	now := make(map[string]bool, len(is))
	for _, seg := range is {
		now[seg] = true
	}
	var gone []sessionDir
	for _, seg := range was {
		if !now[seg] {
			gone = append(gone, sessionDir{proj: proj, seg: seg})
		}
	}
	return gone
}

// rescanProject returns a project directory's session directories for a
// scan of notified changes: re-listed (and watched first) when it is new
// or notified, or polled with an mtime changed or too recent to trust,
// else as last scanned. before is the set of session directories known
// before a re-listing (nil when not re-listed: every one is as indexed).
// ok is false when the directory cannot be read.
func (ix *Indexed) rescanProject(proj string, cs changeSet) (ps projectScan, before map[string]bool, ok bool) {
	ps, known := ix.projects[proj]
	pdir := filepath.Join(ix.root, proj)
	if known && !cs.projects[proj] && (!cs.polled[proj] || ix.listingTrusted(pdir, ps)) {
		return ps, nil, true
	}
	ix.watchDir(pdir, proj, true, cs.projects[proj])
	fi, err := os.Stat(pdir)
	if err != nil || !fi.IsDir() {
		return projectScan{}, nil, false
	}
	segs, err := subdirs(pdir)
	if err != nil {
		return projectScan{}, nil, false
	}
	before = make(map[string]bool, len(ps.segs))
	for _, seg := range ps.segs {
		before[seg] = true
	}
	return projectScan{mtime: fi.ModTime().UnixNano(), segs: segs}, before, true
}

// listingTrusted reports whether the project directory pdir, last listed
// as ps, still has that listing by its mtime: unchanged, and old enough to
// trust (dirTrustAge).
func (ix *Indexed) listingTrusted(pdir string, ps projectScan) bool {
	fi, err := os.Stat(pdir)
	return err == nil && fi.IsDir() && ps.mtime == fi.ModTime().UnixNano() && time.Since(fi.ModTime()) >= dirTrustAge
}

// watchRoot (re)adds the root's watch before it is listed; when that fails
// the whole store is polled.
func (ix *Indexed) watchRoot(force bool) {
	if ix.watcher == nil {
		return
	}
	ok := ix.watcher.watch(ix.watcher.root, force)
	ix.fresh.mu.Lock()
	ix.fresh.pollAll = !ok
	ix.fresh.mu.Unlock()
}

// refreshMode says what a refresh scans.
type refreshMode int

const (
	// modeQuick: root, project directories by mtime, hot sessions (and
	// a full scan every fullScanEvery).
	modeQuick refreshMode = iota
	// modeFull: every transcript is stat'd.
	modeFull
	// modeChanges: what notifications reported (scanChanges).
	modeChanges
	// modePoll: what is not watched (pollSet) and what notifications
	// reported; when nothing is watched (pollAll), a quick scan plus
	// pollSet.
	modePoll
)

type indexJob struct {
	dir sessionDir
	old *entry
	enc Encoding
	sig fileSig
}

// refresh brings the index up to date: a stat scan (full, or quick), then
// parsing of new, grown, replaced or truncated transcripts (newest first,
// in parallel), published in batches so queries see progress during the
// first pass.
func (ix *Indexed) refresh(ctx context.Context, initial, full bool) error {
	mode := modeQuick
	if full {
		mode = modeFull
	}
	return ix.refreshWith(ctx, initial, mode)
}

// refreshWith is refresh with a scan mode. Every mode also takes the
// pending change set (what notifications reported), so a refresh covers
// every notice received before it started. A modeChanges or modePoll
// refresh that another one made unnecessary while it waited for the lock
// does nothing (this is how concurrent revalidations coalesce).
func (ix *Indexed) refreshWith(ctx context.Context, initial bool, mode refreshMode) error {
	ix.refreshMu.Lock()
	defer ix.refreshMu.Unlock()
	if mode == modePoll && !ix.pollDue(pollFresh) {
		mode = modeChanges
	}
	if mode == modeChanges && !ix.changesPending() {
		return nil
	}
	cs, seq := ix.takeChanges()
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

// scanResult is what a scan found. A whole scan lists every session
// directory with a transcript (dirs; the others are gone); a partial one
// (partial) lists only the stat'd ones that hold a transcript, and the
// ones found gone (gone): every other entry stands.
type scanResult struct {
	dirs, gone []sessionDir
	partial    bool
}

// scanFor runs the scan mode asks for over the change set cs (a poll adds
// what it polls to cs); full says whether it statted every transcript.
// A poll of a partly watched store stats only what has no watch (pollSet)
// and what notifications reported, through scanChanges: the watches vouch
// for the rest, so its cost follows the unwatched set, not the store. A
// store polled as a whole (pollAll) has nothing to vouch for it, so its
// poll is a quick scan plus pollSet.
func (ix *Indexed) scanFor(ctx context.Context, mode refreshMode, cs *changeSet, start time.Time, full bool) (scanResult, bool, error) {
	if mode == modePoll && !full && !ix.pollsAll() {
		cs.merge(ix.pollSet(start))
		mode = modeChanges
	}
	if mode == modeChanges && !cs.all {
		dirs, gone, partial, err := ix.scanChanges(ctx, *cs)
		return scanResult{dirs: dirs, gone: gone, partial: partial}, full, err
	}
	if mode == modePoll {
		cs.merge(ix.pollSet(start))
	}
	full = full || start.Sub(ix.lastFull) >= fullScanEvery
	dirs, err := ix.scan(ctx, start, full, *cs)
	return scanResult{dirs: dirs}, full, err
}

// apply brings the entries to the scanned session directories: it drops the
// sessions gone, parses what changed and rebuilds the listing. A whole
// scan becomes the last scan.
func (ix *Indexed) apply(ctx context.Context, initial, full bool, start time.Time, sc scanResult) error {
	p := ix.plan(sc)
	scanned := !sc.partial
	ix.mu.Lock()
	for _, k := range p.removed {
		delete(ix.entries, k)
	}
	for _, e := range p.flagOnly {
		ix.entries[e.Proj+"/"+e.Seg] = e
	}
	changed := len(p.jobs) > 0 || len(p.removed) > 0 || len(p.flagOnly) > 0
	if changed && (initial || len(p.jobs) == 0) {
		ix.rebuildListing()
	}
	ix.dirty = ix.dirty || changed
	if len(p.jobs) == 0 {
		ix.scanDone(scanned, full, start)
	}
	ix.mu.Unlock()
	ix.forgetUnwatched(p.removed, ix.projects)
	if len(p.jobs) == 0 {
		return nil
	}
	done := ix.parseAll(ctx, p.jobs, initial)
	ix.mu.Lock()
	ix.rebuildListing()
	ix.dirty = true
	ix.scanDone(scanned && done == len(p.jobs), full, start)
	ix.mu.Unlock()
	return ctx.Err()
}

// refreshPlan is what a scan changes: the transcripts to parse, the
// entries whose other-encoding flags alone changed, the keys gone.
type refreshPlan struct {
	jobs     []indexJob
	flagOnly []*entry
	removed  []string
}

// plan compares the scanned session directories with the entries. ix.entries is only
// written by the refresher (refreshMu), so reading it without ix.mu is safe.
func (ix *Indexed) plan(sc scanResult) refreshPlan {
	var p refreshPlan
	present := make(map[string]bool, len(sc.dirs))
	for _, d := range sc.dirs {
		present[d.key()] = true
		old := ix.entries[d.key()]
		enc := ix.layout.transcript(&d)
		sig, _ := d.sig(enc)
		if old == nil || old.Enc != enc || old.Sig != sig {
			p.jobs = append(p.jobs, indexJob{dir: d, old: old, enc: enc, sig: sig})
			continue
		}
		if old.HasRaw != d.hasRaw || old.HasZstd != d.hasZstd {
			ne := *old
			ne.HasRaw, ne.HasZstd = d.hasRaw, d.hasZstd
			ne.derive(old.view)
			p.flagOnly = append(p.flagOnly, &ne)
		}
	}
	if sc.partial {
		for _, d := range sc.gone {
			if k := d.key(); ix.entries[k] != nil {
				p.removed = append(p.removed, k)
			}
		}
	} else {
		for k := range ix.entries {
			if !present[k] {
				p.removed = append(p.removed, k)
			}
		}
	}
	// Newest files first: the sessions completion shows first are
	// indexed first.
	sort.Slice(p.jobs, func(i, j int) bool { return p.jobs[i].sig.MtimeNs > p.jobs[j].sig.MtimeNs })
	return p
}

// scanDone records a completed scan. Callers hold ix.mu.
func (ix *Indexed) scanDone(complete, full bool, start time.Time) {
	if !complete {
		return
	}
	ix.lastScan = start
	if full {
		ix.lastFull = start
	}
}

// parseAll parses the jobs on GOMAXPROCS workers and publishes the entries
// in batches (so queries see progress during the first pass); it returns
// how many were parsed (fewer when ctx or the index closes).
func (ix *Indexed) parseAll(ctx context.Context, jobs []indexJob, initial bool) int {
	total := len(jobs)
	progress := func(done int) {
		if initial && ix.opts.Progress != nil {
			ix.opts.Progress(done, total)
		}
	}
	progress(0)
	work := make(chan indexJob)
	results := make(chan *entry, 64)
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				results <- ix.parseOnce(j.dir, j.old, j.enc)
			}
		}()
	}
	go func() {
		defer close(work)
		for _, j := range jobs {
			select {
			case work <- j:
			case <-ctx.Done():
				return
			case <-ix.closed:
				return
			}
		}
	}()
	go func() { wg.Wait(); close(results) }()
	pub := publisher{ix: ix, initial: initial, last: time.Now()}
	done := 0
	for e := range results {
		pub.batch = append(pub.batch, e)
		done++
		if pub.due() {
			pub.publish()
			progress(done)
		}
	}
	if len(pub.batch) > 0 || !initial {
		pub.publish()
		progress(done)
	}
	return done
}

// publisher adds parsed entries to the index in batches.
type publisher struct {
	ix      *Indexed
	initial bool
	batch   []*entry
	last    time.Time
	// rebuild is what the last listing rebuild cost.
	rebuild time.Duration
}

// due reports whether the batch should be published now. Each publish of
// the first pass re-sorts the whole listing: spacing publishes by several
// times that cost keeps the first pass over a large store from being
// dominated (quadratically) by republishing.
func (p *publisher) due() bool {
	since := time.Since(p.last)
	return p.initial && (len(p.batch) >= 256 || since > 100*time.Millisecond) && since >= 8*p.rebuild
}

func (p *publisher) publish() {
	ix := p.ix
	ix.mu.Lock()
	for _, e := range p.batch {
		ix.entries[e.Proj+"/"+e.Seg] = e
	}
	if p.initial {
		t := time.Now()
		ix.rebuildListing()
		p.rebuild = time.Since(t)
	}
	ix.mu.Unlock()
	p.batch = p.batch[:0]
	p.last = time.Now()
}

// parseOnce (re)builds the entry of one session directory, sharing the
// parse of one transcript version among its callers.
func (ix *Indexed) parseOnce(d sessionDir, old *entry, enc Encoding) *entry {
	// One parse per transcript version at a time: the refresher and an
	// on-demand ReadSurface asking for the same file share the work.
	sig, _ := d.sig(enc)
	key := inflightKey{dir: d.key(), enc: enc, sig: sig}
	ix.inflightMu.Lock()
	if e, ok := ix.recent[key]; ok {
		ix.inflightMu.Unlock()
		return e
	}
	if call, ok := ix.inflight[key]; ok {
		ix.inflightMu.Unlock()
		<-call.done
		return call.e
	}
	call := &inflightCall{done: make(chan struct{})}
	if ix.inflight == nil {
		ix.inflight = map[inflightKey]*inflightCall{}
	}
	ix.inflight[key] = call
	ix.inflightMu.Unlock()
	call.e = ix.parseDir(d, old, enc)
	ix.inflightMu.Lock()
	delete(ix.inflight, key)
	// Keep a few recent results: an on-demand parse is not published, so
	// the refresher (or the next ReadSurface) reuses it.
	if ix.recent == nil || len(ix.recent) >= 64 {
		ix.recent = map[inflightKey]*entry{}
	}
	ix.recent[key] = call.e
	ix.inflightMu.Unlock()
	close(call.done)
	return call.e
}

type inflightKey struct {
	dir string
	enc Encoding
	sig fileSig
}

type inflightCall struct {
	done chan struct{}
	e    *entry
}

func (ix *Indexed) parseDir(d sessionDir, old *entry, enc Encoding) *entry {
	ix.parsed.Add(1)
	e := &entry{Proj: d.proj, Seg: d.seg, HasRaw: d.hasRaw, HasZstd: d.hasZstd, Enc: enc}
	sig, ok := d.sig(enc)
	e.Sig = sig
	if !ok {
		e.derive(nil)
		return e
	}
	path := e.path(ix.root)
	if old != nil && old.Enc == enc && old.State != nil && old.Listed && old.Sig.Dev == sig.Dev &&
		old.Sig.Ino == sig.Ino && sig.Size > old.Sig.Size {
		if view, ok := ix.parseAppended(e, old, path); ok {
			ix.grown.Add(1)
			e.derive(view)
			return e
		}
	}
	ix.parseFromStart(e, path)
	return e
}

// parseAppended continues old's parse over the appended bytes. It reports false
// when the file is no longer the one old describes, or when the fold now
// needs the message ids it did not keep (then the log is parsed again).
func (ix *Indexed) parseAppended(e, old *entry, path string) (*logState, bool) {
	f, sig, ok, err := openState(ix.root, path, old.Sig, old.State)
	if err != nil || !ok {
		return nil, false
	}
	defer f.Close()
	e.Listed, e.ListedID, e.ListedCWD, e.ListedCreatedAt, e.ListedRaw = true, old.ListedID, old.ListedCWD, old.ListedCreatedAt, old.ListedRaw
	e.IdentityOK, e.ReadID, e.HeaderLine, e.Sig = old.IdentityOK, old.ReadID, old.HeaderLine, sig
	p := &logParser{enc: e.Enc, id: old.ReadID, f: f, st: old.State.clone(), limit: ix.limit}
	view, err := p.parse(sig.Size)
	if err != nil {
		ix.setReadErr(e, err)
		return nil, true
	}
	if view.Fold.NeedIDs {
		return nil, false
	}
	e.State = p.st
	return view, true
}

// setReadErr records on e the error its read gives.
func (ix *Indexed) setReadErr(e *entry, err error) {
	e.State, e.ReadErr, e.ReadErrLimit = nil, transcript.SaveError(err), ix.limit
	if e.ReadErr.Kind == KindIO && !e.ReadErr.Limit {
		// Not a fact about these bytes: parse again at the next scan.
		e.Sig.Size = -1
	}
}

// parseFromStart reads a transcript from the start with one open file:
// one parse of the whole log with a read's checks, whose header gives the
// listing facts. A header the parse refuses (a foreign version, a torn
// one) is read again the way listing reads it, so the session is listed
// (or skipped) as listing would.
func (ix *Indexed) parseFromStart(e *entry, path string) {
	var view *logState
	defer func() { e.derive(view) }()
	f, err := openBeneath(ix.root, path)
	if err != nil {
		e.HeaderErr = (&transcript.Error{Kind: KindIO, Msg: "cannot open transcript", Err: err}).Error()
		ix.setReadErr(e, &transcript.Error{Kind: KindIO, Msg: "cannot read transcript", Err: err})
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		ix.listFrom(e, path, f, nil)
		ix.setReadErr(e, &transcript.Error{Kind: KindIO, Msg: "cannot read transcript", Err: err})
		return
	}
	e.Sig = sigOf(fi)
	var p *logParser
	for _, keepIDs := range []bool{false, true} {
		p = &logParser{enc: e.Enc, f: f, st: &logState{Fold: transcript.FoldState{KeepIDs: keepIDs}}, limit: ix.limit}
		if view, err = p.parse(e.Sig.Size); err != nil || !view.Fold.NeedIDs {
			break
		}
	}
	ix.listFrom(e, path, f, p.header)
	if err == nil {
		err = ix.layout.checkIdentity(p.header, path, e.Enc)
	}
	if err == nil {
		err = p.header.Validate()
	}
	if err != nil {
		view = nil
		ix.setReadErr(e, err)
		return
	}
	e.ReadID, e.State, e.HeaderLine = p.header.ID, p.st, append([]byte(nil), p.headerLine...)
}

// listFrom sets e's listing facts from h, the header a read of f parsed,
// or, when the read got none, from a header-only read of f.
func (ix *Indexed) listFrom(e *entry, path string, f *os.File, h *transcript.Header) {
	var err error
	if h == nil {
		h, err = transcript.ReadHeader(f, e.Enc.framing())
	}
	switch {
	case errors.Is(err, transcript.ErrNoHeaderYet):
		e.NoHeaderYet = true
	case err != nil:
		e.HeaderErr = err.Error()
	default:
		e.Listed = true
		r := h.Reference()
		e.ListedID, e.ListedCWD, e.ListedCreatedAt, e.ListedRaw = r.ID, r.CWD, r.CreatedAt, r.Raw
		e.IdentityOK = ix.layout.checkIdentity(h, path, e.Enc) == nil
	}
}
