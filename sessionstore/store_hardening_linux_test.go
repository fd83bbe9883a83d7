//go:build linux

package sessionstore_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// openWatch reports file and directory opens under watched directories.
type openWatch struct {
	fd   int
	dirs map[int32]string
}

// watchOpens watches every directory under each of roots (recursively)
// for opens and reads.
func watchOpens(t *testing.T, roots ...string) *openWatch {
	t.Helper()
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		t.Skipf("inotify unavailable: %v", err)
	}
	w := &openWatch{fd: fd, dirs: map[int32]string{}}
	t.Cleanup(func() { syscall.Close(fd) })
	for _, root := range roots {
		err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return err
			}
			wd, err := syscall.InotifyAddWatch(fd, path, syscall.IN_OPEN|syscall.IN_ACCESS)
			if err != nil {
				return fmt.Errorf("watching %s: %w", path, err)
			}
			w.dirs[int32(wd)] = path
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	w.events() // drain
	return w
}

// events returns the paths opened or read since the last call.
func (w *openWatch) events() []string {
	var out []string
	buf := make([]byte, 64<<10)
	for {
		n, err := syscall.Read(w.fd, buf)
		if n <= 0 || err != nil {
			return out
		}
		for off := 0; off+syscall.SizeofInotifyEvent <= n; {
			ev := (*syscall.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := ""
			if ev.Len > 0 {
				raw := buf[off+syscall.SizeofInotifyEvent : off+syscall.SizeofInotifyEvent+int(ev.Len)]
				name = strings.TrimRight(string(raw), "\x00")
			}
			out = append(out, filepath.Join(w.dirs[ev.Wd], name))
			off += syscall.SizeofInotifyEvent + int(ev.Len)
		}
	}
}
