package position

import "testing"

func TestNegotiateEncoding(t *testing.T) {
	tests := []struct {
		offered []string
		want    Encoding
	}{
		{nil, UTF16},
		{[]string{"utf-16"}, UTF16},
		{[]string{"utf-32", "utf-16"}, UTF32},
		{[]string{"utf-16", "utf-8"}, UTF8},
		{[]string{"latin-1"}, UTF16},
	}
	for _, tt := range tests {
		if got := NegotiateEncoding(tt.offered); got != tt.want {
			t.Errorf("NegotiateEncoding(%q) = %q, want %q", tt.offered, got, tt.want)
		}
	}
}

func TestMapperRoundTrip(t *testing.T) {
	// "é" is 2 bytes/1 unit; "🙂" is 4 bytes, 2 UTF-16 units, 1 UTF-32 unit.
	text := "aé🙂b\r\nx\ry\n"
	tests := []struct {
		enc  Encoding
		off  int
		want Position
	}{
		{UTF16, 0, Position{Line: 0, Character: 0}},
		{UTF16, 1, Position{Line: 0, Character: 1}},
		{UTF16, 3, Position{Line: 0, Character: 2}},
		{UTF16, 7, Position{Line: 0, Character: 4}},
		{UTF16, 8, Position{Line: 0, Character: 5}},
		{UTF8, 7, Position{Line: 0, Character: 7}},
		{UTF32, 7, Position{Line: 0, Character: 3}},
		{UTF32, 10, Position{Line: 1, Character: 0}},
		{UTF32, 12, Position{Line: 2, Character: 0}},
		{UTF32, 14, Position{Line: 3, Character: 0}},
	}
	for _, tt := range tests {
		m := NewMapper(text, tt.enc)
		if got := m.Position(tt.off); got != tt.want {
			t.Errorf("%s Position(%d) = %v, want %v", tt.enc, tt.off, got, tt.want)
		}
		back, err := m.Offset(tt.want)
		if err != nil || back != tt.off {
			t.Errorf("%s Offset(%v) = %d, %v; want %d", tt.enc, tt.want, back, err, tt.off)
		}
	}
}

func TestMapperClamp(t *testing.T) {
	text := "a🙂\nb"
	tests := []struct {
		name    string
		enc     Encoding
		pos     Position
		want    int
		wantErr bool
	}{
		{"char past line end clamps", UTF16, Position{Line: 0, Character: 99}, 5, false},
		{"half surrogate rounds down", UTF16, Position{Line: 0, Character: 2}, 1, false},
		{"inside utf-8 sequence rounds down", UTF8, Position{Line: 0, Character: 3}, 1, false},
		{"line after last at col 0 is end", UTF16, Position{Line: 2, Character: 0}, 7, false},
		{"line far past end errors", UTF16, Position{Line: 5, Character: 0}, 0, true},
	}
	for _, tt := range tests {
		got, err := NewMapper(text, tt.enc).Offset(tt.pos)
		if (err != nil) != tt.wantErr || (!tt.wantErr && got != tt.want) {
			t.Errorf("%s: Offset(%v) = %d, %v; want %d, err %v", tt.name, tt.pos, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestApplyChanges(t *testing.T) {
	r := func(l1, c1, l2, c2 uint32) *Range {
		return &Range{Start: Position{Line: l1, Character: c1}, End: Position{Line: l2, Character: c2}}
	}
	tests := []struct {
		name    string
		enc     Encoding
		text    string
		changes []Change
		want    string
		wantErr bool
	}{
		{"full", UTF16, "old", []Change{{Text: "new"}}, "new", false},
		{"insert utf16 after emoji", UTF16, "🙂x", []Change{{Range: r(0, 2, 0, 2), Text: "@"}}, "🙂@x", false},
		{"insert utf8 after emoji", UTF8, "🙂x", []Change{{Range: r(0, 4, 0, 4), Text: "@"}}, "🙂@x", false},
		{"insert utf32 after emoji", UTF32, "🙂x", []Change{{Range: r(0, 1, 0, 1), Text: "@"}}, "🙂@x", false},
		{"sequential", UTF16, "ab\ncd", []Change{
			{Range: r(1, 0, 1, 1), Text: "X"}, {Range: r(0, 0, 0, 0), Text: "Y\n"}}, "Y\nab\nXd", false},
		{"delete across lines", UTF16, "ab\ncd", []Change{{Range: r(0, 1, 1, 1), Text: ""}}, "ad", false},
		{"append at end line", UTF16, "ab\n", []Change{{Range: r(1, 0, 1, 0), Text: "c"}}, "ab\nc", false},
		{"reversed range", UTF16, "abc", []Change{{Range: r(0, 2, 0, 1), Text: ""}}, "", true},
	}
	for _, tt := range tests {
		got, err := ApplyChanges(tt.text, tt.enc, tt.changes)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("%s: got %q, %v; want %q (err %v)", tt.name, got, err, tt.want, tt.wantErr)
		}
	}
}
