package position

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
)

// Chunk sizes of a Text. A change copies at most about two chunks and scans
// the chunk summaries (n/chunkMax of them), so one change costs
// O(chunkMax + n/chunkMax + len(change)), not O(n): 2,000 changes to a
// 20 MB document stay well under a second (see BenchmarkTextApply).
//
// Variables so that tests can use tiny chunks.
var (
	chunkMax = 8 << 10
	// chunkMin: a rebuilt piece smaller than this is merged with a
	// neighbour, so edits do not leave many tiny chunks.
	chunkMin = chunkMax / 4
)

// chunk is a piece of a Text with its summary.
type chunk struct {
	s string
	// breaks is the number of line terminators in s ("\r\n" counts once;
	// a Text never splits one between two chunks).
	breaks int
	// u16 and u32 are the length of s in UTF-16 and UTF-32 units.
	u16, u32 int
}

func newChunk(s string) chunk {
	c := chunk{s: s}
	c.breaks = strings.Count(s, "\n") + strings.Count(s, "\r") - strings.Count(s, "\r\n")
	c.u32, c.u16 = countUnits(s)
	return c
}

// countUnits returns the length of valid UTF-8 s in code points and in
// UTF-16 units.
func countUnits(s string) (u32, u16 int) {
	for i := 0; i < len(s); i++ {
		if b := s[i]; b&0xC0 != 0x80 {
			u32++
			if b >= 0xF0 {
				u16++ // a 4-byte sequence: a surrogate pair
			}
		}
	}
	return u32, u32 + u16
}

// units is the chunk's length in enc.
func (c *chunk) units(enc Encoding) int {
	switch enc {
	case UTF8:
		return len(c.s)
	case UTF32:
		return c.u32
	}
	return c.u16
}

// Text is an editable document text for incremental synchronisation. It is
// held in chunks of at most chunkMax bytes, each with its count of line
// terminators and of UTF-16/UTF-32 units, so that finding a position and
// replacing a range cost O(chunkMax + number of chunks + size of the
// change) instead of O(document): one didChange with N range changes does
// not copy the document N times.
//
// A Text always holds valid UTF-8 (text decoded from JSON is), so chunk
// boundaries are character boundaries; NewText replaces ill-formed UTF-8
// with U+FFFD (see validUTF8). A Text is not safe for
// concurrent use; Clone is cheap (it copies the chunk list, not the text).
type Text struct {
	chunks []chunk
	size   int
}

// NewText returns a Text holding s.
func NewText(s string) *Text {
	t := &Text{}
	t.chunks = appendChunks(nil, validUTF8(s))
	for _, c := range t.chunks {
		t.size += len(c.s)
	}
	return t
}

// validUTF8 returns s with each maximal ill-formed UTF-8 subpart replaced
// by U+FFFD (jsjson.RepairUTF8String, the one repair rule: Node's
// TextDecoder's). Text decoded from JSON is always valid; this guards the
// other callers.
func validUTF8(s string) string { return jsjson.RepairUTF8String(s) }

// appendChunks splits s into chunks of at most chunkMax bytes, cutting only
// at character starts and never inside "\r\n".
func appendChunks(dst []chunk, s string) []chunk {
	for len(s) > chunkMax {
		cut := chunkMax
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		if s[cut] == '\n' && s[cut-1] == '\r' {
			cut--
		}
		dst = append(dst, newChunk(s[:cut]))
		s = s[cut:]
	}
	if s != "" {
		dst = append(dst, newChunk(s))
	}
	return dst
}

// Len returns the length of the text in bytes.
func (t *Text) Len() int { return t.size }

// String returns the whole text (one copy).
func (t *Text) String() string {
	if len(t.chunks) == 1 {
		return t.chunks[0].s
	}
	var b strings.Builder
	b.Grow(t.size)
	for _, c := range t.chunks {
		b.WriteString(c.s)
	}
	return b.String()
}

// Clone returns an independent copy of t that shares the (immutable) chunk
// strings.
func (t *Text) Clone() *Text {
	return &Text{chunks: append([]chunk(nil), t.chunks...), size: t.size}
}

// Offset returns the byte offset of p, with Mapper.Offset's rules: a
// character past the end of its line is clamped to the line end, one inside
// a multi-unit character rounds down to its start, the line after the last
// at character 0 is the end of the text, and any other line past the end
// is an error.
func (t *Text) Offset(p Position, enc Encoding) (int, error) {
	line, want := int(p.Line), int(p.Character)
	k, off, before := t.chunkOfLine(line)
	if k == len(t.chunks) {
		switch {
		case line == before:
			return 0, nil // line 0 of an empty text
		case line == before+1 && want == 0:
			// One past the last line at character 0 is the end of the
			// text (clients send it for edits that append at the end).
			return t.size, nil
		}
		return 0, fmt.Errorf("position %d:%d is beyond the last line (%d lines)", p.Line, p.Character, before+1)
	}
	i := skipLines(t.chunks[k].s, line-before)
	return t.walkLine(k, off, i, want, enc), nil
}

// chunkOfLine returns the index k of the chunk holding the start of line,
// its byte offset and the number of line terminators before it; k is
// len(t.chunks) when the text has fewer lines.
func (t *Text) chunkOfLine(line int) (k, off, before int) {
	for ; k < len(t.chunks) && before+t.chunks[k].breaks < line; k++ {
		before += t.chunks[k].breaks
		off += len(t.chunks[k].s)
	}
	return k, off, before
}

// skipLines returns the offset in s just past its first n line
// terminators ("\r\n" counts once); s holds at least n.
func skipLines(s string, n int) int {
	i := 0
	for ; n > 0; n-- {
		i += strings.IndexAny(s[i:], "\r\n") + 1
		if s[i-1] == '\r' && i < len(s) && s[i] == '\n' {
			i++
		}
	}
	return i
}

// walkLine returns the text offset of unit want of the line that starts at
// byte i of chunk k (chunk k starts at text offset off), clamped to the
// line's end. Whole chunks, and the rest of the first one, are skipped
// when they hold no terminator and fewer units than remain.
func (t *Text) walkLine(k, off, i, want int, enc Encoding) int {
	s, units := t.chunks[k].s, 0
	for {
		var stopped bool
		i, units = skipPlainTail(s, i, units, want, enc)
		if i, units, stopped = scanLine(s, i, units, want, enc); stopped {
			return off + i
		}
		k, off, units = t.skipPlainChunks(k+1, off+len(s), units, want, enc)
		if k == len(t.chunks) {
			return off
		}
		s, i = t.chunks[k].s, 0
	}
}

// skipPlainTail skips s[i:] whole (units counted) when it holds no line
// terminator and no more units than remain to want.
func skipPlainTail(s string, i, units, want int, enc Encoding) (int, int) {
	rest := s[i:]
	if strings.ContainsAny(rest, "\r\n") {
		return i, units
	}
	if u := unitsOf(rest, enc); units+u <= want {
		return len(s), units + u
	}
	return i, units
}

// scanLine walks s from byte i, units into the line, one character at a
// time. It stops at a line terminator or at the character that would pass
// want units (stopped, i is where); otherwise it returns len(s) and the
// units counted so far.
func scanLine(s string, i, units, want int, enc Encoding) (int, int, bool) {
	for i < len(s) {
		if b := s[i]; b < utf8.RuneSelf {
			if b == '\n' || b == '\r' || units+1 > want {
				return i, units, true
			}
			units++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		u := unitLen(enc, r, size)
		if units+u > want {
			return i, units, true
		}
		units += u
		i += size
	}
	return i, units, false
}

// skipPlainChunks skips the chunks from k on that hold no line terminator
// and fit in the units that remain to want, and returns the first chunk
// not skipped with its offset and the units counted.
func (t *Text) skipPlainChunks(k, off, units, want int, enc Encoding) (int, int, int) {
	for k < len(t.chunks) && t.chunks[k].breaks == 0 && units+t.chunks[k].units(enc) <= want {
		units += t.chunks[k].units(enc)
		off += len(t.chunks[k].s)
		k++
	}
	return k, off, units
}

// unitsOf is the length of valid UTF-8 s in enc.
func unitsOf(s string, enc Encoding) int {
	if enc == UTF8 {
		return len(s)
	}
	u32, u16 := countUnits(s)
	if enc == UTF32 {
		return u32
	}
	return u16
}

// unitLen is the length of rune r (encoded in n bytes) in enc.
func unitLen(enc Encoding, r rune, n int) int {
	switch enc {
	case UTF8:
		return n
	case UTF32:
		return 1
	}
	return utf16.RuneLen(r)
}

// clampedOffset is Offset with a line past the end clamped to the end.
func (t *Text) clampedOffset(p Position, enc Encoding) int {
	off, err := t.Offset(p, enc)
	if err != nil {
		return t.size
	}
	return off
}

// Replace replaces the bytes [start, end) with s. start and end must be
// character starts with start <= end <= Len() (Offset gives such offsets).
func (t *Text) Replace(start, end int, s string) {
	s = validUTF8(s)
	if len(t.chunks) == 0 {
		t.chunks = appendChunks(nil, s)
		t.size = len(s)
		return
	}
	// i: the chunk holding start (the last one when start is the end);
	// j: the chunk holding end.
	i, io := 0, 0
	for i < len(t.chunks)-1 && io+len(t.chunks[i].s) <= start {
		io += len(t.chunks[i].s)
		i++
	}
	j, jo := i, io
	for j < len(t.chunks)-1 && jo+len(t.chunks[j].s) < end {
		jo += len(t.chunks[j].s)
		j++
	}
	piece := t.chunks[i].s[:start-io] + s + t.chunks[j].s[end-jo:]
	// Keep "\r\n" inside one chunk, and do not leave small chunks: take
	// the neighbours in when needed.
	lo, hi := i, j+1
	if lo > 0 && (len(piece) < chunkMin || strings.HasPrefix(piece, "\n") && strings.HasSuffix(t.chunks[lo-1].s, "\r")) {
		lo--
		piece = t.chunks[lo].s + piece
	}
	if hi < len(t.chunks) && (len(piece) < chunkMin || strings.HasSuffix(piece, "\r") && strings.HasPrefix(t.chunks[hi].s, "\n")) {
		piece += t.chunks[hi].s
		hi++
	}
	// Copy the piece: it may hold substrings of large strings (the opened
	// text, a long inserted text) that would otherwise stay referenced.
	repl := appendChunks(nil, strings.Clone(piece))
	t.chunks = slices.Replace(t.chunks, lo, hi, repl...) // in place when it fits
	t.size += len(s) - (end - start)
}

// Apply applies LSP content changes in order (ranges in enc). A change
// without a range replaces the whole text; a reversed range is an error,
// and then t is left unchanged.
func (t *Text) Apply(enc Encoding, changes []Change) error {
	work := t.Clone()
	for i, ch := range changes {
		if ch.Range == nil {
			*work = *NewText(ch.Text)
			continue
		}
		start := work.clampedOffset(ch.Range.Start, enc)
		end := work.clampedOffset(ch.Range.End, enc)
		if end < start {
			return fmt.Errorf("content change %d: range end %d:%d is before its start %d:%d", i,
				ch.Range.End.Line, ch.Range.End.Character, ch.Range.Start.Line, ch.Range.Start.Character)
		}
		work.Replace(start, end, ch.Text)
	}
	*t = *work
	return nil
}
