package transcript

import (
	"runtime"
	"strings"
)

// isAbsCwd reports whether a header cwd is absolute by the rule of the
// platform dsh runs on (spec §2.2: "dsh uses the host platform's
// isAbsolute"). On Windows that is Node's path.win32.isAbsolute, which
// also accepts POSIX-style "/home/alice" and rooted "\\x" paths that Go's
// filepath.IsAbs refuses there: a store written on Linux and read on
// Windows (or a Windows dsh given such a cwd) stays readable.
func isAbsCwd(cwd string) bool { return isAbsCwdOn(runtime.GOOS, cwd) }

// isAbsCwdOn is isAbsCwd for a given GOOS, so every rule is tested on
// every build machine.
func isAbsCwdOn(goos, cwd string) bool {
	if goos != "windows" {
		// path.posix.isAbsolute.
		return strings.HasPrefix(cwd, "/")
	}
	// path.win32.isAbsolute: a leading separator (rooted or UNC), or a
	// drive letter, a colon and a separator. "C:" and "C:foo" are
	// drive-relative, not absolute.
	if cwd == "" {
		return false
	}
	if isWinSep(cwd[0]) {
		return true
	}
	c := cwd[0]
	return len(cwd) > 2 && (c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') && cwd[1] == ':' && isWinSep(cwd[2])
}

func isWinSep(c byte) bool { return c == '/' || c == '\\' }
