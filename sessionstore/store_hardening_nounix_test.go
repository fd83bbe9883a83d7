//go:build !unix

package sessionstore_test

import (
	"errors"
	"runtime"
)

// mkfifo fails: there are no named pipes in the file system here.
func mkfifo(path string) error {
	return errors.New("no FIFOs in the file system on " + runtime.GOOS)
}
