//go:build windows

package sessionstore

import (
	"io/fs"
	"syscall"
)

// fileIdentity stands in for device and inode on Windows, whose FileInfo
// carries no file index (that needs an open handle per file, which would
// double the cost of every refresh's stat pass): it returns the file's
// creation time, which a file written anew and renamed over the old one
// (the usual replacement) does not share with it. A file deleted and
// recreated under the same name within NTFS's tunnelling window (15 s)
// can inherit the old creation time; it is then recognised as replaced
// only if it is smaller or has another modification time.
func fileIdentity(fi fs.FileInfo) (dev, ino uint64) {
	if d, ok := fi.Sys().(*syscall.Win32FileAttributeData); ok {
		return 0, uint64(d.CreationTime.Nanoseconds())
	}
	return 0, 0
}
