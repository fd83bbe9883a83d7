//go:build race

package transcript

// The race detector makes sync.Pool drop objects at random, so the
// allocation counts of pooled buffers mean nothing under it.
func init() { raceEnabled = true }
