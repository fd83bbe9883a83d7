package sessionstore_test

// Field bounds: a few KB of zstd can hold a 100 MiB title or a 1 MiB
// header cwd. Such a session must fail on its own (title read rejected:
// listed under its id; header over its bound: not listed, reported),
// without the field reaching the index's memory, its cache file or any
// answer. Inputs are generated; sizes are measured as bytes (cache file,
// heap retained by the index), not time.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
)

// titleEvent is a session/title event line (seq 4, after eventLines).
func titleEvent(title string) string {
	return `{"type":"session/title","seq":4,"time":1786003000009,"data":{"title":` + jsjson.Quote(title) + `,"messageSeqs":[2],"source":{"kind":"fallback"}}}` + "\n"
}

// bigTitleFrame is one zstd frame holding a session/title event whose
// title is n bytes of repeated text (compresses to a few KB per MiB).
func bigTitleFrame(n int) []byte {
	w, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	defer w.Close()
	return w.EncodeAll([]byte(titleEvent(strings.Repeat("title-injection ", n/16))), nil)
}

// hdrLineCWD is a header line with the given cwd.
func hdrLineCWD(id, cwd string) string {
	return `{"type":"session","version":0,"id":` + jsjson.Quote(id) + `,"createdAt":1786003000000,"cwd":` + jsjson.Quote(cwd) + `,"delegationDepth":0}` + "\n"
}

// writeZstdSessionAt writes frames as id's zstd transcript for cwd.
func writeZstdSessionAt(t *testing.T, root, cwd, id string, frames ...[]byte) {
	t.Helper()
	path, err := sessionstore.SessionPath(root, &cwd, id, sessionstore.Zstd)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, bytes.Join(frames, nil), 0o644); err != nil {
		t.Fatal(err)
	}
}

// hostileFieldStore writes a zstd store of one good session, titled
// sessions at the title bound and just over it, bigTitles sessions with
// titles of titleBytes, and longCWDs sessions whose header cwd is nearly
// 1 MiB.
func hostileFieldStore(t *testing.T, root string, bigTitles, titleBytes, longCWDs int) {
	writeZstdSession(t, root, "good", zframe(hdrLine("good")), zframe(eventLines("good", "good session")))
	atBound := strings.Repeat("é", sessionstore.MaxTitleBytes/2)
	writeZstdSession(t, root, "at-bound", zframe(hdrLine("at-bound")), zframe(eventLines("at-bound", "x")), zframe(titleEvent(atBound)))
	writeZstdSession(t, root, "over-bound", zframe(hdrLine("over-bound")), zframe(eventLines("over-bound", "x")), zframe(titleEvent(atBound+"x")))
	frame := bigTitleFrame(titleBytes)
	for i := 0; i < bigTitles; i++ {
		id := fmt.Sprintf("big-title-%d", i)
		writeZstdSession(t, root, id, zframe(hdrLine(id)), zframe(eventLines(id, "x")), frame)
	}
	cwd := "/" + strings.Repeat("d", 1<<20-256) // the header still fits the 1 MiB header read
	for i := 0; i < longCWDs; i++ {
		id := fmt.Sprintf("long-cwd-%d", i)
		writeZstdSessionAt(t, root, cwd, id, zframe(hdrLineCWD(id, cwd)), zframe(eventLines(id, "x")))
	}
}

func TestOversizeFieldsFailTheirSessionOnly(t *testing.T) {
	const bigTitles, titleBytes, longCWDs = 4, 16 << 20, 20
	root := filepath.Join(t.TempDir(), "sessions")
	hostileFieldStore(t, root, bigTitles, titleBytes, longCWDs)
	ctx := context.Background()
	cacheDir := t.TempDir()

	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	x := sessionstore.OpenWaited(t, root, sessionstore.IndexOptions{CacheDir: cacheDir, NoWatch: true})
	hs, err := x.ListSessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, h := range hs {
		listed[h.ID] = true
		if h.CWD != nil && len(*h.CWD) > sessionstore.MaxCWDBytes {
			t.Errorf("%s is listed with a %d-byte cwd", h.ID, len(*h.CWD))
		}
		if len(h.Raw) > sessionstore.MaxHeaderLineBytes {
			t.Errorf("%s is listed with a %d-byte header", h.ID, len(h.Raw))
		}
	}
	if want := 3 + bigTitles; len(hs) != want {
		t.Errorf("listed %d sessions, want %d (the big-title sessions listed, the long-cwd ones not)", len(hs), want)
	}
	for i := 0; i < longCWDs; i++ {
		if id := fmt.Sprintf("long-cwd-%d", i); listed[id] {
			t.Errorf("%s is listed", id)
		}
	}
	ids := []string{"good", "at-bound", "over-bound"}
	for i := 0; i < bigTitles; i++ {
		ids = append(ids, fmt.Sprintf("big-title-%d", i))
	}
	titles, err := x.ReadTitles(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range titles {
		switch id := ids[i]; id {
		case "good":
			if r.Err != nil || r.Title == nil || *r.Title != "good session" {
				t.Errorf("good: %+v", r)
			}
		case "at-bound":
			// A title at the bound is served whole.
			if r.Err != nil || r.Title == nil || len(*r.Title) != sessionstore.MaxTitleBytes {
				t.Errorf("at-bound: title %d bytes, err %v; want the whole %d-byte title", titleLen(r.Title), r.Err, sessionstore.MaxTitleBytes)
			}
		default:
			if !errors.Is(r.Err, sessionstore.ErrFieldLimit) {
				t.Errorf("%s: title %d bytes, err %v; want an error matching ErrFieldLimit", id, titleLen(r.Title), r.Err)
			} else if len(r.Err.Error()) > 1024 {
				t.Errorf("%s: the error is %d bytes long", id, len(r.Err.Error()))
			}
		}
	}
	// The index keeps nothing of the hostile fields: the heap it holds
	// and the cache it writes are far below one of them.
	var after runtime.MemStats
	sessionstore.DropDecodeBuffersForTest()
	runtime.GC()
	runtime.GC() // and the pools' victim caches
	runtime.ReadMemStats(&after)
	if held := int64(after.HeapAlloc) - int64(before.HeapAlloc); held > 4<<20 {
		t.Errorf("the open index holds %d MiB of heap", held>>20)
	}
	runtime.KeepAlive(x)
	x.Close()
	fi, err := os.Stat(x.CachePath())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > 256<<10 {
		t.Errorf("the cache file is %d KiB", fi.Size()>>10)
	}
	t.Logf("cache file %d bytes for %d sessions", fi.Size(), 3+bigTitles+longCWDs)

	// The store's own read agrees.
	st, err := sessionstore.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.ReadTitle(ctx, "big-title-0"); !errors.Is(err, sessionstore.ErrFieldLimit) {
		t.Errorf("store title read of big-title-0: %v, want an error matching ErrFieldLimit", err)
	}
	if _, err := st.ReadTitle(ctx, "over-bound"); !errors.Is(err, sessionstore.ErrFieldLimit) {
		t.Errorf("store title read of over-bound: %v, want an error matching ErrFieldLimit", err)
	}
}

func titleLen(s *string) int {
	if s == nil {
		return -1
	}
	return len(*s)
}
