package position

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Encoding is a position encoding: the unit of Position.Character.
type Encoding string

// The position encodings of LSP 3.17.
const (
	UTF8  Encoding = "utf-8"
	UTF16 Encoding = "utf-16"
	UTF32 Encoding = "utf-32"
)

// NegotiateEncoding picks the server's position encoding from the client's
// general.positionEncodings: utf-8 when offered (no conversion), else utf-32,
// else the mandatory utf-16.
func NegotiateEncoding(offered []string) Encoding {
	switch {
	case slices.Contains(offered, string(UTF8)):
		return UTF8
	case slices.Contains(offered, string(UTF32)):
		return UTF32
	}
	return UTF16
}

// Mapper converts between byte offsets in a text and LSP positions. Lines
// end at "\n", "\r\n" or "\r", as LSP defines. Invalid UTF-8 bytes count as
// one unit each (one U+FFFD) in every encoding. A Mapper is immutable.
type Mapper struct {
	Content  string
	Encoding Encoding
	// lineStart[i] is the byte offset of line i; lineEnd[i] the offset of
	// its terminator (or len(Content) for the last line).
	lineStart, lineEnd []int
}

// NewMapper indexes content for the given encoding.
func NewMapper(content string, enc Encoding) *Mapper {
	m := &Mapper{Content: content, Encoding: enc}
	// Find terminators with strings.IndexByte (vectorised) rather than a
	// byte loop: this runs once per document version.
	nextCR := strings.IndexByte(content, '\r')
	start := 0
	for {
		nl := strings.IndexByte(content[start:], '\n')
		if nl >= 0 {
			nl += start
		}
		if nextCR >= 0 && nextCR < start {
			if nextCR = strings.IndexByte(content[start:], '\r'); nextCR >= 0 {
				nextCR += start
			}
		}
		switch {
		case nextCR >= 0 && (nl < 0 || nextCR < nl):
			m.lineStart = append(m.lineStart, start)
			m.lineEnd = append(m.lineEnd, nextCR)
			start = nextCR + 1
			if start < len(content) && content[start] == '\n' {
				start++
			}
		case nl >= 0:
			m.lineStart = append(m.lineStart, start)
			m.lineEnd = append(m.lineEnd, nl)
			start = nl + 1
		default:
			m.lineStart = append(m.lineStart, start)
			m.lineEnd = append(m.lineEnd, len(content))
			return m
		}
	}
}

// Line returns the text of line i without its terminator, and its start
// offset.
func (m *Mapper) Line(i int) (string, int) {
	return m.Content[m.lineStart[i]:m.lineEnd[i]], m.lineStart[i]
}

// unitLen is the length of rune r (encoded in n bytes) in the encoding.
func (m *Mapper) unitLen(r rune, n int) int {
	switch m.Encoding {
	case UTF8:
		return n
	case UTF32:
		return 1
	}
	if r >= 0x10000 && r != utf8.RuneError {
		return 2
	}
	return 1
}

// Offset returns the byte offset of p. A character past the end of its line
// is clamped to the line end (as LSP specifies); a character inside a
// multi-unit character (half a surrogate pair, inside a UTF-8 sequence) is
// rounded down to its start. A line past the end of the text is an error.
func (m *Mapper) Offset(p Position) (int, error) {
	line := int(p.Line)
	if line >= len(m.lineStart) {
		// One past the last line at character 0 is the end of the text
		// (clients send it for edits that append at the end).
		if line == len(m.lineStart) && p.Character == 0 {
			return len(m.Content), nil
		}
		return 0, fmt.Errorf("position %d:%d is beyond the last line (%d lines)", p.Line, p.Character, len(m.lineStart))
	}
	off, end := m.lineStart[line], m.lineEnd[line]
	want := int(p.Character)
	units := 0
	for off < end {
		r, n := utf8.DecodeRuneInString(m.Content[off:end])
		u := m.unitLen(r, n)
		if units+u > want {
			break
		}
		units += u
		off += n
	}
	return off, nil
}

// ClampedOffset is Offset with a line past the end clamped to the end of
// the text.
func (m *Mapper) ClampedOffset(p Position) int {
	off, err := m.Offset(p)
	if err != nil {
		return len(m.Content)
	}
	return off
}

// Position returns the position of byte offset off (clamped to [0,len]).
// An offset inside a line terminator or a multi-byte sequence maps to the
// position of the start of that terminator or sequence. It walks from the
// start of off's line: to map many offsets use a Sweep.
func (m *Mapper) Position(off int) Position {
	var s Sweep
	s.m = m
	s.line = -1
	return s.Position(off)
}

// lineOf returns the line holding byte offset off (in [0,len]).
func (m *Mapper) lineOf(off int) int {
	// binary search the last line starting at or before off
	lo, hi := 0, len(m.lineStart)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if m.lineStart[mid] <= off {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// Sweep maps byte offsets to positions, continuing from its previous
// answer when the next offset is on the same line and not before it. Mapping
// k ascending offsets of one line so costs O(line + k) instead of
// O(k × line): thousands of mentions on one line must not make each
// diagnostic walk the line from its start again. Any order is correct; only
// ascending order is fast.
type Sweep struct {
	m *Mapper
	// line is the line of the previous answer (-1 before the first); off
	// is a character start on it and units the units from the line start
	// to off.
	line, off, units int
}

// Sweep returns a new sweep over m.
func (m *Mapper) Sweep() *Sweep { return &Sweep{m: m, line: -1} }

// Position is Mapper.Position.
func (s *Sweep) Position(off int) Position {
	m := s.m
	off = min(max(off, 0), len(m.Content))
	line := m.lineOf(off)
	start, end := m.lineStart[line], m.lineEnd[line]
	if off > end {
		off = end
	}
	i, units := start, 0
	if line == s.line && off >= s.off {
		// s.off is a character start reached from the line start, so
		// decoding on from it gives the same characters.
		i, units = s.off, s.units
	}
	for i < off {
		r, n := utf8.DecodeRuneInString(m.Content[i:end])
		if i+n > off {
			break
		}
		units += m.unitLen(r, n)
		i += n
	}
	s.line, s.off, s.units = line, i, units
	return Position{Line: uint32(line), Character: uint32(units)}
}

// Positions returns the positions of offs (in any order) with one sweep
// over them in ascending order: O(k log k + the lines they are on), however
// many fall on one line.
func (m *Mapper) Positions(offs []int) []Position {
	order := make([]int, len(offs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return offs[a] - offs[b] })
	out := make([]Position, len(offs))
	sw := m.Sweep()
	for _, i := range order {
		out[i] = sw.Position(offs[i])
	}
	return out
}

// Range returns the range of the byte span [start, end).
func (m *Mapper) Range(start, end int) Range {
	s := m.Sweep()
	return Range{Start: s.Position(start), End: s.Position(end)}
}

// Range is Mapper.Range, continuing the sweep.
func (s *Sweep) Range(start, end int) Range {
	return Range{Start: s.Position(start), End: s.Position(end)}
}
