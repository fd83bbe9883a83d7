package transcript

import (
	"strings"
	"testing"
)

// TestFoldChecksTheEnvelope: a stored event whose envelope breaks
// assertSessionEventEnvelope (spec §2.3) fails the fold with the rule it
// broke.
func TestFoldChecksTheEnvelope(t *testing.T) {
	for _, c := range []struct{ name, line, want string }{
		// A type that is not a string is an unknown type, refused first.
		{"type not a string", `{"type":5,"seq":0,"time":1,"data":{}}`, `event 0 has unknown type ""`},
		{"fractional time", `{"type":"todo/write","seq":0,"time":1.5,"data":{}}`, "event 0: time is not a safe integer"},
		{"string time", `{"type":"todo/write","seq":0,"time":"1","data":{}}`, "event 0: time is not a safe integer"},
		{"time past 2^53", `{"type":"todo/write","seq":0,"time":9007199254740993,"data":{}}`, "event 0: time is not a safe integer"},
		{"no data", `{"type":"todo/write","seq":0,"time":1}`, "event 0: data is missing"},
		{"ignorable false", `{"type":"todo/write","seq":0,"time":1,"data":{},"ignorable":false}`, "event 0: ignorable must be true"},
		{"extra key", `{"type":"todo/write","seq":0,"time":1,"data":{},"x":1}`, `event 0: unexpected envelope key "x"`},
		{"valid", `{"type":"todo/write","seq":0,"time":-3,"data":{},"ignorable":true}`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			cur := NewCursorBytes([]byte(cursorHeader+"\n"+c.line+"\n"), Lines, Options{})
			defer cur.Close()
			fd := ResumeFold("s", FoldState{})
			_, recs := seqsOf(t, cur)
			for _, rec := range recs {
				for i := range rec.Events {
					fd.Stored(&rec.Events[i])
				}
			}
			_, err := fd.Finish()
			if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Errorf("fold error %v, want %q", err, c.want)
			}
		})
	}
}
