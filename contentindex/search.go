package contentindex

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"
)

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
	// Not under mu: a Sync holds it for as long as it indexes, and WAL
	// lets this read run beside its writes.
	r := ix.reader.Load()
	if r == nil {
		return nil, errors.New("content index is closed")
	}
	hits, err := newSearcher(ctx, r.st, ts, limit).run(ix.snap().titles)
	if isCorrupt(err) {
		ix.mu.Lock()
		if ix.reader.Load() == r {
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

// searcher is one search: it ranks sessions whose title holds every term
// first, then the others whose title or text holds them; inside each group
// the most recently indexed first (ascending rowid). Both passes walk rows
// in rowid order and stop at limit hits (the titles: the lowered titles in
// memory whose bit-sliced signatures pass, titleSet; the text: the trigram
// index's candidates, or every stored text when every term is under three
// characters), so a word every session holds costs about what a rare one
// does. The trigram index has no
// positions, so a candidate holds every trigram of each term but maybe not
// the term: each is checked against its decompressed text, which the
// snippet is then cut from. FTS5's bm25 was measured at 180-280 ms for a
// common word at 10,000 sessions (its IDF runs the phrase over the whole
// table), hence this simpler order.
type searcher struct {
	ctx   context.Context
	st    *statements
	ts    []string
	fs    []folder
	limit int
	hits  []Hit
	seen  map[int64]bool
	// buf is reused by each candidate's decompression.
	buf []byte
}

func newSearcher(ctx context.Context, st *statements, ts []string, limit int) *searcher {
	s := &searcher{ctx: ctx, st: st, ts: ts, limit: limit, hits: []Hit{}, seen: map[int64]bool{}}
	for _, t := range ts {
		s.fs = append(s.fs, newFolder(t))
	}
	return s
}

func (s *searcher) run(titles *titleSet) ([]Hit, error) {
	if err := s.titlePass(titles); err != nil {
		return nil, err
	}
	if len(s.hits) >= s.limit {
		return s.hits, nil
	}
	if grams := trigramQuery(s.ts); grams != "" {
		return s.hits, s.walk(s.st.match, grams)
	}
	return s.hits, s.walk(s.st.all)
}

// trigramQuery is the FTS5 query of every trigram of the terms (AND), ""
// when no term has one.
func trigramQuery(ts []string) string {
	var grams []string
	seen := map[string]bool{}
	for _, t := range ts {
		rs := []rune(t)
		for i := 0; i+3 <= len(rs); i++ {
			g := string(rs[i : i+3])
			if !seen[g] {
				seen[g] = true
				grams = append(grams, `"`+strings.ReplaceAll(g, `"`, `""`)+`"`)
			}
		}
	}
	return strings.Join(grams, " AND ")
}

// titlePass takes the sessions whose lowered title holds every lowered
// term, in rowid order, a batch at a time until the limit.
func (s *searcher) titlePass(titles *titleSet) error {
	lts := make([]string, len(s.ts))
	for i, t := range s.ts {
		lts[i] = strings.ToLower(t)
	}
	var batch []int64
	var err error
	titles.matching(lts, func(rowid int64) bool {
		if batch = append(batch, rowid); len(batch) < scanBatch {
			return true
		}
		err = s.take(batch, false)
		batch = batch[:0]
		return err == nil && len(s.hits) < s.limit
	})
	if err != nil || len(s.hits) >= s.limit {
		return err
	}
	return s.take(batch, false)
}

// walk lists the rowids of q (which takes the query's arguments, then
// the last rowid seen and a LIMIT) a batch at a time, the rows closed
// before take reads (an in-memory index has one connection).
func (s *searcher) walk(q *sql.Stmt, args ...any) error {
	last := int64(-1 << 63)
	for len(s.hits) < s.limit {
		batch, err := s.rowids(q, append(args, last, scanBatch)...)
		if err != nil {
			return err
		}
		if err := s.take(batch, true); err != nil {
			return err
		}
		if len(batch) < scanBatch {
			return nil
		}
		last = batch[len(batch)-1]
	}
	return nil
}

func (s *searcher) rowids(q *sql.Stmt, args ...any) ([]int64, error) {
	rows, err := q.QueryContext(s.ctx, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var batch []int64
	for rows.Next() {
		var r int64
		if err := rows.Scan(&r); err != nil {
			return nil, err
		}
		batch = append(batch, r)
	}
	return batch, rows.Err()
}

// take reads the rows' texts and keeps those holding every term (all of
// them when check is false: the title pass matched already).
func (s *searcher) take(rowids []int64, check bool) error {
	for _, r := range rowids {
		if len(s.hits) >= s.limit {
			return nil
		}
		if s.seen[r] {
			continue
		}
		if !check {
			ok, err := s.takeTitleMatch(r)
			if err != nil {
				return err
			}
			if ok {
				continue
			}
		}
		var id, title string
		var z []byte
		err := s.st.fetch.QueryRowContext(s.ctx, r).Scan(&id, &title, &z)
		if err == sql.ErrNoRows {
			continue // replaced since the candidates were listed
		}
		if err != nil {
			return err
		}
		// The text is the title, a newline and the body, decompressed
		// after them into the one reused buffer: no copies of the body
		// (68 KB a session of a 1.8 GB store). Nothing of text outlives
		// this candidate: the snippet is a copy (oneLine).
		buf, err := textDecoder.DecodeAll(z, append(append(s.buf[:0], title...), '\n'))
		if err != nil {
			return fmt.Errorf("session %q: %w: %v", id, errCorrupt, err)
		}
		s.buf = buf
		text := unsafe.String(unsafe.SliceData(buf), len(buf))
		if check && !s.holdsAll(text) {
			continue
		}
		s.seen[r] = true
		s.hits = append(s.hits, Hit{SessionID: id, Snippet: oneLine(snippet(text, s.fs))})
	}
	return nil
}

// takeTitleMatch takes row r, whose title holds every term, with the
// snippet cut from its title and the lead of its text: most completion
// hits are title matches, and their text (tens of KB to read and
// decompress) is then not read. It reports false, taking nothing, when
// the first term is not in the title by the snippet's own matching (the
// title pass lowers, the snippet folds: they can differ), so the first
// occurrence may be in the text.
func (s *searcher) takeTitleMatch(r int64) (bool, error) {
	var id, title, lead string
	var textLen int
	err := s.st.lead.QueryRowContext(s.ctx, r).Scan(&id, &textLen, &title, &lead)
	if err == sql.ErrNoRows {
		return true, nil // replaced since the candidates were listed
	}
	if err != nil {
		return false, err
	}
	i, n := s.fs[0].index(title)
	if i < 0 {
		return false, nil
	}
	// A match cannot span the line break (a term holds none), and the
	// snippet takes at most snippetRunes characters past it: the lead
	// holds them. The text goes on past the lead when textLen says so.
	text := title + "\n" + lead
	s.seen[r] = true
	s.hits = append(s.hits, Hit{SessionID: id, Snippet: oneLine(snippetAt(text, i, n, textLen+1))})
	return true, nil
}

// holdsAll reports whether text holds every term (case-insensitive).
func (s *searcher) holdsAll(text string) bool {
	for _, f := range s.fs {
		if i, _ := f.index(text); i < 0 {
			return false
		}
	}
	return true
}

// folder finds a term in a text case-insensitively (Unicode simple
// folding, as strings.EqualFold).
type folder struct {
	term  string
	runes int
	// firsts holds every rune that folds to the term's first rune: only
	// where the text has one of them can a match start.
	firsts string
}

func newFolder(term string) folder {
	f := folder{term: term, runes: utf8.RuneCountInString(term)}
	r0, _ := utf8.DecodeRuneInString(term)
	var b strings.Builder
	b.WriteRune(r0)
	for r := unicode.SimpleFold(r0); r != r0; r = unicode.SimpleFold(r) {
		b.WriteRune(r)
	}
	f.firsts = b.String()
	return f
}

// index returns the byte offset and length in text of the first
// case-insensitive occurrence of the term, or -1.
func (f folder) index(text string) (int, int) {
	for i := 0; i < len(text); {
		k := strings.IndexAny(text[i:], f.firsts)
		if k < 0 {
			return -1, 0
		}
		i += k
		j, n := i, 0
		for n < f.runes && j < len(text) {
			_, size := utf8.DecodeRuneInString(text[j:])
			j += size
			n++
		}
		if n < f.runes {
			return -1, 0
		}
		if strings.EqualFold(text[i:j], f.term) {
			return i, j - i
		}
		_, size := utf8.DecodeRuneInString(text[i:])
		i += size
	}
	return -1, 0
}

// snippetRunes is how many characters a snippet keeps either side of its
// match; leadRunes is how many of a text's first characters are stored
// apart for the snippets of title matches: a match in the title ends at
// most one character (the line break) before the text.
const (
	snippetRunes = 40
	leadRunes    = snippetRunes
)

// snippet marks the first case-insensitive occurrence in text of the
// first term found with char(1)/char(2) and keeps about snippetRunes
// characters either side.
func snippet(text string, fs []folder) string {
	for _, f := range fs {
		if i, n := f.index(text); i >= 0 {
			return snippetAt(text, i, n, len(text))
		}
	}
	return cutUTF8(text, 120)
}

// snippetAt is the snippet of the match text[i:i+n] in a text of which
// text is the first textLen bytes or more: the ellipsis after it says
// that the whole text goes on.
func snippetAt(text string, i, n, textLen int) string {
	start, end := i, i+n
	for k := 0; start > 0 && k < snippetRunes; k++ {
		_, size := utf8.DecodeLastRuneInString(text[:start])
		start -= size
	}
	stop := end
	for k := 0; stop < len(text) && k < snippetRunes; k++ {
		_, size := utf8.DecodeRuneInString(text[stop:])
		stop += size
	}
	out := text[start:i] + "\x01" + text[i:end] + "\x02" + text[end:stop]
	if start > 0 {
		out = "…" + out
	}
	if stop < max(len(text), textLen) {
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
