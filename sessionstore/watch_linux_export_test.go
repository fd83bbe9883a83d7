//go:build linux

package sessionstore

import "github.com/dsh-lsp/dsh-lsp/internal/watchbudget"

// SetUserWatchLimit makes indexes opened afterwards see n as the user's
// inotify watch budget and returns the function restoring the real one.
func SetUserWatchLimit(n int) func() {
	old := maxWatches
	maxWatches = func() int { return watchbudget.Cap(n) }
	return func() { maxWatches = old }
}

// WatchCap is the number of directories one index watches under a user
// budget of limit watches.
func WatchCap(limit int) int { return watchbudget.Cap(limit) }
