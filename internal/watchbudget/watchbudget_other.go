//go:build !linux

package watchbudget

import (
	"errors"
	"runtime"
	"syscall"
)

// maxWatches: kqueue holds a descriptor for every watched directory and
// file in it, from the limit the index's own reads need (Windows never
// watches: reliable).
func maxWatches() int { return 1024 }

// reliable: Windows polls, fsnotify's Windows backend was seen (under
// Wine) to block forever in Watcher.Add while a transcript was replaced in
// a loop.
func reliable(string) bool { return runtime.GOOS != "windows" }

func exhausted(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}
