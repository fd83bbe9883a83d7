//go:build linux

package beneath

import (
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// noOpenat2 is set once openat2 is found missing (kernels before 5.6, or
// a seccomp filter that refuses it); opens then walk the path with openat.
var noOpenat2 atomic.Bool

// Root is a store root held open while a pass opens many files below it:
// each is opened from its descriptor, so the root is not opened (and its
// path resolved) again for each. A root replaced meanwhile is seen by the
// next pass, which opens it again.
type Root struct{ fd int }

// OpenRoot opens root for Open; nil when it cannot (each open then opens
// the root itself).
func OpenRoot(root string) *Root {
	if noOpenat2.Load() {
		return nil
	}
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	return &Root{fd: fd}
}

// Close closes d (nil: nothing).
func (d *Root) Close() {
	if d != nil {
		unix.Close(d.fd)
	}
}

// openNoFollowIn opens root/rel read-only with openat2 from d (nil: from
// the root, opened for this file): RESOLVE_BENEATH keeps the walk below
// root and RESOLVE_NO_SYMLINKS refuses a symlink in any component, checked
// by the kernel as it walks.
func openNoFollowIn(d *Root, root, rel string) (*os.File, error) {
	if noOpenat2.Load() {
		return openComponents(root, rel)
	}
	var dirfd int
	if d != nil {
		dirfd = d.fd
	} else {
		fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, err
		}
		defer unix.Close(fd)
		dirfd = fd
	}
	how := unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_NOCTTY,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	}
	for attempt := 0; ; attempt++ {
		fd, err := unix.Openat2(dirfd, rel, &how)
		switch {
		case err == nil:
			return os.NewFile(uintptr(fd), filepath.Join(root, rel)), nil
		case errors.Is(err, unix.ENOSYS) || (errors.Is(err, unix.EPERM) && attempt == 0 && openat2Refused()):
			noOpenat2.Store(true)
			return openComponents(root, rel)
		case (errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR)) && attempt < 16:
			// A rename or mount raced the resolution: try again.
			continue
		case errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EXDEV):
			return nil, ErrSymlink
		}
		return nil, err
	}
}

// openat2Refused reports whether openat2 itself is refused (EPERM from a
// seccomp filter) rather than the file: it opens "." under RESOLVE_BENEATH.
func openat2Refused() bool {
	fd, err := unix.Openat2(unix.AT_FDCWD, ".", &unix.OpenHow{Flags: unix.O_RDONLY | unix.O_CLOEXEC | unix.O_DIRECTORY, Resolve: unix.RESOLVE_BENEATH})
	if err == nil {
		unix.Close(fd)
		return false
	}
	return errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOSYS)
}
