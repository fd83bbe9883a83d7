package sessionstore

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/dsh-lsp/dsh-lsp/bench/workload"
	"github.com/dsh-lsp/dsh-lsp/reference"
	"github.com/dsh-lsp/dsh-lsp/sessionstore/transcript"
)

// summaryAgrees checks SurfaceSummary(id) against ReadSurface(id): when
// the summary answers, the header and last seq are the surface's and
// RetainSummary gives Retain's statistics and size for every budget and
// label where it answers. It reports whether the summary answered.
func summaryAgrees(t *testing.T, x *Indexed, id string) bool {
	t.Helper()
	ctx := context.Background()
	sum, ok := x.SurfaceSummary(ctx, id)
	if !ok {
		return false
	}
	surf, err := x.ReadSurface(ctx, id)
	if err != nil {
		t.Errorf("%s: summary answered, ReadSurface fails: %v", id, err)
		return true
	}
	if !reflect.DeepEqual(sum.Header, surf.Header) || !reflect.DeepEqual(sum.CapturedThroughSeq, surf.CapturedThroughSeq) {
		t.Errorf("%s: summary header %+v seq %v, surface %+v seq %v", id, sum.Header, sum.CapturedThroughSeq, surf.Header, surf.CapturedThroughSeq)
	}
	if len(sum.Items) != len(surf.Events) {
		t.Errorf("%s: %d summary items for %d surface events", id, len(sum.Items), len(surf.Events))
	}
	for _, budget := range []int64{65536, 4000, 900, 300} {
		for _, label := range []string{"", "label ü <x>"} {
			stats, size, ok := reference.RetainSummary(sum, label, budget)
			if !ok {
				continue
			}
			got, err := reference.Retain(surf, label, budget)
			if err != nil {
				t.Errorf("%s budget %d: summary %+v, Retain fails: %v", id, budget, stats, err)
				continue
			}
			if stats != got.Stats || size != got.Data.Size() {
				t.Errorf("%s budget %d: summary %+v size %d, Retain %+v size %d", id, budget, stats, size, got.Stats, got.Data.Size())
			}
		}
	}
	return true
}

// TestSurfaceSummaryAgreesWithTheSurface checks the index's surface
// summaries (what hover reads instead of the log) against surface reads
// on generated stores, raw and zstd, after appends (declined until the
// index has parsed them, then right again), and on the fixture and golden
// stores.
func TestSurfaceSummaryAgreesWithTheSurface(t *testing.T) {
	for _, comp := range []workload.Compression{workload.None, workload.Zstd} {
		root := t.TempDir()
		ss := genStore(t, root, comp, 6, 4, 22)
		x := OpenWaited(t, root, IndexOptions{CacheDir: NoCache, NoWatch: true, RefreshInterval: -1})
		answered := 0
		for _, s := range ss {
			if summaryAgrees(t, x, s.spec.ID) {
				answered++
			}
		}
		if answered != len(ss) {
			t.Errorf("%v: the summary answered for %d of %d sessions", comp, answered, len(ss))
		}
		ss[0].appendBatches(t, comp, 3)
		if _, ok := x.SurfaceSummary(context.Background(), ss[0].spec.ID); ok {
			t.Errorf("%v: the summary answered for a log appended to since it was indexed", comp)
		}
		if err := x.Refresh(context.Background()); err != nil {
			t.Fatal(err)
		}
		if !summaryAgrees(t, x, ss[0].spec.ID) {
			t.Errorf("%v: no summary after the index parsed the appends", comp)
		}
	}
	roots, _ := filepath.Glob(filepath.Join("..", "testdata", "fixtures", "store-*"))
	roots = append(roots, filepath.Join("..", "testdata", "golden", "jsonl-root"))
	n := 0
	for _, src := range roots {
		root := t.TempDir()
		copyTree(t, src, root)
		x := openIndexed(t, root, t.TempDir())
		dirs, _ := filepath.Glob(filepath.Join(root, "*", "*"))
		for _, dir := range dirs {
			if id, ok := DecodeSegment(filepath.Base(dir)); ok && summaryAgrees(t, x, id) {
				n++
			}
		}
	}
	if n < 5 {
		t.Errorf("the summary answered for only %d fixture sessions", n)
	}
	t.Logf("fixture sessions summarised: %d", n)
}

// TestSurfaceItemsReadTheRecordsTape: the index sizes a surface event
// from its record's tape (no walk of its data) and gets what a walk of
// its bytes gets, for every surface event of the fixture logs.
func TestSurfaceItemsReadTheRecordsTape(t *testing.T) {
	logs, _ := filepath.Glob(filepath.Join("..", "testdata", "fixtures", "store-raw", "*", "*", "session.jsonl"))
	if len(logs) < 3 {
		t.Fatalf("found %d fixture logs", len(logs))
	}
	fromTape := 0
	for _, p := range logs {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		cur := transcript.NewCursor(bytes.NewReader(data), int64(len(data)), transcript.Lines, transcript.Options{})
		var fold *transcript.Fold
		for {
			rec, err := cur.Next()
			if err != nil {
				break
			}
			if rec.Header != nil {
				fold = transcript.ResumeFold(rec.Header.ID, transcript.FoldState{})
				fold.OnNode = func(e *transcript.Event, _ int, _ []int64) {
					tape := e.Tape()
					if tape != nil {
						fromTape++
					}
					if got, want := reference.SurfaceItemOf(e.Type, e.Data, tape), reference.SurfaceItemOf(e.Type, e.Data, nil); got != want {
						t.Errorf("%s: seq %d %s: %+v through the tape, %+v from the bytes", p, e.Seq, e.Type, got, want)
					}
				}
				continue
			}
			for i := range rec.Events {
				fold.Stored(&rec.Events[i])
			}
		}
		cur.Close()
	}
	if fromTape == 0 {
		t.Error("no surface event was sized through its record's tape")
	}
}
