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

// TestEnvelopeKeysAreReadAsJSONParseReadsThem: a key is its decoded name,
// so an escape may spell an envelope name, and an unknown key is reported
// by its decoded name; the literal fast path changes neither.
func TestEnvelopeKeysAreReadAsJSONParseReadsThem(t *testing.T) {
	cases := []struct{ line, extra, typ string }{
		{`{"type":"turn/start","seq":1,"time":2,"data":{}}`, "", "turn/start"},
		{`{"ty\u0070e":"turn/start","s\u0065q":1,"time":2,"data":{}}`, "", "turn/start"},
		{`{"type":"turn/start","seq":1,"time":2,"data":{},"\u0078tra":1}`, "xtra", "turn/start"},
		{`{"type":"turn/start","seq":1,"time":2,"data":{},"typ":1,"other":2}`, "typ", "turn/start"},
	}
	for _, c := range cases {
		env := &envelope{}
		if !env.scan([]byte(c.line)) {
			t.Fatalf("%s: not an object", c.line)
		}
		if env.extra != c.extra || env.hasExtra != (c.extra != "") {
			t.Errorf("%s: extra key %q (%v), want %q", c.line, env.extra, env.hasExtra, c.extra)
		}
		if typ, _ := eventType(env.typ); typ != c.typ || env.keys&(keyType|keySeq|keyTime|keyData) != keyType|keySeq|keyTime|keyData {
			t.Errorf("%s: type %q, keys %b; want %q and the four envelope keys", c.line, typ, env.keys, c.typ)
		}
	}
}

// BenchmarkDecodeRecord decodes records of the most common shapes (an
// assistant message, a stream chunk, a step event) as the index's scanner
// does, without expanding packed rows.
func BenchmarkDecodeRecord(b *testing.B) {
	lines := [][]byte{
		[]byte(`{"type":"assistant/message","seq":20,"time":1786195324914,"data":{"turn":1,"step":1,"message":{"role":"assistant","content":[{"type":"text","text":"reader /home/alice/proj buffer value <tag> é build parse client\nrefactor"}],"source":{"kind":"model","provider":"deepseek-official","model":"deepseek-v4-flash"},"id":"c1d77f2f-4b5c-4444-a0a1-e8d7db386b9c"},"usage":{"inputTokens":1200,"outputTokens":60}},"sourceEventSeqs":[9,10,11,12,13,14,15,16,17,18,19],"surfaceOp":"append"}`),
		[]byte(`{"type":"assistant/chunk","seq":9,"time":1786195324857,"data":{"turn":1,"step":1,"chunk":{"type":"block-start","index":0,"blockType":"text"}}}`),
		[]byte(`{"type":"step/start","seq":8,"time":1786195324850,"data":{"turn":1,"step":1}}`),
	}
	var n int64
	for _, l := range lines {
		n += int64(len(l))
	}
	b.SetBytes(n)
	env := &envelope{}
	var evs []Event
	for b.Loop() {
		for _, l := range lines {
			var err error
			if evs, _, err = decodeRecord(evs[:0], l, false, env); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// TestTypeNamesInternEveryType: every known type and packed row type is
// found and interned, known exactly when it is in knownEventTypes, and
// no slot holds more than three names (the lookup stays a compare or two).
func TestTypeNamesInternEveryType(t *testing.T) {
	names := []string{rowText, rowReasoning, rowToolCall}
	for name := range knownEventTypes {
		names = append(names, name)
	}
	for _, name := range names {
		got, ok := eventType([]byte(`"` + name + `"`))
		if !ok || got != name || knownType(name) != knownEventTypes[name] {
			t.Errorf("%s: eventType %q %v, known %v", name, got, ok, knownType(name))
		}
	}
	for _, name := range []string{"", "x", "user/messag", "user/messages", "turn/star"} {
		if knownType(name) {
			t.Errorf("knownType(%q) = true", name)
		}
	}
	if got, ok := eventType([]byte(`"an/unknown-type"`)); !ok || got != "an/unknown-type" {
		t.Errorf("unknown type read as %q %v", got, ok)
	}
	for i, slot := range typeNames {
		if len(slot) > 3 {
			t.Errorf("slot %d holds %d names", i, len(slot))
		}
	}
}
