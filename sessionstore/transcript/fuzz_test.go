package transcript

import (
	"encoding/json"
	"testing"
)

// FuzzDecodeRecord: one storage record (event or packed row).
func FuzzDecodeRecord(f *testing.F) {
	f.Add([]byte(`{"type":"tool-call-chunks","seq0":3,"time0":-5,"data":{"turn":1,"step":2,"index":0,"id":"c","name":"n","dt":[9007199254740991],"args":["{","}"]}}`))
	f.Add([]byte(`{"type":"user/message","seq":0,"time":1,"data":{},"surfaceOp":"append"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		evs, err := decodeEvents(line)
		if err != nil {
			return
		}
		for _, e := range evs {
			if e.Data == nil {
				continue // missing data is rejected by validation later
			}
			if b := e.AppendJSON(nil); !json.Valid(b) {
				t.Fatalf("event does not re-marshal: %s", b)
			}
		}
	})
}
