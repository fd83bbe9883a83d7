package jsjson

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
)

// LiteralLens returns, for the JSON string literal v, StringLen(v) and the
// tag-safe QuotedLen of String(v), in one pass over v and without decoding
// it. Indexing sizes every message of a store this way: separately, the
// two cost a decode-length pass, a UTF-8 check and four searches per text.
//
// ok is false when the pass cannot measure v exactly: v is not a literal,
// or it holds a \u escape (its decoding and re-escaping depend on the code
// point), a byte that is not valid UTF-8, a raw control character or quote,
// or a malformed escape. Measure it with StringLen and QuotedLen then.
func LiteralLens(v []byte) (textLen, quotedLen int, ok bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return 0, 0, false
	}
	b := v[1 : len(v)-1]
	n, q := 0, 2
	for i := 0; i < len(b); {
		if len(b)-i >= 8 {
			m := lensSpecial8(binary.LittleEndian.Uint64(b[i:]))
			if m == 0 {
				n, q, i = n+8, q+8, i+8
				continue
			}
			k := bits.TrailingZeros64(m) >> 3
			n, q, i = n+k, q+k, i+k
		}
		switch c := b[i]; {
		case c == '<': // written back as \u003c
			n, q, i = n+1, q+6, i+1
		case c == '\\':
			size := shortEscapeQuotedLen(b, i)
			if size == 0 {
				return 0, 0, false
			}
			n, q, i = n+1, q+size, i+2
		case c == '"' || c < 0x20:
			return 0, 0, false
		case c < utf8.RuneSelf:
			n, q, i = n+1, q+1, i+1
		default: // multibyte characters, each written back as it is
			j := multiByteRunEnd(b, i)
			if j == i {
				return 0, 0, false
			}
			n, q, i = n+j-i, q+j-i, j
		}
	}
	return n, q, true
}

// PlainBody reports whether a string literal's body b (between its
// quotes) decodes to itself: no escape, quote or control character, and
// valid UTF-8. It strides over 8 plain ASCII bytes at a time and over runs
// of multibyte characters, as the validating walk does.
func PlainBody(b []byte) bool {
	for i := 0; i < len(b); {
		if len(b)-i >= 8 {
			m := special8(binary.LittleEndian.Uint64(b[i:]))
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) >> 3
		}
		switch c := b[i]; {
		case c < 0x20 || c == '"' || c == '\\':
			return false
		case c < utf8.RuneSelf:
			i++
		default:
			j := multiByteRunEnd(b, i)
			if j == i {
				return false
			}
			i = j
		}
	}
	return true
}

// shortEscapeQuotedLen returns what the character the escape at b[i] (a
// backslash) stands for costs written back by JSON.stringify; 0 when it
// is not a short escape (\u, invalid or cut).
func shortEscapeQuotedLen(b []byte, i int) int {
	if i+1 == len(b) {
		return 0
	}
	switch b[i+1] {
	case '/': // the solidus is written unescaped
		return 1
	case '"', '\\', 'b', 'f', 'n', 'r', 't':
		return 2
	}
	return 0
}

// multiByteRunEnd returns the end of the valid multibyte characters that
// start at b[i]: i when the bytes there are not one. The forms of the
// scripts a transcript mixes (accents, Cyrillic, Greek, Arabic, CJK,
// Hangul, typographic punctuation, emoji) are checked here as
// utf8.DecodeRune checks them, a run at a time; the rest goes to it.
func multiByteRunEnd(b []byte, i int) int {
	for i < len(b) {
		switch ch := b[i]; {
		case ch < utf8.RuneSelf:
			return i
		case ch >= 0xC2 && ch <= 0xDF && i+1 < len(b) && b[i+1]&0xC0 == 0x80:
			i += 2
		case ch >= 0xE1 && ch <= 0xEF && ch != 0xED && i+2 < len(b) && b[i+1]&0xC0 == 0x80 && b[i+2]&0xC0 == 0x80:
			i += 3
		case ch == 0xF0 && i+3 < len(b) && b[i+1] >= 0x90 && b[i+1] <= 0xBF && b[i+2]&0xC0 == 0x80 && b[i+3]&0xC0 == 0x80:
			i += 4
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size <= 1 {
				return i
			}
			i += size
		}
	}
	return i
}

// lensSpecial8 is special8 plus '<': the bytes LiteralLens does not count
// as one plain byte.
func lensSpecial8(x uint64) uint64 {
	lt := x ^ (lsb * '<')
	return special8(x) | (lt-lsb)&^lt&msb
}
