package jsjson

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// AppendJSString appends s as a JSON string literal exactly as JS
// JSON.stringify writes it (\" \\ \b \f \n \r \t, other C0 controls as
// lowercase \u00xx, lone surrogates as \udxxx, everything else raw). With
// tagSafe, every "<" is also written as \u003c (dsh's tag-safe serializer).
// s is WTF-8: a WTF-8 high surrogate immediately followed by a WTF-8 low
// surrogate is one astral character in the JS string it stands for, so it
// is written as that character's UTF-8 form, exactly as JSON.stringify
// would. Any other ill-formed UTF-8 is written with one U+FFFD per maximal
// subpart (InvalidLen).
//
// It lives here, below both reference and the LSP wire package, so that the
// wire encoder quotes labels and edits with dsh's rule without importing the
// domain core.
func AppendJSString(dst []byte, s string, tagSafe bool) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && (c != '<' || !tagSafe) {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"':
				dst = append(dst, '\\', '"')
			case '\\':
				dst = append(dst, '\\', '\\')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default: // other C0 controls and, when tag-safe, '<'
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		if r, ok := surrogateAt(s, i); ok {
			dst = append(dst, s[start:i]...)
			if lo, ok := surrogateAt(s, i+3); ok && isHighSurrogate(r) && !isHighSurrogate(lo) {
				dst = utf8.AppendRune(dst, combineSurrogates(r, lo))
				i += 6
			} else {
				dst = append(dst, '\\', 'u', hexDigits[r>>12], hexDigits[(r>>8)&0xf], hexDigits[(r>>4)&0xf], hexDigits[r&0xf])
				i += 3
			}
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\uFFFD"...)
			i += InvalidLen(s, i)
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// surrogateAt reports whether s[i:] starts with the WTF-8 encoding of a
// surrogate code point (ED A0..BF 80..BF) and returns that code point.
func surrogateAt(s string, i int) (rune, bool) {
	if i >= 0 && i+2 < len(s) && s[i] == 0xED && s[i+1] >= 0xA0 && s[i+1] <= 0xBF && s[i+2] >= 0x80 && s[i+2] <= 0xBF {
		return 0xD000 | rune(s[i+1]&0x3F)<<6 | rune(s[i+2]&0x3F), true
	}
	return 0, false
}

func isHighSurrogate(r rune) bool { return r >= 0xD800 && r <= 0xDBFF }

func combineSurrogates(hi, lo rune) rune {
	return 0x10000 + (hi-0xD800)<<10 + (lo - 0xDC00)
}
