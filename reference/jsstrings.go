package reference

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
