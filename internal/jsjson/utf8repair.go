package jsjson

import "unicode/utf8"

// This file is the one UTF-8 repair rule of dsh-lsp. dsh (Node) decodes
// every log line and prompt with the WHATWG UTF-8 decoder (TextDecoder,
// Buffer#toString): each *maximal subpart* of an ill-formed sequence (the
// longest prefix of a valid sequence, or else one byte) becomes one U+FFFD
// (Unicode §3.9 "U+FFFD Substitution of Maximal Subparts"). So
// "Sum\xe2\x82b\xf0\x9f\x99x\xc0\xafend" reads as
// "Sum\ufffdb\ufffdx\ufffd\ufffdend": E2 82 and F0 9F 99 are truncated
// sequences (one U+FFFD each), C0 and AF can never start or continue a
// sequence (one each). Replacing every byte instead would give 7 U+FFFD.

// InvalidLen returns the length of the maximal subpart at s[i], which must
// not start a valid UTF-8 sequence: the lead byte plus every following byte
// that keeps the sequence a valid prefix (at most 3 bytes in all); 1 when
// s[i] cannot start a sequence at all.
func InvalidLen[T ~string | ~[]byte](s T, i int) int {
	c := s[i]
	need, lo, hi := 0, byte(0x80), byte(0xBF)
	switch {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c >= 0xE1 && c <= 0xEC, c == 0xEE, c == 0xEF:
		need = 2
	case c == 0xED:
		need, hi = 2, 0x9F
	case c == 0xF0:
		need, lo = 3, 0x90
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	case c == 0xF4:
		need, hi = 3, 0x8F
	}
	n := 1
	for j := i + 1; need > 0 && j < len(s) && s[j] >= lo && s[j] <= hi; j++ {
		n++
		need--
		lo, hi = 0x80, 0xBF
	}
	return n
}

// appendRepairedUTF8 appends s to dst with each maximal ill-formed subpart
// replaced by U+FFFD, as the WHATWG decoder does.
func appendRepairedUTF8[T ~string | ~[]byte](dst []byte, s T) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			continue
		}
		// A short conversion that does not escape: no allocation.
		_, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
		if size > 1 {
			i += size
			continue
		}
		dst = append(dst, s[start:i]...)
		dst = append(dst, "\uFFFD"...)
		i += InvalidLen(s, i)
		start = i
	}
	return append(dst, s[start:]...)
}

// RepairUTF8 returns b with each maximal ill-formed subpart replaced by
// U+FFFD (WHATWG decoding); valid input is returned as it is, not copied.
func RepairUTF8(b []byte) []byte {
	if utf8.Valid(b) {
		return b
	}
	return appendRepairedUTF8(make([]byte, 0, len(b)+8), b)
}

// RepairUTF8String is RepairUTF8 for a string.
func RepairUTF8String(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return string(appendRepairedUTF8(make([]byte, 0, len(s)+8), s))
}

// repairedLen returns len(RepairUTF8(b)) without building it.
func repairedLen(b []byte) int {
	if utf8.Valid(b) {
		return len(b)
	}
	n := 0
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			n++
			i++
			continue
		}
		if _, size := utf8.DecodeRune(b[i:]); size > 1 {
			n += size
			i += size
			continue
		}
		n += 3
		i += InvalidLen(b, i)
	}
	return n
}
