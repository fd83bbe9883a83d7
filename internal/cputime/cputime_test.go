package cputime

import (
	"runtime"
	"testing"
	"time"
)

// TestProcessGrows: burning CPU for a while shows up in Process.
func TestProcessGrows(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" && runtime.GOOS != "windows" && runtime.GOOS != "freebsd" {
		t.Skipf("no CPU time on %s", runtime.GOOS)
	}
	before := Process()
	x := uint64(1)
	for start := time.Now(); time.Since(start) < 200*time.Millisecond; {
		for i := 0; i < 1e5; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	if x == 0 {
		t.Log(x)
	}
	if after := Process(); after <= before {
		t.Errorf("CPU time did not grow over 200 ms of work: %v -> %v", before, after)
	}
}
