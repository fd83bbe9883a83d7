package jsjson

import (
	"errors"
	"testing"
)

func TestString(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		want   string
		ok     bool
		strict string // StrictString result when it differs; "-" means not ok
	}{
		{name: "plain", in: `"abc"`, want: "abc", ok: true},
		{name: "empty", in: `""`, want: "", ok: true},
		{name: "escapes", in: `"a\"b\\c\/d\b\f\n\r\t"`, want: "a\"b\\c/d\b\f\n\r\t", ok: true},
		{name: "bmp escape", in: `"\u00e9\u20AC"`, want: "é€", ok: true},
		{name: "surrogate pair", in: `"\ud83d\ude00"`, want: "😀", ok: true},
		{name: "lone high surrogate is WTF-8", in: `"a\ud800b"`, want: "a\xed\xa0\x80b", ok: true},
		{name: "lone low surrogate is WTF-8", in: `"\udfff"`, want: "\xed\xbf\xbf", ok: true},
		{name: "high then non-low", in: `"\ud800\u0041"`, want: "\xed\xa0\x80A", ok: true},
		{name: "invalid UTF-8 no escape", in: "\"a\xffb\"", want: "a\uFFFDb", ok: true},
		{name: "invalid UTF-8 with escape", in: "\"\\n\xff\"", want: "\n\uFFFD", ok: true, strict: "\n\uFFFD"}, // one repair rule, escapes or not
		{name: "raw control char", in: "\"a\tb\"", want: "a\tb", ok: true, strict: "-"},
		{name: "raw quote inside", in: `"a"b"`, want: `a"b`, ok: true, strict: "-"},
		{name: "bad escape", in: `"\x"`, ok: false},
		{name: "short unicode escape", in: `"\u12"`, ok: false},
		{name: "dangling backslash", in: `"a\"`, ok: false},
		{name: "not a string", in: `123`, ok: false},
		{name: "unterminated", in: `"abc`, ok: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := String([]byte(tt.in))
			if ok != tt.ok || (ok && got != tt.want) {
				t.Fatalf("String(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
			}
			if n, nok := StringLen([]byte(tt.in)); ok && (!nok || n != len(got)) {
				t.Errorf("StringLen(%q) = %d, %v; want %d, true", tt.in, n, nok, len(got))
			}
			wantStrict, wantStrictOK := tt.want, tt.ok
			switch tt.strict {
			case "":
			case "-":
				wantStrict, wantStrictOK = "", false
			default:
				wantStrict = tt.strict
			}
			got, ok = StrictString([]byte(tt.in))
			if ok != wantStrictOK || (ok && got != wantStrict) {
				t.Errorf("StrictString(%q) = %q, %v; want %q, %v", tt.in, got, ok, wantStrict, wantStrictOK)
			}
		})
	}
}

func TestValueEnd(t *testing.T) {
	tests := []struct {
		in   string
		want int // -1: error
	}{
		{`"a\"b" x`, 6},
		{`"a\\" x`, 5},
		{`{"a":[1,"]}"],"b":{}} x`, 21},
		{`[1, 2] x`, 6},
		{`123,`, 3},
		{`true}`, 4},
		{`null`, 4},
		{`,`, -1},
		{`{"a":1`, -1},
		{`"abc`, -1},
		{``, -1},
	}
	for _, tt := range tests {
		got, err := endOfValue([]byte(tt.in), 0)
		if tt.want < 0 {
			if !errors.Is(err, errMalformed) {
				t.Errorf("endOfValue(%q) = %d, %v; want errMalformed", tt.in, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("endOfValue(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}

func TestMembersAndObjectField(t *testing.T) {
	tests := []struct {
		in    string
		keys  string // keys joined by '|'
		field string // ObjectField(in, "a")
		err   bool
	}{
		{in: ` { "a" : 1 , "b":[2] } `, keys: `"a"|"b"`, field: "1"},
		{in: `{}`, keys: "", field: ""},
		{in: `{"a":1,"a":"last"}`, keys: `"a"|"a"`, field: `"last"`},
		{in: `{"\u0061":true}`, keys: `"\u0061"`, field: "true"},
		{in: `{"a":1,}`, err: true},
		{in: `{"a" 1}`, err: true},
		{in: `[1]`, err: true},
		{in: `{"a":1`, err: true},
	}
	for _, tt := range tests {
		keys := ""
		err := Members([]byte(tt.in), func(key, _ []byte) {
			if keys != "" {
				keys += "|"
			}
			keys += string(key)
		})
		if (err != nil) != tt.err {
			t.Errorf("Members(%q) error = %v; want error %v", tt.in, err, tt.err)
			continue
		}
		if !tt.err && keys != tt.keys {
			t.Errorf("Members(%q) keys = %s; want %s", tt.in, keys, tt.keys)
		}
		if got := string(ObjectField([]byte(tt.in), "a")); got != tt.field {
			t.Errorf("ObjectField(%q, a) = %q; want %q", tt.in, got, tt.field)
		}
	}
}

func TestElements(t *testing.T) {
	tests := []struct {
		in    string
		n     int
		isArr bool
		err   bool
	}{
		{in: `[]`, isArr: true},
		{in: ` [1, "a", {"b":[2]}] `, n: 3, isArr: true},
		{in: `{"a":1}`},
		{in: `[1 2]`, n: 1, isArr: true, err: true},
		{in: `[1,`, n: 1, isArr: true, err: true},
	}
	for _, tt := range tests {
		n := 0
		isArr, err := Elements([]byte(tt.in), func([]byte) { n++ })
		if isArr != tt.isArr || (err != nil) != tt.err || n != tt.n {
			t.Errorf("Elements(%q) = %v, %v with %d elements; want %v, error %v, %d", tt.in, isArr, err, n, tt.isArr, tt.err, tt.n)
		}
	}
}

func TestHex4(t *testing.T) {
	tests := []struct {
		in   string
		want rune
		ok   bool
	}{
		{"00e9", 0xe9, true},
		{"D83D", 0xd83d, true},
		{"12g4", 0, false},
		{"123", 0, false},
	}
	for _, tt := range tests {
		got, ok := hex4(tt.in, 0)
		if ok != tt.ok || got != tt.want {
			t.Errorf("hex4(%q) = %#x, %v; want %#x, %v", tt.in, got, ok, tt.want, tt.ok)
		}
		if gotB, okB := hex4([]byte(tt.in), 0); gotB != got || okB != ok {
			t.Errorf("hex4([]byte(%q)) differs from the string form", tt.in)
		}
	}
}

func TestMembersAllocationFree(t *testing.T) {
	b := []byte(`{"type":"user/message","content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}}`)
	allocs := testing.AllocsPerRun(100, func() {
		n := 0
		_ = Members(b, func(key, _ []byte) {
			if KeyIs(key, "content") {
				n++
			}
		})
	})
	if allocs != 0 {
		t.Errorf("Members allocated %v times per run; want 0", allocs)
	}
}

// FuzzString checks the one string decoder against itself and JSON.parse:
// StringLen measures what String builds, StrictString agrees with String
// where it accepts, and a literal encoding/json accepts decodes (after the
// WHATWG repair) to valid WTF-8 that parseString reads the same way.
func FuzzString(f *testing.F) {
	for _, s := range []string{`"abc"`, `"a\"b\\c\/d\b\f\n\r\t"`, `"\u00e9\u20AC"`, `"\ud83d\ude00"`, `"a\ud800b"`,
		`"\udfff"`, `"\ud800\u0041"`, "\"a\xffb\"", "\"\\n\xff\"", "\"a\tb\"", `"a"b"`, `"\x"`, `"\u12"`, `"a\"`,
		"\"Sum\xe2\x82b\xf0\x9f\x99x\xc0\xafend\\n\\ud800\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		s, ok := String(v)
		if n, nok := StringLen(v); nok != ok || (ok && n != len(s)) {
			t.Fatalf("StringLen(%q) = %d, %v; String gives %d bytes, %v", v, n, nok, len(s), ok)
		}
		if ss, sok := StrictString(v); sok && (!ok || ss != s) {
			t.Fatalf("StrictString(%q) = %q, String %q, %v", v, ss, s, ok)
		}
		if len(v) > 0 && v[0] == '"' {
			if ps, end, err := parseString(v, 0); err == nil && end == len(v) {
				if ss, sok := StrictString(v); !sok || ss != ps {
					t.Fatalf("parseString(%q) = %q; StrictString %q, %v", v, ps, ss, sok)
				}
			}
		}
	})
}
