package sessionstore_test

// Decoding budgets: a zstd log of many frames, each under the read limit
// (RLE blocks inside an ignored todo/write event), decodes to many times
// its size on disk. One read of it must stop at the decoded-bytes budget
// with a read-limit error, whichever path reads it (the index pass, the
// index's surface read, the store's streamed read), and the rest of the
// store is served. Work is measured as bytes decoded (deterministic), not
// as time.

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore"
)

// floodFrames returns n complete frames, one todo/write event each (seq
// from seq0), holding blocks RLE blocks of 128 KiB: tens of bytes on disk
// per frame, blocks × 128 KiB decoded.
func floodFrames(seq0, n, blocks int) [][]byte {
	var frames [][]byte
	for i := 0; i < n; i++ {
		f := rawBlocks(zstdFrameHeader(), []byte(fmt.Sprintf(`{"type":"todo/write","seq":%d,"time":1786003000009,"data":{"x":"`, seq0+i)), false)
		f = rleBlocks(f, 'a', blocks)
		f = rawBlocks(f, []byte("\"}}\n"), true)
		frames = append(frames, f)
	}
	return frames
}

func TestFrameFloodStopsAtTheDecodedBytesBudget(t *testing.T) {
	const limit = 16 * mib
	budget := sessionstore.DecodedPerReadForTest(limit)
	// Frames of 15 MiB each (under the limit), 3 × the budget in all.
	const blocks = 120
	n := int(3*budget/(blocks*rleBlock)) + 1
	root := filepath.Join(t.TempDir(), "sessions")
	writeZstdSession(t, root, "good", zframe(hdrLine("good")), zframe(eventLines("good", "good session")))
	flood := append([][]byte{zframe(hdrLine("flood")), zframe(eventLines("flood", "flood"))}, floodFrames(4, n, blocks)...)
	writeZstdSession(t, root, "flood", flood...)
	// Work allowed for one read: the budget plus the frame that crosses
	// it (the small frames of eventLines count nothing here).
	allowed := budget + blocks*rleBlock
	ctx := context.Background()

	wantLimitErr := func(t *testing.T, what string, err error) {
		t.Helper()
		if !errors.Is(err, sessionstore.ErrReadLimit) {
			t.Fatalf("%s: got %v, want a read-limit error", what, err)
		}
		if !strings.Contains(err.Error(), "in one read") || !strings.Contains(err.Error(), "--max-read-mb") {
			t.Errorf("%s: the error does not say what was exceeded and how to raise it: %v", what, err)
		}
	}

	t.Run("index pass", func(t *testing.T) {
		before := sessionstore.ZstdDecodedForTest()
		x := sessionstore.OpenWaited(t, root, sessionstore.IndexOptions{CacheDir: sessionstore.NoCache, NoWatch: true, ReadLimit: limit})
		if got := sessionstore.ZstdDecodedForTest() - before; got > allowed {
			t.Errorf("the index pass decoded %d MiB, over the budget of one read (%d MiB)", got>>20, allowed>>20)
		}
		hs, err := x.ListSessions(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(hs) != 2 {
			t.Fatalf("listed %d sessions, want both (the flood is listed, its reads fail)", len(hs))
		}
		titles, err := x.ReadTitles(ctx, []string{"good", "flood"})
		if err != nil {
			t.Fatal(err)
		}
		if titles[0].Err != nil || titles[0].Title == nil || *titles[0].Title != "good session" {
			t.Errorf("good session's title: %+v", titles[0])
		}
		wantLimitErr(t, "flood title", titles[1].Err)
		before = sessionstore.ZstdDecodedForTest()
		_, err = x.ReadSurface(ctx, "flood")
		wantLimitErr(t, "flood surface through the index", err)
		if got := sessionstore.ZstdDecodedForTest() - before; got > allowed {
			t.Errorf("the surface read decoded %d MiB, over the budget of one read (%d MiB)", got>>20, allowed>>20)
		}
		if _, err := x.ReadSurface(ctx, "good"); err != nil {
			t.Errorf("good session's surface: %v", err)
		}
	})

}

// TestConcurrentLargeFrameReadsKeepTheirText: large decode buffers are
// handed from one decode to the next; no read may see its text
// overwritten by another's. Sessions each hold a 3 MiB message of their
// own letter (over the size decoded outside the memory budget); many
// reads at once through the store and the index must each see exactly
// their session's text.
func TestConcurrentLargeFrameReadsKeepTheirText(t *testing.T) {
	root := filepath.Join(t.TempDir(), "sessions")
	const sessions = 6
	letter := func(i int) string { return string(rune('a' + i)) }
	for i := 0; i < sessions; i++ {
		id := "large-" + letter(i)
		writeZstdSession(t, root, id, zframe(hdrLine(id)), zframe(eventLines(id, strings.Repeat(letter(i), 3<<20))))
	}
	st, err := sessionstore.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	x := sessionstore.OpenWaited(t, root, sessionstore.IndexOptions{CacheDir: sessionstore.NoCache, NoWatch: true})
	ctx := context.Background()
	errs := make(chan error, 64)
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for k := 0; k < 6; k++ {
				i := (w + k) % sessions
				src := reference.Source(st)
				if k%2 == 1 {
					src = x
				}
				s, err := src.ReadSurface(ctx, "large-"+letter(i))
				if err != nil {
					errs <- err
					return
				}
				want := strings.Repeat(letter(i), 3<<20)
				if len(s.Events) != 1 || !strings.Contains(string(s.Events[0].Raw), want) {
					errs <- fmt.Errorf("reader %d: large-%s's surface does not hold its own text", w, letter(i))
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
