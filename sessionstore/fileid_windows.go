//go:build windows

package sessionstore

import (
	"io/fs"
	"syscall"

	"golang.org/x/sys/windows"
)

// underWine is true when the process runs on Wine (whose ntdll exports
// wine_get_version).
var underWine = windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil

// fileIdentity stands in for device and inode on Windows, whose FileInfo
// carries no file index (that needs an open handle per file, which would
// double the cost of every refresh's stat pass): it returns the file's
// creation time, which a file written anew and renamed over the old one
// (the usual replacement) does not share with it. A file deleted and
// recreated under the same name within NTFS's tunnelling window (15 s)
// can inherit the old creation time; the tail checksum of a resumed parse
// (openState) still tells it apart.
//
// Wine reports the Unix ctime as the creation time when the file system
// has no birth time, so it changes on every append: there no identity is
// returned and replacement is told by size, time and the tail checksum.
func fileIdentity(fi fs.FileInfo) (dev, ino uint64) {
	if underWine {
		return 0, 0
	}
	if d, ok := fi.Sys().(*syscall.Win32FileAttributeData); ok {
		return 0, uint64(d.CreationTime.Nanoseconds())
	}
	return 0, 0
}
