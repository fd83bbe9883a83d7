//go:build !linux

package sessionstore

import (
	"errors"
	"runtime"
	"syscall"
)

// maxWatches caps the directories watched (the rest is polled): kqueue
// holds a descriptor for every watched directory and file in it, from the
// limit the index's own reads need (Windows never watches: watchable).
func maxWatches() int { return 1024 }

// watchable reports whether notifications on dir are trusted. Windows
// polls: fsnotify's Windows backend was seen (under Wine) to block forever
// in Watcher.Add while a transcript was replaced in a loop.
func watchable(string) bool { return runtime.GOOS != "windows" }

// watchExhausted reports whether err means no more watches can be added.
func watchExhausted(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}
