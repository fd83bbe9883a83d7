//go:build linux

package beneath

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

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
	fd, err := openat2In(d, root, rel)
	if errors.Is(err, errNoOpenat2) {
		return openComponents(root, rel)
	}
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), filepath.Join(root, rel)), nil
}

// openIn is Open's open. With openat2 it keeps the descriptor as an fdFile:
// an *os.File of a descriptor opened non-blocking is registered with the
// runtime's poller (two system calls more per file, 0.2 s of CPU in a
// first pass over 100,000 sessions) for a regular file, which it cannot
// poll.
func openIn(d *Root, root, rel, path string) (File, fs.FileInfo, error) {
	fd, err := openat2In(d, root, rel)
	if errors.Is(err, errNoOpenat2) {
		return openOSFile(d, root, rel, path)
	}
	if err != nil {
		return nil, nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	fi := &fdInfo{name: filepath.Base(path)}
	if err = ignoringEINTR(func() error { return syscall.Fstat(fd, &fi.st) }); err != nil {
		err = &fs.PathError{Op: "stat", Path: path, Err: err}
	} else {
		err = checkRegular(path, fi)
	}
	if err != nil {
		unix.Close(fd)
		return nil, nil, err
	}
	return &fdFile{fd: fd, path: path}, fi, nil
}

// errNoOpenat2 says openat2 is not available: open another way.
var errNoOpenat2 = errors.New("openat2 is not available")

// openat2In opens root/rel read-only with openat2 from d (nil: from the
// root, opened for this file) and returns the descriptor.
func openat2In(d *Root, root, rel string) (int, error) {
	if noOpenat2.Load() {
		return -1, errNoOpenat2
	}
	var dirfd int
	if d != nil {
		dirfd = d.fd
	} else {
		fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, err
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
			return fd, nil
		case errors.Is(err, unix.ENOSYS) || (errors.Is(err, unix.EPERM) && attempt == 0 && openat2Refused()):
			noOpenat2.Store(true)
			return -1, errNoOpenat2
		case (errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR)) && attempt < 16:
			// A rename or mount raced the resolution: try again.
			continue
		case errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EXDEV):
			return -1, ErrSymlink
		}
		return -1, err
	}
}

// fdFile is a regular file open on a descriptor. Reads at offsets are
// pread calls, safe to make concurrently.
type fdFile struct {
	fd   int
	path string
}

// maxRead bounds one pread, as the os package bounds its reads.
const maxRead = 1 << 30

// ReadAt reads len(p) bytes at off, as io.ReaderAt says: fewer only with
// an error, io.EOF at the end of the file.
func (f *fdFile) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, &fs.PathError{Op: "readat", Path: f.path, Err: errors.New("negative offset")}
	}
	n := 0
	for n < len(p) {
		var m int
		err := ignoringEINTR(func() (err error) {
			m, err = unix.Pread(f.fd, p[n:min(len(p), n+maxRead)], off+int64(n))
			return err
		})
		if err != nil {
			return n, &fs.PathError{Op: "read", Path: f.path, Err: err}
		}
		if m == 0 {
			return n, io.EOF
		}
		n += m
	}
	return n, nil
}

// Close closes the descriptor.
func (f *fdFile) Close() error {
	if f.fd < 0 {
		return &fs.PathError{Op: "close", Path: f.path, Err: fs.ErrClosed}
	}
	err := unix.Close(f.fd)
	f.fd = -1
	if err != nil {
		return &fs.PathError{Op: "close", Path: f.path, Err: err}
	}
	return nil
}

// fdInfo is the fs.FileInfo of an fdFile, from its fstat. Sys returns the
// *syscall.Stat_t, as an os.FileInfo's does.
type fdInfo struct {
	name string
	st   syscall.Stat_t
}

func (fi *fdInfo) Name() string       { return fi.name }
func (fi *fdInfo) Size() int64        { return fi.st.Size }
func (fi *fdInfo) ModTime() time.Time { return time.Unix(fi.st.Mtim.Unix()) }
func (fi *fdInfo) IsDir() bool        { return fi.Mode().IsDir() }
func (fi *fdInfo) Sys() any           { return &fi.st }

// Mode is the file mode as the os package reads it from a stat.
func (fi *fdInfo) Mode() fs.FileMode {
	m := fs.FileMode(fi.st.Mode & 0o777)
	switch fi.st.Mode & syscall.S_IFMT {
	case syscall.S_IFBLK:
		m |= fs.ModeDevice
	case syscall.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFDIR:
		m |= fs.ModeDir
	case syscall.S_IFIFO:
		m |= fs.ModeNamedPipe
	case syscall.S_IFLNK:
		m |= fs.ModeSymlink
	case syscall.S_IFSOCK:
		m |= fs.ModeSocket
	}
	if fi.st.Mode&syscall.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if fi.st.Mode&syscall.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if fi.st.Mode&syscall.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
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
