package reference

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
)

// ErrNotJSONSerializable is the plain TypeError dsh's tag-safe serializer
// throws when a value serializes to nothing (JS undefined). It carries no
// session-reference code.
var ErrNotJSONSerializable = errors.New("session-reference data is not JSON-serializable")

// AppendTagSafeString appends s as a JSON string literal exactly as dsh's
// tag-safe serializer writes it: JS JSON.stringify escaping (\" \\ \b \f \n
// \r \t, other C0 controls as lowercase \u00xx, lone surrogates as \udxxx,
// everything else raw, including >, &, DEL, U+2028 and U+2029), then every
// "<" as \u003c. s is WTF-8 (see the package doc); any other ill-formed
// UTF-8 is written with one U+FFFD per maximal subpart (jsjson.RepairUTF8).
func AppendTagSafeString(dst []byte, s string) []byte {
	return appendJSString(dst, s, true)
}

// AppendJSString appends s as JS JSON.stringify writes a string: like
// AppendTagSafeString but "<" stays raw. This is the quoting dsh uses in
// error messages and inside session reference URIs.
func AppendJSString(dst []byte, s string) []byte {
	return appendJSString(dst, s, false)
}

// QuoteJS returns s quoted as JS JSON.stringify(s) does.
func QuoteJS(s string) string {
	return string(appendJSString(make([]byte, 0, len(s)+2), s, false))
}

// appendJSString is the shared string escaper. A WTF-8 high surrogate
// immediately followed by a WTF-8 low surrogate is one astral character in
// the JS string it stands for, so it is written as that character's UTF-8
// form, exactly as JSON.stringify would.
func appendJSString(dst []byte, s string, tagSafe bool) []byte {
	return jsjson.AppendJSString(dst, s, tagSafe)
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
		if r, ok := surrogateAt(s, i); ok {
			if lo, ok := surrogateAt(s, i+3); ok && isHighSurrogate(r) && !isHighSurrogate(lo) {
				n += 4
				i += 6
				continue
			}
			n += 6
			i += 3
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			n += 3
			i += jsjson.InvalidLen(s, i)
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
	if i >= 0 && i+2 < len(s) && s[i] == 0xED && s[i+1] >= 0xA0 && s[i+1] <= 0xBF && s[i+2] >= 0x80 && s[i+2] <= 0xBF {
		return 0xD000 | rune(s[i+1]&0x3F)<<6 | rune(s[i+2]&0x3F), true
	}
	return 0, false
}

func isHighSurrogate(r rune) bool { return r >= 0xD800 && r <= 0xDBFF }
func isLowSurrogate(r rune) bool  { return r >= 0xDC00 && r <= 0xDFFF }

func combineSurrogates(hi, lo rune) rune {
	return 0x10000 + (hi-0xD800)<<10 + (lo - 0xDC00)
}

// appendWTF8 appends code point r (which may be a surrogate) in WTF-8.
func appendWTF8(dst []byte, r rune) []byte {
	if r >= 0xD800 && r <= 0xDFFF {
		return append(dst, 0xED, byte(0x80|(r>>6)&0x3F), byte(0x80|r&0x3F))
	}
	return utf8.AppendRune(dst, r)
}

// ---- JSON reading with JS semantics ----

// jsvSyntaxError is a JSON.parse failure: what went wrong and the byte
// offset where it did.
type jsvSyntaxError struct {
	msg    string
	offset int
}

func (e *jsvSyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at byte %d: %s", e.offset, e.msg)
}

// maxJSValueDepth bounds nesting so hostile input cannot exhaust the stack.
const maxJSValueDepth = 10000

// jsvKind is the type of a parsed JSON value.
type jsvKind uint8

const (
	jsvNull jsvKind = iota
	jsvBool
	jsvNumber
	jsvString
	jsvArray
	jsvObject
)

// jsValue is a JSON value parsed the way JS JSON.parse builds it:
// strings are WTF-8 (lone surrogate escapes survive), numbers are float64,
// and an object keeps its keys in first-insertion order with the last value
// of a duplicated key.
type jsValue struct {
	kind  jsvKind
	b     bool
	num   float64
	str   string
	items []*jsValue // array items, or object values parallel to keys
	keys  []string
}

// field returns the value of key in an object, or nil.
func (v *jsValue) field(key string) *jsValue {
	if v == nil || v.kind != jsvObject {
		return nil
	}
	for i, k := range v.keys {
		if k == key {
			return v.items[i]
		}
	}
	return nil
}

// parseJSValue parses one complete JSON text (surrounding JSON whitespace
// allowed) with JSON.parse semantics.
func parseJSValue(data string) (*jsValue, error) {
	p := jsvParser{data: data}
	p.skipSpace()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos != len(p.data) {
		return nil, p.errorf("unexpected data after the JSON value")
	}
	return v, nil
}

type jsvParser struct {
	data string
	pos  int
}

func (p *jsvParser) errorf(format string, args ...any) error {
	return &jsvSyntaxError{msg: fmt.Sprintf(format, args...), offset: p.pos}
}

func (p *jsvParser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *jsvParser) value(depth int) (*jsValue, error) {
	if depth > maxJSValueDepth {
		return nil, p.errorf("nesting deeper than %d", maxJSValueDepth)
	}
	if p.pos >= len(p.data) {
		return nil, p.errorf("unexpected end of input")
	}
	switch c := p.data[p.pos]; {
	case c == '"':
		s, next, err := parseJSStringLiteral(p.data, p.pos)
		if err != nil {
			return nil, err
		}
		p.pos = next
		return &jsValue{kind: jsvString, str: s}, nil
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case strings.HasPrefix(p.data[p.pos:], "true"):
		p.pos += 4
		return &jsValue{kind: jsvBool, b: true}, nil
	case strings.HasPrefix(p.data[p.pos:], "false"):
		p.pos += 5
		return &jsValue{kind: jsvBool}, nil
	case strings.HasPrefix(p.data[p.pos:], "null"):
		p.pos += 4
		return &jsValue{kind: jsvNull}, nil
	default:
		return nil, p.errorf("unexpected character %q", c)
	}
}

func (p *jsvParser) object(depth int) (*jsValue, error) {
	v := &jsValue{kind: jsvObject}
	index := map[string]int{}
	p.pos++ // '{'
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return v, nil
	}
	for {
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return nil, p.errorf("expected a string key")
		}
		key, next, err := parseJSStringLiteral(p.data, p.pos)
		if err != nil {
			return nil, err
		}
		p.pos = next
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return nil, p.errorf("expected ':' after an object key")
		}
		p.pos++
		p.skipSpace()
		item, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		if at, dup := index[key]; dup {
			v.items[at] = item // JS: last value wins, first position kept
		} else {
			index[key] = len(v.keys)
			v.keys = append(v.keys, key)
			v.items = append(v.items, item)
		}
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, p.errorf("unexpected end of input in an object")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
			p.skipSpace()
		case '}':
			p.pos++
			return v, nil
		default:
			return nil, p.errorf("expected ',' or '}' in an object")
		}
	}
}

func (p *jsvParser) array(depth int) (*jsValue, error) {
	v := &jsValue{kind: jsvArray}
	p.pos++ // '['
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return v, nil
	}
	for {
		item, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		v.items = append(v.items, item)
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, p.errorf("unexpected end of input in an array")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
			p.skipSpace()
		case ']':
			p.pos++
			return v, nil
		default:
			return nil, p.errorf("expected ',' or ']' in an array")
		}
	}
}

// number scans the JSON number grammar and converts it the way JS does
// (IEEE round-to-nearest; overflow gives ±Infinity).
func (p *jsvParser) number() (*jsValue, error) {
	start := p.pos
	d := p.data
	i := p.pos
	if d[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(d) && d[i] == '0' {
		i++
	} else if digits() == 0 {
		p.pos = i
		return nil, p.errorf("invalid number")
	}
	if i < len(d) && d[i] == '.' {
		i++
		if digits() == 0 {
			p.pos = i
			return nil, p.errorf("invalid number: no digit after '.'")
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if digits() == 0 {
			p.pos = i
			return nil, p.errorf("invalid number: no digit in the exponent")
		}
	}
	p.pos = i
	f, err := strconv.ParseFloat(d[start:i], 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return nil, &jsvSyntaxError{msg: "invalid number", offset: start}
	}
	return &jsValue{kind: jsvNumber, num: f}, nil
}

// parseJSStringLiteral parses the JSON string literal starting at data[i]
// (which must be '"') and returns its value in WTF-8 and the offset after
// the closing quote. Escaped surrogate pairs combine into one code point;
// an unpaired surrogate escape stays a WTF-8 surrogate. Raw invalid UTF-8
// bytes are kept as they are.
func parseJSStringLiteral(data string, i int) (string, int, error) {
	if i >= len(data) || data[i] != '"' {
		return "", i, &jsvSyntaxError{msg: "expected a string", offset: i}
	}
	i++
	start := i
	// Fast path: no escape.
	for i < len(data) {
		c := data[i]
		if c == '"' {
			return data[start:i], i + 1, nil
		}
		if c == '\\' || c < 0x20 {
			break
		}
		i++
	}
	buf := []byte(data[start:i])
	for i < len(data) {
		c := data[i]
		switch {
		case c == '"':
			return string(buf), i + 1, nil
		case c < 0x20:
			return "", i, &jsvSyntaxError{msg: "control character in a string", offset: i}
		case c != '\\':
			buf = append(buf, c)
			i++
			continue
		}
		if i+1 >= len(data) {
			break
		}
		esc := data[i+1]
		switch esc {
		case '"', '\\', '/':
			buf = append(buf, esc)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := hex4(data, i+2)
			if !ok {
				return "", i, &jsvSyntaxError{msg: "invalid \\u escape", offset: i}
			}
			i += 6
			if isHighSurrogate(r) && i+1 < len(data) && data[i] == '\\' && data[i+1] == 'u' {
				if lo, ok := hex4(data, i+2); ok && isLowSurrogate(lo) {
					buf = utf8.AppendRune(buf, combineSurrogates(r, lo))
					i += 6
					continue
				}
			}
			buf = appendWTF8(buf, r)
			continue
		default:
			return "", i, &jsvSyntaxError{msg: fmt.Sprintf("invalid escape \\%c", esc), offset: i}
		}
		i += 2
	}
	return "", i, &jsvSyntaxError{msg: "unterminated string", offset: i}
}

// hex4 decodes the four hex digits of a \uXXXX escape at s[i:i+4].
func hex4[T ~string | ~[]byte](s T, i int) (rune, bool) { return jsjson.Hex4(s, i) }

// ---- JSON writing with JS semantics ----

// MarshalTagSafeJSON re-encodes the JSON value raw exactly as dsh's
// tag-safe serializer (JSON.stringify, then every "<" as \u003c) would write
// the value JSON.parse(raw) gives: compact, keys in insertion order (a
// duplicated key keeps its first position and its last value), numbers in
// JS Number#toString form (1.0 → 1, 1e21 → 1e+21, -0 → 0; out-of-range
// numbers are Infinity and write as null), strings escaped by
// AppendTagSafeString (invalid UTF-8 in raw is read as U+FFFD, as a JS
// TextDecoder would). An empty raw (JS undefined) gives
// ErrNotJSONSerializable; malformed JSON gives a syntax error with its offset.
func MarshalTagSafeJSON(raw json.RawMessage) ([]byte, error) {
	if len(strings.TrimLeft(string(raw), " \t\n\r")) == 0 {
		return nil, ErrNotJSONSerializable
	}
	v, err := parseJSValue(decodeUTF8Lossy(raw))
	if err != nil {
		return nil, err
	}
	return appendJSValue(make([]byte, 0, len(raw)), v, true), nil
}

// appendJSValue writes v compactly with JSON.stringify rules.
func appendJSValue(dst []byte, v *jsValue, tagSafe bool) []byte {
	switch v.kind {
	case jsvNull:
		return append(dst, "null"...)
	case jsvBool:
		if v.b {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case jsvNumber:
		if math.IsInf(v.num, 0) || math.IsNaN(v.num) {
			return append(dst, "null"...)
		}
		return AppendJSNumber(dst, v.num)
	case jsvString:
		return appendJSString(dst, v.str, tagSafe)
	case jsvArray:
		dst = append(dst, '[')
		for i, item := range v.items {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSValue(dst, item, tagSafe)
		}
		return append(dst, ']')
	default:
		dst = append(dst, '{')
		for i, key := range v.keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSString(dst, key, tagSafe)
			dst = append(dst, ':')
			dst = appendJSValue(dst, v.items[i], tagSafe)
		}
		return append(dst, '}')
	}
}

// AppendJSNumber appends f formatted as JS Number.prototype.toString()
// (radix 10) does: the shortest round-tripping digits, plain notation for
// decimal exponents in [-6, 21), exponent notation (1e+21, 1.5e-7)
// otherwise; -0 is "0", NaN "NaN", infinities "Infinity"/"-Infinity".
func AppendJSNumber(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	case f == 0:
		return append(dst, '0')
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	// Shortest digits in scientific form: d[.ddd]e±xx.
	var tmp [32]byte
	sci := strconv.AppendFloat(tmp[:0], f, 'e', -1, 64)
	ePos := strings.IndexByte(string(sci), 'e')
	mant, expPart := sci[:ePos], sci[ePos+1:]
	exp, _ := strconv.Atoi(string(expPart))
	digits := make([]byte, 0, len(mant))
	for _, c := range mant {
		if c != '.' {
			digits = append(digits, c)
		}
	}
	k := len(digits)
	n := exp + 1 // position of the decimal point relative to the digits
	switch {
	case k <= n && n <= 21:
		dst = append(dst, digits...)
		for range n - k {
			dst = append(dst, '0')
		}
	case 0 < n && n <= 21:
		dst = append(dst, digits[:n]...)
		dst = append(dst, '.')
		dst = append(dst, digits[n:]...)
	case -6 < n && n <= 0:
		dst = append(dst, '0', '.')
		for range -n {
			dst = append(dst, '0')
		}
		dst = append(dst, digits...)
	default:
		dst = append(dst, digits[0])
		if k > 1 {
			dst = append(dst, '.')
			dst = append(dst, digits[1:]...)
		}
		dst = append(dst, 'e')
		if n-1 >= 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, int64(n-1), 10)
	}
	return dst
}

// decodeUTF8Lossy returns b decoded as the WHATWG UTF-8 decoder (JS
// TextDecoder) does: each maximal ill-formed subsequence becomes one U+FFFD
// (jsjson.RepairUTF8, the one repair rule). Valid input is returned
// unchanged.
func decodeUTF8Lossy(b []byte) string { return string(jsjson.RepairUTF8(b)) }

// String names the JSON type: null, boolean, number, string, array or object.
func (k jsvKind) String() string {
	switch k {
	case jsvNull:
		return "null"
	case jsvBool:
		return "boolean"
	case jsvNumber:
		return "number"
	case jsvString:
		return "string"
	case jsvArray:
		return "array"
	}
	return "object"
}
