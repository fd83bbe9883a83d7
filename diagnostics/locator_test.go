package diagnostics

import "testing"

func TestLocatorLineColumn(t *testing.T) {
	tests := []struct {
		text      string
		offset    int
		line, col int
	}{
		{"abc", 2, 0, 2},
		{"é@x", 2, 0, 2}, // UTF-8 bytes, not runes
		{"a\nb", 2, 1, 0},
		{"a\r\nb", 3, 1, 0},
		{"a\rb\rc", 4, 2, 0}, // a lone CR ends a line, as LSP counts
		{"a\n", 2, 1, 0},
	}
	for _, tt := range tests {
		line, col := NewLocator(tt.text).LineColumn(tt.offset)
		if line != tt.line || col != tt.col {
			t.Errorf("%q at %d: %d:%d, want %d:%d", tt.text, tt.offset, line, col, tt.line, tt.col)
		}
	}
}
