package transcript

import "testing"

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
	}
	for _, tt := range tests {
		got, ok := str([]byte(tt.raw))
		if ok != tt.ok || got != tt.want {
			t.Errorf("str(%s) = %q, %v; want %q, %v", tt.raw, got, ok, tt.want, tt.ok)
		}
	}
}
