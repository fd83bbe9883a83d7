//go:build !unix

package sessionstore

import (
	"io/fs"
	"os"
)

// lstatSig reports whether path exists (Lstat, as discovery checks) and
// the signature of what it resolves to.
func lstatSig(path string) (fileSig, bool) {
	fi, err := os.Lstat(path)
	if err != nil {
		return fileSig{}, false
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		if t, err := os.Stat(path); err == nil {
			fi = t
		}
	}
	return sigOf(fi), true
}
