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
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
	"github.com/klauspost/compress/zstd"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

const (
	// formatVersion identifies the schema; a file with another value is
	// rebuilt.
	formatVersion = "dsh-lsp content index 3"
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
	// batchSize is how many sessions one write transaction holds.
	batchSize = 256
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
	SessionVersions(ctx context.Context) ([]sessionstore.SessionVersion, error)
	ReadSurface(ctx context.Context, id string) (*reference.Surface, error)
	ReadTitles(ctx context.Context, ids []string) ([]reference.TitleResult, error)
}

var _ Source = (*sessionstore.Indexed)(nil)

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
	// versions mirrors the docs table: the indexed version of each id.
	versions map[string]string
	// synced is true once a Sync has completed on this process.
	synced bool
	// gen counts committed changes (Generation).
	gen atomic.Uint64
	// minRowid is the smallest rowid in use (0 for an empty index).
	minRowid int64
	// lastSrc and lastGen are the source of the last complete sync and its
	// generation then (when it tracks changes: reference.ChangeTracker).
	lastSrc Source
	lastGen uint64
	// headers are the sessions listed at the last sync, by id.
	headers map[string]reference.SessionHeader
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
	ix := &Index{path: path, opts: opts}
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
	dsn := ":memory:"
	if ix.path != "" {
		if err := os.MkdirAll(filepath.Dir(ix.path), 0o700); err != nil {
			return err
		}
		// Created by us with 0600 first: SQLite keeps the mode, and gives
		// its journal files the database's.
		f, err := os.OpenFile(ix.path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return err
		}
		fi, err := f.Stat()
		f.Close()
		if err != nil {
			return err
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("not a regular file")
		}
		// Writers take the lock at BEGIN (immediate): another dsh-lsp
		// process syncing the same file then waits (busy_timeout) instead
		// of failing when its read turns into a write.
		uriPath := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(filepath.ToSlash(ix.path))
		if fi.Size() == 0 {
			if err := setPageSize(uriPath); err != nil {
				return err
			}
		}
		dsn = "file:" + uriPath + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(wal)&_pragma=synchronous(normal)&_txlock=immediate"
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
		return ix.create()
	}
	var format string
	if err := db.QueryRow(`SELECT value FROM meta WHERE key = 'format'`).Scan(&format); err != nil {
		return fmt.Errorf("not a content index: %w", err)
	}
	if format != formatVersion {
		return fmt.Errorf("format %q, want %q", format, formatVersion)
	}
	return ix.loadVersions()
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
		// ztext: the text, zstd. Same rowid as docs.
		`CREATE TABLE texts(n INTEGER PRIMARY KEY, title TEXT NOT NULL, ztext BLOB NOT NULL)`,
		// One column, title and text on two lines: a term never holds a
		// line break, and search checks each candidate against the text.
		`CREATE VIRTUAL TABLE body USING fts5(doc, tokenize = 'trigram', content = '', contentless_delete = 1, detail = none)`,
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
	ix.versions = map[string]string{}
	ix.minRowid = 0
	return nil
}

func (ix *Index) loadVersions() error {
	rows, err := ix.db.Query(`SELECT id, version FROM docs`)
	if err != nil {
		return err
	}
	defer rows.Close()
	vs := map[string]string{}
	for rows.Next() {
		var id, v string
		if err := rows.Scan(&id, &v); err != nil {
			return err
		}
		vs[id] = v
	}
	if err := rows.Err(); err != nil {
		return err
	}
	ix.versions = vs
	var m sql.NullInt64
	if err := ix.db.QueryRow(`SELECT min(rowid) FROM docs`).Scan(&m); err != nil {
		return err
	}
	ix.minRowid = min(m.Int64, 0)
	return nil
}

func (ix *Index) closeDB() {
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
	ix.synced = false
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

// Synced reports whether a Sync has completed since Open.
func (ix *Index) Synced() bool {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.synced
}

// Sync brings the index up to date with src: sessions whose version
// changed (or that are new) are read and indexed again, sessions no longer
// listed are removed. It returns how many sessions it indexed or removed.
func (ix *Index) Sync(ctx context.Context, src Source) (int, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.db == nil {
		return 0, errors.New("content index is closed")
	}
	n, err := ix.sync(ctx, src)
	if isCorrupt(err) {
		if err := ix.rebuild(err); err != nil {
			return 0, err
		}
		n, err = ix.sync(ctx, src)
	}
	return n, err
}

type doc struct {
	id, version string
	title, text string
	ztext       []byte
}

func (ix *Index) sync(ctx context.Context, src Source) (int, error) {
	// A source that tracks changes says in one revalidation whether
	// anything changed since the last sync: comparing every session's
	// version is then skipped.
	tracker, tracked := src.(reference.ChangeTracker)
	var gen uint64
	if tracked {
		var err error
		if gen, err = tracker.Fresh(ctx); err != nil {
			return 0, err
		}
		if ix.synced && ix.lastSrc == src && ix.lastGen == gen {
			return 0, nil
		}
	}
	ix.lastSrc = nil
	sessions, err := src.SessionVersions(ctx)
	if err != nil {
		return 0, err
	}
	done := func() {
		ix.synced = true
		if tracked {
			ix.lastSrc, ix.lastGen = src, gen
		}
	}
	current := make(map[string]bool, len(sessions))
	headers := make(map[string]reference.SessionHeader, len(sessions))
	for _, s := range sessions {
		headers[s.Header.ID] = s.Header
	}
	ix.headers = headers
	var stale []sessionstore.SessionVersion
	// Oldest first: the sessions indexed last get the smallest rowids,
	// and the listing is newest first.
	for i := len(sessions) - 1; i >= 0; i-- {
		s := sessions[i]
		current[s.Header.ID] = true
		if s.Version == "" {
			continue // no single transcript: a read would fail
		}
		if v, ok := ix.versions[s.Header.ID]; !ok || v != s.Version {
			stale = append(stale, s)
		}
	}
	var removed []string
	for id := range ix.versions {
		if !current[id] {
			removed = append(removed, id)
		}
	}
	for _, s := range sessions {
		if s.Version == "" {
			if _, ok := ix.versions[s.Header.ID]; ok {
				removed = append(removed, s.Header.ID)
			}
		}
	}
	if len(stale) == 0 && len(removed) == 0 {
		done()
		return 0, nil
	}
	if err := ix.remove(removed); err != nil {
		return 0, err
	}
	for start := 0; start < len(stale); start += batchSize {
		batch := stale[start:min(start+batchSize, len(stale))]
		docs, err := ix.read(ctx, src, batch)
		if err != nil {
			return 0, err
		}
		if err := ix.write(docs); err != nil {
			return 0, err
		}
	}
	// Free pages go back to the file system (a no-op on a file without
	// auto-vacuum).
	if _, err := ix.db.ExecContext(ctx, `PRAGMA incremental_vacuum`); err != nil {
		return 0, err
	}
	done()
	return len(stale) + len(removed), nil
}

// read reads and projects one batch of sessions on every core.
func (ix *Index) read(ctx context.Context, src Source, batch []sessionstore.SessionVersion) ([]doc, error) {
	ids := make([]string, len(batch))
	for i, s := range batch {
		ids[i] = s.Header.ID
	}
	titles := map[string]string{}
	if trs, err := src.ReadTitles(ctx, ids); err == nil {
		for _, t := range trs {
			if t.Err == nil && t.Title != nil {
				titles[t.SessionID] = *t.Title
			}
		}
	} else if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	docs := make([]doc, len(batch))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				id := batch[i].Header.ID
				docs[i] = doc{id: id, version: batch[i].Version, title: titles[id]}
				text, err := ix.sessionText(ctx, src, id)
				if err != nil {
					// Indexed without its body: the version is kept, so
					// the session is read again only once it changes.
					ix.logf("contentindex: session %q: %v", id, err)
				}
				docs[i].text = text
			}
		}()
	}
	for i := range batch {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for i := range docs {
		docs[i].title, docs[i].text = capText(docs[i].title, docs[i].text, ix.opts.MaxSessionBytes)
	}
	parallel(len(docs), func(i int) {
		docs[i].ztext = textEncoder.EncodeAll([]byte(docs[i].text), nil)
	})
	return docs, nil
}

// parallel runs f(0..n-1) on every core.
func parallel(n int, f func(i int)) {
	var wg sync.WaitGroup
	var next atomic.Int64
	for w := 0; w < min(runtime.GOMAXPROCS(0), n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
			}
		}()
	}
	wg.Wait()
}

// sessionText is the projected conversation of one session, one message
// after another.
func (ix *Index) sessionText(ctx context.Context, src Source, id string) (string, error) {
	surf, err := src.ReadSurface(ctx, id)
	if err != nil {
		return "", err
	}
	msgs, err := reference.Messages(surf)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, m := range msgs {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(m.Text)
		if b.Len() > 2*ix.opts.MaxSessionBytes {
			// Enough for the head; keep only a tail window from here on.
			s := b.String()
			b.Reset()
			b.WriteString(s[:ix.opts.MaxSessionBytes])
			b.WriteByte('\n')
			b.WriteString(s[len(s)-ix.opts.MaxSessionBytes/2:])
		}
	}
	return strings.ToValidUTF8(b.String(), "\uFFFD"), nil
}

// capText cuts title+text to max bytes: the title (itself cut to max/4),
// then the first and the last halves of what is left of the text, cut at
// character boundaries.
func capText(title, text string, max int) (string, string) {
	title = cutUTF8(strings.ToValidUTF8(title, "\uFFFD"), max/4)
	room := max - len(title)
	if len(text) <= room {
		return title, text
	}
	room-- // the line break between head and tail
	head := cutUTF8(text, room/2)
	tailStart := len(text) - (room - len(head))
	for tailStart < len(text) && !utf8.RuneStart(text[tailStart]) {
		tailStart++
	}
	return title, head + "\n" + text[tailStart:]
}

func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func (ix *Index) remove(ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	tx, err := ix.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, id := range ids {
		if _, err := tx.Exec(`DELETE FROM body WHERE rowid = (SELECT rowid FROM docs WHERE id = ?)`, id); err != nil {
			return err
		}
		if _, err := tx.Exec(`DELETE FROM texts WHERE n = (SELECT rowid FROM docs WHERE id = ?)`, id); err != nil {
			return err
		}
		if _, err := tx.Exec(`DELETE FROM docs WHERE id = ?`, id); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	for _, id := range ids {
		delete(ix.versions, id)
	}
	ix.gen.Add(1)
	return nil
}

// write indexes docs, each under a rowid below every other: ascending
// rowid order is most recently indexed first, the order a search meets
// matches in (see search).
func (ix *Index) write(docs []doc) error {
	tx, err := ix.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	delBody, err := tx.Prepare(`DELETE FROM body WHERE rowid = (SELECT rowid FROM docs WHERE id = ?)`)
	if err != nil {
		return err
	}
	delText, err := tx.Prepare(`DELETE FROM texts WHERE n = (SELECT rowid FROM docs WHERE id = ?)`)
	if err != nil {
		return err
	}
	insText, err := tx.Prepare(`INSERT INTO texts(n, title, ztext) VALUES (?, ?, ?)`)
	if err != nil {
		return err
	}
	delDoc, err := tx.Prepare(`DELETE FROM docs WHERE id = ?`)
	if err != nil {
		return err
	}
	insDoc, err := tx.Prepare(`INSERT INTO docs(rowid, id, version, ltitle, textlen) VALUES (?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	ins, err := tx.Prepare(`INSERT INTO body(rowid, doc) VALUES (?, ?)`)
	if err != nil {
		return err
	}
	// Another process may have written since: start below its rowids too.
	var m sql.NullInt64
	if err := tx.QueryRow(`SELECT min(rowid) FROM docs`).Scan(&m); err != nil {
		return err
	}
	next := min(ix.minRowid, m.Int64)
	for _, d := range docs {
		if _, err := delBody.Exec(d.id); err != nil {
			return err
		}
		if _, err := delText.Exec(d.id); err != nil {
			return err
		}
		if _, err := delDoc.Exec(d.id); err != nil {
			return err
		}
		next--
		if _, err := insDoc.Exec(next, d.id, d.version, strings.ToLower(d.title), len(d.title)+len(d.text)); err != nil {
			return err
		}
		if _, err := insText.Exec(next, d.title, d.ztext); err != nil {
			return err
		}
		if _, err := ins.Exec(next, d.title+"\n"+d.text); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	ix.minRowid = next
	ix.gen.Add(1)
	for _, d := range docs {
		ix.versions[d.id] = d.version
	}
	return nil
}

// terms splits a query into at most MaxQueryTerms whitespace-separated
// terms, the query first cut to MaxQueryBytes.
func terms(query string) []string {
	query = cutUTF8(strings.ToValidUTF8(query, "\uFFFD"), MaxQueryBytes)
	fs := strings.FieldsFunc(query, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) })
	if len(fs) > MaxQueryTerms {
		fs = fs[:MaxQueryTerms]
	}
	return fs
}

// Search returns the sessions whose title or text contains every term of
// query (case-insensitive substrings), best first (title matches, then
// recency: see search), at most limit (DefaultLimit when limit <= 0, at
// most MaxLimit). An empty query has no hits.
func (ix *Index) Search(ctx context.Context, query string, limit int) ([]Hit, error) {
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	ts := terms(query)
	if len(ts) == 0 {
		return []Hit{}, nil
	}
	ix.mu.Lock()
	db := ix.db
	ix.mu.Unlock()
	if db == nil {
		return nil, errors.New("content index is closed")
	}
	hits, err := search(ctx, db, ts, limit)
	if isCorrupt(err) {
		ix.mu.Lock()
		if ix.db == db {
			err = ix.rebuild(err)
		}
		ix.mu.Unlock()
		if err != nil {
			return nil, err
		}
		return []Hit{}, nil
	}
	return hits, err
}

// search ranks sessions whose title holds every term first, then the
// others whose title or text holds them; inside each group the most
// recently indexed first (ascending rowid). Both passes walk rows in rowid
// order and stop at limit hits (the titles: a scan of short lowered
// strings; the text: the trigram index's candidates, or every stored text
// when every term is under three characters), so a word every session
// holds costs about what a rare one does. The trigram index has no
// positions, so a candidate holds every trigram of each term but maybe not
// the term: each is checked against its decompressed text, which the
// snippet is then cut from. FTS5's bm25 was measured at 180-280 ms for a
// common word at 10,000 sessions (its IDF runs the phrase over the whole
// table), hence this simpler order.
func search(ctx context.Context, db *sql.DB, ts []string, limit int) ([]Hit, error) {
	var grams []string
	seenGram := map[string]bool{}
	for _, t := range ts {
		rs := []rune(t)
		for i := 0; i+3 <= len(rs); i++ {
			g := string(rs[i : i+3])
			if !seenGram[g] {
				seenGram[g] = true
				grams = append(grams, `"`+strings.ReplaceAll(g, `"`, `""`)+`"`)
			}
		}
	}
	hits := []Hit{}
	seen := map[int64]bool{}
	// take reads the rows' texts and keeps those holding every term (all
	// of them when check is false: the title pass matched already).
	take := func(rowids []int64, check bool) error {
		for _, r := range rowids {
			if len(hits) >= limit {
				return nil
			}
			if seen[r] {
				continue
			}
			var id, title string
			var z []byte
			err := db.QueryRowContext(ctx, `SELECT docs.id, texts.title, texts.ztext FROM docs JOIN texts ON texts.n = docs.rowid WHERE docs.rowid = ?`, r).Scan(&id, &title, &z)
			if err == sql.ErrNoRows {
				continue // replaced since the candidates were listed
			}
			if err != nil {
				return err
			}
			body, err := textDecoder.DecodeAll(z, nil)
			if err != nil {
				return fmt.Errorf("session %q: %w: %v", id, errCorrupt, err)
			}
			text := title + "\n" + string(body)
			if check && !holdsAll(text, ts) {
				continue
			}
			seen[r] = true
			hits = append(hits, Hit{SessionID: id, Snippet: oneLine(snippet(text, ts))})
		}
		return nil
	}
	// walk lists q's rowids (q takes the last rowid seen and a LIMIT) a
	// batch at a time, the rows closed before take reads (an in-memory
	// index has one connection).
	walk := func(q string, check bool, args ...any) error {
		last := int64(-1 << 63)
		for len(hits) < limit {
			rows, err := db.QueryContext(ctx, q, append(args, last, scanBatch)...)
			if err != nil {
				return err
			}
			var batch []int64
			for rows.Next() {
				var r int64
				if err := rows.Scan(&r); err != nil {
					rows.Close()
					return err
				}
				batch = append(batch, r)
			}
			err = rows.Err()
			rows.Close()
			if err != nil {
				return err
			}
			if err := take(batch, check); err != nil {
				return err
			}
			if len(batch) < scanBatch {
				return nil
			}
			last = batch[len(batch)-1]
		}
		return nil
	}
	// Titles holding every term.
	var tw []string
	var targs []any
	for _, t := range ts {
		tw = append(tw, `instr(ltitle, ?) > 0`)
		targs = append(targs, strings.ToLower(t))
	}
	if err := walk(`SELECT rowid FROM docs WHERE `+strings.Join(tw, " AND ")+` AND rowid > ? ORDER BY rowid LIMIT ?`, false, targs...); err != nil {
		return nil, err
	}
	// Then title or text.
	if len(grams) > 0 {
		err := walk(`SELECT rowid FROM body WHERE body MATCH ? AND rowid > ? ORDER BY rowid LIMIT ?`, true, strings.Join(grams, " AND "))
		return hits, err
	}
	err := walk(`SELECT rowid FROM docs WHERE rowid > ? ORDER BY rowid LIMIT ?`, true)
	return hits, err
}

// holdsAll reports whether text holds every term (case-insensitive).
func holdsAll(text string, ts []string) bool {
	for _, t := range ts {
		if i, _ := indexFold(text, t); i < 0 {
			return false
		}
	}
	return true
}

// indexFold returns the byte offset and length in text of the first
// case-insensitive (Unicode simple folding) occurrence of term, or -1.
func indexFold(text, term string) (int, int) {
	n := utf8.RuneCountInString(term)
	for i := 0; i < len(text); {
		j, k := i, 0
		for k < n && j < len(text) {
			_, size := utf8.DecodeRuneInString(text[j:])
			j += size
			k++
		}
		if k == n && strings.EqualFold(text[i:j], term) {
			return i, j - i
		}
		_, size := utf8.DecodeRuneInString(text[i:])
		i += size
	}
	return -1, 0
}

// snippet marks the first case-insensitive occurrence in text of the
// first term found with char(1)/char(2) and keeps about 40 characters
// either side.
func snippet(text string, terms []string) string {
	i, n := -1, 0
	for _, t := range terms {
		if i, n = indexFold(text, t); i >= 0 {
			break
		}
	}
	if i < 0 {
		return cutUTF8(text, 120)
	}
	start, end := i, i+n
	for k := 0; start > 0 && k < 40; k++ {
		_, size := utf8.DecodeLastRuneInString(text[:start])
		start -= size
	}
	stop := end
	for k := 0; stop < len(text) && k < 40; k++ {
		_, size := utf8.DecodeRuneInString(text[stop:])
		stop += size
	}
	out := text[start:i] + "\x01" + text[i:end] + "\x02" + text[end:stop]
	if start > 0 {
		out = "…" + out
	}
	if stop < len(text) {
		out += "…"
	}
	return out
}

// oneLine puts a snippet on one line: runs of white space and control
// characters become one space, and the match markers become **.
func oneLine(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		switch {
		case r == 1 || r == 2:
			b.WriteString("**")
			space = false
		case unicode.IsSpace(r) || unicode.IsControl(r):
			if !space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = true
		default:
			b.WriteRune(r)
			space = false
		}
	}
	return strings.TrimSpace(b.String())
}

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
