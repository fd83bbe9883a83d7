package transcript

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/klauspost/compress/zstd"
)

const cursorHeader = `{"type":"session","version":0,"id":"s","createdAt":1,"delegationDepth":0}`

// cursorLines are the event lines of the cursor tests: single events and
// a packed row (seqs 0–6).
var cursorLines = []string{
	`{"type":"todo/write","seq":0,"time":1,"data":{"a":1}}`,
	`{"type":"todo/write","seq":1,"time":2,"data":{"b":"x"}}`,
	`{"type":"text-chunks","seq0":2,"time0":3,"data":{"turn":1,"step":1,"index":0,"dt":[1,1],"texts":["a","b","c"]}}`,
	`{"type":"todo/write","seq":5,"time":6,"data":{}}`,
	`{"type":"todo/write","seq":6,"time":7,"data":{"c":[1,2]}}`,
}

// rawLog is the raw transcript of cursorLines.
func rawLog() []byte {
	return []byte(cursorHeader + "\n" + joinLines(cursorLines))
}

func joinLines(lines []string) string {
	var b bytes.Buffer
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	return b.String()
}

// zstdLog is the zstd transcript of cursorLines: the header frame, then
// frames of one and two lines.
func zstdLog(t *testing.T) []byte {
	t.Helper()
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	out := enc.EncodeAll([]byte(cursorHeader+"\n"), nil)
	out = enc.EncodeAll([]byte(joinLines(cursorLines[:1])), out)
	out = enc.EncodeAll([]byte(joinLines(cursorLines[1:3])), out)
	return enc.EncodeAll([]byte(joinLines(cursorLines[3:])), out)
}

// eventsOf reads every event of log, a raw transcript held in memory,
// through a cursor over its bytes (whose events outlive the next record).
func eventsOf(t *testing.T, log string) []Event {
	t.Helper()
	c := NewCursorBytes([]byte(log), Lines, Options{})
	defer c.Close()
	var evs []Event
	for {
		rec, err := c.Next()
		if err == io.EOF {
			return evs
		}
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, rec.Events...)
	}
}

// seqsOf reads every record of c: the seqs of its events (a packed row's
// members counted as their seqs), and the records, with torn ones marked.
func seqsOf(t *testing.T, c *Cursor) (seqs []int64, recs []Record) {
	t.Helper()
	for {
		rec, err := c.Next()
		if err == io.EOF {
			return seqs, recs
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		if rec.Header != nil {
			continue
		}
		for i := range rec.Skipped.N {
			seqs = append(seqs, rec.Skipped.Seq0+i)
		}
		for _, e := range rec.Events {
			seqs = append(seqs, e.Seq)
		}
		rec.Loc = rec.Located()
		rec.Events = slices.Clone(rec.Events) // valid until the next call
		for i := range rec.Events {
			rec.Events[i].Data = bytes.Clone(rec.Events[i].Data)
		}
		recs = append(recs, rec)
	}
}

// TestCursorResumesWhereAPrefixStopped: reading any prefix of a log (a
// torn line or frame at its end) and then resuming the whole log at the
// prefix's position hands out exactly the records of one read, and a
// torn final frame's lines are never committed. Each position's Sum is the
// CRC-32C of the bytes before its offset, as SumOf reads it.
func TestCursorResumesWhereAPrefixStopped(t *testing.T) {
	for _, c := range []struct {
		name    string
		framing Framing
		data    []byte
	}{{"raw", Lines, rawLog()}, {"zstd", Frames, zstdLog(t)}} {
		t.Run(c.name, func(t *testing.T) {
			full := NewCursor(bytes.NewReader(c.data), int64(len(c.data)), c.framing, Options{})
			want, _ := seqsOf(t, full)
			full.Close()
			if len(want) != 7 {
				t.Fatalf("one read gave seqs %v, want 0–6", want)
			}
			// Every cut after the header (a log without a whole header is
			// refused, not resumed).
			start := len(cursorHeader) + 1
			if c.framing == Frames {
				start, _, _ = frameEnd(c.data, 0, 0)
			}
			for cut := start; cut <= len(c.data); cut++ {
				first := NewCursor(bytes.NewReader(c.data[:cut]), int64(cut), c.framing, Options{})
				var got []int64
				for {
					rec, err := first.Next()
					if err == io.EOF {
						break
					}
					if err != nil {
						t.Fatalf("cut %d: %v", cut, err)
					}
					if rec.Loc.Torn || rec.Header != nil {
						continue
					}
					for i := range rec.Skipped.N {
						got = append(got, rec.Skipped.Seq0+i)
					}
					for _, e := range rec.Events {
						got = append(got, e.Seq)
					}
				}
				pos := first.Position()
				first.Close()
				checkSum(t, c.data, pos)
				rest := NewCursor(bytes.NewReader(c.data), int64(len(c.data)), c.framing, Options{})
				rest.Resume(pos)
				more, _ := seqsOf(t, rest)
				checkSum(t, c.data, rest.Position())
				if end := rest.Position().Offset; end != int64(len(c.data)) {
					t.Fatalf("cut %d: resumed read ended at %d of %d", cut, end, len(c.data))
				}
				rest.Close()
				if got = append(got, more...); !slices.Equal(got, want) {
					t.Fatalf("cut %d (resumed at %+v): seqs %v, want %v", cut, pos, got, want)
				}
			}
		})
	}
}

// checkSum fails unless pos.Sum is the CRC-32C of data before pos.Offset,
// and SumOf reads the same.
func checkSum(t *testing.T, data []byte, pos Position) {
	t.Helper()
	want := crc32.Checksum(data[:pos.Offset], crc32.MakeTable(crc32.Castagnoli))
	if pos.Sum != want {
		t.Fatalf("position %+v: Sum %#x, want the CRC-32C of the bytes before it, %#x", pos, pos.Sum, want)
	}
	if got, err := SumOf(bytes.NewReader(data), pos.Offset); err != nil || got != want {
		t.Fatalf("SumOf(%d) = %#x (%v), want %#x", pos.Offset, got, err, want)
	}
}

// TestSumCoversOnlyCommittedBytes: a bad line, and lines after it, are
// not committed, and the position's Sum stops where its offset does; SumOf
// fails on a reader shorter than asked.
func TestSumCoversOnlyCommittedBytes(t *testing.T) {
	data := []byte(cursorHeader + "\n" + joinLines(cursorLines[:2]) + "{not json}\n" + joinLines(cursorLines[3:]))
	c := NewCursor(bytes.NewReader(data), int64(len(data)), Lines, Options{})
	seqsOf(t, c)
	pos := c.Position()
	c.Close()
	if want := len(cursorHeader) + 1 + len(joinLines(cursorLines[:2])); pos.Offset != int64(want) {
		t.Fatalf("committed %d bytes, want %d (up to the bad line)", pos.Offset, want)
	}
	checkSum(t, data, pos)
	if _, err := SumOf(bytes.NewReader(data), int64(len(data))+1); err == nil {
		t.Fatal("SumOf past the end succeeded")
	}
}

// TestCursorReadAtRereadsEachRecord: every single-event record re-reads
// by its location, and a record whose bytes changed fails with
// ErrRecordChanged.
func TestCursorReadAtRereadsEachRecord(t *testing.T) {
	for _, c := range []struct {
		name    string
		framing Framing
		data    []byte
	}{{"raw", Lines, rawLog()}, {"zstd", Frames, zstdLog(t)}} {
		t.Run(c.name, func(t *testing.T) {
			r := bytes.NewReader(c.data)
			cur := NewCursor(r, int64(len(c.data)), c.framing, Options{})
			defer cur.Close()
			_, recs := seqsOf(t, cur)
			for _, rec := range recs {
				if len(rec.Events) != 1 {
					continue
				}
				ev, err := cur.ReadAt(rec.Loc)
				if err != nil || ev.Seq != rec.Events[0].Seq || !bytes.Equal(ev.Data, rec.Events[0].Data) {
					t.Errorf("ReadAt(%+v) = %v, %v, want seq %d", rec.Loc, ev, err, rec.Events[0].Seq)
				}
				changed := rec.Loc
				changed.CRC++
				if _, err := cur.ReadAt(changed); !errors.Is(err, ErrRecordChanged) {
					t.Errorf("ReadAt of a changed record: %v, want ErrRecordChanged", err)
				}
			}
		})
	}
}

// TestCursorErrors: the log errors a read gives, in dsh's order.
func TestCursorErrors(t *testing.T) {
	for _, c := range []struct {
		name, log, want string
	}{
		{"no header line", `{"type":"session"`, "empty or header-less session log"},
		{"foreign version", `{"type":"session","version":1,"id":"s","createdAt":1,"delegationDepth":0}` + "\n", "session format version 1 is not supported"},
		{"seq gap before a turn/end", cursorHeader + "\n" + cursorLines[1] + "\n" + `{"type":"turn/end","seq":2,"time":1,"data":{}}` + "\n",
			"event seq 1 where 0 was expected"},
		{"bad line before a later turn/end", cursorHeader + "\n" + "{bad\n" + `{"type":"turn/end","seq":0,"time":1,"data":{}}` + "\n",
			"bad record at event line 1 before a later turn/end"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cur := NewCursorBytes([]byte(c.log), Lines, Options{})
			defer cur.Close()
			var err error
			for err == nil {
				_, err = cur.Next()
			}
			if err == io.EOF || !bytes.Contains([]byte(fmt.Sprint(err)), []byte(c.want)) {
				t.Errorf("error %v, want %q", err, c.want)
			}
		})
	}
}

// TestBytesCursorEventsOutliveTheNextRecord: the events of a cursor over
// bytes in memory stay valid, each checked and read with its own record,
// after later records are read (a caller folds them all at the end).
func TestBytesCursorEventsOutliveTheNextRecord(t *testing.T) {
	log := cursorHeader + "\n" + joinLines([]string{
		`{"type":"turn/start","seq":0,"time":1,"data":{"turn":1},"extra":1}`,
		`{"type":"step/start","seq":1,"time":2,"data":{"turn":1,"step":2}}`,
	})
	evs := eventsOf(t, log)
	if len(evs) != 2 {
		t.Fatalf("read %d events, want 2", len(evs))
	}
	if err := checkEnvelope(&evs[0]); err == nil || !bytes.Contains([]byte(err.Error()), []byte(`"extra"`)) {
		t.Errorf("first event's envelope check = %v, want its unexpected key \"extra\"", err)
	}
	if got := string(evs[0].data().get("turn")); got != "1" {
		t.Errorf("first event's data.turn = %q, want 1", got)
	}
	if err := checkEnvelope(&evs[1]); err != nil {
		t.Errorf("second event's envelope check = %v", err)
	}
}

// countingReader counts the ReadAt calls made on it.
type countingReader struct {
	r     *bytes.Reader
	reads int
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	c.reads++
	return c.r.ReadAt(p, off)
}

// TestCursorTailCRCIsTheReaderTail: the cursor's TailCRC equals TailCRC of
// the bytes before its position, for whole, torn and cut raw and zstd
// logs, and is taken from the bytes read (no read of its own) once the
// cursor has read to its position.
func TestCursorTailCRCIsTheReaderTail(t *testing.T) {
	for _, tc := range []struct {
		glob    string
		framing Framing
	}{
		{"store-raw/*/*/session.jsonl", Lines},
		{"store-zstd/*/*/session.jsonl.zstd", Frames},
	} {
		logs, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "fixtures", tc.glob))
		if len(logs) == 0 {
			t.Fatalf("no fixture logs %s", tc.glob)
		}
		for _, p := range logs {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			for _, cut := range []int{len(data), len(data) - 1, len(data) - 7, len(data) * 2 / 3, 70, 40} {
				if cut < 0 || cut > len(data) {
					continue
				}
				r := &countingReader{r: bytes.NewReader(data[:cut])}
				cur := NewCursor(r, int64(cut), tc.framing, Options{})
				for {
					if _, err := cur.Next(); err != nil {
						break
					}
				}
				off := cur.Position().Offset
				want, _ := TailCRC(bytes.NewReader(data), off)
				reads := r.reads
				got, err := cur.TailCRC()
				if err != nil || got != want {
					t.Errorf("%s cut at %d (position %d): TailCRC %08x, %v; want %08x", p, cut, off, got, err, want)
				}
				if off > 0 && r.reads != reads {
					t.Errorf("%s cut at %d: TailCRC read the file again", p, cut)
				}
				cur.Close()
			}
		}
	}
}
