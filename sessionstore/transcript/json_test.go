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
