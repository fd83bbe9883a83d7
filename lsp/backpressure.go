package lsp

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/google/uuid"
	"go.lsp.dev/jsonrpc2"

	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
)

// Back-pressure for the requests that read whole sessions (issue 16,
// attack 7): prepare, hover and completionItem/resolve run under a
// concurrency limit, queued in arrival order and cancellable while queued
// ($/cancelRequest answers -32800 at once); hover and resolve answers are
// cached per session version. Completion, diagnostics and code actions never
// wait here: they answer from the index, so they stay fast while reads
// queue.

// maxQueued bounds the requests waiting for a slot: a client flooding the
// server with hovers gets a clear error instead of a goroutine per request.
const maxQueued = 1024

// limiter is a counting semaphore with a bounded FIFO queue.
type limiter struct {
	slots  chan struct{}
	mu     sync.Mutex
	queued int
}

// readConcurrency is the number of read slots for a MaxConcurrentReads
// option: n, or when n <= 0 one less than GOMAXPROCS, at least 1, so a
// core stays free for completion and the read loop.
func readConcurrency(n int) int {
	if n <= 0 {
		n = max(1, runtime.GOMAXPROCS(0)-1)
	}
	return n
}

// newLimiter returns a limiter of n slots.
func newLimiter(n int) *limiter {
	return &limiter{slots: make(chan struct{}, n)}
}

// acquire waits for a slot. It fails with ctx's error when the request is
// cancelled while queued, and with a RequestFailed error when maxQueued
// requests already wait. Waiters are served in arrival order (a channel
// queues its blocked senders FIFO).
func (l *limiter) acquire(ctx context.Context, method string) (func(), error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	select {
	case l.slots <- struct{}{}:
		return l.release, nil
	default:
	}
	l.mu.Lock()
	if l.queued >= maxQueued {
		l.mu.Unlock()
		return nil, jsonrpc2.NewError(codeRequestFailed, fmt.Sprintf("%s: dsh-lsp is busy: %d session reads are already queued; try again", method, maxQueued))
	}
	l.queued++
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		l.queued--
		l.mu.Unlock()
	}()
	select {
	case l.slots <- struct{}{}:
		return l.release, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (l *limiter) release() { <-l.slots }

// sessionVersion identifies one state of a session's files: the session
// directory and both transcript names, by Lstat (never following a
// link). Appends, retitles, truncation, replacement (rename), removal and a
// switch between raw and zstd all change it.
type sessionVersion struct {
	dir, raw, zst os.FileInfo
}

// settleTime: an answer is cached only when every file of the session
// changed at least this long before the read started. A change during the
// read would give a file (or, for a rename or removal, the directory) a
// newer mtime, even on a file system whose clock ticks coarsely; and a file
// rewritten to the same size within one such tick (same size, same mtime)
// is not mistaken for the cached version.
const settleTime = time.Second

// statSession returns the version of the session directory dir; ok is false
// when dir is not a directory.
func statSession(dir string) (v sessionVersion, ok bool) {
	d, err := os.Lstat(dir)
	if err != nil || !d.IsDir() {
		return v, false
	}
	v.dir = d
	v.raw, _ = os.Lstat(filepath.Join(dir, sessionstore.Raw.FileName()))
	v.zst, _ = os.Lstat(filepath.Join(dir, sessionstore.Zstd.FileName()))
	return v, true
}

func sameInfo(a, b os.FileInfo) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime()) && a.Mode() == b.Mode()
}

func (v sessionVersion) equal(w sessionVersion) bool {
	return sameInfo(v.dir, w.dir) && sameInfo(v.raw, w.raw) && sameInfo(v.zst, w.zst)
}

// settledBefore reports whether every file of v changed before t minus
// settleTime.
func (v sessionVersion) settledBefore(t time.Time) bool {
	for _, fi := range []os.FileInfo{v.dir, v.raw, v.zst} {
		if fi != nil && !fi.ModTime().Before(t.Add(-settleTime)) {
			return false
		}
	}
	return true
}

// sessionDir returns the directory dsh keeps session id in under root, from
// the session's cwd (spec §1.2); ok is false when it cannot be derived.
func sessionDir(root string, cwd *string, id string) (string, bool) {
	p, err := sessionstore.SessionPath(root, cwd, id, sessionstore.Raw)
	if err != nil {
		return "", false
	}
	return filepath.Dir(p), true
}

// renderKey identifies one rendered answer about a session: the hover of a
// mention, or the documentation of a completion item.
type renderKey struct {
	kind   string // "hover" or "resolve"
	env    *environment
	id     string
	label  string
	bare   bool   // hover: a bare URI (no label of its own)
	cwd    string // resolve: the item's cwd ("\x00" when absent)
	md     bool
	self   bool
	budget int64
	at     int64 // resolve: the item's createdAt
}

type renderEntry struct {
	dir   string
	ver   sessionVersion
	value string
	used  time.Time
}

// maxRendered bounds the render cache (entries are a few hundred bytes).
const maxRendered = 512

// renderCache caches rendered hover and resolve answers per session
// version: an entry is used only while the session's files are exactly as
// they were when it was rendered.
type renderCache struct {
	mu sync.Mutex
	m  map[renderKey]*renderEntry
}

// get returns the cached value of k when the session is unchanged.
func (c *renderCache) get(k renderKey) (string, bool) {
	c.mu.Lock()
	e := c.m[k]
	c.mu.Unlock()
	if e == nil {
		return "", false
	}
	v, ok := statSession(e.dir)
	if !ok || !v.equal(e.ver) {
		c.mu.Lock()
		if c.m[k] == e {
			delete(c.m, k)
		}
		c.mu.Unlock()
		return "", false
	}
	c.mu.Lock()
	e.used = time.Now()
	c.mu.Unlock()
	return e.value, true
}

// put caches value for k, rendered from the session in dir by a read that
// started at readStart. Nothing is cached when a file of the session
// changed since shortly before the read (see settleTime): the value might
// not match the files' current version.
func (c *renderCache) put(k renderKey, dir string, readStart time.Time, value string) {
	ver, ok := statSession(dir)
	if !ok || !ver.settledBefore(readStart) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[renderKey]*renderEntry)
	}
	if len(c.m) >= maxRendered {
		// Drop the least recently used eighth.
		c.evictLocked(maxRendered / 8)
	}
	c.m[k] = &renderEntry{dir: dir, ver: ver, value: value, used: time.Now()}
}

func (c *renderCache) evictLocked(n int) {
	for ; n > 0 && len(c.m) > 0; n-- {
		delete(c.m, leastRecentlyUsed(c.m, func(e *renderEntry) time.Time { return e.used }))
	}
}

// leastRecentlyUsed is the key of m's entry used longest ago (m not
// empty). A linear scan: the caches are small and evict rarely.
func leastRecentlyUsed[K comparable, E any](m map[K]E, used func(E) time.Time) K {
	var oldest K
	var at time.Time
	first := true
	for k, e := range m {
		if u := used(e); first || u.Before(at) {
			oldest, at, first = k, u, false
		}
	}
	return oldest
}

// maxCachedSurfaceBytes bounds the memory of cached session surfaces (an
// estimate: the events' JSON plus per-event overhead).
const maxCachedSurfaceBytes = 64 << 20

// surfaceCache keeps recently read session surfaces per session version, so
// repeated prepares, hovers and resolves of the same unchanged sessions do
// not decode their logs again (a 6 MB / 5,000-message session costs about
// 50 ms to read from the index: BenchmarkHoverCold). Cached surfaces are
// shared by requests and never modified.
type surfaceCache struct {
	mu    sync.Mutex
	m     map[surfaceKey]*surfaceEntry
	bytes int64
	// reading holds the reads in flight, so that requests for a session
	// whose read is running wait for it instead of reading it again.
	reading map[surfaceKey]*surfaceRead
}

// surfaceRead is one read of a session surface in flight. Its fields are
// set before done is closed.
type surfaceRead struct {
	done  chan struct{}
	start time.Time
	surf  *reference.Surface
	err   error
	// cancelled: the read stopped because its own request was cancelled,
	// which says nothing about the session.
	cancelled bool
	// waiters counts the requests that joined it (under surfaceCache.mu).
	waiters int
	// started: the read has begun (under surfaceCache.mu). A request that
	// joins a started read may miss a change made before it arrived, so
	// it waits for that read and reads afresh. (Comparing arrival and
	// start times failed where the clock is coarse: under Wine both fell
	// in the same tick.)
	started bool
}

// join returns the read in flight for k, or starts (registers) one that
// the caller (lead) must end with finish. shared reports whether the
// read had not started yet, so its outcome may answer the caller.
func (c *surfaceCache) join(k surfaceKey) (r *surfaceRead, lead, shared bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r := c.reading[k]; r != nil {
		r.waiters++
		return r, false, !r.started
	}
	if c.reading == nil {
		c.reading = make(map[surfaceKey]*surfaceRead)
	}
	r = &surfaceRead{done: make(chan struct{}), start: time.Now()}
	c.reading[k] = r
	return r, true, false
}

// begin marks r as started.
func (c *surfaceCache) begin(r *surfaceRead) {
	c.mu.Lock()
	r.started = true
	c.mu.Unlock()
}

// finish publishes the outcome of the read r and wakes its waiters.
func (c *surfaceCache) finish(k surfaceKey, r *surfaceRead) {
	c.mu.Lock()
	if c.reading[k] == r {
		delete(c.reading, k)
	}
	c.mu.Unlock()
	close(r.done)
}

type surfaceKey struct {
	root string
	id   string
}

type surfaceEntry struct {
	dir  string
	ver  sessionVersion
	surf *reference.Surface
	size int64
	used time.Time
}

// surfaceSize estimates the memory a surface holds.
func surfaceSize(s *reference.Surface) int64 {
	n := int64(len(s.Session)) + 256
	for _, ev := range s.Events {
		n += int64(len(ev.Raw)) + 96
	}
	return n
}

func (c *surfaceCache) get(k surfaceKey) (*reference.Surface, bool) {
	c.mu.Lock()
	e := c.m[k]
	c.mu.Unlock()
	if e == nil {
		return nil, false
	}
	v, ok := statSession(e.dir)
	c.mu.Lock()
	defer c.mu.Unlock()
	if !ok || !v.equal(e.ver) {
		if c.m[k] == e {
			delete(c.m, k)
			c.bytes -= e.size
		}
		return nil, false
	}
	e.used = time.Now()
	return e.surf, true
}

// put caches surf (read from dir by a read that started at readStart) when
// the session's files had settled before the read.
func (c *surfaceCache) put(k surfaceKey, dir string, readStart time.Time, surf *reference.Surface) {
	size := surfaceSize(surf)
	if size > maxCachedSurfaceBytes/2 {
		return
	}
	ver, ok := statSession(dir)
	if !ok || !ver.settledBefore(readStart) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[surfaceKey]*surfaceEntry)
	}
	if old := c.m[k]; old != nil {
		c.bytes -= old.size
	}
	for c.bytes+size > maxCachedSurfaceBytes && len(c.m) > 0 {
		oldest := leastRecentlyUsed(c.m, func(e *surfaceEntry) time.Time { return e.used })
		c.bytes -= c.m[oldest].size
		delete(c.m, oldest)
	}
	c.m[k] = &surfaceEntry{dir: dir, ver: ver, surf: surf, size: size, used: time.Now()}
	c.bytes += size
}

// readSurface is env.source.ReadSurface through the surface cache, one
// read at a time per session (single flight): a request that finds the
// session's read in flight waits for it. It takes that read's answer only
// when the read started after the request did (so it saw every change the
// request may expect); otherwise it takes the answer through the cache,
// which checks it against the session's files now, or reads again.
func (s *Server) readSurface(ctx context.Context, env *environment, id string) (*reference.Surface, error) {
	k := surfaceKey{root: env.root, id: id}
	for {
		if surf, ok := s.surfaces.get(k); ok {
			return surf, nil
		}
		r, lead, shared := s.surfaces.join(k)
		if lead {
			s.readSurfaceFor(ctx, env, k, r)
			return r.surf, r.err
		}
		select {
		case <-r.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if shared && !r.cancelled {
			return r.surf, r.err
		}
	}
}

// readSurfaceFor runs the read r (registered under k) and publishes its
// outcome, caching a successful one.
func (s *Server) readSurfaceFor(ctx context.Context, env *environment, k surfaceKey, r *surfaceRead) {
	defer s.surfaces.finish(k, r)
	// One read at a time per slot, also within a request: prepare reads
	// its sources in parallel, which would take every core from
	// completion.
	select {
	case s.readSlots <- struct{}{}:
	case <-ctx.Done():
		r.err, r.cancelled = ctx.Err(), true
		return
	}
	s.surfaces.begin(r)
	r.start = time.Now()
	surf, err := env.source.ReadSurface(ctx, k.id)
	<-s.readSlots
	if err != nil {
		r.err, r.cancelled = err, ctx.Err() != nil
		return
	}
	r.surf = surf
	if dir, ok := sessionDir(env.root, surf.Header.CWD, k.id); ok {
		s.surfaces.put(k, dir, r.start, surf)
	}
}

// cachedSurfaces is env's source with ReadSurface through the server's
// surface cache (for prepare, whose reference.Service reads only surfaces).
type cachedSurfaces struct {
	reference.Source
	s   *Server
	env *environment
}

func (c cachedSurfaces) ReadSurface(ctx context.Context, id string) (*reference.Surface, error) {
	return c.s.readSurface(ctx, c.env, id)
}

// maxPrepared bounds the prepare cache (an entry holds at most
// maxReferences retained sessions of maxReferenceBytes each).
const maxPrepared = 32

// prepareKey identifies a prepare: the environment (store and settings),
// the target and the text (by hash).
type prepareKey struct {
	env                  *environment
	targetID, targetCWD  string
	hasTarget, hasCWD    bool
	text                 [sha256.Size]byte
	budget, maxReference int64
}

func newPrepareKey(env *environment, t reference.Target, text string) prepareKey {
	k := prepareKey{env: env, text: sha256.Sum256([]byte(text)), budget: env.config.MaxReferenceBytes, maxReference: env.config.MaxReferences}
	if t.SessionID != nil {
		k.targetID, k.hasTarget = *t.SessionID, true
	}
	if t.CWD != nil {
		k.targetCWD, k.hasCWD = *t.CWD, true
	}
	return k
}

type preparedEntry struct {
	dirs []string
	vers []sessionVersion
	pt   *reference.PreparedText
	used time.Time
}

// prepareCache keeps recent prepare results while every session they read
// is unchanged. A result served again gets a fresh context message id (a
// UUID v4, as each prepare must): everything else is what preparing the
// same text over the same files gives.
type prepareCache struct {
	mu sync.Mutex
	m  map[prepareKey]*preparedEntry
}

func (c *prepareCache) get(k prepareKey) (*reference.PreparedText, bool) {
	c.mu.Lock()
	e := c.m[k]
	c.mu.Unlock()
	if e == nil {
		return nil, false
	}
	for i, dir := range e.dirs {
		if v, ok := statSession(dir); !ok || !v.equal(e.vers[i]) {
			c.mu.Lock()
			if c.m[k] == e {
				delete(c.m, k)
			}
			c.mu.Unlock()
			return nil, false
		}
	}
	c.mu.Lock()
	e.used = time.Now()
	c.mu.Unlock()
	pt := *e.pt
	if e.pt.ContextMessage != nil {
		cm := *e.pt.ContextMessage
		cm.ID = uuid.NewString()
		pt.ContextMessage = &cm
	}
	return &pt, true
}

// put caches pt, prepared by reading the sessions in dirs from readStart
// on, when they had all settled before the read.
func (c *prepareCache) put(k prepareKey, dirs []string, readStart time.Time, pt *reference.PreparedText) {
	cp := *pt // the caller's copy gets marshalled, which may set References
	if cp.References == nil {
		cp.References = []reference.ParsedReference{}
	}
	e := &preparedEntry{dirs: dirs, pt: &cp, used: time.Now()}
	for _, dir := range dirs {
		v, ok := statSession(dir)
		if !ok || !v.settledBefore(readStart) {
			return
		}
		e.vers = append(e.vers, v)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[prepareKey]*preparedEntry)
	}
	if len(c.m) >= maxPrepared {
		delete(c.m, leastRecentlyUsed(c.m, func(e *preparedEntry) time.Time { return e.used }))
	}
	c.m[k] = e
}

// recordingSurfaces is cachedSurfaces that also records the directory of
// every session read (for the prepare cache); ok turns false when one
// cannot be derived.
type recordingSurfaces struct {
	cachedSurfaces
	mu   sync.Mutex
	dirs []string
	ok   bool
}

func (r *recordingSurfaces) ReadSurface(ctx context.Context, id string) (*reference.Surface, error) {
	surf, err := r.cachedSurfaces.ReadSurface(ctx, id)
	if err != nil {
		return nil, err
	}
	dir, ok := sessionDir(r.env.root, surf.Header.CWD, id)
	r.mu.Lock()
	r.dirs = append(r.dirs, dir)
	r.ok = r.ok && ok
	r.mu.Unlock()
	return surf, nil
}
