package sessionstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
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
// persisted in the cache; the rest is derived.
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
	// Listed is true when the header was read; Ref* are its listing form.
	Listed       bool
	RefID        string
	RefCWD       *string
	RefCreatedAt int64
	RefRaw       []byte
	IdentityOK   bool
	// TitleID is the id of the header a read validated ("" when the read
	// failed before), HeaderLine that header's line.
	TitleID    string
	HeaderLine []byte
	// State is the committed parse state, nil when ReadErr is set.
	State *logState
	// TitleText is the title derived from State when TitleDerived (not
	// from a torn frame's view, and without error): persisted so that
	// loading the cache does not decode the titles again.
	TitleText    *string
	TitleDerived bool

	ref      reference.SessionHeader
	state    *logState // view: State plus a torn final frame, if any
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
		e.ref = reference.SessionHeader{ID: e.RefID, CWD: e.RefCWD, CreatedAt: e.RefCreatedAt, Raw: e.RefRaw}
	}
	e.state, e.title, e.titleErr, e.err = view, nil, nil, e.ReadErr.Err()
	if e.err == nil && view == nil {
		e.err = &transcript.Error{Kind: KindIO, Msg: "cannot read transcript", Err: fs.ErrNotExist}
	}
	if e.err == nil {
		// The fold's error, or the crash closers' (finished on a copy:
		// the log may still grow).
		_, e.err = transcript.ResumeFold(e.TitleID, view.Fold.Clone()).Finish()
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
		e.titleErr = attach(err, e.TitleID, "")
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
	if e.TitleID != id {
		return attach(transcript.Corruptf("header id %s does not match the requested id", jsjson.Quote(e.TitleID)), id, e.path(root))
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

type candidate struct {
	proj, seg      string
	raw, zst       fileSig
	hasRaw, hasZst bool
}

func (c *candidate) key() string { return c.proj + "/" + c.seg }

// encoding is the encoding of the transcript c's directory is read by
// (transcriptFor; the pinned one when only the other is present, which then
// indexes as a missing transcript).
func (c *candidate) encoding(pinned Encoding) Encoding {
	if enc, _ := transcriptFor(pinned, c.hasRaw, c.hasZst); enc != 0 {
		return enc
	}
	return pinned
}

func (c *candidate) sig(enc Encoding) (fileSig, bool) {
	if enc == Zstd {
		return c.zst, c.hasZst
	}
	return c.raw, c.hasRaw
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

// candidateOf is e's last known scan result.
func candidateOf(e *entry) candidate {
	c := candidate{proj: e.Proj, seg: e.Seg, hasRaw: e.HasRaw, hasZst: e.HasZstd}
	if e.Enc == Zstd {
		c.zst = e.Sig
	} else {
		c.raw = e.Sig
	}
	return c
}

// scan stats the store: project directories (re-listed only when their
// mtime changed, or cs names them) and the transcripts of the session
// directories. A quick scan (full false) stats only the transcripts of new
// directories, changed project directories, hot (recently modified)
// sessions and the sessions cs names. Every directory read is watched
// first (watchDir).
func (x *Indexed) scan(ctx context.Context, now time.Time, full bool, cs changeSet) ([]candidate, error) {
	full = full || cs.all
	x.watchRoot(cs.all)
	projects, err := os.ReadDir(x.root)
	if errors.Is(err, fs.ErrNotExist) {
		x.projects = map[string]projectScan{}
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sessionstore: listing root %s: %w", x.root, err)
	}
	cands := make([]candidate, 0, len(x.entries))
	var todo []candidate
	seen := make(map[string]projectScan, len(projects))
	for _, p := range projects {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !p.IsDir() {
			continue
		}
		pdir := filepath.Join(x.root, p.Name())
		fi, err := os.Stat(pdir)
		if err != nil {
			continue
		}
		ps, known := x.projects[p.Name()]
		changed := !known || cs.all || cs.projects[p.Name()] || ps.mtime != fi.ModTime().UnixNano() || now.Sub(fi.ModTime()) < dirTrustAge
		if changed {
			x.watchDir(pdir, p.Name(), true, cs.all || cs.projects[p.Name()])
			ents, err := os.ReadDir(pdir)
			if err != nil {
				continue
			}
			ps = projectScan{mtime: fi.ModTime().UnixNano()}
			for _, e := range ents {
				if e.IsDir() {
					ps.segs = append(ps.segs, e.Name())
				}
			}
		}
		seen[p.Name()] = ps
		for _, seg := range ps.segs {
			key := p.Name() + "/" + seg
			if !full && !changed && !cs.sessions[key] {
				if old := x.entries[key]; old != nil && !old.hot(now) {
					cands = append(cands, candidateOf(old))
					continue
				}
			}
			x.watchDir(filepath.Join(pdir, seg), key, false, cs.all || cs.sessions[key])
			todo = append(todo, candidate{proj: p.Name(), seg: seg})
		}
	}
	x.projects = seen
	return x.statCandidates(ctx, cands, todo)
}

// statCandidates lstats the transcripts of the todo session directories
// (watched before, so nothing written after a stat goes unnoticed) and
// appends those with a transcript to cands. The stats run on a few
// goroutines: a full scan is thousands of system calls, which overlap.
func (x *Indexed) statCandidates(ctx context.Context, cands, todo []candidate) ([]candidate, error) {
	stat := func(c *candidate) {
		dir := filepath.Join(x.root, c.proj, c.seg)
		c.raw, c.hasRaw = lstatSig(filepath.Join(dir, Raw.FileName()))
		c.zst, c.hasZst = lstatSig(filepath.Join(dir, Zstd.FileName()))
	}
	if workers := min(4, len(todo)/256); workers > 1 {
		var wg sync.WaitGroup
		per := (len(todo) + workers - 1) / workers
		for lo := 0; lo < len(todo); lo += per {
			part := todo[lo:min(lo+per, len(todo))]
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range part {
					stat(&part[i])
				}
			}()
		}
		wg.Wait()
	} else {
		for i := range todo {
			stat(&todo[i])
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, c := range todo {
		if c.hasRaw || c.hasZst {
			cands = append(cands, c)
		}
	}
	return cands, nil
}

// scanChanges is the scan of a notified change set in watch mode: it
// re-lists the root only when an entry of it changed, re-lists only the
// notified (and new) project directories and stats only the notified (and
// new) session directories; every other entry stands as indexed, which
// the watches vouch for.
func (x *Indexed) scanChanges(ctx context.Context, cs changeSet) ([]candidate, error) {
	names := make([]string, 0, len(x.projects))
	if cs.root {
		x.watchRoot(false)
		ents, err := os.ReadDir(x.root)
		if errors.Is(err, fs.ErrNotExist) {
			x.projects = map[string]projectScan{}
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("sessionstore: listing root %s: %w", x.root, err)
		}
		for _, p := range ents {
			if p.IsDir() {
				names = append(names, p.Name())
			}
		}
	} else {
		for p := range x.projects {
			names = append(names, p)
		}
	}
	cands := make([]candidate, 0, len(x.entries)+len(cs.sessions))
	var todo []candidate
	seen := make(map[string]projectScan, len(names))
	for _, p := range names {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		pdir := filepath.Join(x.root, p)
		ps, known := x.projects[p]
		relist := !known || cs.projects[p]
		var listed map[string]bool
		if relist {
			x.watchDir(pdir, p, true, cs.projects[p])
			fi, err := os.Stat(pdir)
			if err != nil || !fi.IsDir() {
				continue
			}
			ents, err := os.ReadDir(pdir)
			if err != nil {
				continue
			}
			if known {
				listed = make(map[string]bool, len(ps.segs))
				for _, seg := range ps.segs {
					listed[seg] = true
				}
			}
			ps = projectScan{mtime: fi.ModTime().UnixNano()}
			for _, e := range ents {
				if e.IsDir() {
					ps.segs = append(ps.segs, e.Name())
				}
			}
		}
		seen[p] = ps
		for _, seg := range ps.segs {
			key := p + "/" + seg
			old := x.entries[key]
			if old != nil && !cs.sessions[key] && (!relist || listed[seg]) {
				cands = append(cands, candidateOf(old))
				continue
			}
			x.watchDir(filepath.Join(pdir, seg), key, false, cs.sessions[key])
			todo = append(todo, candidate{proj: p, seg: seg})
		}
	}
	x.projects = seen
	return x.statCandidates(ctx, cands, todo)
}

// watchRoot (re)adds the root's watch before it is listed; when that fails
// the whole store is polled.
func (x *Indexed) watchRoot(force bool) {
	if x.watcher == nil {
		return
	}
	ok := x.watcher.watch(x.watcher.root, force)
	x.fresh.mu.Lock()
	x.fresh.pollAll = !ok
	x.fresh.mu.Unlock()
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
	// modePoll: a quick scan plus what is not watched (pollSet).
	modePoll
)

type indexJob struct {
	c   candidate
	old *entry
	enc Encoding
	sig fileSig
}

// refresh brings the index up to date: a stat scan (full, or quick), then
// parsing of new, grown, replaced or truncated transcripts (newest first,
// in parallel), published in batches so queries see progress during the
// first pass.
func (x *Indexed) refresh(ctx context.Context, initial, full bool) error {
	mode := modeQuick
	if full {
		mode = modeFull
	}
	return x.refreshWith(ctx, initial, mode)
}

// refreshWith is refresh with a scan mode. Every mode also takes the
// pending change set (what notifications reported), so a refresh covers
// every notice received before it started. A modeChanges or modePoll
// refresh that another one made unnecessary while it waited for the lock
// does nothing (this is how concurrent revalidations coalesce).
func (x *Indexed) refreshWith(ctx context.Context, initial bool, mode refreshMode) error {
	x.refreshMu.Lock()
	defer x.refreshMu.Unlock()
	if mode == modePoll && !x.pollDue(pollFresh) {
		mode = modeChanges
	}
	if mode == modeChanges && !x.changesPending() {
		return nil
	}
	cs, seq := x.takeChanges()
	start := time.Now()
	full := mode == modeFull || initial || cs.all
	var cands []candidate
	var err error
	switch {
	case mode == modeChanges && !cs.all:
		cands, err = x.scanChanges(ctx, cs)
	case mode == modePoll:
		cs.merge(x.pollSet())
		fallthrough
	default:
		full = full || start.Sub(x.lastFull) >= fullScanEvery
		cands, err = x.scan(ctx, start, full, cs)
	}
	if err == nil {
		err = x.apply(ctx, initial, full, mode != modeChanges || cs.all, start, cands)
	}
	x.changesDone(cs, seq, err == nil, mode == modePoll || full, start)
	if err == nil && full {
		x.preferRecentWatches()
	}
	return err
}

// apply brings the entries to the scan's candidates: it drops the
// sessions gone, parses what changed and rebuilds the listing. scanned
// says the scan covered the whole store (then it is the last scan).
func (x *Indexed) apply(ctx context.Context, initial, full, scanned bool, start time.Time, cands []candidate) error {
	p := x.plan(cands)
	x.mu.Lock()
	for _, k := range p.removed {
		delete(x.entries, k)
	}
	for _, e := range p.flagOnly {
		x.entries[e.Proj+"/"+e.Seg] = e
	}
	changed := len(p.jobs) > 0 || len(p.removed) > 0 || len(p.flagOnly) > 0
	if changed && (initial || len(p.jobs) == 0) {
		x.rebuildListing()
	}
	x.dirty = x.dirty || changed
	if len(p.jobs) == 0 {
		x.scanDone(scanned, full, start)
	}
	x.mu.Unlock()
	x.forgetUnwatched(p.removed, x.projects)
	if len(p.jobs) == 0 {
		return nil
	}
	done := x.parseAll(ctx, p.jobs, initial)
	x.mu.Lock()
	x.rebuildListing()
	x.dirty = true
	x.scanDone(scanned && done == len(p.jobs), full, start)
	x.mu.Unlock()
	return ctx.Err()
}

// refreshPlan is what a scan changes: the transcripts to parse, the
// entries whose other-encoding flags alone changed, the keys gone.
type refreshPlan struct {
	jobs     []indexJob
	flagOnly []*entry
	removed  []string
}

// plan compares the scan's candidates with the entries. x.entries is only
// written by the refresher (refreshMu), so reading it without x.mu is safe.
func (x *Indexed) plan(cands []candidate) refreshPlan {
	var p refreshPlan
	present := make(map[string]bool, len(cands))
	for _, c := range cands {
		present[c.key()] = true
		old := x.entries[c.key()]
		enc := c.encoding(x.store.enc)
		sig, _ := c.sig(enc)
		if old == nil || old.Enc != enc || old.Sig != sig {
			p.jobs = append(p.jobs, indexJob{c: c, old: old, enc: enc, sig: sig})
			continue
		}
		if old.HasRaw != c.hasRaw || old.HasZstd != c.hasZst {
			ne := *old
			ne.HasRaw, ne.HasZstd = c.hasRaw, c.hasZst
			ne.derive(old.state)
			p.flagOnly = append(p.flagOnly, &ne)
		}
	}
	for k := range x.entries {
		if !present[k] {
			p.removed = append(p.removed, k)
		}
	}
	// Newest files first: the sessions completion shows first are
	// indexed first.
	sort.Slice(p.jobs, func(i, j int) bool { return p.jobs[i].sig.MtimeNs > p.jobs[j].sig.MtimeNs })
	return p
}

// scanDone records a completed scan. Callers hold x.mu.
func (x *Indexed) scanDone(complete, full bool, start time.Time) {
	if !complete {
		return
	}
	x.lastScan = start
	if full {
		x.lastFull = start
	}
}

// parseAll parses the jobs on GOMAXPROCS workers and publishes the entries
// in batches (so queries see progress during the first pass); it returns
// how many were parsed (fewer when ctx or the index closes).
func (x *Indexed) parseAll(ctx context.Context, jobs []indexJob, initial bool) int {
	total := len(jobs)
	progress := func(done int) {
		if initial && x.opts.Progress != nil {
			x.opts.Progress(done, total)
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
				results <- x.index(j.c, j.old, j.enc)
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
			case <-x.closed:
				return
			}
		}
	}()
	go func() { wg.Wait(); close(results) }()
	pub := publisher{x: x, initial: initial, last: time.Now()}
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
	x       *Indexed
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
	x := p.x
	x.mu.Lock()
	for _, e := range p.batch {
		x.entries[e.Proj+"/"+e.Seg] = e
	}
	if p.initial {
		t := time.Now()
		x.rebuildListing()
		p.rebuild = time.Since(t)
	}
	x.mu.Unlock()
	p.batch = p.batch[:0]
	p.last = time.Now()
}

// index (re)builds the entry of one session directory.
func (x *Indexed) index(c candidate, old *entry, enc Encoding) *entry {
	// One parse per transcript version at a time: the refresher and an
	// on-demand ReadSurface asking for the same file share the work.
	sig, _ := c.sig(enc)
	key := inflightKey{dir: c.key(), enc: enc, sig: sig}
	x.inflightMu.Lock()
	if e, ok := x.recent[key]; ok {
		x.inflightMu.Unlock()
		return e
	}
	if call, ok := x.inflight[key]; ok {
		x.inflightMu.Unlock()
		<-call.done
		return call.e
	}
	call := &inflightCall{done: make(chan struct{})}
	if x.inflight == nil {
		x.inflight = map[inflightKey]*inflightCall{}
	}
	x.inflight[key] = call
	x.inflightMu.Unlock()
	call.e = x.indexNow(c, old, enc)
	x.inflightMu.Lock()
	delete(x.inflight, key)
	// Keep a few recent results: an on-demand parse is not published, so
	// the refresher (or the next ReadSurface) reuses it.
	if x.recent == nil || len(x.recent) >= 64 {
		x.recent = map[inflightKey]*entry{}
	}
	x.recent[key] = call.e
	x.inflightMu.Unlock()
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

func (x *Indexed) indexNow(c candidate, old *entry, enc Encoding) *entry {
	x.parsed.Add(1)
	e := &entry{Proj: c.proj, Seg: c.seg, HasRaw: c.hasRaw, HasZstd: c.hasZst, Enc: enc}
	sig, ok := c.sig(enc)
	e.Sig = sig
	if !ok {
		e.derive(nil)
		return e
	}
	path := e.path(x.root)
	if old != nil && old.Enc == enc && old.State != nil && old.Listed && old.Sig.Dev == sig.Dev &&
		old.Sig.Ino == sig.Ino && sig.Size > old.Sig.Size {
		if view, ok := x.grow(e, old, path); ok {
			x.grown.Add(1)
			e.derive(view)
			return e
		}
	}
	x.full(e, path)
	return e
}

// grow continues old's parse over the appended bytes. It reports false
// when the file is no longer the one old describes, or when the fold now
// needs the message ids it did not keep (then the log is parsed again).
func (x *Indexed) grow(e, old *entry, path string) (*logState, bool) {
	f, sig, ok, err := openState(path, old.Sig, old.State)
	if err != nil || !ok {
		return nil, false
	}
	defer f.Close()
	e.Listed, e.RefID, e.RefCWD, e.RefCreatedAt, e.RefRaw = true, old.RefID, old.RefCWD, old.RefCreatedAt, old.RefRaw
	e.IdentityOK, e.TitleID, e.HeaderLine, e.Sig = old.IdentityOK, old.TitleID, old.HeaderLine, sig
	p := &logParser{enc: e.Enc, id: old.TitleID, f: f, st: old.State.clone(), limit: x.store.limit}
	view, err := p.parse(sig.Size)
	if err != nil {
		x.setReadErr(e, err)
		return nil, true
	}
	if view.Fold.NeedIDs {
		return nil, false
	}
	e.State = p.st
	return view, true
}

// setReadErr records on e the error its read gives.
func (x *Indexed) setReadErr(e *entry, err error) {
	e.State, e.ReadErr, e.ReadErrLimit = nil, transcript.SaveError(err), x.store.limit
	if e.ReadErr.Kind == KindIO && !e.ReadErr.Limit {
		// Not a fact about these bytes: parse again at the next scan.
		e.Sig.Size = -1
	}
}

// full reads a transcript from the start with one open file: one parse
// of the whole log with a read's checks, whose header gives the listing
// facts. A header the parse refuses (a foreign version, a torn one) is
// read again the way Discover reads it, so the session is listed (or
// skipped) as Discover would.
func (x *Indexed) full(e *entry, path string) {
	var view *logState
	defer func() { e.derive(view) }()
	f, err := openRegular(path)
	if err != nil {
		e.HeaderErr = (&transcript.Error{Kind: KindIO, Msg: "cannot open transcript", Err: err}).Error()
		x.setReadErr(e, &transcript.Error{Kind: KindIO, Msg: "cannot read transcript", Err: err})
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		x.list(e, path, f, nil)
		x.setReadErr(e, &transcript.Error{Kind: KindIO, Msg: "cannot read transcript", Err: err})
		return
	}
	e.Sig = sigOf(fi)
	var p *logParser
	for _, keepIDs := range []bool{false, true} {
		p = &logParser{enc: e.Enc, f: f, st: &logState{Fold: transcript.FoldState{KeepIDs: keepIDs}}, limit: x.store.limit}
		if view, err = p.parse(e.Sig.Size); err != nil || !view.Fold.NeedIDs {
			break
		}
	}
	x.list(e, path, f, p.header)
	if err == nil {
		err = x.store.checkIdentity(p.header, path, e.Enc)
	}
	if err == nil {
		err = p.header.Validate()
	}
	if err != nil {
		view = nil
		x.setReadErr(e, err)
		return
	}
	e.TitleID, e.State, e.HeaderLine = p.header.ID, p.st, append([]byte(nil), p.headerLine...)
}

// list sets e's listing facts from h, the header a read of f parsed, or,
// when the read got none, from a header-only read of f.
func (x *Indexed) list(e *entry, path string, f *os.File, h *transcript.Header) {
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
		e.RefID, e.RefCWD, e.RefCreatedAt, e.RefRaw = r.ID, r.CWD, r.CreatedAt, r.Raw
		e.IdentityOK = x.store.checkIdentity(h, path, e.Enc) == nil
	}
}
