package jsjson

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// walkDump reads every object and array of the object text the way a
// projection does, through read (the tape, or nil for the plain walks),
// and writes what each call answers. Values come from the calls
// themselves, so those the tape holds are slices of text; every third is
// also read as a copy, which the tape must not recognise.
func walkDump(read *Tape, text []byte) string {
	var w strings.Builder
	n := 0
	var visit func(v []byte, depth int)
	visit = func(v []byte, depth int) {
		if depth > 7 {
			return
		}
		n++
		if n%3 == 0 {
			v = bytes.Clone(v)
		}
		for _, name := range []string{"a", "content", "text", "x\u00e9"} {
			fmt.Fprintf(&w, "field %s %q\n", name, read.ObjectField(v, name))
		}
		err := read.Members(v, func(key, value []byte) {
			fmt.Fprintf(&w, "member %s %s\n", key, value)
			visit(value, depth+1)
		})
		fmt.Fprintf(&w, "members %v\n", err)
		ok, err := read.Elements(v, func(value []byte) {
			fmt.Fprintf(&w, "element %s\n", value)
			visit(value, depth+1)
		})
		fmt.Fprintf(&w, "elements %v %v\n", ok, err)
	}
	Members(text, func(_, value []byte) { visit(value, 0) })
	return w.String()
}

// checkTapeAnswersAsWalks fails when reading text through its tape
// answers anything else than walking its bytes.
func checkTapeAnswersAsWalks(t *testing.T, text []byte) {
	t.Helper()
	entries, held, ok, _ := CheckObjectTape(text, nil)
	if !ok {
		return
	}
	if !held {
		entries = nil
	}
	tape := &Tape{Text: text, Entries: entries}
	if viaTape, viaWalks := walkDump(tape, text), walkDump(nil, text); viaTape != viaWalks {
		t.Fatalf("%s: read through the tape:\n%s\nwalked:\n%s", text, viaTape, viaWalks)
	}
}

var tapeSeeds = []string{
	`{"data":{"message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b\"c"}]}}}`,
	`{"data":{"source":{"kind":"user"},"content":[],"envelope":{"displayContent":[{"type":"text","text":"x"}]}}}`,
	` { "a" : { "a" : [ 1 , { "a" : [ [ { "content" : { } } ] ] } ] } , "a" : [ ] } `,
	`{"content":{"content":{"content":{"content":{"content":{"content":[1]}}}}}}`,
	`{"x\u00e9":1,"x\u00e9":{"text":"t"},"\u0061":[{}]}`,
	`{"a":[` + strings.Repeat(`{"a":1},`, 700) + `2]}`,
	`{"a":"{\"a\":1}","b":["[1]"],"text":"\ud800"}`,
	"{\"text\":\"\xff\",\"a\":[\"\xe2\x82\"]}",
	`{}`, `{"a":{},"b":[],"c":null}`,
}

// TestTapeAnswersAsWalks: reading through a tape answers exactly as the
// walks do, for values the tape holds, values below its depth, copies
// and texts too big for a tape.
func TestTapeAnswersAsWalks(t *testing.T) {
	for _, s := range tapeSeeds {
		checkTapeAnswersAsWalks(t, []byte(s))
	}
}

// TestTapeReadsWithoutWalking: a value the tape holds is read from it.
func TestTapeReadsWithoutWalking(t *testing.T) {
	text := []byte(`{"data":{"message":{"content":[{"type":"text","text":"a"}]}}}`)
	entries, held, ok, _ := CheckObjectTape(text, nil)
	if !ok || !held {
		t.Fatal("no tape")
	}
	tape := &Tape{Text: text, Entries: entries}
	content := tape.ObjectField(tape.ObjectField(ObjectField(text, "data"), "message"), "content")
	if tape.find(content, '[') < 0 {
		t.Fatalf("the tape does not hold %s", content)
	}
	if tape.find(content[:len(content)-1], '[') >= 0 {
		t.Error("the tape takes a prefix of a value it holds for the value")
	}
	// Corrupt the bytes under the tape: an answer from the tape does not
	// see it, a walk would.
	for i := range content[1:] {
		content[1+i] = ' '
	}
	n := 0
	if ok, err := tape.Elements(content, func([]byte) { n++ }); !ok || err != nil || n != 1 {
		t.Errorf("Elements = %v, %v with %d elements; want the tape's one", ok, err, n)
	}
}

func FuzzTapeAnswersAsWalks(f *testing.F) {
	for _, s := range tapeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkTapeAnswersAsWalks)
}

// TestTapeLiteralLensCountsHeldStrings: strings held on a tape in valid
// UTF-8 are measured by counting (the tape finds them), with LiteralLens's
// answers, including a literal it declines (a \u escape).
func TestTapeLiteralLensCountsHeldStrings(t *testing.T) {
	for _, lit := range []string{
		`""`, `"plain"`, `"a<b <<< c"`, `"\n\t\"\/\b\f\r <"`, `"x\/y\/"`, "\"é 界 🙂 \u2028 <tag>\"",
		`"x\u0041"`, `"a\\/b"`, `"\\"`, `"C:\\dir\\file\n"`, `"\\\\\\\""`, `"\\\/ \\u0041 \\\u0041"`,
	} {
		line := []byte(`{"data":{"content":[{"type":"text","text":` + lit + `}]}}`)
		entries, held, ok, utf8OK := CheckObjectTape(line, nil)
		if !ok || !held || !utf8OK {
			t.Fatalf("%s: not a held object", line)
		}
		tape := &Tape{Text: line, Entries: entries, UTF8: true}
		v := line[len(line)-len(lit)-4 : len(line)-4]
		if string(v) != lit || tape.entry(v) < 0 {
			t.Fatalf("the tape of %s does not hold %s", line, v)
		}
		n, q, ok := tape.LiteralLens(v)
		wantN, wantQ, wantOK := LiteralLens(v)
		if n != wantN || q != wantQ || ok != wantOK {
			t.Errorf("tape.LiteralLens(%s) = %d, %d, %v; LiteralLens %d, %d, %v", v, n, q, ok, wantN, wantQ, wantOK)
		}
	}
}
