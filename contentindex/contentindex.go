// Package contentindex is a full-text index of what a mention of a session
// would send: the session's projected surface (direct user text, completed
// assistant text, compaction checkpoints, through reference.Messages, so
// never tool output, reasoning, injected plugin context, text shadowed by a
// compaction or unfinished assistant chunks) and its title.
//
// The engine is SQLite FTS5 (modernc.org/sqlite, pure Go) with the trigram
// tokenizer, contentless and without positions (detail=none): the index
// only says which sessions hold every trigram of a term, and the candidates
// are then checked against the session's text, kept zstd-compressed in an
// ordinary table (the text is stored once, compressed, and the index holds
// no positions: together smaller than the text). Matching is
// case-insensitive and finds any substring (so word prefixes and CJK
// substrings); a query whose terms are all under three characters scans the
// stored texts. The index is one file in
// the user cache directory (0700 directory, 0600 file), keyed per session by
// the store index's version of its transcript, so a sync re-reads only the
// sessions that changed and drops the ones that are gone. A file that is not
// a database of this format (corrupt, foreign, another store's) is deleted
// and rebuilt, never trusted.
//
// Bounds: at most MaxSessionBytes of text per session are indexed (the head
// and the tail of a longer one), which also bounds its trigram tokens; a
// query is cut to MaxQueryBytes and MaxQueryTerms terms.
package contentindex

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/maphash"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
	"github.com/klauspost/compress/zstd"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

const (
	// formatVersion identifies the schema; a file with another value is
	// rebuilt.
	formatVersion = "dsh-lsp content index 4"
	// MaxSessionBytes caps the text indexed per session (title included):
	// a longer session has its first and last halves indexed.
	MaxSessionBytes = 1 << 20
	// MaxQueryBytes caps a query (longer queries are cut at a character
	// boundary).
	MaxQueryBytes = 256
	// MaxQueryTerms caps the whitespace-separated terms of a query; the
	// rest are ignored.
	MaxQueryTerms = 8
	// DefaultLimit is the number of hits when the caller gives none;
	// MaxLimit caps it.
	DefaultLimit = 20
	MaxLimit     = 200
	// batchSize is how many sessions one write transaction holds (and
	// one read batch: two are in memory during a build, 9 MB each at
	// 68 KB a text; 256 took the build of a 1.8 GB store 17 MB higher).
	batchSize = 128
	// scanBatch is how many candidate rows a search reads at a time.
	scanBatch = 64
)

// The stored texts are zstd frames; EncodeAll and DecodeAll are safe for
// concurrent use. A stored text is at most MaxSessionBytes; the decoder's
// 64 MiB cap bounds what a damaged file can make it allocate.
var (
	textEncoder, _ = zstd.NewWriter(nil)
	textDecoder, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(64<<20))
)

// errCorrupt marks a stored text that does not decode: the file is rebuilt.
var errCorrupt = errors.New("corrupt stored text")

// Source is what the index reads sessions through: the store index's
// versions (sessionstore.Indexed implements it).
type Source interface {
	SessionVersions(ctx context.Context) (iter.Seq[sessionstore.SessionVersion], error)
	ReadSurface(ctx context.Context, id string) (*reference.Surface, error)
	ReadTitles(ctx context.Context, ids []string) ([]reference.TitleResult, error)
	// ListedCandidates answers from memory, without revalidating: a
	// query reads nothing from the store.
	ListedCandidates(ids []string) []reference.Candidate
}

var _ Source = (*sessionstore.Indexed)(nil)

// versionsSince is a Source that can give, after an earlier answer, only
// the sessions whose versions may have changed since
// (sessionstore.Indexed.SessionVersionsSince).
type versionsSince interface {
	SessionVersionsSince(ctx context.Context, since sessionstore.VersionsMark) (iter.Seq[sessionstore.SessionVersion], sessionstore.VersionsMark, bool, error)
}

var _ versionsSince = (*sessionstore.Indexed)(nil)

// Options configures Open.
type Options struct {
	// MaxSessionBytes overrides MaxSessionBytes when positive (tests).
	MaxSessionBytes int
	// Logf, when set, receives warnings (a rebuilt file, an unreadable
	// session).
	Logf func(format string, args ...any)
}

// Index is an open content index. It is safe for concurrent use: syncs
// are serialized, searches run beside them.
type Index struct {
	path string
	opts Options

	mu sync.Mutex // serializes Sync and rebuilds
	db *sql.DB
	// stmts are the statements a search runs, prepared once per file.
	stmts *statements
	// reader is db and stmts as searches see them, without taking mu: a
	// Sync holds mu while it reads and indexes every changed session
	// (minutes for a large store), and a search must not wait for it.
	reader atomic.Pointer[reader]
	// versions mirrors the docs table: the indexed version of each id,
	// both hashed (idSum, versionSum): at 100,000 sessions the strings
	// would hold 11 MB for a comparison, and reading them from the file
	// as many again while a restart's first sync runs.
	versions map[uint64]uint64
	// seed is idSum's and versionSum's, random per process: an id or a
	// version an attacker shapes cannot be made to collide with another.
	seed maphash.Seed
	// synced is true once a Sync has completed on this process; read
	// without mu (Synced) so that asking does not wait for a running Sync.
	synced atomic.Bool
	// gen counts committed changes (Generation).
	gen atomic.Uint64
	// minRowid is the smallest rowid in use (0 for an empty index).
	minRowid int64
	// lastSrc and lastGen are the source of the last complete sync and its
	// generation then (when it tracks changes: reference.ChangeTracker).
	lastSrc Source
	lastGen uint64
	// lastMark is the mark of the last complete sync's versions, when its
	// source gives marks (versionsSince).
	lastMark sessionstore.VersionsMark
	// compared counts the sessions the last sync compared (plan).
	compared int
	// cur is what searches and Items read without taking mu: it is
	// replaced, never changed, by syncs.
	cur atomic.Pointer[snapshot]
}

// snapshot is the state searches share with syncs: the titles of the
// indexed sessions. The listing and the labels of hits are the source's
// (Source.ListedCandidates), not a copy.
type snapshot struct {
	titles *titleSet
}

// reader is what a search reads: the database and its prepared statements.
type reader struct {
	db *sql.DB
	st *statements
}

// statements are the prepared statements of searches (database/sql
// prepares them again on each connection that runs them).
type statements struct {
	fetch, lead, match, all *sql.Stmt
}

func (st *statements) close() {
	for _, s := range []*sql.Stmt{st.fetch, st.lead, st.match, st.all} {
		if s != nil {
			s.Close()
		}
	}
}

func (ix *Index) snap() *snapshot {
	if s := ix.cur.Load(); s != nil {
		return s
	}
	return &snapshot{titles: newTitleSet(nil)}
}

// Hit is one search result: a session and its best matching passage.
type Hit struct {
	SessionID string
	// Snippet is the matched passage on one line, the match between ** **.
	Snippet string
}

// Open opens (creating it if needed) the content index at path; "" keeps it
// in memory. A file that cannot be used as this index is deleted and
// created again.
func Open(path string, opts Options) (*Index, error) {
	if opts.MaxSessionBytes <= 0 {
		opts.MaxSessionBytes = MaxSessionBytes
	}
	ix := &Index{path: path, opts: opts, seed: maphash.MakeSeed()}
	if err := ix.open(); err != nil {
		if path == "" {
			return nil, err
		}
		ix.logf("contentindex: rebuilding %s: %v", path, err)
		ix.closeDB()
		removeFiles(path)
		if err := ix.open(); err != nil {
			ix.closeDB()
			return nil, fmt.Errorf("content index %s: %w", path, err)
		}
	}
	return ix, nil
}

// Path returns the index file ("" in memory).
func (ix *Index) Path() string { return ix.path }

func (ix *Index) logf(format string, args ...any) {
	if ix.opts.Logf != nil {
		ix.opts.Logf(format, args...)
	}
}

func removeFiles(path string) {
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		os.Remove(path + suffix)
	}
}

// open opens the database and checks (or creates) its schema.
func (ix *Index) open() error {
	dsn, err := ix.dsn()
	if err != nil {
		return err
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return err
	}
	ix.db = db
	if ix.path == "" {
		// Every connection to :memory: is another database.
		db.SetMaxOpenConns(1)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_schema`).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		err = ix.create()
	} else {
		err = ix.load()
	}
	if err != nil {
		return err
	}
	return ix.prepare()
}

// dsn creates the index file if needed (0600, in a 0700 directory) and
// returns its data source name (":memory:" for an index in memory).
func (ix *Index) dsn() (string, error) {
	if ix.path == "" {
		return ":memory:", nil
	}
	if err := os.MkdirAll(filepath.Dir(ix.path), 0o700); err != nil {
		return "", err
	}
	// Created by us with 0600 first: SQLite keeps the mode, and gives its
	// journal files the database's.
	f, err := os.OpenFile(ix.path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return "", err
	}
	fi, err := f.Stat()
	f.Close()
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("not a regular file")
	}
	uriPath := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(filepath.ToSlash(ix.path))
	if fi.Size() == 0 {
		if err := setPageSize(uriPath); err != nil {
			return "", err
		}
	}
	// Writers take the lock at BEGIN (immediate): another dsh-lsp process
	// syncing the same file then waits (busy_timeout) instead of failing
	// when its read turns into a write.
	return "file:" + uriPath + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(wal)&_pragma=synchronous(normal)&_pragma=journal_size_limit(4194304)&_txlock=immediate", nil
}

// load checks an existing file's format and reads what it indexes.
func (ix *Index) load() error {
	var format string
	if err := ix.db.QueryRow(`SELECT value FROM meta WHERE key = 'format'`).Scan(&format); err != nil {
		return fmt.Errorf("not a content index: %w", err)
	}
	if format != formatVersion {
		return fmt.Errorf("format %q, want %q", format, formatVersion)
	}
	return ix.loadDocs()
}

// prepare prepares the statements of searches.
func (ix *Index) prepare() error {
	st := &statements{}
	var err error
	for _, p := range []struct {
		s **sql.Stmt
		q string
	}{
		{&st.fetch, `SELECT docs.id, texts.title, texts.ztext FROM texts JOIN docs ON docs.rowid = texts.n WHERE texts.n = ?`},
		{&st.lead, `SELECT docs.id, docs.textlen, texts.title, texts.lead FROM texts JOIN docs ON docs.rowid = texts.n WHERE texts.n = ?`},
		{&st.match, `SELECT rowid FROM body WHERE body MATCH ? AND rowid > ? ORDER BY rowid LIMIT ?`},
		{&st.all, `SELECT rowid FROM docs WHERE rowid > ? ORDER BY rowid LIMIT ?`},
	} {
		if *p.s, err = ix.db.Prepare(p.q); err != nil {
			st.close()
			return err
		}
	}
	ix.stmts = st
	ix.reader.Store(&reader{db: ix.db, st: st})
	return nil
}

// pageSize is the page size of a new index file: a compressed text of a
// few KiB leaves less of a small page unused than of SQLite's default 4 KiB.
const pageSize = 1024

// setPageSize gives a new (empty) file pageSize pages and incremental
// auto-vacuum (a sync returns the pages FTS5's segment merges free). Both
// are fixed by the first write, here the switch to WAL, which the main
// connections' own pragmas (journal_mode before page_size) would make
// first otherwise.
func setPageSize(uriPath string) error {
	db, err := sql.Open("sqlite", "file:"+uriPath+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.Exec(fmt.Sprintf(`PRAGMA page_size = %d`, pageSize)); err != nil {
		return err
	}
	if _, err := db.Exec(`PRAGMA auto_vacuum = incremental`); err != nil {
		return err
	}
	_, err = db.Exec(`PRAGMA journal_mode = wal`)
	return err
}

func (ix *Index) create() error {
	tx, err := ix.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, q := range []string{
		`CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)`,
		// ltitle: the title lowered (Unicode), for the title pass of search;
		// textlen: the bytes of title and text (Stats). The texts are a
		// table apart, so the title pass scans only short rows.
		`CREATE TABLE docs(id TEXT PRIMARY KEY, version TEXT NOT NULL, ltitle TEXT NOT NULL, textlen INTEGER NOT NULL)`,
		// ztext: the text, zstd. Same rowid as docs. lead: the text's
		// first leadRunes characters, before ztext so that reading it
		// reads none of ztext's overflow pages: the snippet of a title
		// match is cut from the title and the lead (search.go).
		`CREATE TABLE texts(n INTEGER PRIMARY KEY, title TEXT NOT NULL, lead TEXT NOT NULL, ztext BLOB NOT NULL)`,
		// One column, title and text on two lines: a term never holds a
		// line break, and search checks each candidate against the text.
		`CREATE VIRTUAL TABLE body USING fts5(doc, tokenize = 'trigram', content = '', contentless_delete = 1, detail = none)`,
		// See automerge in sync.go.
		fmt.Sprintf(`INSERT INTO body(body, rank) VALUES ('automerge', %d)`, automerge),
		fmt.Sprintf(`INSERT INTO body(body, rank) VALUES ('crisismerge', %d)`, crisismerge),
	} {
		if _, err := tx.Exec(q); err != nil {
			return err
		}
	}
	if _, err := tx.Exec(`INSERT INTO meta(key, value) VALUES ('format', ?)`, formatVersion); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	ix.versions = map[uint64]uint64{}
	ix.minRowid = 0
	ix.setTitles(newTitleSet(nil))
	return nil
}

// idSum is the hash of a session's id that versions is keyed by.
func (ix *Index) idSum(id string) uint64 { return maphash.String(ix.seed, id) }

// versionSum is the hash of a session's version that versions keeps.
func (ix *Index) versionSum(version string) uint64 { return maphash.String(ix.seed, version) }

// loadDocs reads the indexed versions and titles of an existing file.
func (ix *Index) loadDocs() error {
	var n int
	if err := ix.db.QueryRow(`SELECT count(*) FROM docs`).Scan(&n); err != nil {
		return err
	}
	rows, err := ix.db.Query(`SELECT rowid, id, version, ltitle FROM docs ORDER BY rowid`)
	if err != nil {
		return err
	}
	defer rows.Close()
	vs := make(map[uint64]uint64, n)
	titles := make([]titleRow, 0, n)
	for rows.Next() {
		var r titleRow
		var id, v sql.RawBytes // hashed, not kept
		if err := rows.Scan(&r.rowid, &id, &v, &r.ltitle); err != nil {
			return err
		}
		// maphash.Bytes equals maphash.String of the same bytes.
		vs[maphash.Bytes(ix.seed, id)] = maphash.Bytes(ix.seed, v)
		titles = append(titles, r)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	ix.versions = vs
	ix.minRowid = 0
	if len(titles) > 0 {
		ix.minRowid = min(titles[0].rowid, 0)
	}
	ix.setTitles(newTitleSet(titles))
	return nil
}

// setTitles publishes the indexed sessions' titles to searches, keeping
// the rest of the snapshot.
func (ix *Index) setTitles(titles *titleSet) {
	s := *ix.snap()
	s.titles = titles
	ix.cur.Store(&s)
}

func (ix *Index) closeDB() {
	ix.reader.Store(nil)
	if ix.stmts != nil {
		ix.stmts.close()
		ix.stmts = nil
	}
	if ix.db != nil {
		ix.db.Close()
		ix.db = nil
	}
}

// Close closes the index (the file stays for the next run).
func (ix *Index) Close() error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.db == nil {
		return nil
	}
	ix.reader.Store(nil)
	ix.stmts.close()
	ix.stmts = nil
	err := ix.db.Close()
	ix.db = nil
	return err
}

// Remove deletes the content index file of path and its journals: what an
// off switch does to an index a previous run kept.
func Remove(path string) {
	if path != "" {
		removeFiles(path)
	}
}

// isCorrupt reports an SQLite error that means the file cannot be trusted.
func isCorrupt(err error) bool {
	if errors.Is(err, errCorrupt) {
		return true
	}
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return true
	}
	return false
}

// rebuild replaces a corrupt file by an empty index. Callers hold ix.mu.
func (ix *Index) rebuild(cause error) error {
	ix.logf("contentindex: rebuilding %s: %v", ix.path, cause)
	ix.closeDB()
	ix.synced.Store(false)
	if ix.path != "" {
		removeFiles(ix.path)
	}
	if err := ix.open(); err != nil {
		ix.closeDB()
		return fmt.Errorf("content index %s: %w", ix.path, err)
	}
	return nil
}

// Generation changes whenever a sync changes what the index holds: a
// search result cached under one generation is stale under another.
func (ix *Index) Generation() uint64 { return ix.gen.Load() }

// Synced reports whether a Sync has completed since Open. It does not wait
// for a Sync in progress (completion asks it on every keystroke).
func (ix *Index) Synced() bool { return ix.synced.Load() }

// Stats describes the index (benchmarks, logs).
type Stats struct {
	// Sessions is the number of indexed sessions; TextBytes the bytes of
	// text (titles included) they hold.
	Sessions  int
	TextBytes int64
}

// Stats counts what the index holds.
func (ix *Index) Stats(ctx context.Context) (Stats, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	var st Stats
	if ix.db == nil {
		return st, errors.New("content index is closed")
	}
	var n sql.NullInt64
	err := ix.db.QueryRowContext(ctx, `SELECT count(*), sum(textlen) FROM docs`).Scan(&st.Sessions, &n)
	st.TextBytes = n.Int64
	return st, err
}
