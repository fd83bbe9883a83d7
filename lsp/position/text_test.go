package position

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// naiveLines splits text into lines the slow, obvious way.
func naiveLines(text string) (starts, ends []int) {
	start := 0
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '\n':
			starts, ends = append(starts, start), append(ends, i)
			start = i + 1
		case '\r':
			starts, ends = append(starts, start), append(ends, i)
			if i+1 < len(text) && text[i+1] == '\n' {
				i++
			}
			start = i + 1
		}
	}
	return append(starts, start), append(ends, len(text))
}

// naivePosition maps off by walking from its line start.
func naivePosition(text string, enc Encoding, off int) Position {
	off = min(max(off, 0), len(text))
	starts, ends := naiveLines(text)
	line := 0
	for line+1 < len(starts) && starts[line+1] <= off {
		line++
	}
	if off > ends[line] {
		off = ends[line]
	}
	units := 0
	for i := starts[line]; i < off; {
		r, n := utf8.DecodeRuneInString(text[i:ends[line]])
		if i+n > off {
			break
		}
		switch {
		case enc == UTF8:
			units += n
		case enc == UTF16 && r >= 0x10000 && r != utf8.RuneError:
			units += 2
		default:
			units++
		}
		i += n
	}
	return Position{Line: uint32(line), Character: uint32(units)}
}

// randomText builds text from pieces that exercise every rule: multi-byte
// and astral characters, all three terminators, invalid bytes (when
// invalid is set).
func randomText(r *rand.Rand, n int, invalid bool) string {
	pieces := []string{"a", "b", "é", "🙂", "\n", "\r", "\r\n", "@", " ", "中"}
	if invalid {
		pieces = append(pieces, "\xff", "\xe2\x82", "\xf0\x9f")
	}
	var b strings.Builder
	for range n {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

func TestNewMapperLines(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		text := randomText(r, r.IntN(40), i%2 == 0)
		m := NewMapper(text, UTF16)
		starts, ends := naiveLines(text)
		if fmt.Sprint(m.lineStart, m.lineEnd) != fmt.Sprint(starts, ends) {
			t.Fatalf("NewMapper(%q) lines %v %v, want %v %v", text, m.lineStart, m.lineEnd, starts, ends)
		}
	}
}

func TestSweepMatchesPosition(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 1000 {
		text := randomText(r, r.IntN(60), i%2 == 0)
		for _, enc := range []Encoding{UTF8, UTF16, UTF32} {
			m := NewMapper(text, enc)
			sw := m.Sweep()
			// Mostly ascending offsets, with some steps back, as
			// diagnostics ranges give them.
			off := 0
			for range 30 {
				if r.IntN(4) == 0 {
					off = r.IntN(len(text) + 3)
				} else {
					off += r.IntN(5)
				}
				want := naivePosition(text, enc, off)
				if got := sw.Position(off); got != want {
					t.Fatalf("%s Sweep.Position(%d) of %q = %v, want %v", enc, off, text, got, want)
				}
				if got := m.Position(off); got != want {
					t.Fatalf("%s Position(%d) of %q = %v, want %v", enc, off, text, got, want)
				}
			}
		}
	}
}

// TestTextMatchesCopying applies random change batches with tiny chunks
// (so that every change crosses chunk boundaries) and compares the result
// with the copying implementation.
func TestTextMatchesCopying(t *testing.T) {
	defer func(max, min int) { chunkMax, chunkMin = max, min }(chunkMax, chunkMin)
	r := rand.New(rand.NewPCG(5, 6))
	for _, sizes := range [][2]int{{8, 2}, {5, 1}, {16, 8}, {64, 16}} {
		chunkMax, chunkMin = sizes[0], sizes[1]
		for i := range 600 {
			enc := []Encoding{UTF8, UTF16, UTF32}[i%3]
			text := randomText(r, r.IntN(50), false)
			lines := strings.Count(text, "\n") + strings.Count(text, "\r") + 2
			var changes []Change
			for range 1 + r.IntN(8) {
				p := func() Position { return Position{Line: uint32(r.IntN(lines + 1)), Character: uint32(r.IntN(12))} }
				a, b := p(), p()
				if r.IntN(5) > 0 && (b.Line < a.Line || b.Line == a.Line && b.Character < a.Character) {
					a, b = b, a // mostly valid ranges, some reversed
				}
				ch := Change{Range: &Range{Start: a, End: b}, Text: randomText(r, r.IntN(6), false)}
				if r.IntN(40) == 0 {
					ch.Range = nil
				}
				changes = append(changes, ch)
			}
			want, wantErr := applyChangesCopying(text, enc, changes)
			tx := NewText(text)
			err := tx.Apply(enc, changes)
			if (err != nil) != (wantErr != nil) {
				t.Fatalf("chunks %v %s %q %s: error %v, want %v", sizes, enc, text, describe(changes), err, wantErr)
			}
			if err != nil {
				if got := tx.String(); got != text {
					t.Fatalf("a failed Apply changed the text: %q -> %q", text, got)
				}
				continue
			}
			if got := tx.String(); got != want || tx.Len() != len(want) {
				t.Fatalf("chunks %v %s %q %s:\n got %q (len %d)\nwant %q", sizes, enc, text, describe(changes), got, tx.Len(), want)
			}
			checkChunks(t, tx)
			// Offsets of the result agree with a Mapper of it.
			m := NewMapper(want, enc)
			for range 10 {
				p := Position{Line: uint32(r.IntN(lines + 2)), Character: uint32(r.IntN(12))}
				wo, werr := m.Offset(p)
				o, err := tx.Offset(p, enc)
				if (err != nil) != (werr != nil) || o != wo {
					t.Fatalf("%s Offset(%v) of %q = %d, %v; want %d, %v", enc, p, want, o, err, wo, werr)
				}
			}
		}
	}
}

// checkChunks checks the invariants of a Text.
func checkChunks(t *testing.T, tx *Text) {
	t.Helper()
	for i, c := range tx.chunks {
		if c.s == "" || len(c.s) > chunkMax || !utf8.ValidString(c.s) {
			t.Fatalf("chunk %d %q: empty, too long or not UTF-8", i, c.s)
		}
		if newChunk(c.s) != c {
			t.Fatalf("chunk %d %q: stale summary", i, c.s)
		}
		if i > 0 && strings.HasSuffix(tx.chunks[i-1].s, "\r") && strings.HasPrefix(c.s, "\n") {
			t.Fatalf("chunks %d/%d split a CRLF", i-1, i)
		}
	}
}

func describe(changes []Change) string {
	var b strings.Builder
	for _, c := range changes {
		if c.Range == nil {
			fmt.Fprintf(&b, "[full %q]", c.Text)
		} else {
			fmt.Fprintf(&b, "[%v-%v %q]", c.Range.Start, c.Range.End, c.Text)
		}
	}
	return b.String()
}

func TestNewTextInvalidUTF8(t *testing.T) {
	tx := NewText("a\xffb")
	if got := tx.String(); got != "a\uFFFDb" {
		t.Fatalf("NewText kept invalid UTF-8: %q", got)
	}
	// ApplyChanges keeps invalid content byte for byte.
	got, err := ApplyChanges("a\xffb", UTF16, []Change{{Range: &Range{Start: Position{Line: 0, Character: 2}, End: Position{Line: 0, Character: 2}}, Text: "X"}})
	if err != nil || got != "a\xffXb" {
		t.Fatalf("ApplyChanges on invalid UTF-8 = %q, %v", got, err)
	}
}

func TestPositionsAnyOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for i := range 300 {
		text := randomText(r, r.IntN(60), i%2 == 0)
		m := NewMapper(text, UTF16)
		offs := make([]int, r.IntN(20))
		for j := range offs {
			offs[j] = r.IntN(len(text) + 2)
		}
		got := m.Positions(offs)
		for j, off := range offs {
			if want := naivePosition(text, UTF16, off); got[j] != want {
				t.Fatalf("Positions(%v)[%d] of %q = %v, want %v", offs, j, text, got[j], want)
			}
		}
	}
}

// TestNewTextRepairsLikeNode checks that document text with invalid UTF-8
// (never sent by a JSON client, but possible from other callers) is
// repaired by the one rule: one U+FFFD per maximal ill-formed subpart.
func TestNewTextRepairsLikeNode(t *testing.T) {
	text := NewText("Sum\xe2\x82b\xf0\x9f\x99x\xc0\xafend")
	if got, want := text.String(), "Sum\ufffdb\ufffdx\ufffd\ufffdend"; got != want {
		t.Errorf("NewText(...).String() = %q, want %q", got, want)
	}
}

// ApplyChanges applies LSP content changes in order to content and returns
// the new text. A change without a range replaces the whole text. Ranges
// are read in enc; a reversed range is an error. The changes are applied to
// a chunked Text, so N range changes do not cost N copies of the document.
func ApplyChanges(content string, enc Encoding, changes []Change) (string, error) {
	if !utf8.ValidString(content) {
		// Text holds valid UTF-8 only; keep such content byte for byte.
		return applyChangesCopying(content, enc, changes)
	}
	t := NewText(content)
	if err := t.Apply(enc, changes); err != nil {
		return "", err
	}
	return t.String(), nil
}

// applyChangesCopying is ApplyChanges by indexing and copying the whole
// text for each change (O(N × document)); for content that is not valid
// UTF-8, and the reference the tests compare Text with.
func applyChangesCopying(content string, enc Encoding, changes []Change) (string, error) {
	for i, ch := range changes {
		if ch.Range == nil {
			content = ch.Text
			continue
		}
		m := NewMapper(content, enc)
		start := m.ClampedOffset(ch.Range.Start)
		end := m.ClampedOffset(ch.Range.End)
		if end < start {
			return "", fmt.Errorf("content change %d: range end %d:%d is before its start %d:%d", i,
				ch.Range.End.Line, ch.Range.End.Character, ch.Range.Start.Line, ch.Range.Start.Character)
		}
		content = content[:start] + ch.Text + content[end:]
	}
	return content, nil
}
