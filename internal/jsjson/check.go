package jsjson

import (
	"encoding/binary"
	"math"
	"math/bits"
	"unicode/utf8"
)

// maxDepth is encoding/json's nesting limit: deeper values are invalid,
// so the checker accepts exactly what json.Valid accepts.
const maxDepth = 10000

// Member is one entry of a tape: a member of an object or an element of
// an array, as offsets into the checked bytes b (Key and Value slice
// them), so that recording it writes little.
type Member struct {
	// KeyAt and KeyEnd bound the member's key literal, quotes included
	// (both 0 for an element); At and End bound its value.
	KeyAt, KeyEnd, At, End int32
	// Sub is the index of the value's first entry when the value is an
	// object or array the tape holds, 0 when it is an empty one, -1
	// otherwise.
	Sub int32
	// Next is the index of the next entry of the same object or array, -1
	// after the last.
	Next int32
}

// Key returns the entry's key literal in b, nil for an element.
func (m *Member) Key(b []byte) []byte {
	if m.KeyEnd == 0 {
		return nil
	}
	return b[m.KeyAt:m.KeyEnd]
}

// Value returns the entry's raw value in b.
func (m *Member) Value(b []byte) []byte { return b[m.At:m.End] }

// TapeDepth is how deep a tape holds objects and arrays: the top-level
// object, and the objects and arrays nested in it down to this many
// levels below it (a record, its data, data.message, message.content and
// content's blocks).
const TapeDepth = 4

// MaxTape bounds a tape: a record with more entries to hold (or bytes
// past an int32 offset) is checked without one (held is false), so that a
// huge line cannot make its tape many times its size.
const MaxTape = 1 << 12

// CheckObjectTape validates b as one JSON object (RFC 8259 grammar,
// optional surrounding whitespace, at most 10,000 levels of nesting:
// exactly what encoding/json's Valid accepts for an object) in one pass.
// Like json.Valid it does not reject invalid UTF-8 inside strings; utf8OK
// reports whether b is valid UTF-8 throughout, so a caller repairs only the
// rare line that needs it. It records on a tape, in the same walk, the
// members of b's top-level object and
// the entries of the objects and arrays nested in it down to TapeDepth
// levels, appended to tape[:0] and linked by Sub and Next; the top-level
// members start at index 0 (when there are any). A reader then finds a
// member or an element of these without walking their bytes again. held
// is false when there were more than MaxTape entries (out is then empty);
// the tape is only meaningful when ok and held.
func CheckObjectTape(b []byte, tape []Member) (out []Member, held, ok, utf8OK bool) {
	c := checker{b: b, utf8OK: true, tape: tape[:0], full: len(b) > math.MaxInt32}
	ok, utf8OK = c.object(SkipSpace(b, 0), 0, true)
	if c.full {
		return c.tape[:0], false, ok, utf8OK
	}
	return c.tape, true, ok, utf8OK
}

type checker struct {
	b      []byte
	utf8OK bool
	// fn is called with each top-level member.
	fn func(key, value []byte)
	// tape, when recording, receives the entries held; full is set when
	// it would pass MaxTape.
	tape []Member
	full bool
}

// hold appends a placeholder for an entry whose key literal is
// b[keyAt:keyEnd] (0, 0: an element) to the tape, linked after *prev;
// false once the tape is full.
func (c *checker) hold(keyAt, keyEnd int, prev *int) (int, bool) {
	if c.full || len(c.tape) >= MaxTape {
		c.full = true
		return 0, false
	}
	k := len(c.tape)
	c.tape = append(c.tape, Member{KeyAt: int32(keyAt), KeyEnd: int32(keyEnd), Sub: -1, Next: -1})
	if *prev >= 0 {
		c.tape[*prev].Next = int32(k)
	}
	*prev = k
	return k, true
}

// fill completes the held entry k with its value b[v:end]; with sub, a
// container value (held just after it) links to its first entry.
func (c *checker) fill(k, v, end int, sub bool) {
	if c.full {
		return
	}
	m := &c.tape[k]
	m.At, m.End = int32(v), int32(end)
	if sub && (c.b[v] == '{' || c.b[v] == '[') {
		m.Sub = 0
		if len(c.tape) > k+1 {
			m.Sub = int32(k + 1)
		}
	}
}

// object checks that b holds one object at i (after whitespace) and
// nothing after it but whitespace.
func (c *checker) object(i, depth int, record bool) (ok, utf8OK bool) {
	b := c.b
	if i >= len(b) || b[i] != '{' {
		return false, true
	}
	end, ok := c.members(i, depth+1, record)
	return ok && SkipSpace(b, end) == len(b), c.utf8OK
}

// value validates the value starting at i (after whitespace) at nesting
// depth depth and returns its end; with record, an object or array value's
// entries are recorded on the tape.
func (c *checker) value(i, depth int, record bool) (int, bool) {
	b := c.b
	if i >= len(b) {
		return 0, false
	}
	switch b[i] {
	case '"':
		return c.str(i)
	case '{':
		if depth+1 > maxDepth {
			return 0, false
		}
		return c.members(i, depth+1, record)
	case '[':
		return c.array(i, depth, record)
	case 't':
		return literal(b, i, "true")
	case 'f':
		return literal(b, i, "false")
	case 'n':
		return literal(b, i, "null")
	default:
		end, problem := number(b, i)
		return end, problem == ""
	}
}

// members validates the object whose '{' is at i, whose member values
// are at nesting depth depth, and returns its end. With record, its
// members are recorded on the tape; the top-level object's (depth 1) are
// also reported to fn.
func (c *checker) members(i, depth int, record bool) (int, bool) {
	b := c.b
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	sub := record && depth <= TapeDepth
	prev := -1
	for {
		if i >= len(b) || b[i] != '"' {
			return 0, false
		}
		keyEnd, ok := c.str(i)
		if !ok {
			return 0, false
		}
		j := SkipSpace(b, keyEnd)
		if j >= len(b) || b[j] != ':' {
			return 0, false
		}
		v := SkipSpace(b, j+1)
		k, held := 0, false
		if record {
			k, held = c.hold(i, keyEnd, &prev)
		}
		end, ok := c.value(v, depth, sub)
		if !ok {
			return 0, false
		}
		if held {
			c.fill(k, v, end, sub)
		}
		if depth == 1 && c.fn != nil {
			c.fn(b[i:keyEnd], b[v:end])
		}
		next, closed, ok := c.separator(end, '}')
		if !ok || closed {
			return next, ok
		}
		i = next
	}
}

// array validates the array whose '[' is at i, nested at depth, and
// returns its end. With record, its elements are recorded on the tape.
func (c *checker) array(i, depth int, record bool) (int, bool) {
	if depth+1 > maxDepth {
		return 0, false
	}
	b := c.b
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, true
	}
	sub := record && depth+1 <= TapeDepth
	prev := -1
	for {
		k, held := 0, false
		if record {
			k, held = c.hold(0, 0, &prev)
		}
		end, ok := c.value(i, depth+1, sub)
		if !ok {
			return 0, false
		}
		if held {
			c.fill(k, i, end, sub)
		}
		next, closed, ok := c.separator(end, ']')
		if !ok || closed {
			return next, ok
		}
		i = next
	}
}

// separator reads what follows a member or element ending at i: closing
// ends the container (closed, next is just past it), a comma continues it
// (next is the following item's start).
func (c *checker) separator(i int, closing byte) (next int, closed, ok bool) {
	b := c.b
	i = SkipSpace(b, i)
	switch {
	case i >= len(b):
		return 0, false, false
	case b[i] == closing:
		return i + 1, true, true
	case b[i] == ',':
		return SkipSpace(b, i+1), false, true
	}
	return 0, false, false
}

func literal(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return 0, false
	}
	return i + len(lit), true
}

// number scans -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? at i and
// returns its end. When b holds no number there, problem says what is
// missing (JSON.parse's message) and end is where it is missing.
func number(b []byte, i int) (end int, problem string) {
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i, problem = integerPart(b, i); problem != "" {
		return i, problem
	}
	if i, problem = fractionPart(b, i); problem != "" {
		return i, problem
	}
	return exponentPart(b, i)
}

// integerPart scans 0|[1-9][0-9]* at i.
func integerPart(b []byte, i int) (end int, problem string) {
	if i < len(b) && b[i] == '0' {
		return i + 1, ""
	}
	if j := digitsEnd(b, i); j > i {
		return j, ""
	}
	return i, "invalid number"
}

// fractionPart scans an optional \.[0-9]+ at i.
func fractionPart(b []byte, i int) (end int, problem string) {
	if i >= len(b) || b[i] != '.' {
		return i, ""
	}
	j := digitsEnd(b, i+1)
	if j == i+1 {
		return j, "invalid number: no digit after '.'"
	}
	return j, ""
}

// exponentPart scans an optional [eE][+-]?[0-9]+ at i.
func exponentPart(b []byte, i int) (end int, problem string) {
	if i >= len(b) || (b[i] != 'e' && b[i] != 'E') {
		return i, ""
	}
	i++
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		i++
	}
	j := digitsEnd(b, i)
	if j == i {
		return i, "invalid number: no digit in the exponent"
	}
	return j, ""
}

// digitsEnd returns the end of the run of ASCII digits at b[i].
func digitsEnd(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// special8 flags, in the top bit of each of the 8 bytes x holds, a '"',
// '\\', control character (< 0x20) or non-ASCII byte (>= 0x80). Flags above
// a flagged byte may be spurious (borrows), so the lowest flag is the
// first such byte.
func special8(x uint64) uint64 {
	q := x ^ (lsb * '"')
	s := x ^ (lsb * '\\')
	return ((q-lsb)&^q | (s-lsb)&^s | (x - lsb*0x20) | x) & msb
}

// str validates the string literal at b[i] (a quote) and returns its end.
func (c *checker) str(i int) (int, bool) {
	b := c.b
	j := i + 1
	for {
		// Skip 8 plain ASCII bytes at a time (the bulk of a transcript
		// is string content), then to the first special byte.
		for len(b)-j >= 8 {
			if m := special8(binary.LittleEndian.Uint64(b[j:])); m != 0 {
				j += bits.TrailingZeros64(m) >> 3
				break
			}
			j += 8
		}
		if j >= len(b) {
			return 0, false
		}
		switch ch := b[j]; {
		case ch == '"':
			return j + 1, true
		case ch == '\\':
			if j+1 >= len(b) {
				return 0, false
			}
			switch b[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				if _, ok := hex4(b, j+2); !ok {
					return 0, false
				}
				j += 6
			default:
				return 0, false
			}
		case ch < 0x20:
			return 0, false
		case ch < utf8.RuneSelf:
			j++
		default:
			// Non-ASCII comes in runs (words of a script other than
			// Latin): stay on the run rather than go back to the stride.
			for {
				j = multiByteRunEnd(b, j)
				if j >= len(b) || b[j] < utf8.RuneSelf {
					break
				}
				c.utf8OK = false // an invalid byte: counted as one
				j++
			}
		}
	}
}
