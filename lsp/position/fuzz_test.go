package position

import "testing"

// FuzzMapper checks that position/offset conversion never panics, stays in
// range and round-trips through rune starts.
func FuzzMapper(f *testing.F) {
	f.Add("a🙂\r\nb\rc\n", uint32(0), uint32(3), 2)
	f.Add("\xff\xfe x", uint32(1), uint32(9), 5)
	f.Fuzz(func(t *testing.T, text string, line, char uint32, off int) {
		for _, enc := range []Encoding{UTF8, UTF16, UTF32} {
			m := NewMapper(text, enc)
			if o, err := m.Offset(Position{Line: line, Character: char}); err == nil && (o < 0 || o > len(text)) {
				t.Fatalf("%s Offset out of range: %d", enc, o)
			}
			p := m.Position(off)
			o, err := m.Offset(p)
			if err != nil || o < 0 || o > len(text) {
				t.Fatalf("%s Offset(Position(%d)=%v) = %d, %v", enc, off, p, o, err)
			}
			if back := m.Position(o); back != p {
				t.Fatalf("%s round trip %v -> %d -> %v", enc, p, o, back)
			}
		}
	})
}
