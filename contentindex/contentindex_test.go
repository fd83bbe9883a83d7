package contentindex

import (
	"bytes"
	"context"
	"fmt"
	"iter"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
	"github.com/klauspost/compress/zstd"
)

const (
	idA = "0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0001" // plain, titled
	idB = "0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0002" // compacted twice
	idC = "0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0003" // tools, reasoning
	idF = "0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0006" // unfinished chunks
)

// copyTree copies a fixture store into a fresh directory.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if fi.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func openStore(t *testing.T, root string, live bool) *sessionstore.Indexed {
	t.Helper()
	x, err := sessionstore.OpenIndexed(root, sessionstore.IndexOptions{CacheDir: sessionstore.NoCache, Snapshot: !live})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	if err := x.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	return x
}

func hitIDs(t *testing.T, ix *Index, src Source, query string) []string {
	t.Helper()
	items, err := ix.Find(context.Background(), src, reference.Target{}, query, 0)
	if err != nil {
		t.Fatalf("search %q: %v", query, err)
	}
	ids := []string{}
	for _, it := range items {
		ids = append(ids, it.SessionID)
	}
	return ids
}

func has(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// TestSearchesOnlyWhatAMentionSends checks, on dsh-format stores of both
// encodings, that text a mention would send is found and text it would
// not send is not, although the log holds it.
func TestSearchesOnlyWhatAMentionSends(t *testing.T) {
	cases := []struct {
		name, query, id string
		found           bool
	}{
		{"direct user text", "rename a local git", idA, true},
		{"completed assistant text", "git push origin", idA, true},
		{"title", "Renaming git", idA, true},
		{"compaction checkpoint", "compacted-summary", idB, true},
		{"word prefix", "Runb", idB, true},
		{"case-insensitive", "RUNBOOK", idB, true},
		{"tool output", "b.ts", idC, false},
		{"reasoning", "should grep", idC, false},
		{"injected plugin context", "supersedes", idA, false},
		{"text shadowed by a compaction", "Postgres 16", idB, false},
		{"unfinished assistant chunk", "describes", idF, false},
		{"tool output of a crashed session", "tiny demo project", idF, false},
	}
	for _, store := range []string{"store-raw", "store-zstd"} {
		t.Run(store, func(t *testing.T) {
			x := openStore(t, "../testdata/fixtures/"+store, false)
			ix, err := Open("", Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer ix.Close()
			listed := map[string]bool{}
			vs, _ := x.SessionVersions(context.Background())
			for v := range vs {
				listed[v.Header.ID] = true
			}
			for _, c := range cases {
				if !listed[c.id] {
					continue // the zstd store holds A and B only
				}
				raw := rawLog(t, "../testdata/fixtures/"+store, c.id)
				if !c.found && !bytes.Contains(bytes.ToLower(raw), bytes.ToLower([]byte(c.query))) {
					t.Fatalf("%s: the log of %s does not hold %q: the case tests nothing", c.name, c.id, c.query)
				}
				got := has(hitIDs(t, ix, x, c.query), c.id)
				if got != c.found {
					t.Errorf("%s: search %q finds %s = %v, want %v", c.name, c.query, c.id, got, c.found)
				}
			}
		})
	}
}

// rawLog returns the decoded log of id in a fixture store.
func rawLog(t *testing.T, root, id string) []byte {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join(root, "*", id, "session.jsonl*"))
	if len(matches) != 1 {
		t.Fatalf("log of %s in %s: %v", id, root, matches)
	}
	b, err := os.ReadFile(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(matches[0], ".zstd") {
		d, _ := zstd.NewReader(nil)
		defer d.Close()
		if b, err = d.DecodeAll(b, nil); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// writeSession writes a minimal dsh log: a header and one direct user
// message.
// openTemp opens a content index in a temporary directory, closed when
// the test ends.
func openTemp(t *testing.T) *Index {
	t.Helper()
	ix, err := Open(filepath.Join(t.TempDir(), "content.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

// writeTitledSession is writeSession with a session/title event after the
// message.
func writeTitledSession(t *testing.T, root, id, title, text string) {
	t.Helper()
	f, err := os.OpenFile(writeSession(t, root, id, text), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	q, _ := jsonString(title)
	if _, err := f.WriteString(`{"type":"session/title","seq":2,"time":1786009000003,"data":{"title":` + q + `,"messageSeqs":[1],"source":{"kind":"fallback"}}}` + "\n"); err != nil {
		t.Fatal(err)
	}
}

func writeSession(t *testing.T, root, id, text string) string {
	t.Helper()
	return writeSessionAt(t, root, id, text, 1786009000000)
}

// writeSessionAt is writeSession of a session created at createdAt (ms).
func writeSessionAt(t *testing.T, root, id, text string, createdAt int64) string {
	t.Helper()
	dir := filepath.Join(root, "--home-carol-lab--", id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	q := func(s string) string { b, _ := jsonString(s); return b }
	log := `{"type":"session","version":0,"id":` + q(id) + `,"createdAt":` + strconv.FormatInt(createdAt, 10) + `,"cwd":"/home/carol/lab","delegationDepth":0}` + "\n" +
		`{"type":"turn/start","seq":0,"time":1786009000001,"data":{"turn":1}}` + "\n" +
		`{"type":"user/message","seq":1,"time":1786009000002,"data":{"content":[{"type":"text","text":` + q(text) + `}],"source":{"kind":"user"},"role":"user","id":"d0000000-0000-4000-8000-000000000001"},"surfaceOp":"append"}` + "\n"
	p := filepath.Join(dir, "session.jsonl")
	if err := os.WriteFile(p, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func jsonString(s string) (string, error) {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String(), nil
}

func TestFindsCJKSubstringsAndShortTerms(t *testing.T) {
	root := t.TempDir()
	const id = "e0000000-0000-4000-8000-000000000001"
	writeSession(t, root, id, "我们讨论了量子纠缠的实验")
	x := openStore(t, root, false)
	ix, err := Open("", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	for _, q := range []string{"量子纠缠", "纠缠", "量子纠缠 实验", "讨论了量"} {
		items, err := ix.Find(context.Background(), x, reference.Target{}, q, 5)
		if err != nil {
			t.Fatal(err)
		}
		if len(items) != 1 || items[0].SessionID != id {
			t.Fatalf("search %q: got %+v, want %s", q, items, id)
		}
		if !strings.Contains(items[0].Snippet, "**") {
			t.Errorf("search %q: snippet %q has no marked match", q, items[0].Snippet)
		}
	}
	if ids := hitIDs(t, ix, x, "量子力学"); len(ids) != 0 {
		t.Errorf("search 量子力学: got %v, want none", ids)
	}
	if ids := hitIDs(t, ix, x, "量子纠缠"); len(ids) != 1 {
		t.Fatal(ids)
	}
	// The target itself is never offered.
	self := id
	items, _ := ix.Find(context.Background(), x, reference.Target{SessionID: &self}, "量子纠缠", 5)
	if len(items) != 0 {
		t.Errorf("the target session is a hit: %+v", items)
	}
}

// TestFollowsAppendsCompactionsAndDeletes replays the compacted fixture
// session as dsh writes it: before its compaction, a word of the span the
// compaction replaces is found; after it, that hit is gone and the new text
// is found; after the session is deleted, nothing of it is.
func TestFollowsAppendsCompactionsAndDeletes(t *testing.T) {
	root := copyTree(t, "../testdata/fixtures/store-raw")
	logPath := filepath.Join(root, "--home-alice-proj--", idB, "session.jsonl")
	full, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cut := bytes.Index(full, []byte(`{"type":"compaction/start","seq":25,`))
	if cut < 0 {
		t.Fatal("fixture B has no compaction at seq 25")
	}
	if err := os.WriteFile(logPath, full[:cut], 0o644); err != nil {
		t.Fatal(err)
	}
	x := openStore(t, root, true)
	dir := t.TempDir()
	path := filepath.Join(dir, "cache", "content.db")
	ix, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if ids := hitIDs(t, ix, x, "Postgres 16"); !has(ids, idB) {
		t.Fatalf("before the compaction: search Postgres 16 = %v, want %s", ids, idB)
	}
	if ids := hitIDs(t, ix, x, "runbook"); has(ids, idB) {
		t.Fatalf("before turn 3 was written: runbook found in %s", idB)
	}
	// dsh appends the compaction and the turns after it.
	f, err := os.OpenFile(logPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(full[cut:])
	f.Close()
	eventually(t, func() bool {
		ids := hitIDs(t, ix, x, "Postgres 16")
		return !has(ids, idB) && has(hitIDs(t, ix, x, "runbook"), idB)
	}, "after the compaction: Postgres 16 not found, runbook found")
	// dsh deletes the session.
	if err := os.RemoveAll(filepath.Dir(logPath)); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() bool { return !has(hitIDs(t, ix, x, "runbook"), idB) }, "after the delete: runbook not found")
	var n int
	if err := ix.db.QueryRow(`SELECT count(*) FROM docs WHERE id = ?`, idB).Scan(&n); err != nil || n != 0 {
		t.Errorf("the deleted session is still in the index file (%d rows, %v)", n, err)
	}
	userOnly(t, path)
}

// userOnly checks that the index file and its directory are the user's
// only (Windows has no permission bits: Go reports 0666 and 0777 there).
func userOnly(t *testing.T, path string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		return
	}
	for _, p := range []string{filepath.Dir(path), path} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		want := os.FileMode(0o600)
		if fi.IsDir() {
			want = 0o700
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s has mode %v, want %v", p, fi.Mode().Perm(), want)
		}
	}
}

// eventually retries cond for a little while: a watched store reports a
// change after the file system event arrives.
func eventually(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not reached: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestRebuildsAnUnusableIndexFile(t *testing.T) {
	x := openStore(t, "../testdata/fixtures/store-raw", false)
	cases := map[string][]byte{
		"garbage":        bytes.Repeat([]byte("not a database "), 1000),
		"empty":          {},
		"foreign sqlite": nil, // written below
	}
	for name, content := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "content.db")
			if content != nil {
				if err := os.WriteFile(path, content, 0o600); err != nil {
					t.Fatal(err)
				}
			} else {
				other, err := Open(path, Options{})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := other.db.Exec(`UPDATE meta SET value = 'someone else' WHERE key = 'format'`); err != nil {
					t.Fatal(err)
				}
				other.Close()
			}
			ix, err := Open(path, Options{})
			if err != nil {
				t.Fatalf("open over a %s file: %v", name, err)
			}
			defer ix.Close()
			if ids := hitIDs(t, ix, x, "runbook"); !has(ids, idB) {
				t.Errorf("after the rebuild: search runbook = %v, want %s", ids, idB)
			}
		})
	}
}

func TestReopenedIndexReadsOnlyChangedSessions(t *testing.T) {
	root := copyTree(t, "../testdata/fixtures/store-raw")
	x := openStore(t, root, false)
	path := filepath.Join(t.TempDir(), "content.db")
	ix, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	n, err := ix.Sync(context.Background(), x)
	if err != nil || n == 0 {
		t.Fatalf("first sync: %d, %v", n, err)
	}
	ix.Close()
	ix, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if n, err := ix.Sync(context.Background(), x); err != nil || n != 0 {
		t.Fatalf("sync of an unchanged store after reopening: %d sessions re-indexed, %v; want 0", n, err)
	}
}

func TestBoundsPerSessionAndQuery(t *testing.T) {
	root := t.TempDir()
	const id = "e0000000-0000-4000-8000-000000000002"
	text := "headword " + strings.Repeat("filler ", 20000) + " middleword " + strings.Repeat("filler ", 20000) + " tailword"
	writeSession(t, root, id, text)
	x := openStore(t, root, false)
	ix, err := Open("", Options{MaxSessionBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	for q, want := range map[string]bool{"headword": true, "tailword": true, "middleword": false} {
		if got := has(hitIDs(t, ix, x, q), id); got != want {
			t.Errorf("with 4 KiB per session, search %q found = %v, want %v", q, got, want)
		}
	}
	var size int
	ix.db.QueryRow(`SELECT textlen FROM docs`).Scan(&size)
	if size > 4096 {
		t.Errorf("indexed %d bytes, over the 4096 cap", size)
	}
	long := strings.Repeat("量子 ", 1000)
	if _, err := ix.Search(context.Background(), long, 5); err != nil {
		t.Errorf("a long query: %v", err)
	}
	if got := terms(long); len(got) != MaxQueryTerms {
		t.Errorf("terms of a long query: %d, want %d", len(got), MaxQueryTerms)
	}
}

// TestTwoProcessesShareAnIndexFile syncs two indexes over one file (two
// servers of the same store) at once, twice, then both search it.
func TestTwoProcessesShareAnIndexFile(t *testing.T) {
	root := copyTree(t, "../testdata/fixtures/store-raw")
	x := openStore(t, root, false)
	// Characters a SQLite URI would misread, in the directory name ('?' is
	// not allowed in a Windows file name).
	dirName := "dir %?#"
	if runtime.GOOS == "windows" {
		dirName = "dir %#"
	}
	path := filepath.Join(t.TempDir(), dirName, "content.db")
	var ixs [2]*Index
	for i := range ixs {
		ix, err := Open(path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		ixs[i] = ix
	}
	for round := 0; round < 2; round++ {
		errs := make(chan error, 2)
		for _, ix := range ixs {
			go func() { _, err := ix.Sync(context.Background(), x); errs <- err }()
		}
		for range ixs {
			if err := <-errs; err != nil {
				t.Fatalf("round %d: concurrent sync: %v", round, err)
			}
		}
		// Make every session look changed to the second round.
		for _, ix := range ixs {
			ix.mu.Lock()
			for id := range ix.versions {
				ix.versions[id] = ix.versionSum("stale")
			}
			ix.lastSrc = nil // as if the store had changed
			ix.mu.Unlock()
		}
	}
	for i, ix := range ixs {
		if ids := hitIDs(t, ix, x, "runbook"); len(ids) != 1 || ids[0] != idB {
			t.Errorf("index %d: search runbook = %v, want [%s]", i, ids, idB)
		}
	}
}

// TestIndexFileIsSmallerThanItsText indexes sessions of varied words
// (ASCII and CJK) and checks the file on disk, journals included, holds
// fewer bytes than the text it indexes.
func TestIndexFileIsSmallerThanItsText(t *testing.T) {
	root := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	var vocab []string
	for i := 0; i < 400; i++ {
		var w []rune
		for n := 3 + rng.IntN(7); len(w) < n; {
			if i%5 == 0 {
				w = append(w, rune(0x4e00+rng.IntN(500)))
			} else {
				w = append(w, rune('a'+rng.IntN(26)))
			}
		}
		vocab = append(vocab, string(w))
	}
	// Word frequencies follow Zipf's law, as in prose.
	zipf := rand.NewZipf(rand.New(rand.NewPCG(3, 4)), 1.1, 1, uint64(len(vocab)-1))
	for s := 0; s < 300; s++ {
		var b strings.Builder
		for b.Len() < 8000 {
			b.WriteString(vocab[zipf.Uint64()])
			b.WriteByte(' ')
		}
		writeSession(t, root, fmt.Sprintf("e0000000-0000-4000-8000-%012d", s), b.String())
	}
	x := openStore(t, root, false)
	path := filepath.Join(t.TempDir(), "content.db")
	ix, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Sync(context.Background(), x); err != nil {
		t.Fatal(err)
	}
	st, err := ix.Stats(context.Background())
	if err != nil || st.Sessions != 300 {
		t.Fatalf("stats %+v, %v", st, err)
	}
	if ids := hitIDs(t, ix, x, vocab[1]); len(ids) == 0 {
		t.Errorf("search %q: no hits", vocab[1])
	}
	ix.Close()
	var size int64
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if fi, err := os.Stat(path + suffix); err == nil {
			size += fi.Size()
		}
	}
	if size > st.TextBytes {
		t.Errorf("index file %d bytes for %d bytes of text (%.2fx), want at most 1x", size, st.TextBytes, float64(size)/float64(st.TextBytes))
	}
}

// TestMatchesTheTermNotOnlyItsTrigrams: a session holding every trigram
// of a term, but not the term, is no hit.
func TestMatchesTheTermNotOnlyItsTrigrams(t *testing.T) {
	root := t.TempDir()
	const scattered, whole = "e0000000-0000-4000-8000-000000000011", "e0000000-0000-4000-8000-000000000012"
	writeSession(t, root, scattered, "abc then bcd, 量子 and 子纠缠")
	writeSession(t, root, whole, "xabcdx 量子纠缠")
	x := openStore(t, root, false)
	ix := openTemp(t)
	for _, q := range []string{"abcd", "ABCD", "量子纠缠", "abcd 量子纠缠"} {
		if ids := hitIDs(t, ix, x, q); len(ids) != 1 || ids[0] != whole {
			t.Errorf("search %q: got %v, want only %s", q, ids, whole)
		}
	}
}

// TestShortTermsMatchAnyCase: terms under three characters are matched
// case-insensitively beyond ASCII too, as longer ones are.
func TestShortTermsMatchAnyCase(t *testing.T) {
	root := t.TempDir()
	const id = "e0000000-0000-4000-8000-000000000021"
	writeSession(t, root, id, "Привет, мир")
	x := openStore(t, root, false)
	ix, err := Open("", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	for _, q := range []string{"пр", "ПР", "Пр", "МИ", "мир", "ПРИВЕТ"} {
		if ids := hitIDs(t, ix, x, q); len(ids) != 1 || ids[0] != id {
			t.Errorf("search %q: got %v, want %s", q, ids, id)
		}
	}
}

// TestRebuildsOnADamagedStoredText: a stored text that does not decode is
// a damaged file: the search answers nothing, the index is rebuilt, and
// the next synced search finds the session again.
func TestRebuildsOnADamagedStoredText(t *testing.T) {
	root := t.TempDir()
	const id = "e0000000-0000-4000-8000-000000000031"
	writeSession(t, root, id, "a searchable sentence")
	x := openStore(t, root, false)
	ix := openTemp(t)
	if ids := hitIDs(t, ix, x, "searchable"); len(ids) != 1 {
		t.Fatalf("before the damage: %v", ids)
	}
	if _, err := ix.db.Exec(`UPDATE texts SET ztext = x'28b52ffd00ff'`); err != nil {
		t.Fatal(err)
	}
	hits, err := ix.Search(context.Background(), "searchable", 5)
	if err != nil || len(hits) != 0 {
		t.Fatalf("search of a damaged text: %v, %v; want no hits, no error", hits, err)
	}
	if ids := hitIDs(t, ix, x, "searchable"); len(ids) != 1 || ids[0] != id {
		t.Errorf("after the rebuild: %v, want %s", ids, id)
	}
}

// countingSource counts the calls a content index makes to its source:
// calls, those that revalidate the store; listed, those that answer from
// the index's memory (ListedCandidates).
type countingSource struct {
	*sessionstore.Indexed
	calls, listed atomic.Int64
}

func (c *countingSource) ListedCandidates(ids []string) []reference.Candidate {
	c.listed.Add(1)
	return c.Indexed.ListedCandidates(ids)
}

func (c *countingSource) SessionVersions(ctx context.Context) (iter.Seq[sessionstore.SessionVersion], error) {
	c.calls.Add(1)
	return c.Indexed.SessionVersions(ctx)
}

func (c *countingSource) ReadSurface(ctx context.Context, id string) (*reference.Surface, error) {
	c.calls.Add(1)
	return c.Indexed.ReadSurface(ctx, id)
}

func (c *countingSource) ReadTitles(ctx context.Context, ids []string) ([]reference.TitleResult, error) {
	c.calls.Add(1)
	return c.Indexed.ReadTitles(ctx, ids)
}

func (c *countingSource) Fresh(ctx context.Context) (uint64, error) {
	c.calls.Add(1)
	return c.Indexed.Fresh(ctx)
}

// TestQueriesReadNothingFromTheStore checks that a query after a sync
// answers without a call that revalidates the store (a stat scan of a
// large store) and labels its hits with the titles the store's index
// holds, the new title once the index has seen a title change.
func TestQueriesReadNothingFromTheStore(t *testing.T) {
	root := copyTree(t, "../testdata/fixtures/store-raw")
	src := &countingSource{Indexed: openStore(t, root, true)}
	ix, err := Open("", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	ctx := context.Background()
	label := func(want string) {
		t.Helper()
		items, err := ix.Items(ctx, src, reference.Target{}, "git push origin", 5)
		if err != nil {
			t.Fatal(err)
		}
		if len(items) != 1 || items[0].SessionID != idA || items[0].Label != want {
			t.Fatalf("hits %+v, want %s labelled %q", items, idA, want)
		}
	}
	if _, err := ix.Sync(ctx, src); err != nil {
		t.Fatal(err)
	}
	src.calls.Store(0)
	for _, q := range []string{"git push origin", "runbook", "zz", "no such words anywhere"} {
		if _, err := ix.Items(ctx, src, reference.Target{}, q, 5); err != nil {
			t.Fatal(err)
		}
	}
	label("Renaming git branches")
	if n := src.calls.Load(); n != 0 {
		t.Errorf("queries made %d calls that revalidate the store, want 0", n)
	}
	if src.listed.Load() == 0 {
		t.Error("no query labelled its hits from the index's memory")
	}
	logPath := filepath.Join(root, "--home-alice-proj--", idA, "session.jsonl")
	f, err := os.OpenFile(logPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// The fixture's last event is seq 35.
	_, err = fmt.Fprintf(f, `{"type":"session/title","seq":%d,"time":1786000070000,"data":{"title":"Git branch renames","messageSeqs":[4],"source":{"kind":"provider","provider":"p","model":{"provider":"p","model":"m"}}}}`+"\n", 36)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, func() bool {
		if _, err := ix.Sync(ctx, src); err != nil {
			t.Fatal(err)
		}
		items, _ := ix.Items(ctx, src, reference.Target{}, "git push origin", 5)
		return len(items) == 1 && items[0].Label == "Git branch renames"
	}, "the new title as the hit's label")
}

// TestABatchWritesOneSegment checks that indexing a batch of sessions adds
// one FTS5 segment: the rows go in ascending rowid order (FTS5 writes its
// pending postings out as a segment whenever a rowid is not above the last
// one, and every segment is merged again later).
func TestABatchWritesOneSegment(t *testing.T) {
	root := t.TempDir()
	for i := range 40 {
		writeSession(t, root, fmt.Sprintf("e0000000-0000-4000-8000-%012d", i), fmt.Sprintf("session %d talks about migrations", i))
	}
	x := openStore(t, root, false)
	ix := openTemp(t)
	if n, err := ix.Sync(context.Background(), x); err != nil || n != 40 {
		t.Fatalf("sync: %d sessions, %v", n, err)
	}
	var segs int
	if err := ix.db.QueryRow(`SELECT count(DISTINCT segid) FROM body_idx`).Scan(&segs); err != nil {
		t.Fatal(err)
	}
	if segs != 1 {
		t.Errorf("40 sessions in one batch made %d segments, want 1", segs)
	}
	if ids := hitIDs(t, ix, x, "migrations"); len(ids) != DefaultLimit {
		t.Errorf("search migrations: %d hits, want %d", len(ids), DefaultLimit)
	}
}

// heldSource holds a Sync at its first read (the listing) until release
// is closed.
type heldSource struct {
	Source
	entered chan struct{}
	release chan struct{}
}

func (h *heldSource) SessionVersions(ctx context.Context) (iter.Seq[sessionstore.SessionVersion], error) {
	close(h.entered)
	select {
	case <-h.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return h.Source.SessionVersions(ctx)
}

// TestSearchesDoNotWaitForASync holds a Sync (which indexes every changed
// session under the index's lock: minutes for a large store) and requires
// Synced and Search to answer from the index as it is meanwhile.
func TestSearchesDoNotWaitForASync(t *testing.T) {
	root := copyTree(t, "../testdata/fixtures/store-raw")
	x := openStore(t, root, false)
	ix := openTemp(t)
	if _, err := ix.Sync(context.Background(), x); err != nil {
		t.Fatal(err)
	}
	held := &heldSource{Source: x, entered: make(chan struct{}), release: make(chan struct{})}
	synced := make(chan error, 1)
	go func() {
		_, err := ix.Sync(context.Background(), held)
		synced <- err
	}()
	<-held.entered
	type answer struct {
		synced bool
		hits   []Hit
		err    error
	}
	answered := make(chan answer, 1)
	go func() {
		var a answer
		a.synced = ix.Synced()
		a.hits, a.err = ix.Search(context.Background(), "runbook", 0)
		answered <- a
	}()
	// The guard only turns a hang into a failure.
	select {
	case a := <-answered:
		if !a.synced {
			t.Error("Synced is false during a second sync")
		}
		if a.err != nil || len(a.hits) == 0 || a.hits[0].SessionID != idB {
			t.Errorf("search runbook during a sync: %+v, %v; want %s", a.hits, a.err, idB)
		}
	case <-time.After(10 * time.Second):
		t.Error("Synced and Search did not answer while a sync was held")
	}
	close(held.release)
	if err := <-synced; err != nil {
		t.Fatalf("the held sync: %v", err)
	}
}

// TestTitleHitsRankFirst checks that a session whose title holds the query
// comes before those whose text alone does, in an index just synced and in
// one reopened from its file (each keeps its own copy of the titles the
// title pass reads).
func TestTitleHitsRankFirst(t *testing.T) {
	root := t.TempDir()
	const titled = "e0000000-0000-4000-8000-0000000000a0"
	writeTitledSession(t, root, titled, "Quokka census", "notes from the zoo")
	for i := range 6 {
		writeSession(t, root, fmt.Sprintf("e0000000-0000-4000-8000-00000000000%d", i), "a quokka was seen")
	}
	x := openStore(t, root, false)
	path := filepath.Join(t.TempDir(), "content.db")
	for _, reopened := range []bool{false, true} {
		ix, err := Open(path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ix.Sync(context.Background(), x); err != nil {
			t.Fatal(err)
		}
		if ids := hitIDs(t, ix, x, "QUOKKA"); len(ids) != 7 || ids[0] != titled {
			t.Errorf("reopened %v: hits %v, want 7 with %s first", reopened, ids, titled)
		}
		ix.Close()
	}
}

// TestSyncGivesTheListingOrder: a sync indexes the changed sessions oldest
// first, so the docs by ascending rowid are the listing's order (newest
// first), which the title pass and its ties follow.
func TestSyncGivesTheListingOrder(t *testing.T) {
	root := t.TempDir()
	ids := []string{ // newest first
		"e0000000-0000-4000-8000-0000000000c3",
		"e0000000-0000-4000-8000-0000000000a1",
		"e0000000-0000-4000-8000-0000000000b2",
	}
	for i, id := range ids {
		writeSessionAt(t, root, id, "shared words", 1786009000000-int64(i)*1000)
	}
	x := openStore(t, root, false)
	ix, err := Open("", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if _, err := ix.Sync(context.Background(), x); err != nil {
		t.Fatal(err)
	}
	rows, err := ix.db.Query(`SELECT id FROM docs ORDER BY rowid`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		got = append(got, id)
	}
	if !slices.Equal(got, ids) {
		t.Errorf("docs by rowid = %v, want the listing order %v", got, ids)
	}
}

// TestSyncAfterAWriteInPlaceComparesTheWritten: when queries keep the
// store's catalog (completion does), a sync after writes that leave the
// listing as it was compares only the sessions written, and the index
// then answers as one synced afresh: an appended message is found; a
// session only touched is compared but not read again (its bytes, and so
// its version, are the same) and found as before.
func TestSyncAfterAWriteInPlaceComparesTheWritten(t *testing.T) {
	root := copyTree(t, "../testdata/fixtures/store-raw")
	x := openStore(t, root, true)
	ctx := context.Background()
	if _, err := x.Catalog(ctx); err != nil {
		t.Fatal(err)
	}
	ix, err := Open(filepath.Join(t.TempDir(), "content.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if _, err := ix.Sync(ctx, x); err != nil {
		t.Fatal(err)
	}
	listed := ix.compared
	logA := filepath.Join(root, "--home-alice-proj--", idA, "session.jsonl")
	logB := filepath.Join(root, "--home-alice-proj--", idB, "session.jsonl")
	f, err := os.OpenFile(logA, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"user/message","seq":36,"time":1786000070000,"surfaceOp":"append","data":{"role":"user","id":"m36","source":{"kind":"user"},"content":[{"type":"text","text":"what about the xylophone tuning"}]}}` + "\n")
	f.Close()
	later := time.Now().Add(-time.Minute)
	if err := os.Chtimes(logB, later, later); err != nil {
		t.Fatal(err)
	}
	if err := x.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := x.Catalog(ctx); err != nil {
		t.Fatal(err)
	}
	n, err := ix.Sync(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 || ix.compared != 2 || listed <= 2 {
		t.Errorf("sync after an append and a touch: indexed %d, compared %d sessions (of %d listed); want 1 and 2", n, ix.compared, listed)
	}
	fresh, err := Open(filepath.Join(t.TempDir(), "content.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	y := openStore(t, root, false)
	for _, q := range []string{"xylophone", "Postgres 16", "runbook", "branch"} {
		got, want := hitIDs(t, ix, x, q), hitIDs(t, fresh, y, q)
		if !slices.Equal(got, want) {
			t.Errorf("search %q: %v, synced afresh %v", q, got, want)
		}
	}
	if !has(hitIDs(t, ix, x, "xylophone"), idA) {
		t.Errorf("the appended message is not found")
	}
}
