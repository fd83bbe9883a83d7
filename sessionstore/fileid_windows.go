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

// fileIdentity stands in for device and inode with the creation time
// (FileInfo has no file index; reading it needs a handle per file): a file
// written anew and renamed over the old one does not share it, and one
// recreated within NTFS's tunnelling window is caught by the tail checksum
// of a resumed parse. Wine reports the ctime there, which every append
// changes, so under Wine there is no identity.
func fileIdentity(fi fs.FileInfo) (dev, ino uint64) {
	if underWine {
		return 0, 0
	}
	if d, ok := fi.Sys().(*syscall.Win32FileAttributeData); ok {
		return 0, uint64(d.CreationTime.Nanoseconds())
	}
	return 0, 0
}
