package jsjson

import (
	"bytes"
	"encoding/json"
	"math"
	"math/bits"
	"strconv"
	"unicode/utf8"
)

// The writers of this file produce exactly the bytes JS JSON.stringify
// produces for the value a Go string or float64 stands for. They live here,
// below both package reference and the LSP wire package, so that every JSON
// text dsh-lsp writes quotes strings with dsh's rule without a front end
// importing the domain core.

const hexDigits = "0123456789abcdef"

// shortEscape[c] is the letter of c's two-character escape (\" \\ \b \f
// \n \r \t), 0 when JSON.stringify writes c another way.
var shortEscape = [utf8.RuneSelf]byte{'"': '"', '\\': '\\', '\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't'}

// plainASCII reports whether JSON.stringify writes the ASCII byte c as it
// is; with tagSafe, "<" is escaped as well.
func plainASCII(c byte, tagSafe bool) bool {
	return c >= 0x20 && c != '"' && c != '\\' && (c != '<' || !tagSafe)
}

// AppendJSString appends s as a JSON string literal exactly as JS
// JSON.stringify writes it (\" \\ \b \f \n \r \t, other C0 controls as
// lowercase \u00xx, lone surrogates as \udxxx, everything else raw,
// including >, &, DEL, U+2028 and U+2029). With tagSafe, every "<" is also
// written as \u003c (dsh's tag-safe serializer). s is WTF-8 (see the package
// doc): a WTF-8 high surrogate immediately followed by a WTF-8 low surrogate
// is one astral character in the JS string it stands for, so it is written
// as that character's UTF-8 form, exactly as JSON.stringify would. Any
// other ill-formed UTF-8 is written with one U+FFFD per maximal subpart
// (InvalidLen).
func AppendJSString(dst []byte, s string, tagSafe bool) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		// Skip 8 plain ASCII bytes at a time (most of a text), then to the
		// first byte that is not.
		for len(s)-i >= 8 {
			x := load64(s, i)
			m := special8(x)
			if tagSafe {
				m = lensSpecial8(x)
			}
			if m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if plainASCII(c, tagSafe) {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			if e := shortEscape[c]; e != 0 {
				dst = append(dst, '\\', e)
			} else { // other C0 controls and, when tag-safe, '<'
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		if r, ok := SurrogateAt(s, i); ok {
			dst = append(dst, s[start:i]...)
			if lo, ok := SurrogateAt(s, i+3); ok && isHighSurrogate(r) && !isHighSurrogate(lo) {
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

// load64 is the 8 bytes of s at i, little-endian (compiled to one load).
func load64(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// Quote returns s quoted as JS JSON.stringify(s) does (AppendJSString, not
// tag-safe): the quoting dsh uses in error messages and inside session
// reference URIs.
func Quote(s string) string {
	return string(AppendJSString(make([]byte, 0, len(s)+2), s, false))
}

// QuotedLen returns len(AppendJSString(nil, s, tagSafe)) without
// allocating: the number of UTF-8 bytes s costs in a serialization, quotes
// included.
func QuotedLen(s string, tagSafe bool) int {
	n := 2
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case plainASCII(c, tagSafe):
				n++
			case shortEscape[c] != 0:
				n += 2
			default:
				n += 6
			}
			i++
			continue
		}
		if r, ok := SurrogateAt(s, i); ok {
			if lo, ok := SurrogateAt(s, i+3); ok && isHighSurrogate(r) && !isHighSurrogate(lo) {
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
			i += InvalidLen(s, i)
			continue
		}
		n += size
		i += size
	}
	return n
}

// SurrogateAt reports whether s[i:] starts with the WTF-8 encoding of a
// surrogate code point (ED A0..BF 80..BF) and returns that code point.
func SurrogateAt(s string, i int) (rune, bool) {
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

// AppendWTF8 appends code point r in WTF-8: a lone surrogate (which a JS
// string can hold) as its 3-byte generalized UTF-8 form, anything else as
// UTF-8.
func AppendWTF8(dst []byte, r rune) []byte {
	if isHighSurrogate(r) || isLowSurrogate(r) {
		return append(dst, 0xED, byte(0x80|(r>>6)&0x3F), byte(0x80|r&0x3F))
	}
	return utf8.AppendRune(dst, r)
}

// wtf8Len is len(AppendWTF8(nil, r)).
func wtf8Len(r rune) int {
	if isHighSurrogate(r) || isLowSurrogate(r) {
		return 3
	}
	return utf8.RuneLen(r)
}

// appendNumber appends f formatted as JS Number.prototype.toString()
// (radix 10) does: the shortest round-tripping digits, plain notation for
// decimal exponents in [-6, 21), exponent notation (1e+21, 1.5e-7)
// otherwise; -0 is "0", NaN "NaN", infinities "Infinity"/"-Infinity".
func appendNumber(dst []byte, f float64) []byte {
	if f == 0 || math.IsNaN(f) || math.IsInf(f, 0) {
		return append(dst, nonFiniteOrZero(f)...)
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	// Shortest round-tripping digits in scientific form, d[.ddd]e±xx,
	// split into the digits and the decimal exponent.
	var tmp [32]byte
	sci := strconv.AppendFloat(tmp[:0], f, 'e', -1, 64)
	var digits [24]byte
	k, exp := 0, 0
	for j, c := range sci {
		if c == 'e' {
			exp, _ = strconv.Atoi(string(sci[j+1:]))
			break
		}
		if c != '.' {
			digits[k] = c
			k++
		}
	}
	return appendDecimal(dst, digits[:k], exp+1)
}

// nonFiniteOrZero is the JS text of NaN, the infinities and zero (either
// sign), the numbers whose text is not built from their digits.
func nonFiniteOrZero(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return "0"
}

// appendDecimal writes digits d with the decimal point n places from
// their start (n <= 0: before them, with -n zeros in between) as
// Number#toString does: plain notation for n in (-6, 21], exponent
// notation otherwise.
func appendDecimal(dst, d []byte, n int) []byte {
	k := len(d)
	switch {
	case k <= n && n <= 21:
		dst = append(dst, d...)
		for range n - k {
			dst = append(dst, '0')
		}
	case 0 < n && n <= 21:
		dst = append(dst, d[:n]...)
		dst = append(dst, '.')
		dst = append(dst, d[n:]...)
	case -6 < n && n <= 0:
		dst = append(dst, '0', '.')
		for range -n {
			dst = append(dst, '0')
		}
		dst = append(dst, d...)
	default:
		dst = appendExponentForm(dst, d, n-1)
	}
	return dst
}

// appendExponentForm writes d as d₁[.d₂…]e±exp.
func appendExponentForm(dst, d []byte, exp int) []byte {
	dst = append(dst, d[0])
	if len(d) > 1 {
		dst = append(dst, '.')
		dst = append(dst, d[1:]...)
	}
	dst = append(dst, 'e')
	if exp >= 0 {
		dst = append(dst, '+')
	}
	return strconv.AppendInt(dst, int64(exp), 10)
}

// AppendValue writes v compactly with JSON.stringify rules; with tagSafe,
// every "<" in a string or key is written as \u003c.
func AppendValue(dst []byte, v *Value, tagSafe bool) []byte {
	switch v.Kind {
	case KindNull:
		return append(dst, "null"...)
	case KindBool:
		if v.Bool {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case KindNumber:
		if math.IsInf(v.Num, 0) || math.IsNaN(v.Num) {
			return append(dst, "null"...)
		}
		return appendNumber(dst, v.Num)
	case KindString:
		return AppendJSString(dst, v.Str, tagSafe)
	case KindArray:
		dst = append(dst, '[')
		for i, item := range v.Items {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendValue(dst, item, tagSafe)
		}
		return append(dst, ']')
	default:
		dst = append(dst, '{')
		for i, key := range v.Keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendJSString(dst, key, tagSafe)
			dst = append(dst, ':')
			dst = AppendValue(dst, v.Items[i], tagSafe)
		}
		return append(dst, '}')
	}
}

// Object writes one JSON object member by member, keys in insertion order
// as JSON.stringify writes an object's own keys, keys and string values
// quoted by AppendJSString. Values given raw are written as they are.
type Object struct {
	buf   []byte
	first int // len(buf) before any member: the next member needs no comma
}

// NewObject starts an object at the end of dst.
func NewObject(dst []byte) *Object {
	dst = append(dst, '{')
	return &Object{buf: dst, first: len(dst)}
}

// Raw writes member key with the raw JSON value v.
func (o *Object) Raw(key string, v []byte) *Object {
	o.key(key)
	o.buf = append(o.buf, v...)
	return o
}

// String writes member key with the string value v.
func (o *Object) String(key, v string) *Object {
	o.key(key)
	o.buf = AppendJSString(o.buf, v, false)
	return o
}

// Int writes member key with the integer value n.
func (o *Object) Int(key string, n int64) *Object {
	o.key(key)
	o.buf = strconv.AppendInt(o.buf, n, 10)
	return o
}

func (o *Object) key(key string) {
	if len(o.buf) > o.first {
		o.buf = append(o.buf, ',')
	}
	o.buf = AppendJSString(o.buf, key, false)
	o.buf = append(o.buf, ':')
}

// Bytes closes the object and returns dst with the object appended. The
// Object must not be written after.
func (o *Object) Bytes() []byte { return append(o.buf, '}') }

// Marshal encodes v with encoding/json, compact and without HTML escaping
// (a title's "<", ">" or "&" stays as dsh writes it) and without a trailing
// newline: the encoder every front end (LSP, CLI, MCP) writes its results
// with. Types whose strings may hold lone surrogates write them with
// AppendJSString in their MarshalJSON.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
