package transcript

import (
	"bytes"
	"io"
	"slices"
	"testing"
)

// raceEnabled is set under the race detector (race_test.go).
var raceEnabled bool

// TestSurfaceStepsReuseTheirBuffers: folding surface events allocates
// nothing once warm, also when an event citing no seqs comes between two
// that do (a first pass folds millions; regrowing the cited-seqs buffer
// for each was an eighth of what it allocated).
func TestSurfaceStepsReuseTheirBuffers(t *testing.T) {
	log := cursorHeader + "\n" + joinLines([]string{
		`{"type":"user/message","seq":0,"time":1,"data":{"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"},"id":"u0","role":"user"},"surfaceOp":"append"}`,
		`{"type":"todo/write","seq":1,"time":2,"data":{}}`,
		`{"type":"todo/write","seq":2,"time":3,"data":{}}`,
		`{"type":"assistant/message","seq":3,"time":4,"data":{"turn":1,"step":1,"message":{"id":"a3","role":"assistant","content":[{"type":"text","text":"ok"}],"source":{"provider":"p","model":"m","kind":"model"}}},"sourceEventSeqs":[1,2],"surfaceOp":"append"}`,
	})
	cur := NewCursorBytes([]byte(log), Lines, Options{})
	defer cur.Close()
	var evs []Event
	for {
		rec, err := cur.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range rec.Events {
			if IsSurfaceType(e.Type) {
				e.env = nil // read from the bytes: the cursor reuses its tape
				e.Data = bytes.Clone(e.Data)
				evs = append(evs, e)
			}
		}
	}
	if len(evs) != 2 {
		t.Fatalf("%d surface events, want 2", len(evs))
	}
	f := ResumeFold("s", FoldState{})
	step := func() {
		f.Nodes = f.Nodes[:0]
		for i := range evs {
			if err := f.surface(&evs[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	step()
	if got := slices.Clone(f.Nodes); !slices.Equal(got, []int64{0, 3}) {
		t.Fatalf("surface %v, want [0 3]", got)
	}
	if raceEnabled {
		t.Skip("sync.Pool drops objects at random under the race detector")
	}
	if allocs := testing.AllocsPerRun(200, step); allocs >= 0.5 {
		t.Errorf("a warm user + assistant surface step allocates %.2f times, want 0", allocs)
	}
}
