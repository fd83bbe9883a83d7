// Package watchbudget says how many directories an index of a store may
// watch for changes and where watching can be trusted at all: the
// operating system's limits on file-system notifications, apart from the
// index that spends them (sessionstore watches below the cap and polls
// the rest).
package watchbudget

// Max returns how many directories one index watches at most.
func Max() int { return maxWatches() }

// Reliable reports whether notifications on dir see every change made to
// it (not on a network or user-space file system, not on Windows).
func Reliable(dir string) bool { return reliable(dir) }

// Exhausted reports whether err, from adding a watch, means that no more
// watches can be added.
func Exhausted(err error) bool { return exhausted(err) }
