package sessionstore

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
)

type fixtureExpected struct {
	Root     string           `json:"root"`
	Mode     string           `json:"mode"`
	Sessions []fixtureSession `json:"sessions"`
}

type fixtureSession struct {
	ListIndex          int               `json:"listIndex"`
	Path               string            `json:"path"`
	Header             json.RawMessage   `json:"header"`
	StoredEvents       int               `json:"storedEvents"`
	TornTailBytes      int64             `json:"tornTailBytes"`
	ZstdFrames         int               `json:"zstdFrames"`
	Closers            []json.RawMessage `json:"closers"`
	CapturedThroughSeq *int64            `json:"capturedThroughSeq"`
	SurfaceSeqs        []int64           `json:"surfaceSeqs"`
	Replacements       []struct {
		Seq          int64   `json:"seq"`
		Start        int64   `json:"start"`
		End          int64   `json:"end"`
		ShadowedSeqs []int64 `json:"shadowedSeqs"`
	} `json:"replacements"`
	ReadSurface json.RawMessage `json:"readSurface"`
	Title       json.RawMessage `json:"title"`
	Label       string          `json:"label"`
}

// TestFixtureStores reproduces every store-level expected output of
// testdata/fixtures/expected/store-{raw,zstd}.expected.json, computed by
// HEAD dsh's own TypeScript code.
func TestFixtureStores(t *testing.T) {
	for _, name := range []string{"store-raw", "store-zstd"} {
		t.Run(name, func(t *testing.T) {
			var exp fixtureExpected
			readJSON(t, filepath.Join(testdata(t), "fixtures", "expected", name+".expected.json"), &exp)
			root := filepath.Join(testdata(t), "fixtures", exp.Root)
			guardTree(t, root)
			st, err := Open(root)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			listing, err := st.Discover(ctx)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]Encoding{"raw": Raw, "zstd": Zstd}[exp.Mode]
			for id, path := range listing.Paths {
				if filepath.Base(path) != want.FileName() {
					t.Errorf("session %q read from %s, want its %s", id, path, want.FileName())
				}
			}
			if len(listing.Problems) != 0 {
				t.Errorf("unexpected listing problems: %v", listing.Problems)
			}
			if len(listing.Headers) != len(exp.Sessions) {
				t.Fatalf("listed %d sessions, want %d", len(listing.Headers), len(exp.Sessions))
			}
			var ids []string
			for _, s := range exp.Sessions {
				h := listing.Headers[s.ListIndex]
				if !jsonEqual(t, h.Raw, s.Header) {
					t.Errorf("listIndex %d: header %s, want %s", s.ListIndex, h.Raw, s.Header)
				}
				if got := listing.Paths[h.ID]; got != filepath.Join(root, filepath.FromSlash(s.Path)) {
					t.Errorf("%s: path %s, want %s", h.ID, got, s.Path)
				}
				ids = append(ids, h.ID)
			}
			titles, err := st.ReadTitles(ctx, append(ids, ids...))
			if err != nil {
				t.Fatal(err)
			}
			if len(titles) != len(ids) {
				t.Fatalf("ReadTitles returned %d results for %d unique ids", len(titles), len(ids))
			}
			for i, s := range exp.Sessions {
				id := ids[i]
				t.Run(id, func(t *testing.T) {
					checkFixtureSession(t, st, id, s)
					r := titles[i]
					if r.SessionID != id || r.Err != nil {
						t.Fatalf("title result %+v", r)
					}
					label := id
					if r.Title != nil {
						label = *r.Title
					}
					if label != s.Label {
						t.Errorf("label %q, want %q", label, s.Label)
					}
				})
			}
		})
	}
}

func checkFixtureSession(t *testing.T, st *Store, id string, s fixtureSession) {
	ctx := context.Background()
	log, err := st.Load(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if log.Stored != s.StoredEvents {
		t.Errorf("stored events %d, want %d", log.Stored, s.StoredEvents)
	}
	if log.TornBytes != s.TornTailBytes {
		t.Errorf("torn tail bytes %d, want %d", log.TornBytes, s.TornTailBytes)
	}
	if log.Frames != s.ZstdFrames {
		t.Errorf("zstd frames %d, want %d", log.Frames, s.ZstdFrames)
	}
	closers := log.Events[log.Stored:]
	if len(closers) != len(s.Closers) {
		t.Errorf("%d closers, want %d", len(closers), len(s.Closers))
	} else {
		for i, c := range closers {
			// The expected closers list type, seq, data and the surface
			// fields; compare those keys.
			got := decode(t, mustJSON(t, c)).(map[string]any)
			want := decode(t, s.Closers[i]).(map[string]any)
			for k := range got {
				if _, ok := want[k]; !ok {
					delete(got, k)
				}
			}
			if !jsonEqual(t, mustJSON(t, got), mustJSON(t, want)) {
				t.Errorf("closer %d: %s\nwant %s", i, mustJSON(t, c), s.Closers[i])
			}
		}
	}
	if got := capturedThroughSeq(log); (got == nil) != (s.CapturedThroughSeq == nil) || got != nil && *got != *s.CapturedThroughSeq {
		t.Errorf("capturedThroughSeq %v, want %v", got, s.CapturedThroughSeq)
	}
	if !jsonEqual(t, mustJSON(t, log.Surface), mustJSON(t, s.SurfaceSeqs)) {
		t.Errorf("surface %v, want %v", log.Surface, s.SurfaceSeqs)
	}
	if len(log.Replacements) != len(s.Replacements) {
		t.Errorf("replacements %+v, want %+v", log.Replacements, s.Replacements)
	} else {
		for i, r := range log.Replacements {
			w := s.Replacements[i]
			if r.Seq != w.Seq || r.Start != w.Start || r.End != w.End || !jsonEqual(t, mustJSON(t, r.Shadowed), mustJSON(t, w.ShadowedSeqs)) {
				t.Errorf("replacement %d: %+v, want %+v", i, r, w)
			}
		}
	}
	surface, err := st.ReadSurface(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	got := MarshalSurface(surface)
	if !jsonEqual(t, got, s.ReadSurface) {
		t.Errorf("readSurface:\n got %s\nwant %s", got, s.ReadSurface)
	}
	// Beyond equal values: the bytes are what dsh's JSON.stringify writes
	// (key order and escapes), so they can be compared verbatim.
	var want bytes.Buffer
	if err := json.Compact(&want, s.ReadSurface); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("readSurface is not byte-exact:\n got %s\nwant %s", got, want.Bytes())
	}
	title, err := st.ReadTitle(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var gotTitle []byte = []byte("null")
	if title != nil {
		gotTitle = mustJSON(t, title)
	}
	if !jsonEqual(t, gotTitle, s.Title) {
		t.Errorf("title %s, want %s", gotTitle, s.Title)
	}
}
