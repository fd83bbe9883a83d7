//go:build linux

package sessionstore

// SetUserWatchLimit makes indexes opened afterwards see n as the user's
// inotify watch budget and returns the function restoring the real one.
func SetUserWatchLimit(n int) func() {
	old := userWatchLimit
	userWatchLimit = func() int { return n }
	return func() { userWatchLimit = old }
}

// WatchCap is the number of directories one index watches under a user
// budget of limit watches.
func WatchCap(limit int) int { return watchCap(limit) }
