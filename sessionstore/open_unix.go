//go:build unix

package sessionstore

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// openComponents opens root/rel read-only by walking rel one component at
// a time with openat(O_NOFOLLOW) from a descriptor of root: every
// directory is opened O_DIRECTORY|O_NOFOLLOW relative to its parent's
// descriptor, so a component that is (or is swapped for) a symlink fails
// with ELOOP instead of being followed, and ".." is refused. The final
// file is opened O_NONBLOCK (a FIFO cannot block the open).
func openComponents(root, rel string) (*os.File, error) {
	comps := strings.Split(filepath.ToSlash(rel), "/")
	dirfd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	for i, c := range comps {
		if c == "" || c == "." || c == ".." {
			unix.Close(dirfd)
			return nil, errors.New("path component " + c + " is not a name")
		}
		last := i == len(comps)-1
		flags := unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOFOLLOW
		if last {
			flags |= unix.O_NONBLOCK | unix.O_NOCTTY
		} else {
			flags |= unix.O_DIRECTORY
		}
		var fd int
		for {
			fd, err = unix.Openat(dirfd, c, flags, 0)
			if !errors.Is(err, unix.EINTR) {
				break
			}
		}
		unix.Close(dirfd)
		if err != nil {
			// O_NOFOLLOW on a symlink: ELOOP (Linux, macOS), EMLINK
			// (FreeBSD).
			if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EMLINK) {
				return nil, errSymlinkBelowRoot
			}
			return nil, err
		}
		dirfd = fd
	}
	return os.NewFile(uintptr(dirfd), filepath.Join(root, rel)), nil
}

// openFileNoFollow opens path read-only and non-blocking, refusing a
// symlink as its last component.
func openFileNoFollow(path string) (*os.File, error) {
	for {
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if errors.Is(err, unix.ELOOP) {
			return nil, &os.PathError{Op: "open", Path: path, Err: errors.New("is a symbolic link")}
		}
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: path, Err: err}
		}
		return os.NewFile(uintptr(fd), path), nil
	}
}
