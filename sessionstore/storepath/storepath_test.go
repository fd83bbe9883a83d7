package storepath

import "testing"

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
