//go:build !windows

package sessionstore

import (
	"io/fs"
	"syscall"
)

// fileIdentity returns the device and inode numbers of fi: a different
// pair means the file was replaced (none where FileInfo carries none).
func fileIdentity(fi fs.FileInfo) (dev, ino uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), uint64(st.Ino)
	}
	return 0, 0
}
