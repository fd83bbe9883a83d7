package transcript

import (
	"runtime"
	"testing"
)

// TestIsAbsCwdPerOS checks the header cwd rule of each platform against
// Node's own path.posix.isAbsolute and path.win32.isAbsolute (the values
// below were printed by Node 20 for these inputs). Both tables run on every
// OS; isAbsCwd must follow the one of the OS it runs on.
func TestIsAbsCwdPerOS(t *testing.T) {
	cases := []struct {
		cwd          string
		posix, win32 bool
	}{
		{"/home/alice/proj", true, true},
		{"/", true, true},
		{"//server/share", true, true},
		{`\\server\share\x`, false, true},
		{`\foo`, false, true},
		{`C:\Users\bob`, false, true},
		{"c:/work", false, true},
		{`C:\`, false, true},
		{`\\?\C:\x`, false, true},
		{"C:", false, false},
		{"C:foo", false, false},
		{`1:\x`, false, false},
		{`é:\x`, false, false},
		{`CC:\x`, false, false},
		{"relative/dir", false, false},
		{"~/x", false, false},
		{"./x", false, false},
		{"", false, false},
	}
	for _, c := range cases {
		if got := isAbsCwdOn("linux", c.cwd); got != c.posix {
			t.Errorf("posix isAbsolute(%q) = %v, want %v", c.cwd, got, c.posix)
		}
		if got := isAbsCwdOn("darwin", c.cwd); got != c.posix {
			t.Errorf("darwin isAbsolute(%q) = %v, want %v", c.cwd, got, c.posix)
		}
		if got := isAbsCwdOn("windows", c.cwd); got != c.win32 {
			t.Errorf("win32 isAbsolute(%q) = %v, want %v", c.cwd, got, c.win32)
		}
		want := c.posix
		if runtime.GOOS == "windows" {
			want = c.win32
		}
		if got := isAbsCwd(c.cwd); got != want {
			t.Errorf("isAbsCwd(%q) on %s = %v, want %v", c.cwd, runtime.GOOS, got, want)
		}
	}
}
