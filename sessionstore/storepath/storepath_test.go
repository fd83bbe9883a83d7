package storepath

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
)

// TestPathEncodingCases: slugs, a trailing separator, Windows paths,
// spaces and astral characters.
func TestPathEncodingCases(t *testing.T) {
	cases := []struct{ in, key, seg string }{
		{"/home/alice/proj", "--home-alice-proj--", "~002Fhome~002Falice~002Fproj"},
		{"/home/alice/proj/", "--home-alice-proj---", "~002Fhome~002Falice~002Fproj~002F"},
		{"C:\\Users\\bob\\w", "--C-Users-bob-w--", "C~003A~005CUsers~005Cbob~005Cw"},
		{"/", "--root--", "~002F"},
		{"/srv/my app", "--srv-my~0020app--", "~002Fsrv~002Fmy~0020app"},
		{"x~y😀", "--x~007Ey~D83D~DE00--", "x~007Ey~D83D~DE00"},
		{"-/-x", "--x--", "-~002F-x"},
		{"a//b::c", "--a-b-c--", "a~002F~002Fb~003A~003Ac"},
		{"bad\xffbyte", "--bad~FFFDbyte--", "bad~FFFDbyte"},
		{"lone\xed\xa0\x80", "--lone~D800--", "lone~D800"},
		{strings.Repeat("é", 60), "--" + strings.Repeat("~00E9", 50) + "~--", strings.Repeat("~00E9", 60)},
	}
	for _, c := range cases {
		if got, _ := ProjectKey(c.in); got != c.key {
			t.Errorf("ProjectKey(%q) = %q, want %q", c.in, got, c.key)
		}
		if got, _ := EncodeSegment(c.in); got != c.seg {
			t.Errorf("EncodeSegment(%q) = %q, want %q", c.in, got, c.seg)
		}
	}
}

// FuzzEncodingMatchesUnits: the encodings equal those built from the
// whole UTF-16 unit slice, as they were before escapeUnits took the units
// as it went.
func FuzzEncodingMatchesUnits(f *testing.F) {
	for _, s := range []string{"/home/alice/proj", "x~y😀", "lone\xed\xa0\x80", "bad\xff", "C:\\w", "--", "."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if s == "" {
			return
		}
		wantKey := bytes.TrimLeft(escapeUnitSlice(s, true), "-")
		if len(wantKey) == 0 {
			wantKey = []byte("root")
		}
		if got, want := mustKey(t, s), "--"+string(wantKey[:min(len(wantKey), 251)])+"--"; got != want {
			t.Errorf("ProjectKey(%q) = %q, want %q", s, got, want)
		}
		if s == "." || s == ".." {
			return
		}
		if got, _ := EncodeSegment(s); got != string(escapeUnitSlice(s, false)) {
			t.Errorf("EncodeSegment(%q) = %q, want %q", s, got, escapeUnitSlice(s, false))
		}
	})
}

func mustKey(t *testing.T, cwd string) string {
	k, err := ProjectKey(cwd)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// escapeUnitSlice is the former escapeUnits: over the slice of s's units.
func escapeUnitSlice(s string, slug bool) []byte {
	var units []uint16
	for i := 0; i < len(s); {
		if r, ok := jsjson.SurrogateAt(s, i); ok {
			units = append(units, uint16(r))
			i += 3
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		units = utf16.AppendRune(units, r)
		i += size
	}
	var b []byte
	inSep := false
	for _, u := range units {
		switch {
		case slug && (u == '/' || u == '\\' || u == ':'):
			if !inSep {
				b = append(b, '-')
			}
			inSep = true
			continue
		case isSegmentUnit(u):
			b = append(b, byte(u))
		default:
			b = append(b, '~', upperHex[u>>12], upperHex[(u>>8)&0xf], upperHex[(u>>4)&0xf], upperHex[u&0xf])
		}
		inSep = false
	}
	return b
}
