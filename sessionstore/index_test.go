package sessionstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-lsp/dsh-lsp/bench/workload"
	"github.com/dsh-lsp/dsh-lsp/internal/gcgoal"
	"github.com/dsh-lsp/dsh-lsp/reference"
)

// copyTree copies a directory tree (a testdata store) to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
}

// openIndexed opens root with a private cache directory and waits for the
// first pass.
func openIndexed(t *testing.T, root, cacheDir string) *Indexed {
	t.Helper()
	return OpenWaited(t, root, IndexOptions{CacheDir: cacheDir, RefreshInterval: time.Hour})
}

// indexedFixture copies the fixture store name (testdata/fixtures; its
// bytes are checked unchanged when the test ends) and returns the copy and
// an index over it after its first pass.
func indexedFixture(t *testing.T, name string) (string, *Indexed) {
	t.Helper()
	src := filepath.Join(testdata(t), "fixtures", name)
	guardTree(t, src)
	root := t.TempDir()
	copyTree(t, src, root)
	return root, openIndexed(t, root, t.TempDir())
}

type titleView struct {
	ID    string
	Title *string
	Err   string
}

func titlesOf(t *testing.T, src reference.Source, ids []string) []titleView {
	t.Helper()
	rs, err := src.ReadTitles(context.Background(), ids)
	if err != nil {
		t.Fatalf("ReadTitles: %v", err)
	}
	out := make([]titleView, len(rs))
	for i, r := range rs {
		out[i] = titleView{ID: r.SessionID, Title: r.Title}
		if r.Err != nil {
			out[i].Err = r.Err.Error()
		}
	}
	return out
}

// sameAsStore checks that the index answers exactly what a fresh full read
// of the store answers: the listing (headers in order) and the titles of
// every listed id, of every session directory's id, and of an unknown id.
func sameAsStore(t *testing.T, x *Indexed, root string) {
	t.Helper()
	st, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	want, werr := st.ListSessions(context.Background())
	got, gerr := x.ListSessions(context.Background())
	if (werr != nil) != (gerr != nil) {
		t.Fatalf("ListSessions errors differ: index %v, store %v", gerr, werr)
	}
	if len(got) != len(want) {
		t.Fatalf("index lists %d sessions, store %d", len(got), len(want))
	}
	ids := []string{"no-such-session"}
	for i := range want {
		if got[i].ID != want[i].ID || got[i].CreatedAt != want[i].CreatedAt ||
			!reflect.DeepEqual(got[i].CWD, want[i].CWD) || !bytes.Equal(got[i].Raw, want[i].Raw) {
			t.Fatalf("listing[%d]: index %+v, store %+v", i, got[i], want[i])
		}
		ids = append(ids, want[i].ID)
	}
	dirs, _ := filepath.Glob(filepath.Join(root, "*", "*"))
	for _, d := range dirs {
		if id, ok := DecodeSegment(filepath.Base(d)); ok {
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		gs, gerr := x.ReadSurface(context.Background(), id)
		ws, werr := st.ReadSurface(context.Background(), id)
		if (gerr != nil) != (werr != nil) || gerr != nil && gerr.Error() != werr.Error() {
			t.Fatalf("ReadSurface(%s) errors: index %v, store %v", id, gerr, werr)
		}
		if gerr == nil {
			if g, w := MarshalSurface(gs), MarshalSurface(ws); !bytes.Equal(g, w) {
				t.Fatalf("ReadSurface(%s):\nindex %s\nstore %s", id, g, w)
			}
			if !reflect.DeepEqual(gs.Header, ws.Header) {
				t.Fatalf("ReadSurface(%s) header: index %+v, store %+v", id, gs.Header, ws.Header)
			}
			for i := range gs.Events {
				if !bytes.Equal(gs.Events[i].Data, ws.Events[i].Data) {
					t.Fatalf("ReadSurface(%s) event %d data differs", id, i)
				}
			}
		}
	}
	gt, wt := titlesOf(t, x, ids), titlesOf(t, st, ids)
	if !reflect.DeepEqual(gt, wt) {
		for i := range gt {
			if !reflect.DeepEqual(gt[i], wt[i]) {
				t.Errorf("title of %s: index %s, store %s", gt[i].ID, fmtTitle(gt[i]), fmtTitle(wt[i]))
			}
		}
		t.FailNow()
	}
}

func fmtTitle(v titleView) string {
	if v.Title != nil {
		return fmt.Sprintf("%q err=%q", *v.Title, v.Err)
	}
	return fmt.Sprintf("<none> err=%q", v.Err)
}

func TestIndexedMatchesStoreOnFixtures(t *testing.T) {
	for _, name := range []string{"store-raw", "store-zstd"} {
		t.Run(name, func(t *testing.T) {
			root, x := indexedFixture(t, name)
			if !x.Complete() {
				t.Fatal("Complete() is false after Wait")
			}
			sameAsStore(t, x, root)
		})
	}
}

// genStore writes n sessions with only their first `keep` batches and
// returns the specs, full batches and paths.
type genSession struct {
	spec    workload.SessionSpec
	header  []byte
	batches [][]byte
	path    string
	written int
}

func genStore(t testing.TB, root string, comp workload.Compression, n, keep int, seed int64) []*genSession {
	t.Helper()
	specs := workload.Specs(workload.Options{Sessions: n, CWDs: 3, Turns: 10, Compactions: 1, Multibyte: 0.3, NoCWD: 0.2, Seed: seed})
	var out []*genSession
	for _, sp := range specs {
		h, b := workload.Batches(sp)
		g := &genSession{spec: sp, header: h, batches: b, path: workload.PathOf(root, sp, comp)}
		if err := os.MkdirAll(filepath.Dir(g.path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(g.path, g.prefix(comp, keep), 0o644); err != nil {
			t.Fatal(err)
		}
		g.written = keep
		out = append(out, g)
	}
	return out
}

func appendFile(t testing.TB, path string, data []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// prefix is g's log holding its header and first k batches, in comp.
func (g *genSession) prefix(comp workload.Compression, k int) []byte {
	data := workload.EncodeBatch(comp, g.header)
	for _, b := range g.batches[:k] {
		data = append(data, workload.EncodeBatch(comp, b)...)
	}
	return data
}

// rewrite replaces g's log by its first k batches, as a new file renamed
// over it (no reader sees a half-written log).
func (g *genSession) rewrite(t testing.TB, comp workload.Compression, k int) {
	tmp := filepath.Join(t.TempDir(), "x")
	os.WriteFile(tmp, g.prefix(comp, k), 0o644)
	os.Rename(tmp, g.path)
	g.written = k
}

// truncateRandom cuts g's log at a byte r picks (nothing for an empty or
// missing log).
func (g *genSession) truncateRandom(r *rand.Rand) {
	if fi, err := os.Stat(g.path); err == nil && fi.Size() > 0 {
		os.Truncate(g.path, r.Int63n(fi.Size()))
	}
}

// appendBatches appends k more batches of g (in its encoding).
func (g *genSession) appendBatches(t testing.TB, comp workload.Compression, k int) {
	t.Helper()
	var data []byte
	for ; k > 0 && g.written < len(g.batches); k-- {
		data = append(data, workload.EncodeBatch(comp, g.batches[g.written])...)
		g.written++
	}
	appendFile(t, g.path, data)
}

func TestIndexedIncrementalRefresh(t *testing.T) {
	t.Parallel()
	for _, comp := range []workload.Compression{workload.None, workload.Zstd} {
		// The spill's batch: 0 keeps no states in a spill file, 1 writes
		// each one at once, the default holds this store's in memory.
		for _, batch := range []int{0, 1, spillBatch} {
			t.Run(fmt.Sprintf("%s/spillBatch=%d", comp, batch), func(t *testing.T) {
				t.Parallel()
				incrementalRefresh(t, comp, batch)
			})
		}
	}
}

// incrementalRefresh is TestIndexedIncrementalRefresh on one encoding;
// with a spill batch, every pass keeps its parse states in the spill file
// (written or pending), read back by the grown parses and the cache write.
func incrementalRefresh(t *testing.T, comp workload.Compression, spillBatch int) {
	spill := spillBatch > 0
	root := t.TempDir()
	ss := genStore(t, root, comp, 6, 3, 7)
	// Without watches: a refresh a notification starts while a
	// step still writes would parse a half-written file once more.
	cacheDir := t.TempDir()
	opts := IndexOptions{CacheDir: cacheDir, RefreshInterval: time.Hour, NoWatch: true}
	if spill {
		opts = WithSpillJobs(opts, 1)
		opts.spillBatch = spillBatch
	}
	x := OpenWaited(t, root, opts)
	sameAsStore(t, x, root)
	if got := x.Stats(); got.Parsed != 6 || got.Unreadable != 0 || got.Surfaces != 12 {
		t.Fatalf("first pass: %+v, want 6 parsed, none slow, every surface (2 reads each) from the index", got)
	}
	x.mu.RLock()
	for _, e := range x.all {
		if e.State.present() && (e.State.in != nil) != spill {
			t.Errorf("%s/%s: state in a file %v, want %v", e.Proj, e.Seg, e.State.in != nil, spill)
		}
	}
	x.mu.RUnlock()
	defer func() {
		x.Close()
		if left, _ := filepath.Glob(filepath.Join(cacheDir, "dsh-lsp-states-*")); len(left) > 0 {
			t.Errorf("spill files left in the cache directory: %v", left)
		}
		restarted := openIndexed(t, root, cacheDir)
		defer restarted.Close()
		sameAsStore(t, restarted, root)
	}()
	ctx := context.Background()
	steps := []struct {
		name       string
		do         func()
		wantParsed int64
		wantGrown  int64
	}{
		{"append to two", func() {
			ss[0].appendBatches(t, comp, 2)
			ss[3].appendBatches(t, comp, 5)
		}, 2, 2},
		{"append everything", func() {
			for _, g := range ss {
				g.appendBatches(t, comp, len(g.batches))
			}
		}, 6, 6},
		{"nothing changed", func() {}, 0, 0},
		{"new session", func() {
			extra := genStore(t, root, comp, 1, 4, 8)[0]
			ss = append(ss, extra)
		}, 1, 0},
		{"deleted session", func() {
			if err := os.RemoveAll(filepath.Dir(ss[1].path)); err != nil {
				t.Fatal(err)
			}
		}, 0, 0},
		{"truncated file", func() {
			g := ss[2]
			data := workload.EncodeBatch(comp, g.header)
			for _, b := range g.batches[:2] {
				data = append(data, workload.EncodeBatch(comp, b)...)
			}
			if err := os.Truncate(g.path, int64(len(data))); err != nil {
				t.Fatal(err)
			}
		}, 1, 0},
		{"replaced file", func() {
			// Same session, other content, new inode: rename over.
			g := ss[4]
			data := workload.EncodeBatch(comp, g.header)
			data = append(data, workload.EncodeBatch(comp, g.batches[0])...)
			tmp := filepath.Join(t.TempDir(), "x")
			if err := os.WriteFile(tmp, data, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, g.path); err != nil {
				t.Fatal(err)
			}
		}, 1, 0},
		{"transcript deleted, directory kept", func() {
			if err := os.Remove(ss[5].path); err != nil {
				t.Fatal(err)
			}
		}, 0, 0},
	}
	for _, s := range steps {
		before := x.Stats()
		s.do()
		if err := x.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		after := x.Stats()
		if p, g := after.Parsed-before.Parsed, after.Grown-before.Grown; p != s.wantParsed || g != s.wantGrown {
			t.Errorf("%s: parsed %d (grown %d), want %d (%d)", s.name, p, g, s.wantParsed, s.wantGrown)
		}
		sameAsStore(t, x, root)
	}
}

// TestIndexedEqualsFullReadAfterRandomChanges is the index's correctness
// check: after random appends, truncations (also mid-line / mid-frame),
// replacements, garbage and bad lines, the index answers what a full
// re-read answers.
func TestIndexedEqualsFullReadAfterRandomChanges(t *testing.T) {
	t.Parallel()
	for _, comp := range []workload.Compression{workload.None, workload.Zstd} {
		t.Run(string(comp), func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			ss := genStore(t, root, comp, 8, 2, 11)
			x := openIndexed(t, root, t.TempDir())
			r := rand.New(rand.NewSource(42))
			ctx := context.Background()
			rounds := 30
			if LongTests() {
				rounds = 60
			}
			for round := 0; round < rounds; round++ {
				g := ss[r.Intn(len(ss))]
				var what string
				switch op := r.Intn(10); {
				case op < 5:
					what = "append"
					g.appendBatches(t, comp, 1+r.Intn(3))
				case op == 5:
					what = "truncate at a random byte"
					g.truncateRandom(r)
				case op == 6:
					what = "replace with another prefix"
					g.rewrite(t, comp, r.Intn(len(g.batches)+1))
				case op == 7:
					what = "append a partial line / frame"
					b := workload.EncodeBatch(comp, []byte(`{"type":"turn/start","seq":999999,"time":1,"data":{"turn":99}}`+"\n"))
					appendFile(t, g.path, b[:len(b)/2])
				case op == 8:
					what = "append a bad line"
					appendFile(t, g.path, workload.EncodeBatch(comp, []byte("{not json}\n")))
				default:
					what = "append a valid title event with the next seq"
					st, err := Open(root)
					if err != nil {
						t.Fatal(err)
					}
					log, err := st.Load(ctx, g.spec.ID)
					if err != nil {
						continue
					}
					line := fmt.Sprintf(`{"type":"session/title","seq":%d,"time":1,"data":{"title":"round %d","messageSeqs":[],"source":{"kind":"user"}}}`+"\n", log.Stored, round)
					appendFile(t, g.path, workload.EncodeBatch(comp, []byte(line)))
				}
				if err := x.Refresh(ctx); err != nil {
					t.Fatal(err)
				}
				t.Logf("round %d: %s on %s", round, what, g.spec.ID)
				sameAsStore(t, x, root)
			}
		})
	}
}

func TestIndexedCache(t *testing.T) {
	root := t.TempDir()
	ss := genStore(t, root, workload.Zstd, 5, 3, 21)
	cacheDir := t.TempDir()
	x := openIndexed(t, root, cacheDir)
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	cachePath := x.CachePath()
	if _, err := os.Stat(cachePath); err != nil {
		t.Fatalf("no cache file after Close: %v", err)
	}
	if !strings.HasPrefix(cachePath, cacheDir+string(filepath.Separator)) {
		t.Fatalf("cache file %s is not in %s", cachePath, cacheDir)
	}

	t.Run("restart reuses the cache and grows appended files", func(t *testing.T) {
		ss[0].appendBatches(t, workload.Zstd, 2)
		y, err := OpenIndexed(root, IndexOptions{CacheDir: cacheDir, RefreshInterval: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if !y.Complete() {
			t.Fatal("Complete() is false right after loading a valid cache")
		}
		if hs, _ := y.ListSessions(context.Background()); len(hs) != len(ss) {
			t.Fatalf("cached listing has %d sessions, want %d", len(hs), len(ss))
		}
		if err := y.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := y.Stats(); got.Parsed != 1 || got.Grown != 1 {
			t.Fatalf("restart parsed %d (grown %d), want only the appended file grown", got.Parsed, got.Grown)
		}
		sameAsStore(t, y, root)
		y.Close()
	})

	corruptions := []struct {
		name  string
		write func(path string) error
	}{
		{"garbage", func(p string) error { return os.WriteFile(p, []byte("not an index"), 0o600) }},
		{"truncated", func(p string) error {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(p, data[:len(data)/2], 0o600)
		}},
		{"flipped byte in the head", func(p string) error {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			headAt := int(binary.LittleEndian.Uint64(data[len(data)-cacheTrailerBytes+4:]))
			data[(headAt+len(data)-cacheTrailerBytes)/2] ^= 0xff
			return os.WriteFile(p, data, 0o600)
		}},
		{"other version", func(p string) error {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			data[len(cacheMagic)]++
			return os.WriteFile(p, data, 0o600)
		}},
	}
	for _, c := range corruptions {
		t.Run("corrupt cache: "+c.name, func(t *testing.T) {
			if err := c.write(cachePath); err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var warnings []string
			y, err := OpenIndexed(root, IndexOptions{CacheDir: cacheDir, RefreshInterval: time.Hour, Logf: func(f string, a ...any) {
				mu.Lock()
				warnings = append(warnings, fmt.Sprintf(f, a...))
				mu.Unlock()
			}})
			if err != nil {
				t.Fatal(err)
			}
			if err := y.Wait(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := y.Stats(); got.Parsed != int64(len(ss)) {
				t.Fatalf("rebuilt %d transcripts, want all %d", got.Parsed, len(ss))
			}
			sameAsStore(t, y, root)
			y.Close()
			mu.Lock()
			n := len(warnings)
			mu.Unlock()
			if n == 0 {
				t.Error("no warning about the unreadable cache")
			}
			data, _ := os.ReadFile(cachePath)
			if _, err := decodeCache(data); err != nil {
				t.Fatalf("cache not rewritten valid: %v", err)
			}
		})
	}

	// A state is read, and checked, when it is used: a restart takes the
	// rest of the cache, and the session whose state was damaged is
	// parsed again when it is read.
	t.Run("corrupt cache: flipped byte in a state", func(t *testing.T) {
		data, err := os.ReadFile(cachePath)
		if err != nil {
			t.Fatal(err)
		}
		headAt := int(binary.LittleEndian.Uint64(data[len(data)-cacheTrailerBytes+4:]))
		data[(cachePrefixBytes+headAt)/2] ^= 0xff
		if err := os.WriteFile(cachePath, data, 0o600); err != nil {
			t.Fatal(err)
		}
		y, err := OpenIndexed(root, IndexOptions{CacheDir: cacheDir, RefreshInterval: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		defer y.Close()
		if err := y.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := y.Stats(); got.Parsed != 0 {
			t.Fatalf("restart parsed %d transcripts, want none", got.Parsed)
		}
		sameAsStore(t, y, root)
		if got := y.Stats(); got.Parsed == 0 {
			t.Fatal("the session whose state was damaged was not parsed again")
		}
	})
}

func TestIndexedUnwritableCacheFallsBackToMemory(t *testing.T) {
	root := t.TempDir()
	genStore(t, root, workload.None, 3, 4, 5)
	// A cache "directory" below a regular file cannot be created, even
	// by root.
	blocker := filepath.Join(t.TempDir(), "file")
	os.WriteFile(blocker, []byte("x"), 0o600)
	var warned bool
	var mu sync.Mutex
	x, err := OpenIndexed(root, IndexOptions{CacheDir: filepath.Join(blocker, "cache"), Logf: func(string, ...any) {
		mu.Lock()
		warned = true
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	sameAsStore(t, x, root)
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !warned {
		t.Error("no warning about the unwritable cache")
	}
}

func TestIndexedNeverWritesUnderRoot(t *testing.T) {
	for _, comp := range []workload.Compression{workload.None, workload.Zstd} {
		t.Run(string(comp), func(t *testing.T) {
			root := t.TempDir()
			ss := genStore(t, root, comp, 4, 3, 3)
			x, err := OpenIndexed(root, IndexOptions{CacheDir: t.TempDir(), RefreshInterval: -1})
			if err != nil {
				t.Fatal(err)
			}
			x.Wait(context.Background())
			before := treeHash(t, root)
			ctx := context.Background()
			for i := 0; i < 3; i++ {
				if _, err := x.ListSessions(ctx); err != nil {
					t.Fatal(err)
				}
				x.ReadTitles(ctx, []string{ss[0].spec.ID, ss[1].spec.ID})
				x.ReadSurface(ctx, ss[2].spec.ID)
			}
			x.Close()
			if after := treeHash(t, root); after != before {
				t.Fatal("the store root changed while indexing")
			}
			// A cache directory inside the root is refused.
			inside := filepath.Join(root, "cache")
			y, err := OpenIndexed(root, IndexOptions{CacheDir: inside})
			if err != nil {
				t.Fatal(err)
			}
			y.Wait(ctx)
			y.Close()
			if y.CachePath() != "" {
				t.Fatalf("cache path %s inside the root accepted", y.CachePath())
			}
			if _, err := os.Stat(inside); err == nil {
				t.Fatal("cache directory created inside the root")
			}
			if after := treeHash(t, root); after != before {
				t.Fatal("the store root changed")
			}
		})
	}
}

func TestIndexedProgressAndPartialAnswers(t *testing.T) {
	root := t.TempDir()
	ss := genStore(t, root, workload.None, 20, 4, 9)
	var mu sync.Mutex
	var calls [][2]int
	gate := make(chan struct{})
	x, err := OpenIndexed(root, IndexOptions{CacheDir: NoCache, Progress: func(done, total int) {
		if done == 0 {
			<-gate
		}
		mu.Lock()
		calls = append(calls, [2]int{done, total})
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	// Release the pass before Close waits for it, also when a check below
	// fails first (Close would otherwise wait for the gate forever).
	release := sync.OnceFunc(func() { close(gate) })
	defer release()
	// The first pass is held at its start: nothing indexed, not complete.
	if x.Complete() {
		t.Fatal("complete before indexing")
	}
	got, err := x.ListSessions(context.Background())
	if err != nil || len(got) != 0 {
		t.Fatalf("during indexing: %d sessions, %v", len(got), err)
	}
	// A surface read during indexing indexes that one log on demand.
	st, _ := Open(root)
	gs, gerr := x.ReadSurface(context.Background(), ss[3].spec.ID)
	ws, werr := st.ReadSurface(context.Background(), ss[3].spec.ID)
	if gerr != nil || werr != nil || !bytes.Equal(MarshalSurface(gs), MarshalSurface(ws)) {
		t.Fatalf("ReadSurface during indexing differs from the store's (%v, %v)", gerr, werr)
	}
	if x.Stats().Surfaces != 1 {
		t.Fatal("ReadSurface during indexing was not served from an on-demand index")
	}
	release()
	x.Wait(context.Background())
	if !x.Complete() {
		t.Fatal("not complete after Wait")
	}
	mu.Lock()
	defer mu.Unlock()
	last := calls[len(calls)-1]
	if last != [2]int{20, 20} {
		t.Fatalf("last progress %v, want [20 20]", last)
	}
	for i := 1; i < len(calls); i++ {
		if calls[i][0] < calls[i-1][0] {
			t.Fatalf("progress went backwards: %v", calls)
		}
	}
	sameAsStore(t, x, root)
}

// TestIndexedQuickScan checks the background refresh's quick scan: it
// sees appends to live (recently modified) sessions and new sessions, and
// skips stat calls for cold ones until the next full scan.
func TestIndexedQuickScan(t *testing.T) {
	root := t.TempDir()
	ss := genStore(t, root, workload.None, 4, 3, 13)
	// Session 0 is cold: modified long ago.
	old := time.Now().Add(-time.Hour)
	os.Chtimes(ss[0].path, old, old)
	// Without notifications: this tests the stat scan's own heuristics
	// (fresh_test.go tests the watched index).
	x, err := OpenIndexed(root, IndexOptions{CacheDir: NoCache, RefreshInterval: time.Hour, NoWatch: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	ctx := context.Background()
	if err := x.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	ss[1].appendBatches(t, workload.None, 2) // live session
	extra := genStore(t, root, workload.None, 1, 2, 14)[0]
	before := x.Stats()
	if err := x.refresh(ctx, false, modeQuick); err != nil {
		t.Fatal(err)
	}
	if got := x.Stats(); got.Parsed-before.Parsed != 2 || got.Grown-before.Grown != 1 {
		t.Fatalf("quick scan parsed %d (grown %d), want the live append and the new session", got.Parsed-before.Parsed, got.Grown-before.Grown)
	}
	sameAsStore(t, x, root)
	_ = extra
	// An append to the cold session keeping its old mtime is only seen by
	// a full scan (once the project directories' mtimes are old enough to
	// be trusted).
	projects, _ := filepath.Glob(filepath.Join(root, "*"))
	for _, p := range projects {
		os.Chtimes(p, old, old)
	}
	x.refresh(ctx, false, modeQuick)
	ss[0].appendBatches(t, workload.None, 1)
	os.Chtimes(ss[0].path, old, old)
	before = x.Stats()
	x.refresh(ctx, false, modeQuick)
	if got := x.Stats(); got.Parsed != before.Parsed {
		t.Fatalf("quick scan re-parsed a cold session")
	}
	if err := x.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if got := x.Stats(); got.Grown-before.Grown != 1 {
		t.Fatalf("full scan did not grow the cold session")
	}
	sameAsStore(t, x, root)
}

// TestSnapshotPublishesItsListingOnce: a server's first pass publishes
// batches as it goes (queries see progress), a snapshot's (the CLI, which
// answers once it is done) publishes its listing once, at the end, and
// still reports its progress up to the total; both list the store.
func TestSnapshotPublishesItsListingOnce(t *testing.T) {
	root := t.TempDir()
	genStore(t, root, workload.None, 300, 2, 17)
	for _, snapshot := range []bool{false, true} {
		var last [2]int
		x, err := OpenIndexed(root, IndexOptions{CacheDir: NoCache, Snapshot: snapshot, Progress: func(done, total int) {
			last = [2]int{done, total}
		}})
		if err != nil {
			t.Fatal(err)
		}
		if err := x.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		switch n := x.listings.Load(); {
		case snapshot && n != 1:
			t.Errorf("snapshot: the first pass published its listing %d times, want once", n)
		case !snapshot && n < 2:
			t.Errorf("server: the first pass published its listing %d times, want once per batch (300 sessions: at least twice)", n)
		}
		if last != [2]int{300, 300} {
			t.Errorf("snapshot=%v: last progress %v, want [300 300]", snapshot, last)
		}
		sameAsStore(t, x, root)
		x.Close()
	}
}

// atServerTargets sets the collector's targets a server runs at (25
// serving, 35 for bulk work) for the test, and returns what reads the
// target applied now.
func atServerTargets(t *testing.T) (current func() int) {
	t.Helper()
	old := debug.SetGCPercent(100)
	gcgoal.Set(25, 35)
	t.Cleanup(func() {
		gcgoal.Set(100, 100)
		debug.SetGCPercent(old)
	})
	return gcPercentNow
}

// gcPercentNow reads the collector's target without setting it: reading it
// by setting it and setting it back raced with gcgoal, which may apply a
// target between the two and have it undone (the test then waited for a
// target that had come and gone; seen under Wine).
func gcPercentNow() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}

// TestLargePassesRunAtTheBulkTarget: a pass of spillJobs parses or more
// runs at the collector's bulk target (internal/gcgoal), and the idle one
// holds again once it is done.
func TestLargePassesRunAtTheBulkTarget(t *testing.T) {
	current := atServerTargets(t)
	root := t.TempDir()
	genStore(t, root, workload.None, 300, 2, 17)
	during := map[int]bool{}
	x, err := OpenIndexed(root, IndexOptions{CacheDir: NoCache, spillJobs: 100, Progress: func(done, total int) {
		if done > 0 && done < total {
			during[current()] = true
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if err := x.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The bulk target: 35, or more while the live heap is small.
	for p := range during {
		if p < 35 {
			t.Errorf("GC percents during a pass of 300 parses: %v, want the bulk target (35 or more)", during)
		}
	}
	if len(during) == 0 {
		t.Error("no progress reported during the pass")
	}
	if p := current(); p != 25 {
		t.Errorf("GC percent after the pass: %d, want 25", p)
	}
}

// TestFirstPassIsBulkWorkFromItsScan: a first pass without a cache runs
// at the bulk target from before its scan (here held at its gate) to its
// end, even when it parses fewer transcripts than a bulk parse does; a
// restart on a cache loads it and prepares its catalog at the bulk target,
// then checks it at the serving target: the target is back to it while
// the check is still held at its gate.
func TestFirstPassIsBulkWorkFromItsScan(t *testing.T) {
	current := atServerTargets(t)
	root := t.TempDir()
	genStore(t, root, workload.None, 20, 2, 17)
	cache := t.TempDir()
	for _, c := range []struct {
		name string
		want func(p int) bool
		// settles: the target reaches want in the background (the
		// loaded catalog is being prepared), not at once.
		settles bool
	}{
		{"first pass", func(p int) bool { return p >= 35 }, false},
		{"restart on the cache", func(p int) bool { return p == 25 }, true},
	} {
		gate := make(chan struct{})
		x, err := OpenIndexed(root, IndexOptions{CacheDir: cache, firstRefreshGate: gate})
		if err != nil {
			t.Fatal(err)
		}
		p := current()
		for deadline := time.Now().Add(10 * time.Second); c.settles && !c.want(p) && time.Now().Before(deadline); p = current() {
			runtime.Gosched() // the catalog is being prepared
		}
		if !c.want(p) {
			t.Errorf("%s: GC percent %d before the scan", c.name, p)
		}
		close(gate)
		if err := x.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		x.Close()
		if p := current(); p != 25 {
			t.Errorf("%s: GC percent after the pass: %d, want 25", c.name, p)
		}
	}
}

// TestTranscriptVersionFormat: a version is "enc:dev:ino:size:mtime" in
// decimal, as the content index persisted it (built with fmt before).
func TestTranscriptVersionFormat(t *testing.T) {
	for _, tt := range []struct {
		enc Encoding
		sig fileSig
	}{
		{Raw, fileSig{}},
		{Zstd, fileSig{Dev: 2049, Ino: 1 << 40, Size: 123456, MtimeNs: 1764720000123456789}},
		{Zstd, fileSig{Dev: ^uint64(0), Ino: ^uint64(0), Size: -1, MtimeNs: -1 << 63}},
		{Raw, fileSig{Size: 1<<63 - 1, MtimeNs: 1<<63 - 1}},
	} {
		want := fmt.Sprintf("%d:%d:%d:%d:%d", tt.enc, tt.sig.Dev, tt.sig.Ino, tt.sig.Size, tt.sig.MtimeNs)
		if got := transcriptVersion(tt.enc, tt.sig); got != want {
			t.Errorf("transcriptVersion(%d, %+v) = %q, want %q", tt.enc, tt.sig, got, want)
		}
	}
}

// BenchmarkTranscriptVersion: a content sync names 100,000 versions; fmt
// took several times as long.
func BenchmarkTranscriptVersion(b *testing.B) {
	sig := fileSig{Dev: 2049, Ino: 48213377, Size: 123456, MtimeNs: 1764720000123456789}
	b.Run("strconv", func(b *testing.B) {
		for b.Loop() {
			_ = transcriptVersion(Zstd, sig)
		}
	})
	b.Run("fmt", func(b *testing.B) {
		for b.Loop() {
			_ = fmt.Sprintf("%d:%d:%d:%d:%d", Zstd, sig.Dev, sig.Ino, sig.Size, sig.MtimeNs)
		}
	})
}

// BenchmarkLiveWrite measures what one write to a live session (a batch of
// its records appended, as dsh writes while the user types) costs the
// index of a store of 20,000 sessions: the refresh its notification
// starts (without the watcher's timing: the notification is noted and the
// refresh run here), and the catalog and search data the next query then
// uses.
func BenchmarkLiveWrite(b *testing.B) {
	root := b.TempDir()
	gs := genStore(b, root, workload.None, 20000, 1, 7)
	x := OpenWaited(b, root, IndexOptions{CacheDir: NoCache, NoWatch: true})
	ctx := context.Background()
	x.prepareCatalog()
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		g := gs[i%len(gs)]
		i++
		if g.written == len(g.batches) {
			g.rewrite(b, workload.None, 1)
		} else {
			g.appendBatches(b, workload.None, 1)
		}
		rel, _ := filepath.Rel(root, filepath.Dir(g.path))
		var cs changeSet
		cs.addSession(filepath.ToSlash(rel))
		f := &x.fresh
		f.mu.Lock()
		f.pending.merge(cs)
		f.seq++
		f.mu.Unlock()
		if err := x.refresh(ctx, false, modeChanges); err != nil {
			b.Fatal(err)
		}
		x.prepareCatalog()
	}
}
