//go:build linux

package sessionstore

import (
	"errors"

	"golang.org/x/sys/unix"
)

// Network and user-space file systems whose changes made elsewhere (by
// another host, or a dsh writing through another mount) inotify does not
// report: such a store is polled.
var unwatchableFS = map[int64]string{
	0x6969:     "nfs",
	0xff534d42: "cifs",
	0xfe534d42: "smb2",
	0x517b:     "smb",
	0x65735546: "fuse",
	0x01021997: "9p",
	0x564c:     "ncp",
	0x73757245: "coda",
	0x5346414f: "afs",
	0x6b414653: "afs",
	0x47504653: "gpfs",
	0x0bd00bd0: "lustre",
	0x00c36400: "ceph",
}

// maxWatches caps the directories watched; 0 leaves it to the kernel
// (fs.inotify.max_user_watches: an exhausted limit is polled).
const maxWatches = 0

// watchable reports whether inotify watches on dir see every change.
func watchable(dir string) bool {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return true // nonexistent: the watch itself fails
	}
	_, remote := unwatchableFS[int64(st.Type)]
	return !remote
}

// watchExhausted reports whether err is inotify's "no watch left"
// (fs.inotify.max_user_watches) or a descriptor limit.
func watchExhausted(err error) bool {
	return errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EMFILE) || errors.Is(err, unix.ENFILE) || errors.Is(err, unix.ENOMEM)
}
