package reference

import (
	"sync"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/language"
)

// IsJSWhitespace reports whether r is in ECMAScript's WhiteSpace or
// LineTerminator sets, i.e. what the regex \s matches: \t \n \v \f \r,
// space, U+00A0, U+1680, U+2000–U+200A, U+2028, U+2029, U+202F, U+205F,
// U+3000 and U+FEFF. (Go's regexp \s is ASCII-only.)
func IsJSWhitespace(r rune) bool {
	switch {
	case r <= ' ':
		return r == ' ' || r >= '\t' && r <= '\r'
	case r < 0xA0:
		return false
	}
	switch r {
	case 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

// lowerCasers pools root-locale lowercasers: a cases.Caser is stateful and
// must not be shared between goroutines.
var lowerCasers = sync.Pool{New: func() any { return cases.Lower(language.Und) }}

// LowerJS returns s lowercased as JS String.prototype.toLocaleLowerCase()
// does in the default (root) locale: the full Unicode lowercase mapping,
// including SpecialCasing (İ U+0130 → "i̇", i + U+0307) and the Final_Sigma
// rule (Σ → ς at the end of a word), unlike strings.ToLower, which maps
// İ to "i" and Σ always to σ. Invalid UTF-8 bytes, including the WTF-8
// form of lone surrogates, are kept unchanged.
func LowerJS(s string) string {
	ascii, upper := true, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
		if 'A' <= c && c <= 'Z' {
			upper = true
		}
	}
	if ascii {
		if !upper {
			return s
		}
		b := []byte(s)
		for i, c := range b {
			if 'A' <= c && c <= 'Z' {
				b[i] = c + ('a' - 'A')
			}
		}
		return string(b)
	}
	c := lowerCasers.Get().(cases.Caser)
	defer lowerCasers.Put(c)
	return c.String(s)
}
