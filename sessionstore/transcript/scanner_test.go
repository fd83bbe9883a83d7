package transcript

import (
	"testing"
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
