package position

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// benchDoc returns a 20 MB document: 79-byte lines, or one line.
func benchDoc(oneLine bool) string {
	line := strings.Repeat("word é🙂 ", 6) // 78 bytes
	if oneLine {
		return strings.Repeat(line+" ", 20<<20/79)
	}
	return strings.Repeat(line+"\n", 20<<20/79)
}

// benchChanges returns n small range changes (typing, deleting) scattered
// over the document in random order, each in the coordinates left by the
// previous ones (as one didChange carries them).
func benchChanges(n int, oneLine bool, lines int) []Change {
	r := rand.New(rand.NewPCG(7, 8))
	out := make([]Change, n)
	for i := range out {
		var p Position
		if oneLine {
			p = Position{Line: 0, Character: uint32(r.IntN(20 << 20 / 2))}
		} else {
			p = Position{Line: uint32(r.IntN(lines)), Character: uint32(r.IntN(40))}
		}
		end := p
		end.Character += uint32(r.IntN(3))
		out[i] = Change{Range: &Range{Start: p, End: end}, Text: []string{"", "x", "@ab", "\n"}[i%4]}
	}
	return out
}

// BenchmarkDidChange2000 is one didChange with 2,000 range changes on a
// 20 MB document: indexing and copying the whole text per change would
// take tens of seconds. "text" applies them to the document's Text as the
// server does; "string" is ApplyChanges from and to a string (one index and
// one copy of the document in all).
func BenchmarkDidChange2000(b *testing.B) {
	for _, oneLine := range []bool{false, true} {
		name := "lines"
		if oneLine {
			name = "one-line"
		}
		doc := benchDoc(oneLine)
		changes := benchChanges(2000, oneLine, strings.Count(doc, "\n"))
		b.Run(name+"/text", func(b *testing.B) {
			base := NewText(doc)
			b.ResetTimer()
			for range b.N {
				tx := base.Clone()
				if err := tx.Apply(UTF16, changes); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/string", func(b *testing.B) {
			for range b.N {
				if _, err := ApplyChanges(doc, UTF16, changes); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
