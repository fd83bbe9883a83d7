package jsjson

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// CheckObject is the checker without a tape: the form the tests compare
// with encoding/json (the hot path records a tape, CheckObjectTape).
// It validates b as one JSON object (RFC 8259 grammar, optional
// surrounding whitespace, at most 10,000 levels of nesting: exactly what
// encoding/json's Valid accepts for an object) in one pass, and calls fn
// with each top-level member (key literal with its quotes, value) in
// document order. Like json.Valid it does not reject invalid UTF-8 inside
// strings; utf8OK reports whether b is valid UTF-8 throughout, so a caller
// repairs only the rare line that needs it. fn is only called while b is
// valid so far; when ok is false, members already reported must be
// discarded.
func CheckObject(b []byte, fn func(key, value []byte)) (ok, utf8OK bool) {
	c := checker{b: b, utf8OK: true, fn: fn}
	return c.object(SkipSpace(b, 0), 0, false)
}

var checkCases = []string{
	`{}`, ` { } `, `{"a":1}`, `{"a":1,}`, `{"a" 1}`, `{"a":01}`, `{"a":-0}`, `{"a":-}`, `{"a":1.}`, `{"a":1.5e}`,
	`{"a":1.5e+3}`, `{"a":1E-3}`, `{"a":tru}`, `{"a":true}`, `{"a":nul}`, `{"a":null,"b":false}`, `{"a":[1,2,[3,{}]]}`,
	`{"a":[1,2,]}`, `{"a":"\u00e9\n"}`, `{"a":"\x"}`, `{"a":"\u12"}`, "{\"a\":\"\x01\"}", "{\"a\":\"\xff\"}",
	"{\"a\":\"é😀\"}", `{"a":"unterminated}`, `[1]`, `"s"`, `1`, ``, ` `, `{"a":1}x`, `{"a":1} `, "{\"a\":1}\r",
	`{"a":{"b":{"c":[]}}}`, `{"d":{"m":{"s":{"k":{"x":1}},"e":{}},"z":[{"q":{}}]},"d":{"a":"b"}}`,
	`{"a":[[],{},[1,[2,[3,[4,{"x":[5]}]]]]],"b":{"c":[{"d":[{"e":{}}]}]},"e":[]}`, `{"a":[1,2,]}`, `{"a":[{"b":1}}`, `{"a":"\\\""}`, `{"a":"abcdefghijklmnopqrstuvwxyz\"q"}`, `{"a":"abcdefgh\\"}`,
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	`{"a":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`,
	`{"a":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`,
	"{\"a\":\"" + strings.Repeat("x", 37) + "\xe2\x82\"}",
	"{\"a\":\"\xe0\xa0\x80\xed\x9f\xbf\xef\xbf\xbf\xc2\x80\xdf\xbf\xf0\x9f\x98\x80\"}", "{\"a\":\"\xed\xa0\x80\"}",
	"{\"a\":\"\xc1\xbf\"}", "{\"a\":\"\xe0\x9f\xbf\"}", "{\"a\":\"\xee\x80\"}", "{\"a\":\"\xdf\"}", "{\"a\":\"\xe1\x80\xc0\"}", `{"a":1}{"b":2}`, `{"a",1}`, `{1:2}`,
}

// valid reports whether b is one valid JSON value (as encoding/json's
// Valid) and whether it is valid UTF-8 throughout: the checker CheckObject
// runs on each member value, applied to a whole document.
func valid(b []byte) (ok, utf8OK bool) {
	c := checker{b: b, utf8OK: true}
	end, ok := c.value(SkipSpace(b, 0), 0, false)
	return ok && SkipSpace(b, end) == len(b), c.utf8OK
}

// TestCheckAgreesWithEncodingJSON: CheckObject and the value checker accept exactly
// what json.Valid accepts, and report UTF-8 validity like utf8.Valid.
func TestCheckAgreesWithEncodingJSON(t *testing.T) {
	for _, s := range checkCases {
		checkOne(t, []byte(s))
	}
}

func checkOne(t *testing.T, b []byte) {
	want := json.Valid(b)
	ok, u := valid(b)
	if ok != want {
		t.Errorf("valid(%.60q) = %v, json.Valid %v", b, ok, want)
	}
	if ok && u != utf8.Valid(b) {
		t.Errorf("valid(%.60q) utf8OK = %v, utf8.Valid %v", b, u, !u)
	}
	var keys []string
	okObj, _ := CheckObject(b, func(k, v []byte) { keys = append(keys, string(k)) })
	wantObj := want && b[SkipSpace(b, 0)] == '{'
	if okObj != wantObj {
		t.Errorf("CheckObject(%.60q) = %v, want %v", b, okObj, wantObj)
	}
	if okObj {
		var got []string
		Members(b, func(k, v []byte) { got = append(got, string(k)) })
		if strings.Join(got, ",") != strings.Join(keys, ",") {
			t.Errorf("CheckObject(%.60q) members %v, Members %v", b, keys, got)
		}
	}
	tape, held, okTape, u2 := CheckObjectTape(b, nil)
	if okTape != okObj || (okTape && u2 != utf8.Valid(b)) {
		t.Errorf("CheckObjectTape(%.60q) = %v, %v; CheckObject %v", b, okTape, u2, okObj)
	}
	if okTape && held {
		first := int32(0)
		if len(tape) == 0 {
			first = -1
		}
		checkTape(t, b, b, tape, first, 0)
	}
}

// checkTape checks that the tape of b's chain from first holds the entries
// of the object or array v as Members or Elements walk them, and those of
// the objects and arrays in it down to TapeDepth.
func checkTape(t *testing.T, b, v []byte, tape []Member, first int32, level int) {
	t.Helper()
	k := first
	entry := func(key, ev []byte) {
		if k < 0 {
			t.Errorf("tape of %.60q ends before entry %s", v, key)
			return
		}
		m := tape[k]
		if string(m.Key(b)) != string(key) || string(m.Value(b)) != string(ev) || (m.Key(b) == nil) != (key == nil) {
			t.Errorf("tape entry %s: %.40s, walked %s: %.40s", m.Key(b), m.Value(b), key, ev)
		}
		switch container := ev[0] == '{' || ev[0] == '['; {
		case container && level < TapeDepth && m.Sub < 0:
			t.Errorf("tape of %.60q does not hold %.40s", v, ev)
		case (!container || level >= TapeDepth) && m.Sub >= 0:
			t.Errorf("tape of %.60q holds %.40s, not a container within its depth", v, ev)
		case m.Sub > 0:
			checkTape(t, b, ev, tape, m.Sub, level+1)
		case m.Sub == 0:
			checkTape(t, b, ev, tape, -1, level+1)
		}
		k = m.Next
	}
	if v[0] == '{' {
		Members(v, entry)
	} else {
		Elements(v, func(ev []byte) { entry(nil, ev) })
	}
	if k >= 0 {
		t.Errorf("tape of %.60q holds more entries than the walk", v)
	}
}

// TestTapeIsDroppedPastItsBound: a record with more entries than MaxTape
// is checked as CheckObject checks it, without a tape.
func TestTapeIsDroppedPastItsBound(t *testing.T) {
	for _, n := range []int{MaxTape, MaxTape + 1} {
		b := []byte(`{"a":[` + strings.Repeat(`1,`, n-2) + `1]}`)
		tape, held, ok, _ := CheckObjectTape(b, nil)
		if !ok || held != (n <= MaxTape) || (held && len(tape) != n) || (!held && len(tape) != 0) {
			t.Errorf("%d entries: tape of %d, held %v, ok %v", n, len(tape), held, ok)
		}
	}
}

func FuzzCheck(f *testing.F) {
	for _, s := range checkCases {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkOne(t, b) })
}
