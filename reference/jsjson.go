package reference

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// AppendTagSafeString appends s as a JSON string literal exactly as dsh's
// tag-safe serializer writes it: JS JSON.stringify escaping (\" \\ \b \f \n
// \r \t, other C0 controls as lowercase \u00xx, lone surrogates as \udxxx,
// everything else raw, including >, &, DEL, U+2028 and U+2029), then every
// "<" as \u003c. s is WTF-8 (see the package doc); any other invalid byte is
// written as U+FFFD.
func AppendTagSafeString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' {
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
			default: // other C0 controls and '<'
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		if r, ok := surrogateAt(s, i); ok {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', hexDigits[r>>12], hexDigits[(r>>8)&0xf], hexDigits[(r>>4)&0xf], hexDigits[r&0xf])
			i += 3
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\uFFFD"...)
			i++
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// TagSafeStringLen returns len(AppendTagSafeString(nil, s)) without
// allocating: the number of UTF-8 bytes s costs in a tag-safe serialization,
// quotes included.
func TagSafeStringLen(s string) int {
	n := 2
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t':
				n += 2
			case c < 0x20 || c == '<':
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		if _, ok := surrogateAt(s, i); ok {
			n += 6
			i += 3
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			n += 3
			i++
			continue
		}
		n += size
		i += size
	}
	return n
}

// surrogateAt reports whether s[i:] starts with the WTF-8 encoding of a
// surrogate code point (ED A0..BF 80..BF) and returns that code point.
func surrogateAt(s string, i int) (rune, bool) {
	if i+2 < len(s) && s[i] == 0xED && s[i+1] >= 0xA0 && s[i+1] <= 0xBF && s[i+2] >= 0x80 && s[i+2] <= 0xBF {
		return 0xD000 | rune(s[i+1]&0x3F)<<6 | rune(s[i+2]&0x3F), true
	}
	return 0, false
}
