package transcript

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
)

// TestCountedRowsAgreeWithExpansion: a packed row counted by a scanner
// with skipRows (the index) is accepted or refused
// exactly as its expansion (the full load), with the same seqs and times.
func TestCountedRowsAgreeWithExpansion(t *testing.T) {
	rows := []string{
		`{"type":"text-chunks","seq0":5,"time0":1786000000101,"data":{"turn":1,"step":1,"index":0,"dt":[1,1],"texts":["It"," is"," 4."]}}`,
		`{"type":"reasoning-chunks","seq0":9,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[1,-1],"texts":["Let"," me"," think"]}}`,
		`{"type":"tool-call-chunks","seq0":30,"time0":2,"data":{"turn":1,"step":1,"index":2,"id":"call_1","name":"read","dt":[0,2],"args":["{\"pa","th\":\"a","\"}"]}}`,
		`{"type":"tool-call-chunks","seq0":30,"time0":2,"data":{"turn":1,"step":1,"index":2,"id":"call_1","dt":[0,2],"args":["a","b","c"]}}`,
		`{"type":"text-chunks","seq0":0,"time0":0,"data":{"turn":1,"step":1,"index":0,"dt":[],"texts":["only"]}}`,
		// Rejected by expandRow:
		`{"type":"text-chunks","seq0":5,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[1,1],"texts":["a","b","c"]},"x":1}`,
		`{"type":"text-chunks","seq0":-1,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[1,1],"texts":["a","b","c"]}}`,
		`{"type":"text-chunks","seq0":1.5,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[1,1],"texts":["a","b","c"]}}`,
		`{"type":"text-chunks","seq0":1,"time0":"1","data":{"turn":1,"step":1,"index":0,"dt":[1,1],"texts":["a","b","c"]}}`,
		`{"type":"text-chunks","seq0":1,"time0":1,"data":[]}`,
		`{"type":"text-chunks","seq0":1,"time0":1,"data":{"turn":1,"step":1,"index":0,"texts":["a","b","c"]}}`,
		`{"type":"text-chunks","seq0":1,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[1],"texts":["a","b","c"]}}`,
		`{"type":"text-chunks","seq0":1,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[1,0.5],"texts":["a","b","c"]}}`,
		`{"type":"text-chunks","seq0":1,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[],"texts":[]}}`,
		`{"type":"text-chunks","seq0":1,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[1,1],"texts":["a",2,"c"]}}`,
		`{"type":"text-chunks","seq0":1,"time0":1,"data":{"turn":"1","step":1,"index":0,"dt":[1,1],"texts":["a","b","c"]}}`,
		`{"type":"text-chunks","seq0":1,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[1,1],"texts":["a","b","c"],"id":"x"}}`,
		`{"type":"tool-call-chunks","seq0":1,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[1,1],"args":["a","b","c"]}}`,
		`{"type":"tool-call-chunks","seq0":1,"time0":1,"data":{"turn":1,"step":1,"index":0,"id":3,"dt":[1,1],"args":["a","b","c"]}}`,
		`{"type":"tool-call-chunks","seq0":1,"time0":1,"data":{"turn":1,"step":1,"index":0,"id":"c","name":null,"dt":[1,1],"args":["a","b","c"]}}`,
		`{"type":"text-chunks","seq0":9007199254740991,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[1,1],"texts":["a","b","c"]}}`,
		`{"type":"text-chunks","seq0":1,"time0":9007199254740990,"data":{"turn":1,"step":1,"index":0,"dt":[1,1],"texts":["a","b","c"]}}`,
		`{"type":"text-chunks","seq0":1,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[1,1],"texts":["a","b","c"]}`,
	}
	for _, line := range rows {
		evs, err := decodeEvents([]byte(line))
		_, sum, err2 := decodeRecord(nil, []byte(line), false, &envelope{})
		if (err == nil) != (err2 == nil) || err != nil && err.Error() != err2.Error() {
			t.Errorf("%s: expanded error %v, counted error %v", line, err, err2)
			continue
		}
		if err == nil && (sum.N != int64(len(evs)) || sum.Seq0 != evs[0].Seq || sum.Last != evs[len(evs)-1].Time) {
			t.Errorf("%s: counted %+v, expanded %d members from %d", line, sum, len(evs), evs[0].Seq)
		}
		// A counting scanner continues the sequence exactly like an
		// expanding one.
		for _, next := range []int64{sum.Seq0, sum.Seq0 + 1} {
			a, b := &lineScanner{nextSeq: next, skipRows: true}, &lineScanner{nextSeq: next}
			aerr, berr := a.feed([]byte(line)), b.feed([]byte(line))
			if (aerr == nil) != (berr == nil) || a.bad != b.bad || a.nextSeq != b.nextSeq {
				t.Errorf("%s from %d: counting scanner %v/%v/%d, expanding %v/%v/%d", line, next, aerr, a.bad, a.nextSeq, berr, b.bad, b.nextSeq)
			}
		}
	}
}

// TestRecordsPastTheTapeBoundReadAlike: a record with more entries than
// a tape holds is read from its bytes, as a small one is from its tape.
func TestRecordsPastTheTapeBoundReadAlike(t *testing.T) {
	n := jsjson.MaxTape
	row := `{"type":"text-chunks","seq0":3,"time0":10,"data":{"turn":1,"step":1,"index":0,"dt":[` +
		strings.Repeat("2,", n-1) + `2],"texts":[` + strings.Repeat(`"a",`, n) + `"b"]}}`
	_, sum, err := decodeRecord(nil, []byte(row), false, &envelope{})
	if err != nil || sum.N != int64(n+1) || sum.Seq0 != 3 || sum.Last != 10+2*int64(n) {
		t.Errorf("row of %d texts past the tape bound: %+v, %v", n+1, sum, err)
	}
	if evs, err := decodeEvents([]byte(row)); err != nil || len(evs) != n+1 {
		t.Errorf("row of %d texts expands to %d events, %v", n+1, len(evs), err)
	}
	const result = `{"type":"tool/result","seq":4,"time":1,"data":{"turn":1,"step":1,%s"message":{"id":"m","role":"user",` +
		`"source":{"kind":"tool","callId":"c"},"content":[{"type":"tool-result","toolCallId":"%s","content":[]}]}},"surfaceOp":"append"}`
	pad := `"pad":[` + strings.Repeat("0,", n) + `0],`
	for _, callID := range []string{"c", "other"} {
		var errs [2]string
		for i, p := range []string{"", pad} {
			evs, err := decodeEvents(fmt.Appendf(nil, result, p, callID))
			if err != nil || len(evs) != 1 {
				t.Fatalf("tool/result: %v", err)
			}
			errs[i] = fmt.Sprint(checkMessage(&evs[0]))
		}
		if errs[0] != errs[1] {
			t.Errorf("tool/result for call %s: checked %s from its tape, %s from its bytes", callID, errs[0], errs[1])
		}
	}
}
