// Package jsjson is a small, allocation-light reader of raw JSON bytes,
// shared by package reference (the projection hot path) and package
// sessionstore (store logs). It walks values without decoding them and
// decodes only the string literals a caller asks for.
//
// Semantics follow JavaScript property access on JSON.parse output: keys are
// case-sensitive and the last duplicate key wins. Strings decode to WTF-8:
// an escaped lone UTF-16 surrogate is kept as its 3-byte generalized UTF-8
// form, as JS strings keep it. Input is assumed to be well-formed JSON (the
// caller already parsed or validated it); malformed input gives an error or
// false, never a panic.
package jsjson

import (
	"bytes"
	"errors"
	"unicode/utf16"
	"unicode/utf8"
)

// ErrMalformed is returned when the input is not the JSON shape expected.
var ErrMalformed = errors.New("malformed JSON")

// SkipSpace returns the index of the first non-whitespace byte at or
// after i.
func SkipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// ValueEnd returns the index just past the JSON value that starts at
// b[i] (i must point at its first byte).
func ValueEnd(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, ErrMalformed
	}
	switch b[i] {
	case '"':
		return StringEnd(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				end, err := StringEnd(b, i)
				if err != nil {
					return 0, err
				}
				i = end
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, nil
				}
			}
			i++
		}
		return 0, ErrMalformed
	default: // number, true, false, null
		j := i
		for j < len(b) {
			switch b[j] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				if j == i {
					return 0, ErrMalformed
				}
				return j, nil
			}
			j++
		}
		if j == i {
			return 0, ErrMalformed
		}
		return j, nil
	}
}

// StringEnd returns the index just past the string literal at b[i].
func StringEnd(b []byte, i int) (int, error) {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return 0, ErrMalformed
		}
		j += k
		// The quote is escaped when an odd number of backslashes precede it.
		n := 0
		for p := j - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return j + 1, nil
		}
		j++
	}
}

// Members calls fn for every member of the object b (keys raw, quotes
// included; values raw), in document order. It returns ErrMalformed when b is
// not an object.
func Members(b []byte, fn func(key, value []byte)) error {
	i := SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return ErrMalformed
	}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return nil
	}
	for i < len(b) {
		if b[i] != '"' {
			return ErrMalformed
		}
		keyEnd, err := StringEnd(b, i)
		if err != nil {
			return err
		}
		key := b[i:keyEnd]
		i = SkipSpace(b, keyEnd)
		if i >= len(b) || b[i] != ':' {
			return ErrMalformed
		}
		i = SkipSpace(b, i+1)
		valueEnd, err := ValueEnd(b, i)
		if err != nil {
			return err
		}
		fn(key, b[i:valueEnd])
		i = SkipSpace(b, valueEnd)
		if i >= len(b) {
			return ErrMalformed
		}
		if b[i] == '}' {
			return nil
		}
		if b[i] != ',' {
			return ErrMalformed
		}
		i = SkipSpace(b, i+1)
	}
	return ErrMalformed
}

// Elements calls fn for every element of the array b. ok is false when b
// is not an array.
func Elements(b []byte, fn func(value []byte)) (ok bool, err error) {
	i := SkipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return false, nil
	}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return true, nil
	}
	for i < len(b) {
		end, err := ValueEnd(b, i)
		if err != nil {
			return true, err
		}
		fn(b[i:end])
		i = SkipSpace(b, end)
		if i >= len(b) {
			return true, ErrMalformed
		}
		if b[i] == ']' {
			return true, nil
		}
		if b[i] != ',' {
			return true, ErrMalformed
		}
		i = SkipSpace(b, i+1)
	}
	return true, ErrMalformed
}

// KeyIs reports whether the raw key literal (quotes included) denotes
// name. Keys without escapes are compared directly.
func KeyIs(rawKey []byte, name string) bool {
	if len(rawKey) == len(name)+2 && string(rawKey[1:len(rawKey)-1]) == name {
		return true
	}
	for _, c := range rawKey {
		if c == '\\' {
			s, ok := String(rawKey)
			return ok && s == name
		}
	}
	return false
}

// ObjectField returns the raw value of the last member named name of
// the object b, or nil when b is not an object or has no such member.
func ObjectField(b []byte, name string) []byte {
	var found []byte
	if Members(b, func(key, value []byte) {
		if KeyIs(key, name) {
			found = value
		}
	}) != nil {
		return nil
	}
	return found
}

// String decodes v when it is a JSON string literal. Lone surrogate
// escapes become WTF-8 (see the package doc); each maximal ill-formed UTF-8
// subpart becomes one U+FFFD, as the JS reader's (WHATWG) UTF-8 decoding
// does (see RepairUTF8).
func String(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", false
	}
	body := v[1 : len(v)-1]
	firstEscape := bytes.IndexByte(body, '\\')
	if firstEscape < 0 && utf8.Valid(body) {
		return string(body), true
	}
	return unquote(body)
}

// StrictString is String for callers that must reject what JSON.parse
// rejects inside a literal: a raw control character or unescaped quote
// makes ok false. Invalid UTF-8 is repaired as String repairs it
// (RepairUTF8, one U+FFFD per maximal ill-formed subpart), with or without
// escapes in the literal.
func StrictString(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", false
	}
	body := v[1 : len(v)-1]
	escaped := false
	for i := 0; i < len(body); i++ {
		switch c := body[i]; {
		case c == '\\':
			escaped = true
			i++
		case c < 0x20 || c == '"':
			return "", false
		}
	}
	if !escaped && utf8.Valid(body) {
		return string(body), true
	}
	return unquote(body)
}

// unquote decodes the body of a string literal, each maximal ill-formed
// UTF-8 subpart becoming one U+FFFD (RepairUTF8).
func unquote(body []byte) (string, bool) {
	out := make([]byte, 0, len(body))
	for i := 0; i < len(body); {
		c := body[i]
		if c != '\\' {
			// Copy the run up to the next escape in one piece when it is
			// valid UTF-8 (the usual case).
			end := bytes.IndexByte(body[i:], '\\')
			if end < 0 {
				end = len(body)
			} else {
				end += i
			}
			if utf8.Valid(body[i:end]) {
				out = append(out, body[i:end]...)
				i = end
				continue
			}
		}
		if c == '\\' {
			if i+1 >= len(body) {
				return "", false
			}
			switch body[i+1] {
			case '"', '\\', '/':
				out = append(out, body[i+1])
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r, ok := Hex4(body, i+2)
				if !ok {
					return "", false
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if r < 0xDC00 && i+6 <= len(body) && body[i] == '\\' && body[i+1] == 'u' {
						if r2, ok := Hex4(body, i+2); ok && r2 >= 0xDC00 && r2 <= 0xDFFF {
							out = utf8.AppendRune(out, utf16.DecodeRune(r, r2))
							i += 6
							continue
						}
					}
					// Lone surrogate: WTF-8.
					out = append(out, 0xED, byte(0x80|(r>>6)&0x3F), byte(0x80|r&0x3F))
					continue
				}
				out = utf8.AppendRune(out, r)
				continue
			default:
				return "", false
			}
			i += 2
			continue
		}
		if c < utf8.RuneSelf {
			out = append(out, c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(body[i:])
		if r == utf8.RuneError && size == 1 {
			out = append(out, "\uFFFD"...)
			i += InvalidLen(body, i)
			continue
		}
		out = append(out, body[i:i+size]...)
		i += size
	}
	return string(out), true
}

// StringLen returns len(String(v)) without building the string.
func StringLen(v []byte) (int, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return 0, false
	}
	body := v[1 : len(v)-1]
	n := 0
	for i := 0; i < len(body); {
		if body[i] != '\\' {
			end := bytes.IndexByte(body[i:], '\\')
			if end < 0 {
				end = len(body)
			} else {
				end += i
			}
			n += validatedLen(body[i:end])
			i = end
			continue
		}
		if i+1 >= len(body) {
			return 0, false
		}
		switch body[i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			n++
			i += 2
		case 'u':
			r, ok := Hex4(body, i+2)
			if !ok {
				return 0, false
			}
			i += 6
			if utf16.IsSurrogate(r) {
				if r < 0xDC00 && i+6 <= len(body) && body[i] == '\\' && body[i+1] == 'u' {
					if r2, ok := Hex4(body, i+2); ok && r2 >= 0xDC00 && r2 <= 0xDFFF {
						n += 4
						i += 6
						continue
					}
				}
				n += 3 // WTF-8 lone surrogate
				continue
			}
			n += utf8.RuneLen(r)
		default:
			return 0, false
		}
	}
	return n, true
}

// validatedLen is the length of b with each maximal ill-formed UTF-8
// subpart counted as U+FFFD (3 bytes), as String decodes it.
func validatedLen(b []byte) int { return RepairedLen(b) }

// Hex4 decodes the four hex digits of a \uXXXX escape at s[i:i+4] (either
// case); ok is false when they are missing or not hex.
func Hex4[T ~string | ~[]byte](s T, i int) (r rune, ok bool) {
	if i+4 > len(s) {
		return 0, false
	}
	for j := i; j < i+4; j++ {
		c := s[j]
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
