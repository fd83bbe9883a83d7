package transcript

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand"
	"strconv"
	"strings"
	"testing"
)

func TestStrDecodesLikeJSONParse(t *testing.T) {
	tests := []struct {
		raw, want string
		ok        bool
	}{
		{`"plain é"`, "plain é", true},
		{`"a\u0041\n\t\"\\\/"`, "aA\n\t\"\\/", true},
		{`"\ud83d\ude00"`, "😀", true},
		{`"\ud800x"`, "\xed\xa0\x80x", true},
		{`"\udc00"`, "\xed\xb0\x80", true},
		{`"\ud800\u0041"`, "\xed\xa0\x80A", true},
		{`"\x"`, "", false},
		{`"\u12"`, "", false},
		{"\"a\tb\"", "", false},
		{`5`, "", false},
		{` "sp" `, "sp", true},
		{"\"bad \xff utf-8\"", "bad \ufffd utf-8", true},
		{`"a"b"`, "", false},
		{`"`, "", false},
		{`""`, "", true},
	}
	for _, tt := range tests {
		for name, read := range map[string]func(json.RawMessage) (string, bool){"str": str, "strView": strView} {
			got, ok := read([]byte(tt.raw))
			if ok != tt.ok || got != tt.want {
				t.Errorf("%s(%s) = %q, %v; want %q, %v", name, tt.raw, got, ok, tt.want, tt.ok)
			}
		}
	}
}

// TestShortIntReadsLikeParseFloat checks the fast path of number against
// strconv.ParseFloat, which reads every other number.
func TestShortIntReadsLikeParseFloat(t *testing.T) {
	cases := []string{"0", "7", "42", "007", "123456789012345", "999999999999999", "1234567890123456",
		"9007199254740991", "9007199254740993", "-0", "-1", "1.0", "1e3", "1E3", "-12", " 12", "12 ", "", "-", "+1", "0x1", "1_0"}
	r := rand.New(rand.NewSource(1))
	for range 2000 {
		n := 1 + r.Intn(18)
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('0' + r.Intn(10))
		}
		cases = append(cases, string(b))
	}
	for _, c := range cases {
		got, gotOK := number(json.RawMessage(c))
		var want float64
		wantOK := isNumber(json.RawMessage(c))
		if wantOK {
			f, err := strconv.ParseFloat(strings.TrimSpace(c), 64)
			if err != nil && !errors.Is(err, strconv.ErrRange) {
				wantOK = false
			} else {
				want = f
			}
		}
		if gotOK != wantOK || got != want || math.Signbit(got) != math.Signbit(want) {
			t.Errorf("number(%q) = %v, %v; ParseFloat gives %v, %v", c, got, gotOK, want, wantOK)
		}
	}
}

// TestResultDigestReadsTheTapeAsBytes: a tool/result's digest is the same
// read through the validating walk's tape (down to its blocks) as from
// its bytes, for content of one block (blanked) and of several, nested
// arrays, duplicate and escaped keys and whitespace; and data equal as
// parsed JSON digest alike, data that differ outside the blanked content
// do not.
func TestResultDigestReadsTheTapeAsBytes(t *testing.T) {
	block := func(content string) string {
		return `{"type":"tool-result","toolCallId":"c1","content":` + content + `,"isError":false}`
	}
	data := func(blocks ...string) string {
		return `{"turn":1,"step":1,"message":{"source":{"kind":"tool","callId":"c1"},"content":[` + strings.Join(blocks, ",") + `],"role":"user"}}`
	}
	tests := []struct {
		name, a, b string
		equal      bool
	}{
		{"one block: its content is blanked", data(block(`[{"type":"text","text":"a"}]`)), data(block(`[{"type":"text","text":"b"},7]`)), true},
		{"two blocks: nothing is blanked", data(block(`[1]`), `{"type":"text","text":"x"}`), data(block(`[2]`), `{"type":"text","text":"x"}`), false},
		{"two blocks, equal as parsed", data(block(`[1, {"a":[2,3]}]`), `[4,{"b":[5]}]`), data(block(` [ 1.0 ,{"a":[2,3e0]}]`), `[4,{"b":[5],"b":[5]}]`), true},
		{"nested arrays differ", data(block(`[1]`), `[4,{"b":[5]}]`), data(block(`[1]`), `[4,{"b":[6]}]`), false},
		{"key order and escapes", data(block(`[]`), `{"y":[1,2],"x":{"z":[[3]]}}`), data(block(`[]`), `{"x":{"z":[[3]]},"\u0079":[1,2]}`), true},
		{"block outside content differs", data(`{"type":"tool-result","toolCallId":"c2","content":[]}`), data(block(`[]`)), false},
		{"whitespace everywhere", data(block(`[ ]`), ` [ {"a" : [ 1 , 2 ] } ] `), data(block(`[]`), `[{"a":[1,2]}]`), true},
		{"no message", `{"turn":1,"content":[[1],[2,[3]]]}`, `{"turn":1.0,"content":[[1],[2,[3]]]}`, true},
	}
	digest := func(t *testing.T, data string) (viaTape, viaBytes resultKey) {
		t.Helper()
		line := `{"type":"tool/result","seq":3,"time":1,"data":` + data + `}`
		var env envelope
		if !env.scan([]byte(line)) || env.dataAt < 0 {
			t.Fatalf("%s: no data on the tape", line)
		}
		o := env.dataObj()
		if !o.onTape {
			t.Fatalf("%s: data is off the tape", line)
		}
		var f Fold
		return f.digestResult(o), f.digestResult(rawObj([]byte(data)))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, aBytes := digest(t, tt.a)
			b, bBytes := digest(t, tt.b)
			if a != aBytes || b != bBytes {
				t.Fatalf("the tape's digest differs from the bytes' (a: %v, b: %v)", a == aBytes, b == bBytes)
			}
			if !a.OK || !b.OK {
				t.Fatalf("digest not OK: %v %v", a.OK, b.OK)
			}
			if (a == b) != tt.equal {
				t.Errorf("digests equal = %v, want %v", a == b, tt.equal)
			}
		})
	}
}

// BenchmarkDigestResult digests a tool/result with 8 KB of output read
// through its record's tape, as the fold does for every tool result.
func BenchmarkDigestResult(b *testing.B) {
	out := strings.Repeat(`src/a.ts:3: // TODO tidy \"x\" \u00e9\n`, 8<<10/40)
	line := []byte(`{"type":"tool/result","seq":3,"time":1,"data":{"turn":1,"step":1,"message":{"source":{"kind":"tool","callId":"c1"},` +
		`"content":[{"type":"tool-result","toolCallId":"c1","content":[{"type":"text","text":"` + out + `"}],"isError":false}],"role":"user","id":"m1"}}}`)
	var env envelope
	if !env.scan(line) {
		b.Fatal("not a record")
	}
	data := env.dataObj()
	var f Fold
	b.ReportAllocs()
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		if !f.digestResult(data).OK {
			b.Fatal("no digest")
		}
	}
}

// TestAppendQuoteIsStrconvs: the digest's quoting, with its fast path for
// printable ASCII, writes exactly what strconv.AppendQuote writes, so that
// digests persisted by earlier versions still compare equal.
func TestAppendQuoteIsStrconvs(t *testing.T) {
	cases := []string{"", "content", `a"b`, `a\b`, "tab\there", "\x7f", "~ ", "é", "\xff", "\u2028", "ok\x00"}
	for b := range 256 {
		cases = append(cases, "k"+string(rune(b)), "k"+string([]byte{byte(b)}))
	}
	rng := rand.New(rand.NewSource(1))
	for range 2000 {
		s := make([]byte, rng.Intn(12))
		for i := range s {
			s[i] = byte(rng.Intn(256))
			if rng.Intn(4) > 0 {
				s[i] = byte(' ' + rng.Intn(95))
			}
		}
		cases = append(cases, string(s))
	}
	for _, s := range cases {
		if got, want := appendQuote([]byte("x"), s), strconv.AppendQuote([]byte("x"), s); string(got) != string(want) {
			t.Errorf("appendQuote(%q) = %s, want %s", s, got, want)
		}
	}
}
