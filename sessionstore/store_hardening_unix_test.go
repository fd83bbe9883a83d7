//go:build unix

package sessionstore_test

import "golang.org/x/sys/unix"

// mkfifo creates a named pipe at path.
func mkfifo(path string) error { return unix.Mkfifo(path, 0o644) }
