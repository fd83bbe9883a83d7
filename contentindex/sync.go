package contentindex

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"iter"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/dsh-lsp/dsh-lsp/internal/gcgoal"
	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
)

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

// lead is the first leadRunes characters of the doc's text.
func (d *doc) lead() string {
	i, n := 0, 0
	for i < len(d.text) && n < leadRunes {
		_, size := utf8.DecodeRuneInString(d.text[i:])
		i += size
		n++
	}
	return d.text[:i]
}

// sync is Sync under ix.mu.
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
		if ix.synced.Load() && ix.lastSrc == src && ix.lastGen == gen {
			return 0, nil
		}
	}
	sessions, mark, partial, err := ix.versionsOf(ctx, src)
	if err != nil {
		return 0, err
	}
	stale, removed, err := ix.plan(ctx, sessions, partial)
	if err != nil {
		return 0, err
	}
	if err := ix.remove(removed); err != nil {
		return 0, err
	}
	labels, err := readLabels(ctx, src, stale)
	if err != nil {
		return 0, err
	}
	if err := ix.indexAll(ctx, src, stale, labels); err != nil {
		return 0, err
	}
	if len(stale) > 0 || len(removed) > 0 {
		// Free pages go back to the file system (a no-op on a file
		// without auto-vacuum).
		if _, err := ix.db.ExecContext(ctx, `PRAGMA incremental_vacuum`); err != nil {
			return 0, err
		}
	}
	ix.synced.Store(true)
	if tracked {
		ix.lastSrc, ix.lastGen, ix.lastMark = src, gen, mark
	}
	return len(stale) + len(removed), nil
}

// versionsOf returns src's sessions and their versions to compare: after
// a complete sync from a src that gives marks (versionsSince), only those
// changed since (partial); else every listed session. It forgets the last
// sync's source and mark until this sync completes.
func (ix *Index) versionsOf(ctx context.Context, src Source) (sessions iter.Seq[sessionstore.SessionVersion], mark sessionstore.VersionsMark, partial bool, err error) {
	prevSrc, prevMark := ix.lastSrc, ix.lastMark
	ix.lastSrc, ix.lastMark = nil, sessionstore.VersionsMark{}
	vs, ok := src.(versionsSince)
	if !ok {
		sessions, err = src.SessionVersions(ctx)
		return sessions, mark, false, err
	}
	var since sessionstore.VersionsMark
	if ix.synced.Load() && prevSrc == src {
		since = prevMark
	}
	return vs.SessionVersionsSince(ctx, since)
}

// readLabels returns the latest title of each session (a session without
// one, or whose title cannot be read, is absent): the title indexed with
// its text.
func readLabels(ctx context.Context, src Source, sessions []sessionstore.SessionVersion) (map[string]string, error) {
	ids := make([]string, len(sessions))
	for i, s := range sessions {
		ids[i] = s.Header.ID
	}
	trs, err := src.ReadTitles(ctx, ids)
	if err != nil {
		return nil, err
	}
	labels := make(map[string]string, len(trs))
	for _, t := range trs {
		if t.Err == nil && t.Title != nil {
			labels[t.SessionID] = *t.Title
		}
	}
	return labels, nil
}

// plan lists the sessions to index (new or changed, oldest first: the
// sessions indexed last get the smallest rowids, and the listing is newest
// first) and the indexed ids to remove (no longer listed, or no longer
// readable as one transcript).
func (ix *Index) plan(ctx context.Context, sessions iter.Seq[sessionstore.SessionVersion], partial bool) (stale []sessionstore.SessionVersion, removed []string, err error) {
	kept := 0 // indexed ids still listed with a version
	ix.compared = 0
	for s := range sessions {
		ix.compared++
		v, indexed := ix.versions[ix.idSum(s.Header.ID)]
		switch {
		case s.Version == "":
			// No single transcript: a read would fail.
			if indexed {
				removed = append(removed, s.Header.ID)
			}
			continue
		case !indexed || v != ix.versionSum(s.Version):
			stale = append(stale, s)
		}
		if indexed {
			kept++
		}
	}
	slices.Reverse(stale)
	if partial || kept+len(removed) == len(ix.versions) {
		// (A partial listing is the last sync's listing: none went.)
		return stale, removed, nil
	}
	// Some indexed sessions are no longer listed: their ids are read from
	// the file.
	listed := make(map[uint64]bool, len(ix.versions))
	for s := range sessions {
		listed[ix.idSum(s.Header.ID)] = true
	}
	rows, err := ix.db.QueryContext(ctx, `SELECT id FROM docs`)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, nil, err
		}
		if !listed[ix.idSum(id)] {
			removed = append(removed, id)
		}
	}
	return stale, removed, rows.Err()
}

// FTS5 merges the segments each write transaction adds (automerge: once
// a level holds that many; crisismerge: at most that many, whatever
// automerge says). A bulk sync (a first build) merges nothing until its
// end, then once for all (optimize): every posting is rewritten once
// rather than once per level, and the file ends with one segment, the
// fastest to query.
const (
	automerge   = 8
	crisismerge = 16
	// bulkSessions is the least sessions a bulk sync indexes.
	bulkSessions = 4 * batchSize
	// bulkCrisis is crisismerge during a bulk sync: a level is merged
	// only once it holds that many segments (each batch adds one), so a
	// build of up to 128,000 sessions merges only at its end.
	bulkCrisis = 1000
)

// indexAll indexes the stale sessions; with enough of them, as a bulk
// sync (see above). A bulk sync that did not finish (the process ended)
// left its settings in the file: the next sync restores them.
func (ix *Index) indexAll(ctx context.Context, src Source, stale []sessionstore.SessionVersion, labels map[string]string) error {
	bulk := len(stale) >= bulkSessions
	if bulk {
		defer gcgoal.Bulk()()
	}
	var crisis int
	if err := ix.db.QueryRowContext(ctx, `SELECT v FROM body_config WHERE k = 'crisismerge'`).Scan(&crisis); err != nil && err != sql.ErrNoRows {
		return err
	}
	if bulk || crisis == bulkCrisis {
		a, c := 0, bulkCrisis
		if !bulk {
			a, c = automerge, crisismerge
		}
		if err := ix.mergeSettings(ctx, a, c); err != nil {
			return err
		}
	}
	if err := ix.index(ctx, src, stale, labels); err != nil || !bulk {
		return err
	}
	if _, err := ix.db.ExecContext(ctx, `INSERT INTO body(body) VALUES ('optimize')`); err != nil {
		return err
	}
	return ix.mergeSettings(ctx, automerge, crisismerge)
}

// mergeSettings sets FTS5's automerge and crisismerge.
func (ix *Index) mergeSettings(ctx context.Context, auto, crisis int) error {
	for k, v := range map[string]int{"automerge": auto, "crisismerge": crisis} {
		if _, err := ix.db.ExecContext(ctx, `INSERT INTO body(body, rank) VALUES (?, ?)`, k, v); err != nil {
			return err
		}
	}
	return nil
}

// index reads and writes the stale sessions a batch at a time, reading the
// next batch (on every core) while the current one is written (the
// index's writes are one thread).
func (ix *Index) index(ctx context.Context, src Source, stale []sessionstore.SessionVersion, labels map[string]string) error {
	if len(stale) == 0 {
		return nil
	}
	type result struct {
		docs []doc
		err  error
	}
	ctx, cancel := context.WithCancel(ctx)
	// Unbuffered: one batch is written while the next is read, and no
	// third waits between them (batchSize texts of up to 1 MB each).
	batches := make(chan result)
	// The reader is done before the sync returns, whatever ends it.
	defer func() {
		cancel()
		for range batches {
		}
	}()
	go func() {
		defer close(batches)
		for start := 0; start < len(stale); start += batchSize {
			docs, err := ix.read(ctx, src, stale[start:min(start+batchSize, len(stale))], labels)
			select {
			case batches <- result{docs, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	for b := range batches {
		if b.err != nil {
			return b.err
		}
		if err := ix.write(b.docs); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// write indexes docs in one transaction.
func (ix *Index) write(docs []doc) error {
	w, err := ix.beginWrite()
	if err != nil {
		return err
	}
	if err := w.add(docs); err != nil {
		w.tx.Rollback()
		return err
	}
	return w.commit()
}

// read reads, projects and compresses one batch of sessions on every
// core.
func (ix *Index) read(ctx context.Context, src Source, batch []sessionstore.SessionVersion, labels map[string]string) ([]doc, error) {
	docs := make([]doc, len(batch))
	parallel(len(batch), func(i int) {
		if ctx.Err() != nil {
			return
		}
		id := batch[i].Header.ID
		text, err := ix.sessionText(ctx, src, id)
		if err != nil {
			// Indexed without its body: the version is kept, so the
			// session is read again only once it changes.
			ix.logf("contentindex: session %q: %v", id, err)
		}
		d := &docs[i]
		d.id, d.version = id, batch[i].Version
		d.title, d.text = capText(labels[id], text, ix.opts.MaxSessionBytes)
		d.ztext = textEncoder.EncodeAll([]byte(d.text), nil)
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
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
	gone := make(map[int64]bool, len(ids))
	for _, id := range ids {
		var r int64
		err := tx.QueryRow(`SELECT rowid FROM docs WHERE id = ?`, id).Scan(&r)
		if err == sql.ErrNoRows {
			continue
		}
		if err != nil {
			return err
		}
		if err := deleteRow(tx, r); err != nil {
			return err
		}
		gone[r] = true
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	for _, id := range ids {
		delete(ix.versions, ix.idSum(id))
	}
	ix.setTitles(ix.snap().titles.with(nil, gone))
	ix.gen.Add(1)
	return nil
}

// deleteRow deletes the indexed session of rowid r.
func deleteRow(tx *sql.Tx, r int64) error {
	for _, q := range []string{
		`DELETE FROM body WHERE rowid = ?`,
		`DELETE FROM texts WHERE n = ?`,
		`DELETE FROM docs WHERE rowid = ?`,
	} {
		if _, err := tx.Exec(q, r); err != nil {
			return err
		}
	}
	return nil
}

// writer is one write transaction: it indexes docs, each under a rowid
// below every other (ascending rowid order is most recently indexed first,
// the order a search meets matches in), and publishes them on commit.
type writer struct {
	ix                             *Index
	tx                             *sql.Tx
	find, insDoc, insText, insBody *sql.Stmt
	// next is the last rowid given; docs the ids and versions added.
	next int64
	docs []doc
	// added are the new rows by ascending rowid; gone the rowids replaced.
	added []titleRow
	gone  map[int64]bool
}

// beginWrite starts a write transaction.
func (ix *Index) beginWrite() (*writer, error) {
	tx, err := ix.db.Begin()
	if err != nil {
		return nil, err
	}
	w := &writer{ix: ix, tx: tx, gone: map[int64]bool{}}
	for _, p := range []struct {
		s **sql.Stmt
		q string
	}{
		{&w.find, `SELECT rowid FROM docs WHERE id = ?`},
		{&w.insDoc, `INSERT INTO docs(rowid, id, version, ltitle, textlen) VALUES (?, ?, ?, ?, ?)`},
		{&w.insText, `INSERT INTO texts(n, title, lead, ztext) VALUES (?, ?, ?, ?)`},
		{&w.insBody, `INSERT INTO body(rowid, doc) VALUES (?, ?)`},
	} {
		if *p.s, err = tx.Prepare(p.q); err != nil {
			tx.Rollback()
			return nil, err
		}
	}
	// Another process may have written since: start below its rowids too.
	var m sql.NullInt64
	if err := tx.QueryRow(`SELECT min(rowid) FROM docs`).Scan(&m); err != nil {
		tx.Rollback()
		return nil, err
	}
	w.next = min(ix.minRowid, m.Int64)
	return w, nil
}

// add indexes docs in the transaction, docs[0] under the highest of their
// rowids. The index's rows go in ascending rowid order: FTS5 writes its
// pending postings out as a new segment whenever a rowid is not above the
// last one, so descending rowids would make a segment (to merge later) of
// every session.
func (w *writer) add(docs []doc) error {
	// A session indexed before (by this process or another) is replaced.
	for _, d := range docs {
		var old int64
		switch err := w.find.QueryRow(d.id).Scan(&old); {
		case err == nil:
			if err := deleteRow(w.tx, old); err != nil {
				return err
			}
			w.gone[old] = true
		case err != sql.ErrNoRows:
			return err
		}
	}
	first := w.next - int64(len(docs))
	for i := len(docs) - 1; i >= 0; i-- {
		d, r := docs[i], first+int64(len(docs)-1-i)
		lt := strings.ToLower(d.title)
		if _, err := w.insDoc.Exec(r, d.id, d.version, lt, len(d.title)+len(d.text)); err != nil {
			return err
		}
		if _, err := w.insText.Exec(r, d.title, d.lead(), d.ztext); err != nil {
			return err
		}
		if _, err := w.insBody.Exec(r, d.title+"\n"+d.text); err != nil {
			return err
		}
		w.added = append(w.added, titleRow{rowid: r, ltitle: lt})
		w.docs = append(w.docs, doc{id: d.id, version: d.version})
	}
	w.next = first
	return nil
}

// commit commits the transaction and publishes what it wrote.
func (w *writer) commit() error {
	if err := w.tx.Commit(); err != nil {
		return err
	}
	ix := w.ix
	ix.minRowid = w.next
	ix.gen.Add(1)
	for _, d := range w.docs {
		ix.versions[ix.idSum(d.id)] = ix.versionSum(d.version)
	}
	slices.SortFunc(w.added, func(a, b titleRow) int { return cmp.Compare(a.rowid, b.rowid) })
	ix.setTitles(ix.snap().titles.with(w.added, w.gone))
	return nil
}
