// Package diskfree reports the free space of a file system, the one
// OS-specific call the benchmark and stress drivers need before they write
// multi-gigabyte stores.
package diskfree

// Free returns the bytes available to an unprivileged user on the file
// system holding dir.
func Free(dir string) (int64, error) { return free(dir) }
