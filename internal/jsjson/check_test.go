package jsjson

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

var checkCases = []string{
	`{}`, ` { } `, `{"a":1}`, `{"a":1,}`, `{"a" 1}`, `{"a":01}`, `{"a":-0}`, `{"a":-}`, `{"a":1.}`, `{"a":1.5e}`,
	`{"a":1.5e+3}`, `{"a":1E-3}`, `{"a":tru}`, `{"a":true}`, `{"a":nul}`, `{"a":null,"b":false}`, `{"a":[1,2,[3,{}]]}`,
	`{"a":[1,2,]}`, `{"a":"\u00e9\n"}`, `{"a":"\x"}`, `{"a":"\u12"}`, "{\"a\":\"\x01\"}", "{\"a\":\"\xff\"}",
	"{\"a\":\"é😀\"}", `{"a":"unterminated}`, `[1]`, `"s"`, `1`, ``, ` `, `{"a":1}x`, `{"a":1} `, "{\"a\":1}\r",
	`{"a":{"b":{"c":[]}}}`, `{"a":"\\\""}`, `{"a":"abcdefghijklmnopqrstuvwxyz\"q"}`, `{"a":"abcdefgh\\"}`,
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	`{"a":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`,
	`{"a":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`,
	"{\"a\":\"" + strings.Repeat("x", 37) + "\xe2\x82\"}", `{"a":1}{"b":2}`, `{"a",1}`, `{1:2}`,
}

// valid reports whether b is one valid JSON value (as encoding/json's
// Valid) and whether it is valid UTF-8 throughout: the checker CheckObject
// runs on each member value, applied to a whole document.
func valid(b []byte) (ok, utf8OK bool) {
	c := checker{b: b, utf8OK: true}
	end, ok := c.value(SkipSpace(b, 0), 0)
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
}

func FuzzCheck(f *testing.F) {
	for _, s := range checkCases {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkOne(t, b) })
}
