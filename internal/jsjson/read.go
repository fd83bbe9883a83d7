// This file is the raw reader: it walks values without decoding them and
// decodes only the string literals a caller asks for. Semantics follow
// JavaScript property access on JSON.parse output: keys are case-sensitive
// and the last duplicate key wins. Input is assumed to be well-formed JSON
// (the caller already parsed or validated it, CheckObjectTape); malformed input
// gives an error or false, never a panic.

package jsjson

import (
	"bytes"
	"errors"
	"fmt"
	"unicode/utf8"
)

// errMalformed is returned when the input is not the JSON shape expected.
var errMalformed = errors.New("malformed JSON")

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

// endOfValue returns the index just past the JSON value that starts at
// b[i] (i must point at its first byte).
func endOfValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errMalformed
	}
	switch b[i] {
	case '"':
		return endOfString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				end, err := endOfString(b, i)
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
		return 0, errMalformed
	default: // number, true, false, null
		j := i
		for j < len(b) {
			switch b[j] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				if j == i {
					return 0, errMalformed
				}
				return j, nil
			}
			j++
		}
		if j == i {
			return 0, errMalformed
		}
		return j, nil
	}
}

// endOfString returns the index just past the string literal at b[i].
func endOfString(b []byte, i int) (int, error) {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return 0, errMalformed
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
// included; values raw), in document order. It returns errMalformed when b is
// not an object.
func Members(b []byte, fn func(key, value []byte)) error {
	i := SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return errMalformed
	}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return nil
	}
	for i < len(b) {
		if b[i] != '"' {
			return errMalformed
		}
		keyEnd, err := endOfString(b, i)
		if err != nil {
			return err
		}
		key := b[i:keyEnd]
		i = SkipSpace(b, keyEnd)
		if i >= len(b) || b[i] != ':' {
			return errMalformed
		}
		i = SkipSpace(b, i+1)
		valueEnd, err := endOfValue(b, i)
		if err != nil {
			return err
		}
		fn(key, b[i:valueEnd])
		i = SkipSpace(b, valueEnd)
		if i >= len(b) {
			return errMalformed
		}
		if b[i] == '}' {
			return nil
		}
		if b[i] != ',' {
			return errMalformed
		}
		i = SkipSpace(b, i+1)
	}
	return errMalformed
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
		end, err := endOfValue(b, i)
		if err != nil {
			return true, err
		}
		fn(b[i:end])
		i = SkipSpace(b, end)
		if i >= len(b) {
			return true, errMalformed
		}
		if b[i] == ']' {
			return true, nil
		}
		if b[i] != ',' {
			return true, errMalformed
		}
		i = SkipSpace(b, i+1)
	}
	return true, errMalformed
}

// KeyIs reports whether the raw key literal (quotes included), or any
// raw JSON value, is the string name. Literals without escapes are
// compared directly, without decoding them.
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
	s, bad := unquote(body, false)
	return s, bad < 0
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
	s, bad := unquote(body, false)
	return s, bad < 0
}

// parseString reads the string literal at b[i] (a quote) as JSON.parse
// does and returns its value and the offset after the closing quote. A raw
// control character, an invalid escape or a missing closing quote is a
// *syntaxError at the first offending byte.
func parseString(b []byte, i int) (string, int, error) {
	if i >= len(b) || b[i] != '"' {
		return "", i, &syntaxError{Msg: "expected a string", Offset: i}
	}
	end, err := endOfString(b, i)
	body := b[i+1:]
	if err == nil {
		body = b[i+1 : end-1]
	}
	if err == nil && plainLiteral(body) {
		return string(body), end, nil
	}
	s, bad := unquote(body, true)
	switch {
	case bad >= 0 && body[bad] < 0x20:
		return "", i + 1 + bad, &syntaxError{Msg: "control character in a string", Offset: i + 1 + bad}
	case bad >= 0 && bad+1 < len(body) && body[bad+1] == 'u':
		return "", i + 1 + bad, &syntaxError{Msg: "invalid \\u escape", Offset: i + 1 + bad}
	case bad >= 0 && bad+1 < len(body):
		return "", i + 1 + bad, &syntaxError{Msg: fmt.Sprintf("invalid escape \\%c", body[bad+1]), Offset: i + 1 + bad}
	case bad >= 0: // a backslash at the end of the input
		return "", i + 1 + bad, &syntaxError{Msg: "unterminated string", Offset: i + 1 + bad}
	case err != nil:
		return "", len(b), &syntaxError{Msg: "unterminated string", Offset: len(b)}
	}
	return s, end, nil
}

// plainLiteral reports whether body decodes to itself: no escape, no
// control character, valid UTF-8.
func plainLiteral(body []byte) bool {
	for _, c := range body {
		if c == '\\' || c < 0x20 {
			return false
		}
	}
	return utf8.Valid(body)
}

// unquote decodes the body of a string literal (the bytes between its
// quotes) with decodeBody. It returns the offset in body of the first byte
// JSON.parse rejects, or -1.
func unquote(body []byte, strict bool) (string, int) {
	out, _, bad := decodeBody(make([]byte, 0, len(body)), body, strict, false)
	if bad >= 0 {
		return "", bad
	}
	return string(out), -1
}

// decodeBody is the one string decoder: it decodes the body of a string
// literal (the bytes between its quotes) onto dst. Escapes decode as
// JSON.parse decodes them, an escaped lone surrogate as WTF-8; each maximal
// ill-formed UTF-8 subpart becomes one U+FFFD (the one repair rule,
// appendRepairedUTF8). With count it appends nothing and only measures:
// n is the length the decoded string has. bad is the offset in body of the
// first byte JSON.parse rejects (the backslash of an invalid or truncated
// escape; with strict, also a raw control character), or -1.
func decodeBody(dst, body []byte, strict, count bool) (out []byte, n, bad int) {
	for i := 0; i < len(body); {
		if body[i] != '\\' {
			// Take the run up to the next escape in one piece.
			end := len(body)
			if k := bytes.IndexByte(body[i:], '\\'); k >= 0 {
				end = i + k
			}
			if strict {
				if k := controlIndex(body[i:end]); k >= 0 {
					return dst, n, i + k
				}
			}
			switch run := body[i:end]; {
			case count:
				n += repairedLen(run)
			case utf8.Valid(run):
				dst = append(dst, run...)
			default:
				dst = appendRepairedUTF8(dst, run)
			}
			i = end
			continue
		}
		if i+1 < len(body) && unescape[body[i+1]] != 0 {
			// The common escapes (\n, \", \\, …) stand for one byte:
			// decoded here, without a call.
			if count {
				n++
			} else {
				dst = append(dst, unescape[body[i+1]])
			}
			i += 2
			continue
		}
		r, next, ok := decodeUnicodeEscape(body, i)
		if !ok {
			return dst, n, i
		}
		if count {
			n += wtf8Len(r)
		} else {
			dst = AppendWTF8(dst, r)
		}
		i = next
	}
	return dst, n, -1
}

// controlIndex returns the offset of the first raw control character in
// run, or -1.
func controlIndex(run []byte) int {
	for k, c := range run {
		if c < 0x20 {
			return k
		}
	}
	return -1
}

// decodeUnicodeEscape decodes the \uXXXX escape whose backslash is at
// body[i], joined with a following low-surrogate escape when it is a high
// surrogate. It returns the code point and the offset after the escape; ok
// is false when body[i:] is no valid \u escape.
func decodeUnicodeEscape(body []byte, i int) (r rune, next int, ok bool) {
	if i+1 >= len(body) || body[i+1] != 'u' {
		return 0, i, false
	}
	if r, ok = hex4(body, i+2); !ok {
		return 0, i, false
	}
	next = i + 6
	if isHighSurrogate(r) && next+1 < len(body) && body[next] == '\\' && body[next+1] == 'u' {
		if lo, ok := hex4(body, next+2); ok && isLowSurrogate(lo) {
			return combineSurrogates(r, lo), next + 6, true
		}
	}
	return r, next, true
}

// unescape[c] is the byte the two-character escape \c stands for, 0 when
// \c is not one (\u is decoded separately).
var unescape = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// StringLen returns len(String(v)) without building the string.
func StringLen(v []byte) (int, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return 0, false
	}
	_, n, bad := decodeBody(nil, v[1:len(v)-1], false, true)
	return n, bad < 0
}

// hex4 decodes the four hex digits of a \uXXXX escape at s[i:i+4] (either
// case); ok is false when they are missing or not hex.
func hex4[T ~string | ~[]byte](s T, i int) (r rune, ok bool) {
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
