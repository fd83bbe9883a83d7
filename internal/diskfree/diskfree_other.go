//go:build !unix && !windows

package diskfree

import (
	"errors"
	"runtime"
)

func free(dir string) (int64, error) {
	return 0, errors.New("free space of " + dir + ": not supported on " + runtime.GOOS)
}
