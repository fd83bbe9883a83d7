package jsjson

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestRepairUTF8 checks the WHATWG maximal-subpart rule (what Node's
// TextDecoder gives) on an ill-formed title and the Unicode §3.9
// examples.
func TestRepairUTF8(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"ill-formed title", "Sum\xe2\x82b\xf0\x9f\x99x\xc0\xafend", "Sum\ufffdb\ufffdx\ufffd\ufffdend"},
		{"valid", "héllo 🙂", "héllo 🙂"},
		// Unicode 17 §3.9, Table 3-8: 61 F1 80 80 E1 80 C2 62 80 63 80 BF 64.
		{"table 3-8", "a\xf1\x80\x80\xe1\x80\xc2b\x80c\x80\xbfd", "a\ufffd\ufffd\ufffdb\ufffdc\ufffd\ufffdd"},
		{"surrogate bytes", "\xed\xa0\x80", "\ufffd\ufffd\ufffd"},
		{"overlong", "\xe0\x80\xaf", "\ufffd\ufffd\ufffd"},
		{"above U+10FFFF", "\xf4\x90\x80\x80", "\ufffd\ufffd\ufffd\ufffd"},
		{"truncated at end", "x\xf0\x9f\x99", "x\ufffd"},
		{"lone continuation", "\x80", "\ufffd"},
		{"F5..FF", "\xf5\xff", "\ufffd\ufffd"},
		{"E1 then ASCII", "\xe1\x80A", "\ufffdA"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(RepairUTF8([]byte(tt.in))); got != tt.want {
				t.Errorf("RepairUTF8(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if got := RepairUTF8String(tt.in); got != tt.want {
				t.Errorf("RepairUTF8String(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if got := repairedLen([]byte(tt.in)); got != len(tt.want) {
				t.Errorf("repairedLen(%q) = %d, want %d", tt.in, got, len(tt.want))
			}
			lit := []byte(`"` + tt.in + `"`)
			if got, ok := String(lit); !ok || got != tt.want {
				t.Errorf("String(%q) = %q, %v; want %q", lit, got, ok, tt.want)
			}
			if got, ok := StrictString(lit); !ok || got != tt.want {
				t.Errorf("StrictString(%q) = %q, %v; want %q", lit, got, ok, tt.want)
			}
			if n, ok := StringLen(lit); !ok || n != len(tt.want) {
				t.Errorf("StringLen(%q) = %d, %v; want %d", lit, n, ok, len(tt.want))
			}
			// With an escape the slow path decodes the same way.
			esc := []byte(`"\n` + tt.in + `"`)
			if got, ok := String(esc); !ok || got != "\n"+tt.want {
				t.Errorf("String(%q) = %q, want %q", esc, got, "\n"+tt.want)
			}
		})
	}
}

// TestInvalidLenMatchesUTF8 checks InvalidLen against an independent
// definition on every 1–3 byte prefix: the maximal subpart is the longest
// prefix that some valid sequence starts with.
func TestInvalidLenMatchesUTF8(t *testing.T) {
	isPrefix := func(b []byte) bool {
		// b is the prefix of a valid sequence when some completion decodes.
		for _, tail := range []string{"", "\x80", "\x80\x80", "\x80\x80\x80", "\x90\x80\x80", "\xa0\x80", "\x90\x80", "\xa0\x80\x80", "\x8f\x80\x80", "\x9f\x80"} {
			full := append(append([]byte(nil), b...), tail...)
			if r, size := utf8.DecodeRune(full); !(r == utf8.RuneError && size == 1) && size == len(full) {
				return true
			}
		}
		return false
	}
	for c0 := 0x80; c0 <= 0xFF; c0++ {
		for c1 := 0; c1 <= 0xFF; c1 += 0x0F {
			b := []byte{byte(c0), byte(c1), 0x80, 0x80}
			if r, _ := utf8.DecodeRune(b); r != utf8.RuneError {
				continue
			}
			want := 1
			for n := 2; n <= 3; n++ {
				if isPrefix(b[:n]) {
					want = n
				}
			}
			if !isPrefix(b[:1]) {
				want = 1
			}
			if got := InvalidLen(b, 0); got != want {
				t.Errorf("InvalidLen(% x) = %d, want %d", b, got, want)
			}
		}
	}
	if got := strings.Count(RepairUTF8String("\xe2\x82\xe2\x82"), "\ufffd"); got != 2 {
		t.Errorf("two truncated sequences give %d U+FFFD, want 2", got)
	}
}

// TestStrictStringRepairsWithEscapes checks that a literal with escapes is
// repaired by the same rule as one without (a title such as
// "Sum\xe2\x82b…\n" read from a log line that was not repaired first).
func TestStrictStringRepairsWithEscapes(t *testing.T) {
	lit := []byte("\"Sum\xe2\x82b\xf0\x9f\x99x\xc0\xafend\\n\\ud800\"")
	want := "Sum\ufffdb\ufffdx\ufffd\ufffdend\n\xed\xa0\x80"
	if got, ok := StrictString(lit); !ok || got != want {
		t.Errorf("StrictString(%q) = %q, %v; want %q", lit, got, ok, want)
	}
	if got, ok := String(lit); !ok || got != want {
		t.Errorf("String(%q) = %q, %v; want %q", lit, got, ok, want)
	}
	if n, ok := StringLen(lit); !ok || n != len(want) {
		t.Errorf("StringLen(%q) = %d, want %d", lit, n, len(want))
	}
}
