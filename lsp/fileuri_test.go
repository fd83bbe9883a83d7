package lsp

import "testing"

// TestFileURIPathPerOS: workspace folder URIs become the cwd dsh would
// record on each OS (the same-cwd ranking compares them to header cwds).
func TestFileURIPathPerOS(t *testing.T) {
	cases := []struct {
		goos, uri, want string
		ok              bool
	}{
		{"linux", "file:///home/alice/proj", "/home/alice/proj", true},
		{"linux", "file:///home/alice/proj/", "/home/alice/proj", true},
		{"linux", "file:///srv/my%20app", "/srv/my app", true},
		{"darwin", "file:///Users/bob/w", "/Users/bob/w", true},
		{"linux", "file:///", "/", true},
		{"windows", "file:///c%3A/Users/bob/w", `C:\Users\bob\w`, true},
		{"windows", "file:///C:/Users/bob/w/", `C:\Users\bob\w`, true},
		{"windows", "file:///d%3A/", `D:\`, true},
		{"windows", "file://server/share/proj", `\\server\share\proj`, true},
		{"windows", "file:///home/alice/proj", "/home/alice/proj", true},
		{"windows", "file:///c%3A/a/../b", `C:\b`, true},
		{"linux", "untitled:Untitled-1", "", false},
		{"windows", "file://", "", false},
	}
	for _, c := range cases {
		got, ok := fileURIPathOn(c.goos, c.uri)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: fileURIPath(%q) = %q, %v; want %q, %v", c.goos, c.uri, got, ok, c.want, c.ok)
		}
	}
}
