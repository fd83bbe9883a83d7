// Package cputime reports the CPU time the process has used, for the
// benchmark drivers that print wall and CPU time side by side.
package cputime

import "time"

// Process returns the user + system CPU time of this process so far, or
// 0 where the OS does not report it.
func Process() time.Duration { return process() }
