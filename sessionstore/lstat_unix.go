//go:build unix

package sessionstore

import "golang.org/x/sys/unix"

// lstatSig reports whether path exists (Lstat, as discovery checks) and
// the signature of what it resolves to. A poll checks thousands of
// transcripts a second: unix.Lstat fills a Stat_t in place where os.Lstat
// allocates a FileInfo for each (BenchmarkPollUnwatched: a third of a
// poll's bytes).
func lstatSig(path string) (fileSig, bool) {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return fileSig{}, false
	}
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		var t unix.Stat_t
		if unix.Stat(path, &t) == nil {
			st = t
		}
	}
	return fileSig{Dev: uint64(st.Dev), Ino: uint64(st.Ino), Size: st.Size, MtimeNs: st.Mtim.Nano()}, true
}
