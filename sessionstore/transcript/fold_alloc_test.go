package transcript

import (
	"fmt"
	"reflect"
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
	var evs []Event
	for _, e := range eventsOf(t, log) {
		if IsSurfaceType(e.Type) {
			evs = append(evs, e)
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

// TestFinishErrIsFinishsWithoutChangingTheState: FinishErr gives the
// error of Finish on a copy after every prefix of a turn (an open one
// folds crash closers: a tool result for the pending call, step/end and
// turn/end), and leaves the state as it was.
func TestFinishErrIsFinishsWithoutChangingTheState(t *testing.T) {
	lines := []string{
		`{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}`,
		`{"type":"user/message","seq":1,"time":2,"data":{"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"},"id":"u1","role":"user"},"surfaceOp":"append"}`,
		`{"type":"step/start","seq":2,"time":3,"data":{"turn":1,"step":1}}`,
		`{"type":"assistant/message","seq":3,"time":4,"data":{"turn":1,"step":1,"message":{"id":"a3","role":"assistant","content":[{"type":"tool-call","id":"c0","name":"read","arguments":"{}"},{"type":"tool-call","id":"c1","name":"read","arguments":"{}"}],"source":{"provider":"p","model":"m","kind":"model"}}},"sourceEventSeqs":[],"surfaceOp":"append"}`,
		`{"type":"tool/call","seq":4,"time":5,"data":{"turn":1,"step":1,"callId":"c0"}}`,
		`{"type":"tool/result","seq":5,"time":6,"data":{"turn":1,"step":1,"message":{"id":"r5","role":"user","content":[{"type":"tool-result","toolCallId":"c0","content":[{"type":"text","text":"done"}],"isError":false}],"source":{"kind":"tool","callId":"c0"}}},"sourceEventSeqs":[4],"surfaceOp":"append"}`,
		`{"type":"tool/call","seq":6,"time":7,"data":{"turn":1,"step":1,"callId":"c1"}}`,
		`{"type":"step/end","seq":7,"time":8,"data":{"turn":1,"step":1}}`,
		`{"type":"turn/end","seq":8,"time":9,"data":{"turn":1,"reason":{"kind":"completed"}}}`,
	}
	opened, withResults := 0, 0
	evs := eventsOf(t, cursorHeader+"\n"+joinLines(lines)) // one event a line
	for n := 0; n <= len(lines); n++ {
		f := ResumeFold("s", FoldState{})
		for _, e := range evs[:n] {
			f.Stored(&e)
		}
		if f.Closer.OpenTurn != nil {
			opened++
			if len(f.Results) > 0 {
				withResults++
			}
		}
		before := f.FoldState.Clone()
		got := f.FoldState.FinishErr("s")
		if !reflect.DeepEqual(f.FoldState, before) {
			t.Errorf("%d lines: FinishErr changed the state", n)
		}
		closers, want := ResumeFold("s", before.Clone()).Finish()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%d lines: FinishErr %v, Finish %v (%d closers)", n, got, want, len(closers))
		}
	}
	if opened != len(lines)-1 || withResults != 3 {
		t.Errorf("%d prefixes left a turn open (%d with a tool result folded), want %d (3)", opened, withResults, len(lines)-1)
	}
}
