package sessionstore

import "testing"

func TestRowMembersAgreesWithExpandRow(t *testing.T) {
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
		evs, err := DecodeRecord([]byte(line))
		o, okObj := parseObject(validUTF8([]byte(line)))
		var n int
		var seq0, last int64
		ok := false
		if okObj {
			typ, _ := str(o["type"])
			n, seq0, last, ok = rowMembers(typ, o)
		}
		if (err == nil) != ok {
			t.Errorf("%s: expandRow err %v, rowMembers ok %v", line, err, ok)
			continue
		}
		if ok && (n != len(evs) || seq0 != evs[0].Seq || last != evs[len(evs)-1].Time) {
			t.Errorf("%s: rowMembers %d members from %d, expandRow %d from %d", line, n, seq0, len(evs), evs[0].Seq)
		}
		// feedRow continues the sequence exactly like Feed.
		a, b := &LineScanner{NextSeq: seq0}, &LineScanner{NextSeq: seq0}
		_, _, _, took := feedRow(a, []byte(line))
		ferr := b.Feed([]byte(line), 0)
		if took && (ferr != nil || b.Bad() || a.NextSeq != b.NextSeq) {
			t.Errorf("%s: feedRow took a line Feed rejects", line)
		}
		if !took && ok {
			t.Errorf("%s: feedRow declined a valid row", line)
		}
	}
}
