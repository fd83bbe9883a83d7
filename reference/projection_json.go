package reference

import (
	"bytes"
	"errors"
	"unicode/utf16"
	"unicode/utf8"
)

// This file is a small, allocation-light JSON reader used by the projection
// hot path. Surface event data can be megabytes per event and a source log
// can hold tens of thousands of events, while the projection only needs a
// handful of fields (source.kind, source.plugin, content[].type,
// content[].text, envelope.displayContent, message.content). Decoding whole
// events (into map[string]any or RawMessage structs) would copy and walk
// every byte several times; this reader walks each event once and decodes
// only the strings that end up in the conversation.
//
// Semantics follow JavaScript property access on JSON.parse output: keys are
// case-sensitive and the last duplicate key wins. Input is assumed to be
// well-formed JSON (the Source already parsed it); malformed input gives an
// error, never a panic.

var errBadJSON = errors.New("malformed JSON")

// jsonSkipSpace returns the index of the first non-whitespace byte at or
// after i.
func jsonSkipSpace(b []byte, i int) int {
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

// jsonValueEnd returns the index just past the JSON value that starts at
// b[i] (i must point at its first byte).
func jsonValueEnd(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errBadJSON
	}
	switch b[i] {
	case '"':
		return jsonStringEnd(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				end, err := jsonStringEnd(b, i)
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
		return 0, errBadJSON
	default: // number, true, false, null
		j := i
		for j < len(b) {
			switch b[j] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				if j == i {
					return 0, errBadJSON
				}
				return j, nil
			}
			j++
		}
		if j == i {
			return 0, errBadJSON
		}
		return j, nil
	}
}

// jsonStringEnd returns the index just past the string literal at b[i].
func jsonStringEnd(b []byte, i int) (int, error) {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return 0, errBadJSON
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

// jsonMembers calls fn for every member of the object b (keys raw, quotes
// included; values raw), in document order. It returns errBadJSON when b is
// not an object.
func jsonMembers(b []byte, fn func(key, value []byte)) error {
	i := jsonSkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return errBadJSON
	}
	i = jsonSkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return nil
	}
	for i < len(b) {
		if b[i] != '"' {
			return errBadJSON
		}
		keyEnd, err := jsonStringEnd(b, i)
		if err != nil {
			return err
		}
		key := b[i:keyEnd]
		i = jsonSkipSpace(b, keyEnd)
		if i >= len(b) || b[i] != ':' {
			return errBadJSON
		}
		i = jsonSkipSpace(b, i+1)
		valueEnd, err := jsonValueEnd(b, i)
		if err != nil {
			return err
		}
		fn(key, b[i:valueEnd])
		i = jsonSkipSpace(b, valueEnd)
		if i >= len(b) {
			return errBadJSON
		}
		if b[i] == '}' {
			return nil
		}
		if b[i] != ',' {
			return errBadJSON
		}
		i = jsonSkipSpace(b, i+1)
	}
	return errBadJSON
}

// jsonElements calls fn for every element of the array b. ok is false when b
// is not an array.
func jsonElements(b []byte, fn func(value []byte)) (ok bool, err error) {
	i := jsonSkipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return false, nil
	}
	i = jsonSkipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return true, nil
	}
	for i < len(b) {
		end, err := jsonValueEnd(b, i)
		if err != nil {
			return true, err
		}
		fn(b[i:end])
		i = jsonSkipSpace(b, end)
		if i >= len(b) {
			return true, errBadJSON
		}
		if b[i] == ']' {
			return true, nil
		}
		if b[i] != ',' {
			return true, errBadJSON
		}
		i = jsonSkipSpace(b, i+1)
	}
	return true, errBadJSON
}

// jsonKeyIs reports whether the raw key literal (quotes included) denotes
// name. Keys without escapes are compared directly.
func jsonKeyIs(rawKey []byte, name string) bool {
	if len(rawKey) == len(name)+2 && string(rawKey[1:len(rawKey)-1]) == name {
		return true
	}
	for _, c := range rawKey {
		if c == '\\' {
			s, ok := jsonString(rawKey)
			return ok && s == name
		}
	}
	return false
}

// jsonObjectField returns the raw value of the last member named name of
// the object b, or nil when b is not an object or has no such member.
func jsonObjectField(b []byte, name string) []byte {
	var found []byte
	if jsonMembers(b, func(key, value []byte) {
		if jsonKeyIs(key, name) {
			found = value
		}
	}) != nil {
		return nil
	}
	return found
}

// jsonString decodes v when it is a JSON string literal. Lone surrogate
// escapes become WTF-8 (see the package doc); invalid UTF-8 bytes become
// U+FFFD, as the JS reader's UTF-8 decoding does.
func jsonString(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", false
	}
	body := v[1 : len(v)-1]
	firstEscape := bytes.IndexByte(body, '\\')
	if firstEscape < 0 && utf8.Valid(body) {
		return string(body), true
	}
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
				r, ok := hex4(body, i+2)
				if !ok {
					return "", false
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if r < 0xDC00 && i+6 <= len(body) && body[i] == '\\' && body[i+1] == 'u' {
						if r2, ok := hex4(body, i+2); ok && r2 >= 0xDC00 && r2 <= 0xDFFF {
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
			i++
			continue
		}
		out = append(out, body[i:i+size]...)
		i += size
	}
	return string(out), true
}

// jsonStringLen returns len(jsonString(v)) without building the string.
func jsonStringLen(v []byte) (int, bool) {
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
			r, ok := hex4(body, i+2)
			if !ok {
				return 0, false
			}
			i += 6
			if utf16.IsSurrogate(r) {
				if r < 0xDC00 && i+6 <= len(body) && body[i] == '\\' && body[i+1] == 'u' {
					if r2, ok := hex4(body, i+2); ok && r2 >= 0xDC00 && r2 <= 0xDFFF {
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

// validatedLen is the length of b with each invalid UTF-8 byte counted as
// U+FFFD (3 bytes), as jsonString decodes it.
func validatedLen(b []byte) int {
	if utf8.Valid(b) {
		return len(b)
	}
	n := 0
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			n += 3
		} else {
			n += size
		}
		i += size
	}
	return n
}
