package transcript

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// foldDump reads a raw log as the index does (packed rows counted) and as
// the full load does (rows expanded, events kept past later records), and
// writes everything the reads and folds produce.
func foldDump(data []byte) string {
	var w strings.Builder
	cur := NewCursor(bytes.NewReader(data), int64(len(data)), Lines, Options{})
	defer cur.Close()
	var f *Fold
	for {
		rec, err := cur.Next()
		if err != nil {
			fmt.Fprintf(&w, "next: %v\n", err)
			break
		}
		if rec.Header != nil {
			f = ResumeFold(rec.Header.ID, FoldState{})
			f.OnNode = func(e *Event, si int, shadowed []int64) {
				fmt.Fprintf(&w, "node %d %v %s\n", si, shadowed, e.AppendJSON(nil))
			}
			continue
		}
		fmt.Fprintf(&w, "record %+v %d %+v\n", rec.Located(), rec.Size, rec.Skipped)
		if rec.Skipped.N > 0 {
			f.Skip(rec.Skipped.N, rec.Skipped.Seq0+rec.Skipped.N-1, rec.Skipped.Last)
		}
		for i := range rec.Events {
			f.Stored(&rec.Events[i])
		}
	}
	if f != nil {
		st := f.FoldState.Clone()
		if st.Title != nil {
			fmt.Fprintf(&w, "title %s %d %d %s\n", st.Title.Type, st.Title.Seq, st.Title.Time, st.Title.Data)
			st.Title = nil
		}
		fmt.Fprintf(&w, "state %+v\n", st)
		closers, err := f.Finish()
		for _, c := range closers {
			fmt.Fprintf(&w, "closer %s\n", c.AppendJSON(nil))
		}
		fmt.Fprintf(&w, "finish %v\n", err)
	}
	all := NewCursorBytes(data, Lines, Options{ExpandRows: true})
	defer all.Close()
	var evs []Event
	id := ""
	for {
		rec, err := all.Next()
		if err != nil {
			break
		}
		if rec.Header != nil {
			id = rec.Header.ID
		}
		evs = append(evs, rec.Events...)
	}
	full := ResumeFold(id, FoldState{KeepIDs: true})
	for i := range evs {
		full.Stored(&evs[i])
		fmt.Fprintf(&w, "event %s\n", evs[i].AppendJSON(nil))
	}
	_, err := full.Finish()
	fmt.Fprintf(&w, "full %v %v %v\n", full.Nodes, full.IDs, err)
	return w.String()
}

// checkTapeReadsAsBytes fails when reading log through the validating
// walk's tape gives anything else than walking the records' bytes.
func checkTapeReadsAsBytes(t *testing.T, name string, log []byte) {
	t.Helper()
	viaTape := foldDump(log)
	readBytes = true
	defer func() { readBytes = false }()
	if viaBytes := foldDump(log); viaTape != viaBytes {
		t.Errorf("%s: read through the tape:\n%s\nread from the bytes:\n%s", name, viaTape, viaBytes)
	}
}

// tapeMutations rewrite one record the ways that tell the tape view from
// a walk: duplicate and escaped keys, whitespace, nesting, invalid UTF-8,
// number forms, a record past the tape's bound.
var tapeMutations = []func(r *rand.Rand, line string) string{
	func(r *rand.Rand, l string) string {
		k := []string{"message", "data", "content", "source", "kind", "turn", "callId", "reason", "role", "id", "surfaceOp", "sourceEventSeqs", "texts", "dt"}[r.Intn(14)]
		v := []string{`{}`, `{"x":1}`, `[]`, `"model"`, `"tool"`, `1`, `null`, `"append"`, `[1]`, `{"kind":"user"}`}[r.Intn(10)]
		return strings.Replace(l, `"`+k+`":`, `"`+k+`":`+v+`,"`+k+`":`, 1)
	},
	func(r *rand.Rand, l string) string {
		k := []string{"message", "type", "data", "content", "source", "kind", "turn", "callId", "id", "seq"}[r.Intn(10)]
		return strings.Replace(l, `"`+k+`":`, `"`+k[:1]+fmt.Sprintf(`\u%04x`, k[1])+k[2:]+`":`, 1)
	},
	func(r *rand.Rand, l string) string { return strings.Replace(l, `"data":`, " \"data\" :\n ", 1) },
	func(r *rand.Rand, l string) string { // more than one block, nested arrays
		b := []string{`{"type":"text","text":"x"}`, `[1,{"a":[2]}]`, `{"content":[3,"y"],"type":"tool-result"}`, `7`}[r.Intn(4)]
		return strings.Replace(l, `"content":[`, `"content":[`+b+`,`, 1)
	},
	func(r *rand.Rand, l string) string {
		return strings.Replace(l, `"source":{`, `"source":{"deep":{"x":{"y":[{"z":1}]}},`, 1)
	},
	func(r *rand.Rand, l string) string {
		return strings.Replace(l, `"text":"`, "\"text\":\"\xe2\x82 \xff\xed\xa0\x80", 1)
	},
	func(r *rand.Rand, l string) string {
		return strings.Replace(l, `"turn":1`, `"turn":`+[]string{`1.0`, `1e0`, `-0`, `9007199254740993`}[r.Intn(4)], 1)
	},
	func(r *rand.Rand, l string) string {
		return strings.Replace(l, `"data":{`, `"data":{"pad":[`+strings.Repeat("0,", 4200)+`0],`, 1)
	},
	func(r *rand.Rand, l string) string {
		if i := r.Intn(len(l)); l != "" {
			return l[:i] + string(`"\{}[],: 1`[r.Intn(10)]) + l[i+1:]
		}
		return l
	},
}

// TestTapeReadsAsBytes: the fixture logs, and copies of them with records
// rewritten, read and fold exactly alike through the tape and from their
// bytes.
func TestTapeReadsAsBytes(t *testing.T) {
	logs, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "*", "*", "*", "*", "session.jsonl"))
	more, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "*", "*", "*", "*", "*", "session.jsonl"))
	logs = append(logs, more...)
	if len(logs) < 10 {
		t.Fatalf("found %d fixture logs", len(logs))
	}
	r := rand.New(rand.NewSource(1))
	for _, p := range logs {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		checkTapeReadsAsBytes(t, p, data)
		lines := strings.Split(string(data), "\n")
		for range 40 {
			if len(lines) < 3 {
				break
			}
			mutated := append([]string(nil), lines...)
			for range 1 + r.Intn(3) {
				i := 1 + r.Intn(len(mutated)-2)
				mutated[i] = tapeMutations[r.Intn(len(tapeMutations))](r, mutated[i])
			}
			checkTapeReadsAsBytes(t, p+" (rewritten)", []byte(strings.Join(mutated, "\n")))
		}
	}
}

// FuzzTapeReadsAsBytes: any log reads and folds alike through the tape and
// from its bytes.
func FuzzTapeReadsAsBytes(f *testing.F) {
	logs, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "fixtures", "store-raw", "*", "*", "session.jsonl"))
	for _, p := range logs {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, log []byte) { checkTapeReadsAsBytes(t, "fuzzed log", log) })
}

// TestCursorsRecycleTheirTape: a closed cursor's tape goes to the next
// cursor (a first pass over 100,000 small sessions grew one for each),
// and the envelope that pointed to it is cleared, so an event kept past
// Close reads its data from its own bytes.
func TestCursorsRecycleTheirTape(t *testing.T) {
	logs, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "fixtures", "store-raw", "*", "*", "session.jsonl"))
	if len(logs) == 0 {
		t.Fatal("no fixture logs")
	}
	data, err := os.ReadFile(logs[0])
	if err != nil {
		t.Fatal(err)
	}
	recycled := false
	for range 20 { // the race detector's pool drops some items on purpose
		cur := NewCursor(bytes.NewReader(data), int64(len(data)), Lines, Options{})
		recycled = cap(cur.sc.env.tape.Entries) > 0
		var kept *Event
		for {
			rec, err := cur.Next()
			if err != nil {
				break
			}
			if len(rec.Events) > 0 {
				kept = &rec.Events[len(rec.Events)-1]
			}
		}
		cur.Close()
		if kept == nil || kept.env == nil {
			t.Fatal("no event points to its envelope")
		}
		if kept.env.dataAt >= 0 || kept.env.tape.Entries != nil {
			t.Fatalf("the envelope still points to the recycled tape: %+v", kept.env.tape.Entries)
		}
		if recycled {
			break
		}
	}
	if !recycled {
		t.Error("no new cursor started with a closed cursor's tape")
	}
}
