//go:build unix

package diskfree

import (
	"fmt"

	"golang.org/x/sys/unix"
)

func free(dir string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("statfs %s: %w", dir, err)
	}
	// Field types differ per OS (Bsize is int64 on Linux, uint32 on
	// darwin): convert both before multiplying.
	return int64(uint64(st.Bavail) * uint64(st.Bsize)), nil
}
