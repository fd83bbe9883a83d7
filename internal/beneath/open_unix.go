//go:build unix

package beneath

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// openComponents opens root/rel read-only by walking rel one component at
// a time with openat(O_NOFOLLOW) from a descriptor of its parent, so a
// component that is (or is swapped for) a symlink fails instead of being
// followed; the final file is opened O_NONBLOCK. rel is clean and below
// root (Open): it has no empty, "." or ".." component.
func openComponents(root, rel string) (*os.File, error) {
	comps := strings.Split(filepath.ToSlash(rel), "/")
	dirfd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	for i, c := range comps {
		flags := unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOFOLLOW | unix.O_DIRECTORY
		if i == len(comps)-1 {
			flags = unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_NOCTTY
		}
		var fd int
		err = ignoringEINTR(func() (err error) {
			fd, err = unix.Openat(dirfd, c, flags, 0)
			return err
		})
		unix.Close(dirfd)
		// O_NOFOLLOW on a symlink: ELOOP (Linux, macOS), EMLINK (FreeBSD).
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EMLINK) {
			return nil, ErrSymlink
		}
		if err != nil {
			return nil, err
		}
		dirfd = fd
	}
	return os.NewFile(uintptr(dirfd), filepath.Join(root, rel)), nil
}

// ignoringEINTR calls fn until it is not interrupted.
func ignoringEINTR(fn func() error) error {
	for {
		if err := fn(); !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}
