//go:build linux

package watchbudget

import (
	"errors"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// unwatchableFS lists the network and user-space file systems where
// inotify misses changes made elsewhere (another host or mount): polled.
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

// One index takes at most 1/watchShare of the user's inotify watches
// (shared with editors, build tools and every other dsh-lsp) and at most
// watchCeiling; the rest is polled. Since Linux 5.11 the budget is sized
// to the machine's memory (about 1 KiB of kernel memory a watch), so the
// share is the bound that matters; the ceiling only caps very large
// budgets. Every directory past the cap costs CPU on every poll (at 10,000
// sessions, a ceiling of 8,192 kept an idle server at 12 % of a core).
// defaultUserWatches (Linux before 5.11) is assumed when the sysctl cannot
// be read.
const (
	watchShare         = 8
	watchCeiling       = 65536
	defaultUserWatches = 8192
)

// userWatchLimit returns fs.inotify.max_user_watches.
func userWatchLimit() int {
	b, err := os.ReadFile("/proc/sys/fs/inotify/max_user_watches")
	if err != nil {
		return defaultUserWatches
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n <= 0 {
		return defaultUserWatches
	}
	return n
}

func maxWatches() int { return Cap(userWatchLimit()) }

// Cap is Max for a user budget of limit inotify watches (at least 1: the
// root).
func Cap(limit int) int {
	return max(1, min(limit/watchShare, watchCeiling))
}

func reliable(dir string) bool {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return true // nonexistent: the watch itself fails
	}
	_, remote := unwatchableFS[int64(st.Type)]
	return !remote
}

// exhausted: inotify's "no watch left" or a descriptor limit.
func exhausted(err error) bool {
	return errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EMFILE) || errors.Is(err, unix.ENFILE) || errors.Is(err, unix.ENOMEM)
}
