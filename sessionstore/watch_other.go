//go:build !linux

package sessionstore

import (
	"errors"
	"runtime"
	"syscall"
)

// maxWatches caps the directories watched (the rest is polled). kqueue
// (macOS, BSD) holds a descriptor for every watched directory and every
// file in it, from the same per-process limit the index's own reads
// need: keep well under it. Windows holds one handle per directory.
func maxWatches() int {
	if runtime.GOOS == "windows" {
		return 0
	}
	return 1024
}

// watchable reports whether notifications on dir are trusted; only Linux
// tells network file systems apart here, elsewhere they are trusted (the
// periodic safety scan still catches what they miss). Windows polls:
// fsnotify's Windows backend was seen (under Wine 8) to block forever in
// Watcher.Add while the transcript was replaced in a loop, and then
// Indexed.Close waited for it; we could not try a real Windows machine, and
// the poll mode meets the same freshness target (a change is seen within
// one poll, ~100 ms; see bench/README.md).
func watchable(string) bool { return runtime.GOOS != "windows" }

// watchExhausted reports whether err means no more watches can be added
// (kqueue holds a descriptor per watched file).
func watchExhausted(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}
