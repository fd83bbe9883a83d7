package reference

import (
	"strings"
	"testing"
	"unicode"
)

func TestIsJSWhitespace(t *testing.T) {
	ws := "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
	for _, r := range ws {
		if !IsJSWhitespace(r) {
			t.Errorf("IsJSWhitespace(%U) = false", r)
		}
	}
	for _, r := range "a0_)\x00\x1c\x1f\x85\u180e\u200b\u200c\u2060\u00ad\ufffd" {
		if IsJSWhitespace(r) {
			t.Errorf("IsJSWhitespace(%U) = true", r)
		}
	}
}

func TestLowerJS(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"abc-1_/x", "abc-1_/x"},
		{"STRASSE-up", "strasse-up"},
		{"straße", "straße"},
		{"ẞ", "ß"},
		{"ÜNÏ", "ünï"},
		{"Ünïcode", "ünïcode"},
		{"İ", "i\u0307"},
		{"İy", "i\u0307y"},
		{"I", "i"},
		{"ǅ", "ǆ"},
		{"Ω/Å/K", "ω/å/k"}, // U+2126, U+212B, U+212A
		{"ΣΑΣ", "σας"},
		{"ΑΣ ΑΣ.", "ας ας."},
		{"Σ", "σ"},       // no cased letter before: not final
		{"ΑΣΑ", "ασα"},   // cased letter after: not final
		{"AΣ'", "aς'"},   // case-ignorable after, then nothing cased
		{"x.Σ", "x.ς"},   // case-ignorable between a cased letter and Σ
		{"AΣ'x", "aσ'x"}, // case-ignorable, then a cased letter
		{"ΑΣ\u0301", "ας\u0301"},
		{"a\xffB", "a\xffb"},                 // invalid byte kept
		{"\xed\xa0\x80ÀB", "\xed\xa0\x80àb"}, // WTF-8 lone surrogate kept
		{"ПРИВЕТ 世界", "привет 世界"},
	}
	for _, tt := range tests {
		if got := lowerJS(tt.in); got != tt.want {
			t.Errorf("lowerJS(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestLowerJSCandidateExamples is conformance §6's lowercasing list: a
// lowercased needle must be contained in the lowercased candidate text.
func TestLowerJSCandidateExamples(t *testing.T) {
	tests := []struct {
		query, text string
		match       bool
	}{
		{"STRASSE", "STRASSE-up", true},
		{"STRASSE", "straße", false},
		{"ÜNÏ", "Ünïcode", true},
		{"İ", "İy", true},
		{"İ", "i̇x", true},
		{"İ", "ix", false},
		{"LATEST", "Latest title", true},
		{" ", "has space", true},
		{"/SAME", "/same", true},
	}
	for _, tt := range tests {
		if got := strings.Contains(lowerJS(tt.text), lowerJS(tt.query)); got != tt.match {
			t.Errorf("lowerJS(%q) contains lowerJS(%q) = %v, want %v", tt.text, tt.query, got, tt.match)
		}
	}
}

// TestLowerJSSimpleMappings checks every code point that Go's tables
// lowercase: in the root locale a single code point lowercases to its
// simple mapping, except İ (SpecialCasing, tested above). A lone Σ is not
// word-final, so it gives σ.
func TestLowerJSSimpleMappings(t *testing.T) {
	n := 0
	for r := rune(0); r <= unicode.MaxRune; r++ {
		lower := unicode.ToLower(r)
		if lower == r || r == 0x130 {
			continue
		}
		n++
		if got := lowerJS(string(r)); got != string(lower) {
			t.Errorf("lowerJS(%U) = %q, want %q", r, got, string(lower))
		}
	}
	if n < 1000 {
		t.Errorf("only %d code points checked", n)
	}
}

func BenchmarkLowerJS(b *testing.B) {
	for _, s := range []string{"/home/alice/proj-Session-1", "Ünïcode STRASSE İstanbul ΑΣ"} {
		b.Run(s[:5], func(b *testing.B) {
			for b.Loop() {
				lowerJS(s)
			}
		})
	}
}
